"""Connecting to Ray: a cluster by address, or a local instance, with errors that say what to do.

Ray is an optional dependency (``pip install 'imperiale[ray]'``); it is imported only here and
in the modules that run work on it (:mod:`imperiale_agents.parallel.ray_tournament`,
:mod:`imperiale_train.ray_rollout`), so that everything else works without it.

``address``: ``None`` or ``"local"`` starts a local instance (``ray.init(num_cpus=...)``);
anything else (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:PORT"``) joins that cluster.  A
process that already called ``ray.init`` (a test session, a notebook) keeps its instance:
:func:`connect` then starts nothing and :meth:`RaySession.close` shuts nothing down.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from typing import Any

LOCAL = "local"


class ClusterError(RuntimeError):
    """Ray is missing, the cluster cannot be reached, or it was lost during the work."""


def import_ray():
    """The ``ray`` module, or a :class:`ClusterError` telling how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError("Ray is not installed: pip install 'imperiale[ray]'") from None
    return ray


@dataclass
class RaySession:
    """The Ray instance in use; ``started``: this process started it and shuts it down on close."""

    address: str
    started: bool

    def close(self) -> None:
        if self.started:
            import ray

            ray.shutdown()
            self.started = False


def connect(address: str | None = None, num_cpus: int | None = None) -> RaySession:
    """Join the cluster at ``address`` or start a local instance of ``num_cpus`` CPUs."""
    ray = import_ray()
    local = address in (None, "", LOCAL)
    if not local:
        _check_reachable(address)
    if ray.is_initialized():
        return RaySession(address="(already connected)", started=False)
    if num_cpus is not None and num_cpus < 1:
        raise ClusterError(f"a local Ray instance needs at least 1 CPU, got num_cpus={num_cpus}")
    try:
        if local:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
        else:
            _init_within(ray, address, CONNECT_SECONDS)
    except ClusterError:
        raise
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "a local Ray instance" if local else f"the Ray cluster at {address!r}"
        hint = "" if local else " (is `ray start --head` running there, and is the address HOST:PORT, auto or ray://...?)"
        raise ClusterError(f"cannot start or reach {where}: {exc}{hint}") from None
    return RaySession(address=LOCAL if local else address, started=True)


CONNECT_SECONDS = 20.0
"""How long joining a cluster may take: a port where another service listens accepts the connection
and never answers as Ray, and ``ray.init`` would wait for it without end."""


def _init_within(ray: Any, address: str, seconds: float) -> None:
    """``ray.init(address=...)`` in a daemon thread, given up (with a :class:`ClusterError`) after
    ``seconds``; its own errors are raised here as they would be without the thread."""
    outcome: list[BaseException | None] = []

    def join() -> None:
        try:
            ray.init(address=address, log_to_driver=False)
            outcome.append(None)
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=join, name="ray-connect", daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        raise ClusterError(f"no Ray cluster answered at {address!r} within {seconds:g} s (CONNECT_SECONDS): "
                           "is it a Ray head's port (`ray start --head` prints it), not another service?")
    if outcome[0] is not None:
        raise outcome[0]


def check_cpus(per_task: int, tasks: int, what: str) -> None:
    """Fail before submitting work that could never be scheduled (Ray would wait for it forever):
    ``tasks`` tasks or actors held at once, each asking for ``per_task`` CPUs on one node."""
    import ray

    nodes = [n["Resources"].get("CPU", 0.0) for n in ray.nodes() if n.get("Alive")]
    biggest, total = max(nodes, default=0.0), sum(nodes)
    if per_task > biggest or per_task * tasks > total:
        raise ClusterError(f"{what} needs {tasks} x {per_task} CPU(s) at once on the Ray cluster, "
                           f"which has {total:g} CPUs (at most {biggest:g} on one node)")


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` nobody listens at (``ray.init`` itself retries for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host:
        if address == "auto":
            return  # ray.init finds the cluster of this machine, or says there is none
        raise ClusterError(f"bad Ray address {address!r} (allowed: local, auto, HOST:PORT, ray://HOST:PORT)")
    if not port.isdigit():
        raise ClusterError(f"bad Ray address {address!r}: the port {port!r} is not a number")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Ray cluster at {address!r}: {exc.strerror or exc} "
                           "(is `ray start --head` running there?)") from None


def lost(exc: BaseException, address: str) -> ClusterError:
    """The error for a cluster that went away while work was on it."""
    return ClusterError(f"lost the Ray cluster ({address}): {type(exc).__name__}: {exc}")


def failure(exc: BaseException, address: str) -> BaseException:
    """What to raise for a Ray error: the exception a task raised, as itself (an agent's error
    reads the same on a cluster as at home); any other Ray error means the cluster was lost."""
    import ray

    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        return cause if isinstance(cause, Exception) else exc
    return lost(exc, address)
