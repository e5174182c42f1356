"""docs/observation.md is the layout: its table is :func:`markdown_table`, and the layout's
derived parts (offsets, bounds, features) agree with the blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from imperiale_env.core.observation import (
    BLOCKS,
    FEATURES,
    LAYOUT,
    OBS_SIZE,
    OFFSETS,
    bounds,
    markdown_table,
    read,
    write,
)
from imperiale_env.core.rules import make_rules

DOC = Path(__file__).resolve().parents[1] / "docs" / "observation.md"


def test_the_docs_table_is_the_layout():
    text = DOC.read_text(encoding="utf-8")
    start = text.index("-->\n", text.index("<!-- layout:")) + len("-->\n")
    end = text.index("\n<!-- end of layout -->")
    assert text[start:end] == markdown_table()
    assert f"{OBS_SIZE} bytes" in text and f"({FEATURES.size} floats)" in text


def test_blocks_tile_the_vector_and_bounds_follow_the_rules():
    assert sum(b.size for b in LAYOUT) == OBS_SIZE
    assert OFFSETS[LAYOUT[0].name].start == 0 and OFFSETS[LAYOUT[-1].name].stop == OBS_SIZE
    for preset in ("academie", "foster"):
        rules = make_rules(preset)
        low, high = bounds(rules)
        assert (low <= high).all()
        assert (read(high, "imperiales") == rules.target_imperiales).all()
        assert not low.any() and read(high, "played_in").max() == 12  # the zero observation is in the space
        assert BLOCKS["players"].low == 2  # the one-hot's range stays exact


def test_features_one_hot_categories_and_scale_counts():
    obs = np.zeros((2, OBS_SIZE), dtype=np.uint8)
    write(obs[1], "played_by", 2)
    write(obs[1], "tricks", 6)
    write(obs[1], "hand", 1)
    x = FEATURES.expand(obs)
    assert x.shape == (2, FEATURES.size) and x.dtype == np.float32
    per_row = x.sum(axis=1)
    n_category_entries = len(FEATURES.category_columns)
    assert per_row[0] == n_category_entries  # each category entry sets exactly one feature (value 0)
    # Row 1: 36 hand flags, 3 trick counts of 6/12, and still one feature per category entry.
    assert np.isclose(per_row[1], n_category_entries + 36 + 3 * 0.5)
    assert not np.array_equal(x[0], x[1])
