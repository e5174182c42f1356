"""``render_mode="rgb_array"``: the table drawn with cards, as the web page draws it, for video
recorders and libraries that ask for frames.

One seat's view of a reference :class:`~imperiale_env.reference.game.Game` (the seat the text table
of :mod:`imperiale_env.envs.render_text` is written for, so both modes show the same facts): the
deal, the trump and the turned card, that seat's hand face up (its legal cards raised and
outlined when it is to play), every other hand face down except the cards it is known to
hold (shown, or the three-player dealer's trump card), the trick on the table (or the last
trick, with who won it and why, while the next one has no card yet), the score of every seat,
and the pending decision.  Nothing the seat may not see is drawn face up.

The look follows ``imperiale_web/static/style.css``: a green baize, cream card faces with the
rank in a corner and the suit's sign, red hearts and diamonds, striped red backs, a yellow
outline for a card that may be played.  The suit signs are drawn as shapes (the font Pillow
ships has no ♠♥♦♣), the whole picture at twice its size and then halved, so that the edges are
smooth; no system font is read, so the same state gives the same pixels on every machine.
Every frame has the same shape, ``(HEIGHT, WIDTH, 3)`` uint8.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from imperiale_env.core import actions as act
from imperiale_env.core.cards import RANKS, SUIT_NAMES, card_code, rank_of, sort_for_display, suit_of
from imperiale_env.envs.render_text import decision_prompt, score_text
from imperiale_env.records.narrate import why_trick_won
from imperiale_env.reference.game import TRICKS_PER_DEAL, Game

WIDTH, HEIGHT = 960, 400
SCALE = 2  # drawn at twice the size, then halved (smooth edges without a system font)

FELT = (31, 107, 58)
INK = (245, 245, 236)
TITLE = (255, 227, 138)
MUTED = (207, 232, 212)
FACE = (255, 253, 247)
EDGE = (119, 119, 119)
RED = (192, 22, 27)
BLACK = (17, 17, 17)
BACK, BACK_STRIPE = (122, 31, 31), (170, 51, 51)
LEGAL = (255, 213, 74)
FRAME = (159, 207, 170)

CARD_W, CARD_H = 56, 80  # the hand, the trick and the turned card
SMALL_W, SMALL_H = 36, 52  # the other seats' hands
RAISE = 6  # a legal card stands this much above the others

HAND_X, HAND_Y, HAND_STEP = 16, 280, 62
TURNED_X, TURNED_Y = 16, 60
OTHERS_X, OTHERS_Y, OTHERS_W = 170, 58, 560
TRICK_X, TRICK_Y, TRICK_STEP = 170, 148, 80
SCORE_X = 752
STATUS_Y = 374


def hand_card_box(index: int) -> tuple[int, int, int, int]:
    """``(left, top, right, bottom)`` in the image of the ``index``-th card of the viewer's hand
    (sorted as the terminal sorts it), not raised."""
    x = HAND_X + index * HAND_STEP
    return x, HAND_Y, x + CARD_W, HAND_Y + CARD_H


def other_card_box(slot: int, index: int, others: int) -> tuple[int, int, int, int]:
    """The box of the ``index``-th card of the ``slot``-th other seat's row (of ``others`` rows side by side)."""
    width = OTHERS_W // others
    step = min(24, (width - SMALL_W - 12) // (TRICKS_PER_DEAL - 1))
    x = OTHERS_X + slot * width + index * step
    return x, OTHERS_Y, x + SMALL_W, OTHERS_Y + SMALL_H


def trick_card_box(index: int) -> tuple[int, int, int, int]:
    """The box of the ``index``-th card played to the trick on the table (or the last trick)."""
    x = TRICK_X + index * TRICK_STEP
    return x, TRICK_Y, x + CARD_W, TRICK_Y + CARD_H


TURNED_BOX = (TURNED_X, TURNED_Y, TURNED_X + CARD_W, TURNED_Y + CARD_H)


def suit_colour(card: int) -> tuple[int, int, int]:
    """Hearts and diamonds red, spades and clubs black, as on the web page."""
    return RED if SUIT_NAMES[suit_of(card)] in ("hearts", "diamonds") else BLACK


def table_image(game: Game | None, viewer: int | None, names: Sequence[str], note: str | None = None) -> np.ndarray:
    """The table as seat ``viewer`` sees it (``None``: an onlooker, who sees no hand face up), an
    ``(HEIGHT, WIDTH, 3)`` uint8 image; ``note`` is added to the status line (why an episode ended)."""
    canvas = _Canvas()
    s = game.state if game is not None else None
    if game is None or s is None:
        canvas.text(16, 12, "L'Impériale: no game yet (call reset)" if game is None
                    else "L'Impériale: no deal (no more deals are known)", TITLE, 18)
        return canvas.pixels()
    rules, players, trump = game.rules, game.players, s.deal.trump
    canvas.text(16, 10, f"{rules.preset} · deal {s.index + 1} · {names[s.deal.dealer]} deals · trump "
                f"{SUIT_NAMES[trump]} · first to {rules.target_imperiales} impériales", TITLE, 17)
    canvas.text(TURNED_X, TURNED_Y - 20, "Turned card" if players == 2 else "Trump card", MUTED, 13)
    canvas.card(TURNED_BOX, s.deal.turned)
    _others(canvas, game, viewer, names)
    _trick(canvas, game, names)
    _scores(canvas, game, viewer, names)
    _hand(canvas, game, viewer, names)
    _status(canvas, game, viewer, names, note)
    return canvas.pixels()


def _others(canvas: _Canvas, game: Game, viewer: int | None, names: Sequence[str]) -> None:
    """Every other seat's hand: the cards it is known to hold face up, the rest face down."""
    s = game.state
    others = [p for p in range(game.players) if p != viewer]
    for slot, p in enumerate(others):
        known = s.revealed[p] & s.hands[p]
        if game.players == 3 and p == s.deal.dealer and s.deal.turned in s.hands[p]:
            known = known | {s.deal.turned}  # the dealer's trump card is shown to all
        left = other_card_box(slot, 0, len(others))[0]
        canvas.text(left, OTHERS_Y - 22, f"{names[p]} · {len(s.hands[p])} cards", INK, 14)
        cards = sort_for_display(list(known)) + [None] * (len(s.hands[p]) - len(known))
        for i, c in enumerate(cards):
            canvas.card(other_card_box(slot, i, len(others)), c, small=True)


def _trick(canvas: _Canvas, game: Game, names: Sequence[str]) -> None:
    """The trick on the table; while the next trick has no card, the last one with who won it and why."""
    s = game.state
    trick, label = list(s.trick), "This trick"
    if not trick and s.tricks_played:
        plays = [(p, a) for p, a in s.actions if act.is_play(a)]
        done = s.tricks_played * game.players
        trick, label = plays[done - game.players:done], "Last trick"
    canvas.text(TRICK_X, TRICK_Y - 20, label, MUTED, 13)
    canvas.frame((TRICK_X - 8, TRICK_Y - 24, TRICK_X + 3 * TRICK_STEP + 4, TRICK_Y + CARD_H + 26))
    for i, (p, c) in enumerate(trick):
        box = trick_card_box(i)
        canvas.card(box, c)
        canvas.text(box[0] - 2, box[3] + 4, names[p], INK, 11)
    if label == "Last trick":
        winner, best, reason = why_trick_won(trick, s.deal.trump)
        x = TRICK_X + 3 * TRICK_STEP + 16
        canvas.text(x, TRICK_Y + 10, f"{names[winner]} won", TITLE, 14)
        canvas.text(x, TRICK_Y + 30, f"with {card_code(best)}:", TITLE, 14)
        canvas.text(x, TRICK_Y + 50, reason, TITLE, 14)


def _scores(canvas: _Canvas, game: Game, viewer: int | None, names: Sequence[str]) -> None:
    s = game.state
    canvas.text(SCORE_X, 40, "Score", MUTED, 13)
    for p in range(game.players):
        y = 60 + p * 62
        canvas.text(SCORE_X, y, names[p], TITLE if p == viewer else INK, 15)
        canvas.text(SCORE_X, y + 20, score_text(game.imperiales[p], game.points[p]), INK, 13)
        canvas.text(SCORE_X, y + 38, f"{game.points[p]} points · {s.tricks[p]} tricks", MUTED, 13)


def _hand(canvas: _Canvas, game: Game, viewer: int | None, names: Sequence[str]) -> None:
    """The viewer's hand face up, sorted as the terminal sorts it; the legal cards raised when he is to play."""
    if viewer is None:
        return
    s, d = game.state, game.decision
    legal = set(d.legal) if d is not None and d.player == viewer and d.kind == "play" else set()
    canvas.text(HAND_X, HAND_Y - 26, f"{names[viewer]} · hand", TITLE, 15)
    for i, c in enumerate(sort_for_display(list(s.hands[viewer]))):
        left, top, right, bottom = hand_card_box(i)
        if c in legal:
            box = (left, top - RAISE, right, bottom - RAISE)
            canvas.outline(box, LEGAL)
            canvas.card(box, c)
        else:
            canvas.card((left, top, right, bottom), c)


def _status(canvas: _Canvas, game: Game, viewer: int | None, names: Sequence[str], note: str | None) -> None:
    d = game.decision
    if d is not None and d.player == viewer:
        line = decision_prompt(game, d, viewer)
    elif d is not None:
        line = f"To act: {names[d.player]}"
    elif game.winner is not None:
        line = f"Over: {names[game.winner]} wins the game"
    else:
        line = "Over: the deal is over"
    canvas.text(HAND_X, STATUS_Y, line + (f" ({note})" if note else ""), INK, 14)


class _Canvas:
    """A drawing at :data:`SCALE` times the image's size, in the image's coordinates."""

    def __init__(self) -> None:
        self.image = Image.new("RGB", (WIDTH * SCALE, HEIGHT * SCALE), FELT)
        self.draw = ImageDraw.Draw(self.image)

    def pixels(self) -> np.ndarray:
        small = self.image.resize((WIDTH, HEIGHT), Image.Resampling.BOX)
        return np.asarray(small, dtype=np.uint8)

    def _box(self, box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        return tuple(round(v * SCALE) for v in box)  # type: ignore[return-value]

    def text(self, x: float, y: float, words: str, colour: tuple[int, int, int], size: int) -> None:
        """``words`` with their accents left off (the font Pillow ships has no accented letters)."""
        plain = "".join(ch for ch in unicodedata.normalize("NFKD", words) if not unicodedata.combining(ch))
        self.draw.text((x * SCALE, y * SCALE), plain, fill=colour, font=_font(size * SCALE))

    def frame(self, box: tuple[int, int, int, int]) -> None:
        self.draw.rounded_rectangle(self._box(box), radius=8 * SCALE, outline=FRAME, width=SCALE)

    def outline(self, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> None:
        left, top, right, bottom = box
        self.draw.rounded_rectangle(self._box((left - 3, top - 3, right + 3, bottom + 3)), radius=8 * SCALE,
                                    fill=colour)

    def card(self, box: tuple[int, int, int, int], card: int | None, small: bool = False) -> None:
        """A card face (rank in the corner, the suit's sign in the corner and large), or its back (``None``)."""
        left, top, right, bottom = box
        if card is None:
            self.draw.rounded_rectangle(self._box(box), radius=5 * SCALE, fill=BACK, outline=EDGE, width=SCALE)
            for x in range(left - (bottom - top), right, 6):  # the stripes of the web page's back
                self.draw.line(self._box((max(x, left + 2), top + 2 + max(0, left - x),
                                          min(x + bottom - top, right - 2), bottom - 2 - max(0, x + bottom - top
                                                                                                  - right))),
                               fill=BACK_STRIPE, width=2 * SCALE)
            return
        self.draw.rounded_rectangle(self._box(box), radius=5 * SCALE, fill=FACE, outline=EDGE, width=SCALE)
        colour, suit = suit_colour(card), suit_of(card)
        size = 12 if small else 16
        self.text(left + 4, top + 2, RANKS[rank_of(card)], colour, size)
        self.suit(left + 4 + size * 0.35, top + 6 + size * 1.25, size * 0.35, suit, colour)
        big = (bottom - top) * 0.2
        self.suit(right - big - 5, bottom - big - 6, big, suit, colour)

    def suit(self, cx: float, cy: float, r: float, suit: int, colour: tuple[int, int, int]) -> None:
        """The sign of ``suit`` (spades, hearts, diamonds, clubs) of half-height ``r`` around ``(cx, cy)``."""
        k = SCALE

        def circle(x: float, y: float, radius: float) -> None:
            self.draw.ellipse(((x - radius) * k, (y - radius) * k, (x + radius) * k, (y + radius) * k), fill=colour)

        def polygon(*points: tuple[float, float]) -> None:
            self.draw.polygon([(x * k, y * k) for x, y in points], fill=colour)

        name = SUIT_NAMES[suit]
        if name == "diamonds":
            polygon((cx, cy - r), (cx + 0.75 * r, cy), (cx, cy + r), (cx - 0.75 * r, cy))
        elif name == "hearts":
            circle(cx - 0.48 * r, cy - 0.35 * r, 0.52 * r)
            circle(cx + 0.48 * r, cy - 0.35 * r, 0.52 * r)
            polygon((cx - r, cy - 0.2 * r), (cx + r, cy - 0.2 * r), (cx, cy + r))
        elif name == "spades":
            circle(cx - 0.48 * r, cy + 0.2 * r, 0.5 * r)
            circle(cx + 0.48 * r, cy + 0.2 * r, 0.5 * r)
            polygon((cx - 0.98 * r, cy + 0.1 * r), (cx + 0.98 * r, cy + 0.1 * r), (cx, cy - r))
            polygon((cx, cy + 0.2 * r), (cx - 0.4 * r, cy + r), (cx + 0.4 * r, cy + r))
        else:
            circle(cx, cy - 0.5 * r, 0.42 * r)
            circle(cx - 0.5 * r, cy + 0.1 * r, 0.42 * r)
            circle(cx + 0.5 * r, cy + 0.1 * r, 0.42 * r)
            polygon((cx, cy), (cx - 0.35 * r, cy + r), (cx + 0.35 * r, cy + r))


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The font Pillow ships (no system font: the pixels do not depend on the machine)."""
    return ImageFont.load_default(size=size)
