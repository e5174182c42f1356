"""Play L'Impériale in the terminal against a bot: ``imperiale play``.

The game runs on the reference engine :class:`~imperiale_env.reference.game.Game`, which decides what
is legal, whose turn it is and what scores; the bot (any :func:`imperiale_agents.base.make_agent` spec)
reads the observation :func:`~imperiale_env.reference.observe.observe` encodes from that game
(the same vector the batched engine gives, checked by the differential tests) and its legal
mask.

Input and output go through two functions, ``input_fn(prompt) -> str`` (raising
:class:`EOFError` when the input ends) and ``print_fn(text)``, so that tests (and other front
ends) can drive a whole game.  :func:`play_game` is the entry point; the pieces it uses are
public too: :func:`parse_move`.  Why the legal cards are the legal ones is the engine's clause
(:meth:`Game.play_rule`) worded by :func:`imperiale_env.records.narrate.play_rule_text`.
The table the human sees before each decision is :func:`imperiale_env.envs.render_text.table_text`, the
score events in words :func:`imperiale_env.records.narrate.explain_events`, as everywhere else.

Commands at the prompt (case-insensitive):

* a card code (``kh``, ``10s``) or the number of a move in the list of legal moves;
* ``show`` / ``hide`` (or ``y`` / ``n``) for a declaration question;
* ``point H`` (or ``point hearts``, or just ``H``) / ``sink`` for the point;
* ``help`` (the commands and the rule that applies now), ``score``, ``table``, ``quit``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core.cards import (
    RANKS,
    SUIT_NAMES,
    card_code,
    parse_card,
    rank_of,
)
from imperiale_env.core.input_checks import InputError
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.rules import Rules
from imperiale_env.core.typed_moves import HIDE_WORDS, SHOW_WORDS, SINK_WORDS, normalise, point_word
from imperiale_env.envs.render_text import score_line, table_text
from imperiale_env.envs.seating import agent_choice, play_until
from imperiale_env.records.game_records import (
    DealFeed,
    RecordError,
    append_records,
    game_from_record,
    load_records,
    record_from_game,
    save_records,
)
from imperiale_env.records.narrate import (
    EventsTold,
    Words,
    decision_note,
    decision_rule_text,
    explain_events,
    play_rule_text,
    seat_names,
    trick_text,
)
from imperiale_env.reference.game import DealState, Decision, Game, deal_cards
from imperiale_env.reference.observed_game import ObservedGame

InputFn = Callable[[str], str]
PrintFn = Callable[[str], None]

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "?")
PROMPT = "> "


class PlayError(ValueError):
    """A ``play`` setting that cannot be used (seat, save file); the message says what is allowed."""


def help_text(game: Game, human: int) -> str:
    """The commands, and the rule that applies to the pending decision."""
    d = game.decision
    lines = [
        "Commands (case-insensitive):",
        "  a card code (kh, 10s, as) or the number of a move in the list, to play it",
        "  show / hide (or y / n)    answer a declaration question",
        "  point H (or just H) / sink    declare the point in a suit, or declare nothing",
        "  score    the score and what has been scored in this deal",
        "  table    show the table again",
        "  help     this help",
        "  quit     stop the game (the record is saved if you gave --save)",
        "Trick order: K Q J A 10 9 8 7 (6) - the Ace ranks below the Jack in play.",
    ]
    if d is not None and d.player == human:
        lines.append("Now: " + decision_rule_text(game, human))
    return "\n".join(lines)


# ---------------------------------------------------------------------- the table, once a deal


def table_blocks(text: str) -> list[str]:
    """The table's blocks: a labelled line with the indented lines that continue it."""
    blocks: list[str] = []
    for line in text.splitlines():
        if line.startswith(" ") and blocks:
            blocks[-1] += "\n" + line
        else:
            blocks.append(line)
    return blocks


ALWAYS_SHOWN = ("Hand", "Moves")
"""The blocks shown before every decision, changed or not (with the question, the table's last line)."""


def table_changes(text: str, before: str | None) -> str:
    """What the person reads before a decision: the whole table the first time in a deal (``before``
    None), then only what changed since the table ``before`` (the trick, the tricks won, the score,
    what is known), with the hand, the moves and the question: the trump, the rules of the score and
    the point declared are not reprinted after every card. ``table`` at the prompt prints it all."""
    if before is None:
        return text
    seen = set(table_blocks(before))
    blocks = table_blocks(text)
    return "\n".join(b for i, b in enumerate(blocks)
                     if b not in seen or b.startswith(ALWAYS_SHOWN) or i == len(blocks) - 1)


# ---------------------------------------------------------------------- reading a move


@dataclass
class Parsed:
    """What a line of input means: an action, a command, or an error with a hint."""

    action: int | None = None
    command: str | None = None  # help | score | table | quit
    error: str | None = None


