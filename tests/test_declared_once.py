"""The compiled layer's declarations: a score event or a table added in one place and not the other
is an error at once, never a silent mismatch.  (A stage kind: tests/test_batch_stages.py; an
observation block the compiled encoder does not write: the dirty buffer of tests/test_batch_observe.py
and the differential check.)"""

from __future__ import annotations

import sys
import types
from collections import namedtuple
from pathlib import Path

import pytest

from imperiale_env.batch import stages_kernels, tables
from imperiale_env.core import events
from imperiale_env.core.rules import make_rules


def _import_source(name: str, source: str, monkeypatch) -> None:
    """Run ``source`` as a module named ``name`` (registered, as a dataclass needs)."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)


def test_an_event_kind_declared_without_its_name_fails_on_import(monkeypatch):
    """Each kind's name constant is unpacked from the declaration: one more kind, and the module no
    longer imports (the batched engine's codes and the records read the same tuple)."""
    source = Path(events.__file__).read_text()
    declared = '    EventKind("capot", lambda r: POINTS if r.capot_points else IMPERIALES),\n'
    assert declared in source
    edited = source.replace(declared, declared + '    EventKind("last_trick", _always(POINTS)),\n')
    with pytest.raises(ValueError, match="too many values to unpack"):
        _import_source("events_with_one_more_kind", edited, monkeypatch)
    _import_source("events_as_they_are", source, monkeypatch)  # the file as it is imports


def test_a_table_declared_and_not_built_is_an_error(monkeypatch):
    """A field added to the tables' declaration that ``Tables`` does not build stops the batch at once."""
    fields = [name for name, _ in stages_kernels.TABLE_FIELDS] + ["last_trick_points"]
    monkeypatch.setattr(tables, "TableArrays", namedtuple("TableArrays", fields))
    with pytest.raises(TypeError, match="last_trick_points"):
        tables.Tables(make_rules("academie"))


def test_a_table_built_of_another_type_than_declared_is_an_error(monkeypatch):
    """The arrays passed by address must be of the declared types: the compiled step reads them by
    their position and type, and a mismatch is refused with both layouts named."""
    layout = list(tables.TABLE_LAYOUT)
    layout[0] = ("<i4", 1)
    monkeypatch.setattr(tables, "TABLE_LAYOUT", tuple(layout))
    with pytest.raises(TypeError, match="change both"):
        tables.Tables(make_rules("academie"))
