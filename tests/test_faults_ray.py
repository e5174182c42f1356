"""``eval --ray HOST:PORT`` at a port where another service listens (issue 26): a named time limit
and a clear error instead of a wait without end."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("ray")

from imperiale_agents import cluster  # noqa: E402
from imperiale_agents.cluster import ClusterError  # noqa: E402


def test_a_service_that_is_not_ray_is_given_up_within_the_limit(monkeypatch):
    server = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()  # accepts, never answers
    address = f"127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 2.0)
    started = time.perf_counter()
    with pytest.raises(ClusterError, match=r"no Ray cluster answered at .* within 2 s \(CONNECT_SECONDS\): is it a "
                                           r"Ray head's port"):
        cluster.connect(address)
    assert time.perf_counter() - started < 15
    server.close()
