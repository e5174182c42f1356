"""numba's on-disk cache keyed on the package's sources (``imperiale_env.kernels.numba_cache``): a
kernel that reads a constant of another module sees that constant's change, where numba's own
check (the kernel's file only) would run the stale machine code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from imperiale_env.kernels import numba_cache

PROBE = '''from numba import njit

from imperiale_env.core.cards import PROBE_VALUE


@njit(cache=True)
def probe():
    return PROBE_VALUE
'''


def test_a_constant_changed_in_another_module_reaches_the_cached_kernel(tmp_path):
    copy = tmp_path / "src" / "imperiale_env"
    shutil.copytree(numba_cache.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "kernels" / "probe_cache.py").write_text(PROBE)
    cards = copy / "core" / "cards.py"
    original = cards.read_text()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    # the copy, not the installed package (an editable install's finder would answer first)
    script = ("import sys\n"
              "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
              f"sys.path.insert(0, {str(copy.parent)!r})\n"
              "import imperiale_env, imperiale_env.kernels.probe_cache as p\n"
              f"assert imperiale_env.__file__.startswith({str(copy)!r}), imperiale_env.__file__\n"
              "print(p.probe())\n")
    run = [sys.executable, "-c", script]
    seen = []
    for value in (1, 1, 2):
        cards.write_text(original + f"\nPROBE_VALUE = {value}\n")
        done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        seen.append(int(done.stdout.split()[-1]))
    assert seen == [1, 1, 2]
    folders = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(folders) == 2 and all(f.startswith("imperiale-") for f in folders)  # one per state of the sources
    assert any((tmp_path / "cache" / folders[0]).rglob("*.nbi"))  # the kernel was cached there


def test_the_folder_follows_the_sources_and_the_users_setting(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("X = 1\n")
    first = numba_cache.keyed_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, package)
    assert first.parent == tmp_path / "xdg" / "imperiale" / "numba" and first.name.startswith("imperiale-")
    assert numba_cache.keyed_cache_dir({"NUMBA_CACHE_DIR": str(tmp_path / "mine")}, package) == \
        tmp_path / "mine" / first.name
    assert numba_cache.keyed_cache_dir({"NUMBA_CACHE_DIR": str(first)}, package) == first  # a child's view
    (package / "a.py").write_text("X = 2\n")
    assert numba_cache.keyed_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, package) != first


def test_this_process_uses_the_keyed_folder():
    import numba

    assert Path(numba.config.CACHE_DIR) == numba_cache.keyed_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR
