"""The Flask application of ``imperiale serve``: the page and its JSON API.

=======================================  ==============================================
``GET  /``                               the page (``static/index.html``)
``GET  /api/options``                    presets and agent examples
``POST /api/games``                      a new game ``{preset, opponent, seed?, seat?}``
``GET  /api/games/<id>``                 the person's view of the table
``POST /api/games/<id>/move``            the person's move ``{"action": {"act": ..}}``
``GET  /api/games/<id>/record``          the game's record (a download)
``POST /api/replay``                     frames of a record (the record as the body)
``POST /api/analyse``                    ``{record, samples?, horizon?, seed?}``: its analysis
``GET  /api/records``                    the record files of the ``--records`` folder
``GET  /api/records/<name>``             one of them
=======================================  ==============================================

Bad input is answered with a 4xx status and ``{"error": message}``; the page shows the
message.  Nothing the page sends is run or unpickled: records are JSON checked by
:func:`imperiale_env.records.game_records.game_from_record` before anything else.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from imperiale_env.core.rules import PRESET_NAMES
from imperiale_env.records.game_records import RecordError
from imperiale_web.replay import replay_frames
from imperiale_web.table import Table, TableError

STATIC = Path(__file__).parent / "static"
MAX_GAMES = 64
MAX_BODY = 4 * 1024 * 1024
WEB_SAMPLES, WEB_HORIZON, MAX_WEB_SAMPLES = 4, 4, 64


class ServeError(ValueError):
    """A bad ``imperiale serve`` option (port, host, records folder)."""


def _body() -> Any:
    data = request.get_json(silent=True)
    if data is None:
        raise TableError("the request body must be JSON (Content-Type: application/json)")
    return data


def _int_field(data: dict, name: str, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TableError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def create_app(records: str | os.PathLike[str] | None = None) -> Flask:
    """The application; ``records``: a folder whose ``.json``/``.jsonl`` files the page may open."""
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    folder = Path(records).resolve() if records is not None else None
    games: OrderedDict[str, Table] = OrderedDict()
    lock = threading.Lock()

    def table(game_id: str) -> Table:
        with lock:
            t = games.get(game_id)
        if t is None:
            raise TableError(f"no game {game_id!r} (games are kept while the server runs; start a new one)", 404)
        return t

    @app.errorhandler(TableError)
    def table_error(exc: TableError):
        return jsonify(error=str(exc)), exc.status

    @app.errorhandler(RecordError)
    def record_error(exc: RecordError):
        return jsonify(error=f"bad record: {exc}"), 400

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return jsonify(error=f"{exc.name}: {exc.description}"), exc.code

    @app.get("/")
    def index():
        return send_from_directory(STATIC, "index.html")

    @app.get("/static/<path:name>")
    def static_file(name: str):
        return send_from_directory(STATIC, name)

    @app.get("/api/options")
    def options():
        from imperiale_agents.base import AGENT_KINDS

        examples = ["heuristic", "random", "champion", "pimc:8", "pimc:16:6", "neural:PATH"]
        examples += [k for k in AGENT_KINDS if k not in ("heuristic", "random", "champion", "pimc", "neural", "human")]
        return jsonify(presets=list(PRESET_NAMES), agents=examples, records=folder is not None)

    @app.post("/api/games")
    def new_game():
        data = _body()
        if not isinstance(data, dict):
            raise TableError("a new game is an object {preset, opponent, seed?, seat?}")
        t = Table(data.get("preset", "academie"), data.get("opponent", "heuristic"), data.get("seed"),
                  data.get("seat", 0))
        game_id = os.urandom(8).hex()
        with lock:
            games[game_id] = t
            while len(games) > MAX_GAMES:
                games.popitem(last=False)
        return jsonify(id=game_id, state=t.view()), 201

    @app.get("/api/games/<game_id>")
    def game_view(game_id: str):
        return jsonify(id=game_id, state=table(game_id).view())

    @app.post("/api/games/<game_id>/move")
    def move(game_id: str):
        t = table(game_id)
        data = _body()
        if not isinstance(data, dict) or "action" not in data:
            raise TableError('a move is {"action": {"act": "play", "card": "KH"}}')
        with lock:
            t.play(data["action"])
        return jsonify(id=game_id, state=t.view())

    @app.get("/api/games/<game_id>/record")
    def download(game_id: str):
        t = table(game_id)
        body = json.dumps(t.record(), indent=2) + "\n"
        return Response(body, mimetype="application/json",
                        headers={"Content-Disposition": f'attachment; filename="imperiale-{t.seed}.json"'})

    @app.post("/api/replay")
    def replay():
        record = _body()
        return jsonify(replay_frames(record))

    @app.post("/api/analyse")
    def analyse():
        from imperiale_agents.analysis import analyse_record

        data = _body()
        if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
            raise TableError("an analysis request is {record, samples?, horizon?, seed?}")
        samples = _int_field(data, "samples", WEB_SAMPLES, 1, MAX_WEB_SAMPLES)
        horizon = _int_field(data, "horizon", WEB_HORIZON, 1, 12)
        seed = _int_field(data, "seed", 0, 0, 2**63 - 1)
        return jsonify(analyse_record(data["record"], samples=samples, seed=seed, horizon=horizon))

    @app.get("/api/records")
    def record_list():
        if folder is None:
            return jsonify(records=[])
        names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
        return jsonify(records=names)

    @app.get("/api/records/<name>")
    def record_file(name: str):
        from imperiale_env.records.game_records import load_records

        if folder is None:
            raise TableError("the server was started without --records DIR", 404)
        path = (folder / name).resolve()
        if path.parent != folder or path.suffix not in (".json", ".jsonl") or not path.is_file():
            raise TableError(f"no record file {name!r} in the records folder", 404)
        records = load_records(path)
        if len(records) != 1:
            raise TableError(f"{name} holds {len(records)} records; the page opens files of one record")
        return jsonify(records[0])

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, records: str | None = None) -> None:
    """Run the web table until interrupted; options are checked before anything starts."""
    if not 1 <= port <= 65535:
        raise ServeError(f"--port must be from 1 to 65535, got {port}")
    if not host.strip():
        raise ServeError("--host is empty: give an address such as 127.0.0.1")
    if records is not None and not Path(records).is_dir():
        raise ServeError(f"--records {records!r} is not a folder")
    import socket

    from werkzeug.serving import make_server

    try:  # werkzeug exits the process on a busy port: check first, for a clear error
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
        server = make_server(host, port, create_app(records), threaded=True)
    except OSError as exc:
        raise ServeError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    print(f"imperiale: the table is at http://{host}:{server.server_port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
