"""``imperiale play --save`` keeps the game when the terminal closes (SIGHUP) or the process is
asked to stop (SIGTERM), as it does on Ctrl-C: a real process, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_game_is_saved(tmp_path, sig):
    out = tmp_path / "game.json"
    play = subprocess.Popen([sys.executable, "-m", "imperiale_cli", "play", "--seed", "5", "--save", str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    play.stdin.write("1\n" * 5)
    play.stdin.flush()
    time.sleep(4)  # the game is waiting for the person's next move
    os.kill(play.pid, sig)
    stdout, stderr = play.communicate(timeout=60)
    assert play.returncode == 130, stderr
    assert "Interrupted: the game is stopped." in stdout and "Traceback" not in stderr
    record = json.loads(out.read_text())
    assert record["deals"] and record["deals"][0]["actions"]