def parse_move(text: str, game: Game, human: int) -> Parsed:
    """Read one line of input for the human's pending decision (never raises)."""
    d = game.decision
    assert d is not None and d.player == human
    line = normalise(text)
    legal = d.legal
    if not line:
        return Parsed(error=_hint(d, "Nothing typed."))
    if line in HELP_WORDS:
        return Parsed(command="help")
    if line in QUIT_WORDS:
        return Parsed(command="quit")
    if line in ("score", "table"):
        return Parsed(command=line)
    if line.isdigit():
        i = int(line)
        if 1 <= i <= len(legal):
            return Parsed(action=legal[i - 1])
        return Parsed(error=f"There is no move {i}: choose a number from 1 to {len(legal)}.")
    if d.kind == "question":
        if line in SHOW_WORDS:
            return Parsed(action=act.SHOW)
        if line in HIDE_WORDS:
            return Parsed(action=act.HIDE)
        return Parsed(error=_hint(d, f"{text.strip()!r} is not an answer."))
    if d.kind == "point":
        if line in SINK_WORDS:
            return Parsed(action=act.SINK)
        a = point_word(line)
        if a is None:
            return Parsed(error=_hint(d, f"{text.strip()!r} is not a point declaration."))
        if a not in legal:
            return Parsed(error=f"You hold no {SUIT_NAMES[a - act.POINT_BASE]}: declare a suit you hold, or sink.")
        return Parsed(action=a)
    # play
    try:
        c = parse_card(line.replace(" ", "").upper())
    except ValueError:
        return Parsed(error=_hint(d, f"{text.strip()!r} is not a card."))
    if c >= 36 or (game.players == 2 and rank_of(c) == RANKS.index("6")):
        return Parsed(error=f"There are no sixes with two players. {_hint(d, '')}".strip())
    if c not in game.state.hands[human]:
        return Parsed(error=f"You do not hold {card_code(c)}. {_hint(d, '')}".strip())
    if c not in legal:
        return Parsed(error=f"You may not play {card_code(c)} now. {play_rule_text(game, human)}")
    return Parsed(action=c)


def _hint(d: Decision, first: str) -> str:
    n = len(d.legal)
    if d.kind == "question":
        what = "Answer show or hide (y / n)"
    elif d.kind == "point":
        what = "Type point and a suit you hold (e.g. 'point h'), or sink"
    else:
        what = "Type a card code (e.g. 'kh', '10s')"
    return f"{first} {what}, or a move number from 1 to {n}; 'help' lists the commands.".strip()


# ---------------------------------------------------------------------- the game loop


@dataclass
class PlayResult:
    """How a game of :func:`play_game` ended."""

    game: Game
    status: str  # "finished" | "quit" | "eof" | "interrupted" (Ctrl-C)
    saved: list[Path] = field(default_factory=list)
    names: list[str] | None = None  # who sat where ("You", the opponent's spec), as the record says
    seed: int | None = None  # the game seed

    @property
    def record(self) -> dict[str, Any]:
        return record_from_game(self.game, self.names, self.seed)


def check_save_path(path: str | Path) -> Path:
    """The record file ``path``, checked before a game starts so that no game is played for
    nothing: it ends in ``.json`` (a new file: an existing one is refused, never overwritten)
    or ``.jsonl`` (records are appended; the records already there must read and replay, so
    that a damaged file is found now, not after the game), and its folder is writable."""
    from imperiale_env.core.input_checks import InputError, output_file

    if not str(path).strip():
        raise PlayError("the record file path is empty: give a .json or .jsonl file name")
    path = Path(path)
    if path.suffix not in (".json", ".jsonl"):
        raise PlayError(f"a record file ends in .json or .jsonl, got {str(path)!r}")
    append = path.suffix == ".jsonl"
    try:
        output_file(path, "record file", may_exist=append)
    except InputError as exc:
        if not append and path.is_file():
            raise PlayError(f"the record file {str(path)!r} exists already and is not overwritten: choose another "
                            "name, or use a .jsonl file, to which each game is appended") from None
        raise PlayError(str(exc)) from None
    if append and path.exists():
        keep = "games are only appended to a .jsonl file whose records all replay: fix it, or choose another file"
        try:
            records = load_records(path)
        except RecordError as exc:
            raise PlayError(f"{exc}; {keep}") from None
        for n, record in enumerate(records, start=1):
            try:
                game_from_record(record)
            except RecordError as exc:
                raise PlayError(f"{path}, record {n}: {exc}; {keep}") from None
    return path


def save_game(game: Game, path: str | Path, names: list[str] | None = None, seed: int | None = None) -> Path:
    """Save the record of ``game``: appended to a ``.jsonl`` file (the records already there are
    not rewritten), or written to a new ``.json`` file; the path written is returned.  ``names``
    (one a seat) and ``seed`` go into the record when given.

    A ``.json`` file is never replaced: if ``path`` has appeared since :func:`check_save_path`
    accepted it, the record goes to the first free name ``stem-2.json``, ``stem-3.json``, ...
    rather than being lost at the end of a game.
    """
    path = Path(path)
    record = record_from_game(game, names, seed)
    if path.suffix == ".jsonl":
        append_records(path, [record])
        return path
    target, n = path, 1
    while True:
        try:
            save_records(target, [record], overwrite=False)
            return target
        except FileExistsError:
            n += 1
            target = path.with_name(f"{path.stem}-{n}{path.suffix}")


def play_game(
    rules: Rules,
    opponent: str = "heuristic",
    *,
    seed: int | None = None,
    seat: int = 0,
    save: str | Path | None = None,
    input_fn: InputFn | None = None,
    print_fn: PrintFn | None = None,
    agent=None,
    offer_save: bool = True,
    on_start: Callable[[Game], None] | None = None,
    confirm_forced: bool = False,
) -> PlayResult:
    """Play one whole game: the human in ``seat``, the bot ``opponent`` in every other seat.

    ``input_fn`` / ``print_fn`` default to :func:`input` and :func:`print`.  ``agent``: an agent
    object to use instead of building ``opponent`` (tests).  ``save``:
    write the record there when the game ends, is quit or the input ends; without it the
    record is offered at the end (``offer_save``).  Raises :class:`PlayError` for a bad seat
    or save path, ``imperiale_agents.base.AgentError`` for a bad opponent spec.  ``on_start(game)`` is
    called with the reference game before its first decision (front ends that need the state).
    A card that is the only legal one is played for the person, with a line saying so, unless
    ``confirm_forced`` (``--confirm-forced``) asks for it anyway.
    """
    input_fn = input if input_fn is None else input_fn  # looked up now, so that a patched input() is used
    print_fn = print if print_fn is None else print_fn
    P = rules.players
    if not 0 <= seat < P:
        raise PlayError(f"--seat must be a seat from 0 to {P - 1} with {P} players, got {seat}")
    save_path = check_save_path(save) if save is not None else None
    if agent is None:
        from imperiale_agents.base import make_agent

        agent = make_agent(opponent, rules)
    if seed is None:
        seed = secrets.randbits(32)
    else:
        try:
            seed = check_seed(seed)
        except InputError as exc:
            raise PlayError(str(exc)) from None
    names = seat_names(P, seat, opponent if isinstance(opponent, str) and opponent.strip() else None)
    words = Words(names, seat)
    rng = np.random.default_rng(seed)
    # The seeded deals, as Game(rules, seed) deals them, through a feed that notes the score at
    # the end of every deal (the next deal's turned honour is scored as soon as it starts).
    feed = DealFeed(lambda index, dealer: deal_cards(rules, seed, index, dealer))
    game = feed.attach(Game(rules, seed=seed, deals=feed))
    if on_start is not None:
        on_start(game)
    print_fn(f"L'Impériale ({rules.preset}, {P} players) - you play seat {seat} against {opponent} "
             f"(game seed {seed}). Type 'help' at any prompt.")
    told_deals = 0
    last_trick: str | None = None
    status = "finished"
    announced = -1

    told = EventsTold()
    shown_table, shown_deal = "", -1  # the table last printed, and its deal: later ones print what changed

    def tell_new_events(st: DealState) -> None:
        """Tell the score events of the deal ``st`` logged since the last call, as they happen."""
        for sentence in explain_events(told.new(st), rules, names, seat, st.deal.trump):
            print_fn("  * " + sentence)

    def tell_deals(upto: int) -> None:
        """End every deal before ``upto`` not ended yet: its events not told yet (those of the last
        trick), then the score."""
        nonlocal told_deals
        while told_deals < upto:
            st = game.history[told_deals]
            print_fn(f"--- End of deal {st.index + 1} ---")
            rest = explain_events(told.new(st), rules, names, seat, st.deal.trump)
            for sentence in rest or ([] if st.events else ["Nobody scored in this deal."]):
                print_fn("  " + sentence)
            # The score after this deal's last event: once the next deal has started, the game's
            # score holds that deal's turned honour too, which is told with that deal.
            scores = feed.scores
            print_fn("  Score: " + score_line(game, names, scores[told_deals] if told_deals < len(scores) else None))
            told_deals += 1

    def announce() -> None:
        nonlocal announced
        st = game.state
        if st is not None and st.index != announced:
            announced = st.index
            print_fn(f"\n*** Deal {st.index + 1}: {words.verb(st.deal.dealer, 'deal')}; trump is "
                     f"{SUIT_NAMES[st.deal.trump]} ({card_code(st.deal.turned)}). ***")
            tell_new_events(st)  # the turned honour, scored as the deal starts

    def move(action: int) -> None:
        """Play ``action`` for the seat to act, telling it as it happens: the bot's reason before
        its move, the trick when it is complete, the score events as they are logged, the end of
        each deal."""
        nonlocal last_trick
        announce()
        d = game.decision
        before = game.state
        trick_before = list(before.trick)
        if d.player != seat:
            note = decision_note(game, d, action, words, rules)
            if note:
                print_fn(note)
        game.step(action)
        if d.kind == "play" and len(trick_before) + 1 == P:
            last_trick = trick_text(trick_before + [(d.player, action)], before.deal.trump, words)
            print_fn(f"Trick {before.tricks_played + 1}: {last_trick}.")
        if game.state is not before:
            last_trick = None
        elif told.pending(before):
            tell_new_events(before)  # shown, declared, won the point: said when it happens, with why
        tell_deals(len(game.history) - (0 if game.decision is None else 1))

    observed = ObservedGame(game)
    bots = agent_choice(agent.act, rng)
    try:
        while True:
            play_until(observed, (seat,), bots, move=move)  # the one loop that seats the players (envs.seating)
            if game.decision is None:
                break
            announce()
            d = game.decision
            before = game.state
            if d.kind == "play" and len(d.legal) == 1 and not confirm_forced:
                action = d.legal[0]
                print_fn(f"Your only legal card, {card_code(action)}, is played for you.")
            else:
                print_fn("")
                text = table_text(game, seat, names, last_trick=last_trick)
                print_fn(table_changes(text, shown_table if shown_deal == before.index else None))
                shown_table, shown_deal = text, before.index
                while True:
                    parsed = parse_move(input_fn(PROMPT), game, seat)
                    if parsed.action is not None:
                        action = parsed.action
                        break
                    if parsed.command == "help":
                        print_fn(help_text(game, seat))
                    elif parsed.command == "score":
                        print_fn("Score: " + score_line(game, names))
                        for sentence in explain_events(before.events, rules, names, seat, before.deal.trump):
                            print_fn("  This deal: " + sentence)
                    elif parsed.command == "table":
                        print_fn(table_text(game, seat, names, last_trick=last_trick))
                    elif parsed.command == "quit":
                        raise _Quit
                    else:
                        print_fn(parsed.error or "?")
            move(action)
    except _Quit:
        status = "quit"
        print_fn("You stopped the game.")
    except EOFError:
        status = "eof"
        print_fn("\nThe input ended: the game is stopped.")
    except KeyboardInterrupt:
        status = "interrupted"
        print_fn("\nInterrupted: the game is stopped.")
    if status == "finished":
        tell_deals(len(game.history))
        w = game.winner
        score = " to ".join(str(game.imperiales[p]) for p in ([w] + [p for p in range(P) if p != w])) \
            if w is not None else ""
        if w == seat:
            print_fn(f"You win the game, {score} impériales!")
        elif w is not None:
            print_fn(f"{names[w]} wins the game, {score} impériales.")
    print_fn("Final score: " + score_line(game, names))
    result = PlayResult(game, status, names=list(names), seed=seed)
    if save_path is not None:
        _save(result, save_path, print_fn, input_fn)
    elif offer_save and status in ("finished", "quit"):
        _offer_save(result, input_fn, print_fn)
    return result


class _Quit(Exception):
    pass


def _save(result: PlayResult, path: Path, print_fn: PrintFn, input_fn: InputFn | None = None) -> None:
    """Save the record to ``path``; if that fails (the folder went away meanwhile), ask for
    another name through ``input_fn`` rather than lose the game."""
    try:
        saved = save_game(result.game, path, result.names, result.seed)
    except (OSError, RecordError) as exc:
        print_fn(f"Could not save the record to {path}: {(exc.strerror or exc) if isinstance(exc, OSError) else exc}")
        if input_fn is not None:
            _offer_save(result, input_fn, print_fn)
        return
    result.saved.append(saved)
    if saved != path:
        print_fn(f"{path} appeared during the game and is left as it was.")
    print_fn(f"Record saved to {saved}; replay it with: imperiale replay {saved}")


def _offer_save(result: PlayResult, input_fn: InputFn, print_fn: PrintFn) -> None:
    for _ in range(5):
        try:
            answer = input_fn("Save the record of this game? File name (.json or .jsonl), or Enter to skip: ")
        except EOFError:
            return
        answer = answer.strip()
        if not answer or answer.lower() in ("n", "no", "skip"):
            return
        try:
            path = check_save_path(answer)
        except PlayError as exc:
            print_fn(f"Not saved: {exc}.")
            continue
        _save(result, path, print_fn)
        return
