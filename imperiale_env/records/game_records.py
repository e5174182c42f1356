"""Game records (docs/records.md): write a game as a record, read, check and replay a record.

A record is a JSON object ``{"format", "rules", "players", "start", "deals"}`` describing a
whole game or a part of one, from any starting score.  :func:`record_from_game` writes the
record of a :class:`~imperiale_env.reference.game.Game`, :func:`game_from_record` checks a record and
replays it through the reference engine, :func:`replay_record` summarises a replay (the
score events and the score after each deal, as ``imperiale replay`` prints them), and
:func:`load_records` / :func:`save_records` read and write ``.json`` (one record) and
``.jsonl`` (one record a line) files.

Conventions of this module, where the format leaves a choice (docs/records.md):

* Deal and action indices in messages count from 0, as the lists of the record do.
* ``hands`` (and the two-player ``talon``, whose order plays no part) are written sorted in
  card index order (suits S H D C, ranks K Q J A 10 9 8 7 6); any order is accepted.
* With three players there is no talon: it is written ``"talon": []``; a reader accepts
  ``[]`` or no ``talon`` key.
* Nothing is corrected silently: card codes must be written exactly as the format writes
  them (``KH``, ``10S``), numbers must be JSON integers, and unknown keys are errors.
* A record may end in the middle of a deal (an unfinished game), but only in its last deal;
  a record of a game that has ended (target reached, possibly in the middle of a deal)
  holds no action and no deal after the one that ended it.
"""

from __future__ import annotations

import copy
import errno
import json
import os
import stat
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from imperiale_env.core.actions import action_from_record, action_to_record
from imperiale_env.core.atomic import append_whole, write_atomic
from imperiale_env.core.cards import HAND_SIZE, card_code, deck, parse_card
from imperiale_env.core.input_checks import SEED_LIMIT, InputError, input_file
from imperiale_env.core.rules import Rules, RulesError
from imperiale_env.reference.game import POINTS_PER_IMPERIALE, Deal, Decision, Game

FORMAT = "imperiale-record/1"
TALON_SIZE = 7

_RECORD_KEYS = ("format", "rules", "players", "names", "seed", "start", "deals")
_RECORD_OPTIONAL = ("names", "seed")  # who sat where, and the game seed (records of earlier releases lack them)
MAX_NAME = 1000
_START_KEYS = ("dealer", "imperiales", "points")
_DEAL_KEYS = ("dealer", "hands", "turned", "talon", "actions")
_ACT_FIELDS = {"play": ("card",), "show": (), "hide": (), "point": ("suit",), "sink": ()}

Score = dict[str, list[int]]


class RecordError(ValueError):
    """A record (or record file) that cannot be read or replayed; the message says where and why."""


# ---------------------------------------------------------------------- writing


def record_from_game(game: Game, names: Sequence[str] | None = None, seed: int | None = None) -> dict[str, Any]:
    """The record of ``game``: every deal it has started, a deal in progress with its actions so far;
    who sat where (``names``, one per seat: "You", an agent spec) and the game seed it was dealt
    from, when the caller gives them, so that a replay can say who played and the game can be
    dealt again (``Game(rules, seed)``)."""
    who: dict[str, Any] = {} if names is None else {"names": _checked_names(list(names), game.players, "names")}
    if seed is not None:
        who["seed"] = _integer(seed, "seed", 0, SEED_LIMIT - 1)
    return {
        "format": FORMAT,
        "rules": game.rules.to_dict(),
        "players": game.players,
        **who,
        "start": {
            "dealer": int(game.start_dealer),
            "imperiales": [int(x) for x in game.start_imperiales],
            "points": [int(x) for x in game.start_points],
        },
        "deals": [
            {
                "dealer": int(state.deal.dealer),
                "hands": [_codes(hand) for hand in state.deal.hands],
                "turned": card_code(state.deal.turned),
                "talon": _codes(state.deal.talon),
                "actions": [{"player": int(p), **action_to_record(a)} for p, a in state.actions],
            }
            for state in game.history
        ],
    }


def _codes(cards: Iterable[int]) -> list[str]:
    return [card_code(c) for c in sorted(cards)]


# ---------------------------------------------------------------------- reading and replaying


def game_from_record(record: dict[str, Any]) -> Game:
    """Check ``record`` and replay it: the game in the state the record leaves it in.

    Raises :class:`RecordError` naming the field, deal or action at fault.
    """
    return _replay(record)[0]


def replay_record(record: dict[str, Any]) -> dict[str, Any]:
    """A JSON-serialisable summary of the replay of ``record``.

    ``{"names"?, "seed"?, "deals": [{"dealer", "events", "score": {"imperiales", "points"}}],
    "final": {...}, "winner": seat or None}``: who played and the seed when the record says,
    the score events of each deal in the order the engine logged them, the score after each
    deal (so far, for an unfinished or game-ending deal), the final score and the winner
    (``None`` while the game is unfinished).
    """
    game, scores = _replay(record)
    final = _score(game)
    return {
        **{key: copy.deepcopy(record[key]) for key in _RECORD_OPTIONAL if key in record},
        "deals": [
            {
                "dealer": int(state.deal.dealer),
                "events": copy.deepcopy(state.events),
                "score": scores[d] if d < len(scores) else final,
            }
            for d, state in enumerate(game.history)
        ],
        "final": final,
        "winner": game.winner,
    }


def _score(game: Game) -> Score:
    return {"imperiales": [int(x) for x in game.imperiales], "points": [int(x) for x in game.points]}


class DealFeed:
    """The deals of a game, for ``Game(deals=...)``, noting the score at the end of every deal.

    The engine asks for deal ``i`` when deal ``i - 1`` is over and scores the start of deal
    ``i`` (its turned honour) at once, before any decision: the request is the only moment at
    which the score after deal ``i - 1``'s last event can be read, so it is noted then
    (``scores[i - 1]``).  ``source(index, dealer)`` gives the deal, or ``None`` when no more
    deals are known.  :meth:`attach` the game once it is built (deal 0 is asked for first,
    when there is no score to note yet).
    """

    def __init__(self, source: Callable[[int, int], Deal | None]):
        self.source = source
        self.game: Game | None = None
        self.scores: list[Score] = []

    def attach(self, game: Game) -> Game:
        self.game = game
        return game

    def __call__(self, index: int, dealer: int) -> Deal | None:
        if index > 0:
            assert self.game is not None, "the engine asked for a second deal before the feed was attached"
            self.scores.append(_score(self.game))
        return self.source(index, dealer)


def _replay(record: dict[str, Any]) -> tuple[Game, list[Score]]:
    """Check the record, replay it, and return the game and the score after each ended deal."""
    rules, dealer, imperiales, points = _parse_head(record)
    deals: list[Deal] = []
    actions: list[list[int]] = []
    for d, entry in enumerate(record["deals"]):
        deals.append(_parse_deal(entry, d, rules, (dealer + d) % rules.players))
        actions.append(_parse_actions(entry, d, rules.players))
    feed = DealFeed(lambda index, _dealer: deals[index] if index < len(deals) else None)
    game = feed.attach(Game(rules, dealer=dealer, imperiales=imperiales, points=points, deals=feed))
    ended: tuple[int, str] | None = None  # the deal in which the game ended, and how
    if game.is_over:
        ended = (0, "the game ended at the start of deal 0, before its first action")
    for d, deal_actions in enumerate(actions):
        if ended is not None and ended[0] < d:
            raise RecordError(f"deal {d}: {ended[1]}, so no deal may follow; remove deals {d}..{len(actions) - 1}")
        state = game.history[d]
        for i, action in enumerate(deal_actions):
            entry = record["deals"][d]["actions"][i]
            where = f"deal {d}, action {i} ({_written(entry)})"
            remove = f"remove the remaining {len(deal_actions) - i} action(s) of deal {d}"
            if ended is not None:
                raise RecordError(f"{where}: {ended[1]}; {remove}")
            if game.state is not state or game.decision is None:
                raise RecordError(f"{where}: deal {d} is over after action {i - 1}; {remove}")
            decision = game.decision
            if entry["player"] != decision.player:
                raise RecordError(f"{where}: the action is by player {entry['player']} but {_pending(decision)}")
            if action not in decision.legal:
                raise RecordError(f"{where}: the action is not legal: {_pending(decision)}")
            game.step(action)
            if game.is_over:
                ended = (
                    (d, f"the game ended at action {i} of deal {d}")
                    if game.state is state
                    else (d + 1, f"the game ended at the start of deal {d + 1}, before its first action")
                )
        if d < len(actions) - 1 and game.state is state and game.decision is not None:
            raise RecordError(
                f"deal {d}: its {len(deal_actions)} action(s) stop before the deal is over "
                f"({_pending(game.decision)}); only the last deal of a record may be unfinished"
            )
    return game, feed.scores


