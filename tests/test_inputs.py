"""The shared checks of user-supplied paths and seeds give clear errors, before any work."""

import os

import pytest

from imperiale_env.core import input_checks as inputs
from imperiale_env.core.input_checks import InputError


def test_input_file_accepts_a_regular_file(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("{}")
    assert inputs.input_file(path) == path


@pytest.mark.parametrize("make, words", [
    (lambda d: d, "is a directory"),
    (lambda d: d / "missing.json", "no such record"),
    (lambda d: "", "path is empty"),
    (lambda d: "a\x00b.json", "NUL byte"),
])
def test_input_file_refuses_with_the_reason(tmp_path, make, words):
    with pytest.raises(InputError, match=words):
        inputs.input_file(make(tmp_path), "record")


def test_input_file_names_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        inputs.input_file(fifo)


def test_output_file_never_overwrites_unless_allowed(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("precious")
    with pytest.raises(InputError, match="exists already"):
        inputs.output_file(path, may_exist=False)
    assert inputs.output_file(path, may_exist=True) == path
    assert path.read_text() == "precious"


def test_output_file_needs_an_existing_folder(tmp_path):
    with pytest.raises(InputError, match="no such folder"):
        inputs.output_file(tmp_path / "nope" / "out.json", may_exist=False)
    with pytest.raises(InputError, match="is a directory"):
        inputs.output_file(tmp_path, may_exist=True)


def test_output_dir_refuses_empty_and_file_parents(tmp_path):
    with pytest.raises(InputError, match="empty"):
        inputs.output_dir("")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="is a file"):
        inputs.output_dir(blocker / "run")
    assert inputs.output_dir(tmp_path / "new" / "run") == tmp_path / "new" / "run"


@pytest.mark.parametrize("bad", [-1, 2**63, 2**64, pytest.param(10**5000, id="10**5000"), True, 1.5, 3.0, "3", None])
def test_seed_range(bad):
    with pytest.raises(InputError, match=r"2\*\*63"):
        inputs.seed(bad)


def test_seed_accepts_the_int64_range():
    assert inputs.seed(0) == 0
    assert inputs.seed(2**63 - 1) == 2**63 - 1


def test_output_paths_on_a_file_system_that_refuses_writes():
    # /proc refuses new files even to root, whose permission bits say yes.
    with pytest.raises(InputError, match="not writable"):
        inputs.output_file("/proc/imperiale.json", may_exist=False)
    with pytest.raises(InputError, match="not writable"):
        inputs.output_dir("/proc/imperiale_run")
