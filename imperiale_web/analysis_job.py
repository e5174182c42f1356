"""The analysis of a record on the server, bounded: at most :data:`MAX_WORK` deals times samples,
at most :data:`TIME_LIMIT` seconds, and stopped as soon as the page that asked has gone.

The answer is streamed as JSON lines (``application/x-ndjson``): at once, and then every
:data:`TICK` seconds while the analysis runs, a line ``{"progress": {"done", "total", "deal"}}``
(decisions valued, of how many, the deal being valued, from 0), and last the annotated record
(or an object with ``error``).  Writing the progress lines is also how the server notices a
client that left: the write fails, the stream is closed, and the analysis stops at its next
decision instead of computing for nobody.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from imperiale_web.table import TableError

MAX_WORK = 320
"""Most deals x samples one request may ask for (a 12-deal game at 16 samples is 192)."""
TIME_LIMIT = 120.0
"""Seconds one analysis may run on the server."""
TICK = 0.5
"""Seconds between two progress lines."""


def check_work(record: dict[str, Any], samples: int) -> None:
    """Refuse an analysis larger than :data:`MAX_WORK` before any of it runs."""
    deals = record.get("deals")
    count = len(deals) if isinstance(deals, list) else 1
    if count * samples > MAX_WORK:
        raise TableError(f"analysing {count} deals at {samples} samples is {count * samples} deal-samples; the server "
                         f"analyses at most {MAX_WORK} at once: ask for fewer samples, or run `imperiale analyse` "
                         "on your machine", 413)


def stream_analysis(record: dict[str, Any], samples: int, seed: int, horizon: int | None,
                    time_limit: float = TIME_LIMIT) -> Iterator[str]:
    """Run the analysis in a thread; yield its progress lines, then the annotated record's line
    (an object with ``error`` if it failed or ran out of time)."""
    from imperiale_agents.analysis.record_analysis import AnalysisStopped, analyse_record

    gone = threading.Event()
    deadline = time.monotonic() + time_limit
    result: dict[str, Any] = {}
    progress = {"done": 0, "total": None, "deal": 0}

    def told(done: int, total: int, deal: int) -> None:
        progress.update(done=done, total=total, deal=deal)

    def work() -> None:
        try:
            result["ok"] = analyse_record(record, samples=samples, seed=seed, horizon=horizon, progress=told,
                                          stop=lambda: gone.is_set() or time.monotonic() > deadline)
        except AnalysisStopped:
            result["error"] = (f"the analysis took longer than the server's limit of {time_limit:.0f} s; ask for "
                               "fewer samples or a horizon, or run `imperiale analyse` on your machine")
        except Exception as exc:  # reported to the page, as the routes' errors are
            result["error"] = f"the analysis failed: {type(exc).__name__}: {exc}"

    worker = threading.Thread(target=work, daemon=True, name="imperiale-analysis")
    worker.start()
    try:
        yield json.dumps({"progress": dict(progress)}) + "\n"  # at once: the page shows the work began
        while worker.is_alive():
            worker.join(TICK)
            yield json.dumps({"progress": dict(progress)}) + "\n"
        yield json.dumps(result.get("ok") or {"error": result["error"]}) + "\n"
    finally:  # the client left (GeneratorExit) or the answer was sent: stop the work either way
        gone.set()

