"""What the server accepts before a route runs: its own ``Host`` only, same-origin requests, and
request bodies of bounded size, depth and numbers.

A page of another site can make the browser send requests to ``127.0.0.1``; with DNS
rebinding its own name can even resolve there.  The ``Host`` check (421 for any other name)
defeats rebinding, and the ``Origin`` check (403 for a cross-origin request that changes state)
defeats plain cross-site requests, so only the table's own page drives a game.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from flask import request

MAX_BODY = 4 * 1024 * 1024
"""Bytes a request body may hold (a record of a long game is well under 1 MiB)."""
MAX_DEPTH = 64
"""Nesting a JSON body may have (a record nests 6 deep)."""
MAX_DIGITS = 40
"""Digits a JSON number may have (a seed has at most 19)."""
LOCAL_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


class GuardError(ValueError):
    """A request refused before any route ran, with its HTTP status."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def allowed_hosts(host: str) -> set[str]:
    """The host names the server answers to: the local names, and the address it was started on."""
    return {*LOCAL_NAMES, host.strip().lower()} - {"0.0.0.0", "::", ""}


def check_request(hosts: set[str]) -> None:
    """Refuse a request for another host name, a cross-origin request that changes state, or a
    path holding a NUL byte."""
    if "\x00" in request.path:
        raise GuardError("the path holds a NUL byte", 400)
    name = _host_name(request.host)
    if name not in hosts:
        raise GuardError(f"this server answers to {', '.join(sorted(hosts))}, not {name!r}", 421)
    origin = request.headers.get("Origin")
    if request.method not in ("GET", "HEAD", "OPTIONS") and origin is not None:
        parts = urlsplit(origin)
        if parts.netloc.lower() != request.host.lower():
            raise GuardError(f"cross-origin request from {origin!r} refused: only the table's own page may play", 403)


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def json_body() -> Any:
    """The request body as JSON within the bounds (size, depth, digits), else a :class:`GuardError`
    naming the bound."""
    raw = _raw_body()
    if not raw.strip():
        raise GuardError("the request body must be JSON (Content-Type: application/json), got nothing")
    try:
        data = json.loads(raw, parse_int=_bounded_int, parse_float=_bounded_float, parse_constant=_no_constant)
    except RecursionError:
        raise GuardError(f"the JSON body nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise GuardError(f"the request body must be JSON: {exc}") from None
    if _depth(data) > MAX_DEPTH:
        raise GuardError(f"the JSON body nests deeper than {MAX_DEPTH} levels")
    return data


def _raw_body() -> bytes:
    """The body's bytes, at most :data:`MAX_BODY`: a chunked body (no Content-Length) is read from the
    server's own stream and counted, since werkzeug's limit does not stop it there."""
    limit = f"the request body is larger than the server's limit of {MAX_BODY // 2**20} MiB"
    if request.content_length is not None:
        if request.content_length > MAX_BODY:
            raise GuardError(limit, 413)
        return request.get_data(cache=True)
    stream, parts, size = request.environ["wsgi.input"], [], 0
    while size <= MAX_BODY:
        part = stream.read(min(65536, MAX_BODY + 1 - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > MAX_BODY:
        raise GuardError(limit, 413)
    return b"".join(parts)


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits (at most {MAX_DIGITS})")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_DIGITS + 10:
        raise ValueError(f"a number of {len(text)} characters (at most {MAX_DIGITS + 10})")
    return float(text)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _depth(data: Any) -> int:
    """The nesting depth of ``data``, walked without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest
