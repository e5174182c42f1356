"""Full and read-only disks (issue 26): every write is atomic, so a failed write leaves the last good
file, no temporary file, and one clear line naming the path and the operating system's reason.

The faults are injected (ENOSPC at fsync, EROFS at rename) and, where this machine lets the tests
mount one, met for real on a 64 KiB tmpfs."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from imperiale_env.core.atomic import WriteError, write_atomic


def _fail(code: int):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))
    return fail


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KiB file system when mounting is allowed here, else a folder whose writes fail
    with ENOSPC past 64 KiB (an injected fault of the same shape)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True).returncode == 0
    patch = pytest.MonkeyPatch()
    if not mounted:
        real_write = os.write
        patch.setattr(os, "write", lambda fd, data: real_write(fd, data) if len(data) < 65536
                      else _fail(errno.ENOSPC)())
    yield where
    patch.undo()
    if mounted:
        subprocess.run(["umount", str(where)], check=True)


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("code, where", [(errno.ENOSPC, "fsync"), (errno.EROFS, "replace"), (errno.EACCES, "mkstemp")])
def test_failed_write_keeps_the_last_good_file(tmp_path, monkeypatch, code, where):
    target = tmp_path / "results.json"
    target.write_text("good")
    target_obj = {"fsync": os, "replace": os, "mkstemp": __import__("tempfile")}[where]
    monkeypatch.setattr(target_obj, where, _fail(code))
    with pytest.raises(WriteError) as info:
        write_atomic(target, "new", what="result")
    message = str(info.value)
    assert str(target) in message and os.strerror(code) in message and "earlier file is kept" in message
    assert "\n" not in message and info.value.errno == code
    assert target.read_text() == "good" and _temporaries(tmp_path) == []


def test_new_file_is_never_overwritten(tmp_path):
    target = tmp_path / "policy.npz"
    write_atomic(target, b"first", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second", overwrite=False)
    assert target.read_bytes() == b"first" and _temporaries(tmp_path) == []


def test_real_full_disk_keeps_the_checkpoint(small_disk):
    torch = pytest.importorskip("torch")
    from imperiale_train.checkpoint import save_checkpoint

    path = small_disk / "checkpoint.pt"
    save_checkpoint(path, {"iteration": 1})
    with pytest.raises(WriteError, match=r"cannot write the checkpoint .*checkpoint\.pt: No space left on device"):
        save_checkpoint(path, {"iteration": 2, "model": {"w": torch.zeros(100_000)}})
    assert torch.load(path, weights_only=True)["iteration"] == 1
    assert _temporaries(small_disk) == []


def test_records_on_a_full_disk(small_disk):
    from imperiale_env.records.game_records import load_records, save_records

    path = small_disk / "games.jsonl"
    save_records(path, [{"n": 1}])
    with pytest.raises(WriteError, match="record file"):
        save_records(path, [{"pad": "x" * 70_000}])
    assert load_records(path) == [{"n": 1}] or path.read_text() == '{"n": 1}\n'
    assert _temporaries(small_disk) == []


def test_an_append_on_a_full_disk_is_whole_or_absent(small_disk):
    from imperiale_env.records.game_records import append_records, load_records

    path = small_disk / "games.jsonl"
    append_records(path, [{"n": 1}])
    before = path.read_bytes()
    with pytest.raises(WriteError, match="cannot append to the record file .*: No space left on device; nothing was "
                                         "appended, the file is as it was"):
        append_records(path, [{"n": 2}, {"pad": "x" * 70_000}])
    assert path.read_bytes() == before and load_records(path) == [{"n": 1}]
    append_records(path, [{"n": 3}])  # the file takes appends again at once
    assert load_records(path) == [{"n": 1}, {"n": 3}]


def test_a_line_cut_short_is_set_aside_not_a_broken_file(tmp_path):
    """A record file whose last write was interrupted (an older release on a full disk, a kill):
    reading it warns and reads the whole lines; appending moves the cut line to PATH.cut first."""
    from imperiale_env.records.game_records import append_records, load_records

    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n{"n": 3, "deals": [{"hands": [["AS", "K')
    with pytest.warns(UserWarning, match="its last line \\(3\\) is cut short .* left out"):
        assert load_records(path) == [{"n": 1}, {"n": 2}]
    with pytest.warns(UserWarning, match="last line was cut short .* moved to .*games.jsonl.cut"):
        append_records(path, [{"n": 4}])
    assert (tmp_path / "games.jsonl.cut").read_bytes() == b'{"n": 3, "deals": [{"hands": [["AS", "K'
    assert load_records(path) == [{"n": 1}, {"n": 2}, {"n": 4}]
    path.write_bytes(b'{"n": 1}\n{"n": 5}')  # a whole last line without its newline is a record, kept
    append_records(path, [{"n": 6}])
    assert load_records(path) == [{"n": 1}, {"n": 5}, {"n": 6}] and not (tmp_path / "games.jsonl.cut.1").exists()


def test_cli_analyse_out_on_read_only_disk_is_one_line(tmp_path, monkeypatch, capsys):
    from imperiale_cli import cli

    monkeypatch.setattr(os, "replace", _fail(errno.EROFS))
    def analyse(args):
        return write_atomic(tmp_path / f"{uuid.uuid4()}.json", "{}", what="analysis")

    monkeypatch.setattr(cli, "_cmd_analyse", analyse)  # main builds its parser after this patch
    status = cli.main(["analyse", "x.json"])
    err = capsys.readouterr().err
    assert status == 2 and "Read-only file system" in err and "Traceback" not in err and err.count("\n") == 1


def test_record_bounds_are_named_before_work(tmp_path, monkeypatch):
    from imperiale_env.records import game_records
    from imperiale_env.records.game_records import RecordError, load_records

    path = tmp_path / "big.jsonl"
    path.write_text('{"deals": []}\n')
    monkeypatch.setattr(game_records, "MAX_FILE_BYTES", 8)
    with pytest.raises(RecordError, match=r"limited to 0 MiB \(MAX_FILE_BYTES\)"):
        load_records(path)
    monkeypatch.setattr(game_records, "MAX_FILE_BYTES", 2**20)
    path.write_text('{"deals": [' + ",".join(["{}"] * 10_001) + "]}\n")
    with pytest.raises(RecordError, match=r"big\.jsonl, line 1: a record of 10001 deals; .* at most 10000 deals"):
        load_records(path)
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(RecordError, match="nested too deeply"):
        load_records(path)


def test_a_record_file_too_big_for_the_memory_allowed_is_one_clear_error(tmp_path):
    """Under a memory cap (``RLIMIT_AS``) a large ``.jsonl`` that parses into more than the cap
    allows is refused in words, not with a MemoryError traceback."""
    import sys

    line = json.dumps({"format": "imperiale-record", "padding": ["x" * 40] * 30}) + "\n"
    path = tmp_path / "many.jsonl"
    path.write_text(line * ((30 << 20) // len(line)))
    code = ("import resource, sys\n"
            "from imperiale_env.records.game_records import RecordError, load_records\n"
            "resource.setrlimit(resource.RLIMIT_AS, (300 << 20, 300 << 20))\n"
            "try:\n    load_records(sys.argv[1])\nexcept RecordError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "does not fit in the memory this process may use" in done.stdout and "split it" in done.stdout, done.stdout
