"""``render_mode="rgb_array"``: the table as an image, for video recorders and libraries that ask for frames.

The image is the text table of :mod:`imperiale_env.envs.render_text` (the same facts as ``"ansi"``: trump,
score, point, shown cards, tricks, the trick on the table, the hand of the player it is drawn
for, the score events) written on a green baize, suits in their colours, at a fixed size
(:data:`WIDTH` x :data:`HEIGHT`) so that every frame of an episode has the same shape.

Pillow draws it (in DejaVu Sans Mono where the system has it); it is a core dependency of the
project (a small, well-kept library), so that ``rgb_array`` works wherever the environments do.
"""

from __future__ import annotations

import textwrap
import unicodedata
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 960, 400
MARGIN, LINE = 14, 20
FELT = (31, 107, 58)
INK = (245, 245, 236)
TITLE = (255, 227, 138)
WRAP = 108


def text_image(text: str) -> np.ndarray:
    """An ``(HEIGHT, WIDTH, 3)`` uint8 image of ``text`` on the table's baize (long lines wrapped,
    lines past the bottom left out)."""
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    font, unicode = _font()
    if not unicode:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    lines: list[str] = []
    for raw in text.splitlines():
        lines += textwrap.wrap(raw, WRAP, subsequent_indent=" " * 9) or [""]
    y = MARGIN
    for n, line in enumerate(lines):
        if y + LINE > HEIGHT - MARGIN:
            break
        draw.text((MARGIN, y), line, fill=TITLE if n == 0 else INK, font=font)
        y += LINE
    return np.asarray(image, dtype=np.uint8)


@cache
def _font() -> tuple[ImageFont.FreeTypeFont | ImageFont.ImageFont, bool]:
    """A monospaced font that has the accents (DejaVu Sans Mono, where the system has it; the
    columns of the table then line up), else Pillow's own font with the text folded to ASCII
    (it lacks the accented letters). Either way the image is the same size."""
    try:
        return ImageFont.truetype("DejaVuSansMono.ttf", 14), True
    except OSError:
        return ImageFont.load_default(size=15), False
