"""The screenshots command regenerates every picture of the web table in docs/ (here into a temporary folder)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from imperiale_web.screenshots import CHROMIUM, SHOTS, main


def test_the_screenshots_command_draws_every_picture(tmp_path, capsys):
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does it)"
    assert main([str(tmp_path)]) == 0
    assert "web_question.png" in capsys.readouterr().out
    for name in SHOTS:
        with Image.open(tmp_path / name) as picture:
            assert picture.format == "PNG" and picture.width >= 300 and picture.height >= 150, name
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for name in ("web_question.png", "web_news.png", "web_end.png", "web_table.png"):
        assert f"docs/{name}" in readme  # each picture the command draws is shown to readers