_WRITTEN_LIMIT = 200


def _written(entry: Any) -> str:
    """A value as written in the record, cut to a readable length for a message."""
    try:
        text = json.dumps(entry, default=repr, ensure_ascii=False)
    except (RecursionError, ValueError):
        text = f"a {type(entry).__name__} nested too deeply to print"
    return text if len(text) <= _WRITTEN_LIMIT else text[: _WRITTEN_LIMIT - 3] + "..."


def _record_form(action: int) -> str:
    """``play KH``, ``show``, ``hide``, ``point H``, ``sink``."""
    return " ".join(action_to_record(action).values())


def _pending(decision: Decision) -> str:
    """What the engine waits for, and the legal actions in record form."""
    legal = ", ".join(_record_form(a) for a in decision.legal)
    p = decision.player
    if decision.kind == "question":
        assert decision.question is not None
        q = decision.question
        what = f"player {p} is asked to show or hide the {q.kind} ({' '.join(_codes(q.cards))})"
    elif decision.kind == "point":
        what = f"player {p} is to declare the point"
    else:
        what = f"player {p} is to play a card"
    return f"{what}; legal: {legal}"


# ---------------------------------------------------------------------- checking the fields


def _check_keys(obj: Any, where: str, allowed: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    if not isinstance(obj, dict):
        raise RecordError(f"{where} must be a JSON object, got {_written(obj)}")
    missing = [k for k in allowed if k not in obj and k not in optional]
    if missing:
        raise RecordError(f"{where} lacks {', '.join(map(repr, missing))}")
    unknown = sorted(set(obj) - set(allowed), key=str)
    if unknown:
        raise RecordError(f"{where} has unknown key(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(allowed)})")


def _checked_names(names: Any, players: int, where: str) -> list[str]:
    """One name a seat: a non-empty line of at most :data:`MAX_NAME` printable characters."""
    if not isinstance(names, list) or len(names) != players or not all(
            isinstance(n, str) and 0 < len(n) <= MAX_NAME and n.isprintable() for n in names):
        raise RecordError(f"{where} must be a list of {players} names, one per seat, each 1 to {MAX_NAME} printable "
                          f"characters, got {_written(names)}")
    return names


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RecordError(f"{where} must be an integer from {low} to {high}, got {_written(value)}")
    return value


def _integers(value: Any, where: str, count: int, low: int, high: int) -> list[int]:
    if not isinstance(value, list) or len(value) != count:
        raise RecordError(f"{where} must be a list of {count} integers (one per seat), got {_written(value)}")
    return [_integer(x, f"{where}[{i}]", low, high) for i, x in enumerate(value)]


def _card(code: Any, where: str) -> int:
    try:
        c = parse_card(code)
    except ValueError as exc:
        raise RecordError(f"{where}: {exc}") from None
    if card_code(c) != code:
        raise RecordError(f"{where}: write the card {code!r} as {card_code(c)!r}")
    return c


def _parse_head(record: Any) -> tuple[Rules, int, list[int], list[int]]:
    """The rules and the starting score (dealer, impériales, points) of a record."""
    _check_keys(record, "the record", _RECORD_KEYS, optional=_RECORD_OPTIONAL)
    if record["format"] != FORMAT:
        raise RecordError(f"format must be {FORMAT!r}, got {_written(record['format'])}")
    if not isinstance(record["rules"], dict) or not isinstance(record["rules"].get("preset"), str):
        raise RecordError(f"rules must be an object with a 'preset' name, got {_written(record['rules'])}")
    try:
        rules = Rules.from_dict(record["rules"])
    except RulesError as exc:
        raise RecordError(f"rules: {exc}") from None
    players = _integer(record["players"], "players", 2, 3)
    if players != rules.players:
        raise RecordError(f"players is {players} but the rules {_written(record['rules'])} are for {rules.players}")
    if "names" in record:
        _checked_names(record["names"], players, "names")
    if "seed" in record:
        _integer(record["seed"], "seed", 0, SEED_LIMIT - 1)
    start = record["start"]
    _check_keys(start, "start", _START_KEYS)
    dealer = _integer(start["dealer"], "start.dealer", 0, players - 1)
    imperiales = _integers(start["imperiales"], "start.imperiales", players, 0, rules.target_imperiales - 1)
    points = _integers(start["points"], "start.points", players, 0, POINTS_PER_IMPERIALE - 1)
    if not isinstance(record["deals"], list):
        raise RecordError(f"deals must be a list, got {_written(record['deals'])}")
    return rules, dealer, imperiales, points


def _parse_deal(entry: Any, d: int, rules: Rules, expected_dealer: int) -> Deal:
    """The cards of deal ``d``: the dealer the rotation expects, the whole pack dealt exactly once."""
    where = f"deal {d}"
    players = rules.players
    _check_keys(entry, where, _DEAL_KEYS, optional=("talon",) if players == 3 else ())
    dealer = _integer(entry["dealer"], f"{where}: dealer", 0, players - 1)
    if dealer != expected_dealer:
        rotation = "the start dealer" if d == 0 else f"the seat after deal {d - 1}'s dealer"
        raise RecordError(f"{where}: dealer is {dealer} but the rotation expects {expected_dealer} ({rotation})")
    hands_entry = entry["hands"]
    if not isinstance(hands_entry, list) or len(hands_entry) != players:
        raise RecordError(
            f"{where}: hands must be a list of {players} hands (one per seat), got {_written(hands_entry)}"
        )
    hands: list[list[int]] = []
    for seat, hand in enumerate(hands_entry):
        if not isinstance(hand, list):
            raise RecordError(f"{where}: hands[{seat}] must be a list of card codes, got {_written(hand)}")
        hands.append([_card(code, f"{where}: hands[{seat}][{i}]") for i, code in enumerate(hand)])
    turned = _card(entry["turned"], f"{where}: turned")
    talon_entry = entry.get("talon", [])
    if not isinstance(talon_entry, list):
        raise RecordError(f"{where}: talon must be a list of card codes, got {_written(talon_entry)}")
    talon = [_card(code, f"{where}: talon[{i}]") for i, code in enumerate(talon_entry)]

    problems: list[str] = []
    places: list[tuple[str, list[int]]] = [(f"hands[{seat}]", hand) for seat, hand in enumerate(hands)]
    for name, cards in places:
        if len(cards) != HAND_SIZE:
            problems.append(f"{name} has {len(cards)} cards (expected {HAND_SIZE})")
    if players == 2:
        if len(talon) != TALON_SIZE:
            problems.append(f"talon has {len(talon)} cards (expected {TALON_SIZE})")
        places += [("turned", [turned]), ("talon", talon)]
    else:
        if talon:
            problems.append("talon must be empty with three players (all 36 cards are dealt)")
        if turned not in hands[dealer]:
            problems.append(f"the turned card {card_code(turned)} is not in the dealer's hand (hands[{dealer}])")
    pack = set(deck(players))
    seen: dict[int, str] = {}
    for name, cards in places:
        for c in cards:
            if c not in pack:
                problems.append(f"{card_code(c)} in {name} is not in the {len(pack)}-card pack of {players} players")
            elif c in seen:
                problems.append(f"{card_code(c)} is dealt twice ({seen[c]} and {name})")
            else:
                seen[c] = name
    missing = sorted(pack - set(seen))
    if missing:
        problems.append(f"card(s) missing from the deal: {' '.join(_codes(missing))}")
    if problems:
        raise RecordError(f"{where}: " + "; ".join(problems))
    return Deal(dealer, tuple(frozenset(h) for h in hands), turned, tuple(talon))


def _parse_actions(entry: dict[str, Any], d: int, players: int) -> list[int]:
    """The action ids of deal ``d``, each entry well formed (legality is checked by the replay)."""
    if not isinstance(entry["actions"], list):
        raise RecordError(f"deal {d}: actions must be a list, got {_written(entry['actions'])}")
    out: list[int] = []
    for i, action in enumerate(entry["actions"]):
        where = f"deal {d}, action {i} ({_written(action)})"
        if not isinstance(action, dict) or not isinstance(action.get("act"), str) or action["act"] not in _ACT_FIELDS:
            raise RecordError(
                f"{where}: an action is an object with 'player' and 'act' (one of {', '.join(_ACT_FIELDS)})"
            )
        _check_keys(action, where, ("player", "act", *_ACT_FIELDS[action["act"]]))
        _integer(action["player"], f"{where}: player", 0, players - 1)
        if action["act"] == "play":
            out.append(_card(action["card"], where))
            continue
        try:
            out.append(action_from_record(action))
        except ValueError as exc:
            raise RecordError(f"{where}: {exc}") from None
    return out


# ---------------------------------------------------------------------- files


def load_records(path: str | os.PathLike[str], *, follow_links: bool = True) -> list[dict[str, Any]]:
    """The records of a ``.json`` file (one object) or a ``.jsonl`` file (one object a non-empty line).

    The file must be a regular, readable file of UTF-8 text (docs/records.md); anything else (a
    folder, a pipe, UTF-16, binary data, a byte-order mark) is a :class:`RecordError` saying
    what the file is, rather than a decoding traceback or a parse of garbage.  With
    ``follow_links=False`` a symbolic link is refused, checked on the opened file itself (the web
    table's records folder: a link could lead out of it, or be swapped in after a check).
    """
    try:
        path = input_file(path, "record file")
    except InputError as exc:
        raise RecordError(str(exc)) from None
    kind = _kind(path)
    data = _read(path, follow_links)
    try:
        return _parse_file(data, path, kind)
    except MemoryError:
        raise RecordError(f"{path} ({len(data) / 2**20:.0f} MiB) does not fit in the memory this process may use "
                          "once parsed (Python's JSON takes some 20 times the file's size): split it into smaller "
                          ".jsonl files, or raise the memory limit") from None


def _parse_file(data: bytes, path: Path, kind: str) -> list[dict[str, Any]]:
    """The records of the bytes ``data`` of the record file ``path`` of suffix ``kind``."""
    text = _text(data, path)
    if kind == ".json":
        return [_check_deals(_decode(text, path), str(path))]
    whole = _cut_tail(data)
    if whole < len(data):
        lines = text.count("\n") + 1
        warnings.warn(f"{path}: its last line ({lines}) is cut short ({len(data) - whole} bytes, not a whole record: "
                      "an interrupted write) and is left out; the records before it are read", stacklevel=2)
        text = text[:len(data[:whole].decode("utf-8"))]
    return [_check_deals(_decode(line, path, n), f"{path}, line {n}")
            for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


MAX_FILE_BYTES = 256 * 2**20
"""A record file larger than this is refused before it is read (a deal takes about 1 KB: a
quarter of a million deals; Python's JSON takes some 20 times the file size in memory)."""
MAX_DEALS = 10_000
"""Deals in one record: a game to a high target is a few hundred deals; more is not a game record."""


def _read(path: Path, follow_links: bool) -> bytes:
    """The bytes of the regular file ``path`` (a link refused unless ``follow_links``), its size
    checked on the open file before it is read."""
    flags = os.O_RDONLY | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_links and exc.errno == errno.ELOOP:
            raise RecordError(f"{str(path)!r} is a symbolic link; only regular files are read here") from None
        raise RecordError(f"cannot read the record file {str(path)!r}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RecordError(f"the record file {str(path)!r} is not a regular file")
        _check_size(path, info.st_size)
        try:
            return file.read()
        except OSError as exc:
            raise RecordError(f"cannot read the record file {str(path)!r}: {exc.strerror or exc}") from None


def _check_size(path: Path, size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise RecordError(f"the record file {str(path)!r} is {size / 2**20:.0f} MiB; record files are limited to "
                          f"{MAX_FILE_BYTES // 2**20} MiB (MAX_FILE_BYTES): split it into smaller .jsonl files")


def _check_deals(record: dict[str, Any], where: str) -> dict[str, Any]:
    deals = record.get("deals")
    if isinstance(deals, list) and len(deals) > MAX_DEALS:
        raise RecordError(f"{where}: a record of {len(deals)} deals; a record holds at most {MAX_DEALS} "
                          "deals (MAX_DEALS)")
    return record


def save_records(path: str | os.PathLike[str], records: list[dict[str, Any]], *, overwrite: bool = True) -> None:
    """Write ``records`` to ``path`` atomically (a temporary file in the same folder, then moved in place).

    A ``.json`` file holds exactly one record, a ``.jsonl`` file one record a line.  With
    ``overwrite=False`` an existing file is never replaced, even one that appears while the
    records are written (the temporary file is linked to ``path``, which fails if it exists):
    ``FileExistsError`` is raised instead.
    """
    path = Path(path)
    if _kind(path) == ".json":
        if len(records) != 1:
            raise RecordError(f"{path}: a .json file holds exactly one record, got {len(records)} (use .jsonl)")
        text = json.dumps(records[0], indent=2) + "\n"
    else:
        text = "".join(json.dumps(record) + "\n" for record in records)
    write_atomic(path, text, overwrite=overwrite, what="record file")


def append_records(path: str | os.PathLike[str], records: list[dict[str, Any]]) -> None:
    """Append ``records`` to the ``.jsonl`` file ``path`` (created if missing), one a line.

    The lines already there are not rewritten, so nothing in them can be lost.  The append is
    whole or absent: if the disk fills (or any write fails) the file is cut back to its size
    before, and :class:`~imperiale_env.core.atomic.WriteError` says so.  A last line cut short by
    an earlier interrupted write (no newline, not a JSON object) is moved to a side file
    (``PATH.cut``, ``PATH.cut.1``...) with a warning naming it, so that the file reads again.
    """
    path = Path(path)
    if _kind(path) != ".jsonl":
        raise RecordError(f"{path}: records are appended to a .jsonl file only")
    data = "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")
    if path.exists():
        fd = os.open(path, os.O_RDWR)
        try:
            size = _set_aside_cut_tail(fd, path)
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a whole last line without its newline: the new record starts its own
        finally:
            os.close(fd)
    append_whole(path, data, "record file")


def _cut_tail(data: bytes) -> int:
    """Where the last line of ``data`` starts if it is cut short (no newline, and not a JSON
    object: an interrupted write), else ``len(data)``."""
    if not data or data.endswith(b"\n"):
        return len(data)
    start = data.rfind(b"\n") + 1
    try:
        json.loads(data[start:])
    except ValueError:
        return start
    except RecursionError:  # whole but nested too deeply: the reader names that
        return len(data)
    return len(data)


def _set_aside_cut_tail(fd: int, path: Path) -> int:
    """Move a cut-short last line of the open file ``fd`` to a new side file; the size left."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    start = max(0, size - MAX_LINE_BYTES)
    tail = os.pread(fd, size - start, start)
    cut = start + _cut_tail(tail) if b"\n" in tail or start == 0 else size
    if cut == size:
        return size
    side = _new_side_file(path)
    side.write_bytes(os.pread(fd, size - cut, cut))
    os.ftruncate(fd, cut)
    warnings.warn(f"{path}: its last line was cut short ({size - cut} bytes, not a whole record: an interrupted "
                  f"write); it was moved to {side} before appending", stacklevel=3)
    return cut


def _new_side_file(path: Path) -> Path:
    for n in range(1000):
        side = path.with_name(path.name + (".cut" if n == 0 else f".cut.{n}"))
        if not side.exists():
            return side
    raise RecordError(f"{path}: too many .cut files beside it; remove them first")


MAX_LINE_BYTES = 16 * 2**20
"""The longest last line looked at for a cut (a record of a long game is well under a megabyte)."""


def _kind(path: Path) -> str:
    if path.suffix not in (".json", ".jsonl"):
        raise RecordError(f"{path}: a record file ends in .json or .jsonl, got {path.suffix or 'no suffix'!r}")
    return path.suffix


def _text(data: bytes, path: Path) -> str:
    """The UTF-8 text of a record file, or a :class:`RecordError` naming what the bytes are instead."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise RecordError(f"{path} is UTF-16 text (it starts with a UTF-16 byte-order mark); "
                          "a record file is UTF-8: save it as UTF-8")
    if data.startswith(b"\xef\xbb\xbf"):
        raise RecordError(f"{path} starts with a UTF-8 byte-order mark; a record file is plain UTF-8 without one")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise RecordError(f"{path} is not UTF-8 text (a NUL byte at byte {nul}: binary data, or UTF-16 text); "
                          "a record file is UTF-8 JSON text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RecordError(f"{path}, line {line} (byte {exc.start}): not UTF-8 text ({exc.reason}); "
                          "a record file is UTF-8 JSON") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key written twice (JSON readers disagree on which one counts)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(Exception):
    """Raised by the JSON reader's object hook; turned into a :class:`RecordError` with the line."""


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (JSON has no NaN or infinity)")


_MAX_DIGITS = 30


def _small_int(text: str) -> int:
    """A JSON integer; one of hundreds of digits is refused here, where Python would fail on it
    with an unrelated message (every number in a record is small)."""
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS:
        raise ValueError(f"a number of {digits} digits ({text[:12]}...); the numbers of a record are small integers")
    return int(text)


def _decode(text: str, path: Path, line: int | None = None) -> dict[str, Any]:
    """One JSON object from ``text``: the whole of ``path``, or its line ``line`` (a ``.jsonl`` file)."""
    where = str(path) if line is None else f"{path}, line {line}"
    line_offset = 0 if line is None else line - 1
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_not_json_constant,
                           parse_int=_small_int)
    except json.JSONDecodeError as exc:
        at = line_offset + exc.lineno
        raise RecordError(f"{path}, line {at}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    except _DuplicateKey as exc:
        raise RecordError(f"{where}: the key {exc.args[0]!r} is written twice in one JSON object; "
                          "a record names each key once") from None
    except RecursionError:
        raise RecordError(f"{where}: the JSON is nested too deeply to read; a record nests only a few levels "
                          "(record, deals, deal, hands, hand)") from None
    except ValueError as exc:  # NaN, Infinity, a huge integer
        raise RecordError(f"{where}: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise RecordError(f"{where}: a record is a JSON object, got {type(value).__name__}")
    return value
