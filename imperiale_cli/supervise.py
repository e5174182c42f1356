"""Work that a library may end without a word, run in a child process whose end is watched.

Ray's core ends the driver process at once (``_exit``, no Python exception, no ``atexit``) when
the node under it dies: a killed raylet or agent, a node lost to the out-of-memory killer.  A
training run with Ray rollout workers would then stop with Ray's log lines only, and nothing of
ours could say what was kept and how to go on.  :func:`supervised` runs such work in a forked
child; the parent only waits.  When the child ends through our own code it says so on a pipe,
and its exit status is passed on unchanged; when it ends without saying so (``_exit`` under a
library, a signal), the parent prints one line with what happened and what to do next.

The fork happens before the work starts any thread (no Ray, no torch operation yet): the child
is a plain copy.  Ctrl-C reaches both processes from the terminal; the parent ignores it and the
child handles it as it always does.  SIGTERM and SIGHUP sent to the parent are passed on as
SIGINT, Ctrl-C: Ray installs its own SIGTERM handler in the driver, which ends the process at once,
where an interrupt lets the run checkpoint its last iteration and print the resume command.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable

RETURNED = b"r"
"""What the child writes on the pipe when its work returned (or raised) through Python."""


def supervised(work: Callable[[], int], abrupt: Callable[[int], str]) -> int:
    """Run ``work`` in a child process and return its exit status; if the child ends without
    returning from ``work`` (it was ended under Python), print ``abrupt(status)`` on stderr and
    return 1 (or 128 + the signal that ended it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: do the work, say it returned, leave without the parent's atexit handlers
        os.close(read_end)
        # Ctrl-C is how the parent stops the work: a process started in the background by a shell
        # inherits SIGINT ignored, and Python then leaves it ignored, so it is set here
        signal.signal(signal.SIGINT, signal.default_int_handler)
        code = 1
        try:
            code = work()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # told as Python would have told it, then the status of a failure
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.write(write_end, RETURNED)
            os._exit(code)
    os.close(write_end)
    # passed on as Ctrl-C: Ray puts its own SIGTERM handler in the driver, which ends it at once
    forward = {sig: signal.signal(sig, lambda _s, _frame: os.kill(pid, signal.SIGINT))
               for sig in (signal.SIGTERM, signal.SIGHUP)}
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        for sig, handler in forward.items():
            signal.signal(sig, handler)
        signal.signal(signal.SIGINT, interrupt)
    returned = os.read(read_end, 1) == RETURNED
    os.close(read_end)
    code = os.waitstatus_to_exitcode(status)
    if returned:
        return code
    print(abrupt(code), file=sys.stderr, flush=True)
    return 128 - code if code < 0 else max(code, 1)


__all__ = ["supervised"]
