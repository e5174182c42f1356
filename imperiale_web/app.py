"""The Flask application of ``imperiale serve``: the page and its JSON API.

=======================================  ==============================================
``GET  /``                               the page (``static/index.html``)
``GET  /api/options``                    presets and the opponents offered (``--agents``)
``POST /api/games``                      a new game ``{preset, opponent, seed?, seat?}``
``GET  /api/games/<id>``                 the person's view of the table
``POST /api/games/<id>/move``            the person's move ``{"action": {"act": ..}}``
``POST /api/games/<id>/resign``          the person gives up the game (its record is then his)
``GET  /api/games/<id>/record``          the game's record, once it is over (409 before)
``GET  /api/games/<id>/beliefs``         the person's own belief now (his seat's observation only)
``POST /api/replay``                     frames of a record (the record as the body)
``POST /api/analyse``                    ``{record, samples?, horizon?, seed?}``: its analysis (streamed)
``POST /api/beliefs``                    ``{record, deal, index}``: the acting player's belief there
``GET  /api/records``                    the record files of the ``--records`` folder
``GET  /api/records/<name>``             one of them (``{"records": [...]}`` for a file of several)
=======================================  ==============================================

While a game runs the page receives only what the person's seat may see: his hand, the cards
on the table, what was shown; never a bot's hand, and neither the record nor the seed (from which
every deal follows) until the game is over or given up.  The server answers only its own host
name and same-origin requests (:mod:`imperiale_web.guard`), and builds only the opponents it
was started with.

Bad input is answered with a 4xx status and ``{"error": message}``; the page shows the
message.  Nothing the page sends is run or unpickled: records are JSON checked by
:func:`imperiale_env.records.game_records.game_from_record` before anything else.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from flask import Flask, Response, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from imperiale_env.core.rules import PRESET_NAMES
from imperiale_env.records.game_records import RecordError
from imperiale_web import DEFAULT_AGENTS
from imperiale_web.analysis_job import check_work, stream_analysis
from imperiale_web.beliefs import record_belief, seat_belief
from imperiale_web.games import Games
from imperiale_web.guard import MAX_BODY, GuardError, allowed_hosts, check_request, json_body
from imperiale_web.replay import replay_frames
from imperiale_web.table import Table, TableError

STATIC = Path(__file__).parent / "static"
WEB_SAMPLES, MAX_WEB_SAMPLES = 4, 64


class ServeError(ValueError):
    """A bad ``imperiale serve`` option (port, host, records folder, agents)."""


def check_agents(agents: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The opponents the page may choose: agent specs that build, and no ``human``."""
    from imperiale_agents.registry import AgentError, make_agent

    agents = tuple(a.strip() for a in agents)
    if not agents or not all(agents):
        raise ServeError("--agents needs comma-separated agent specs, none empty")
    for spec in agents:
        if spec.partition(":")[0] == "human":
            raise ServeError("--agents: 'human' is the person at the page, not an opponent")
        try:
            make_agent(spec)
        except AgentError as exc:
            raise ServeError(f"--agents: {exc}") from None
    return agents


def _int_field(data: dict, name: str, default: int | None, low: int, high: int) -> int | None:
    value = data.get(name, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TableError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def create_app(records: str | os.PathLike[str] | None = None, agents: tuple[str, ...] = DEFAULT_AGENTS,
               host: str = "127.0.0.1") -> Flask:
    """The application; ``records``: a folder whose ``.json``/``.jsonl`` files the page may open;
    ``agents``: the opponents the page may choose (nothing else is built for a page)."""
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    folder = Path(records).resolve() if records is not None else None
    games, hosts = Games(), allowed_hosts(host)
    app.before_request(lambda: check_request(hosts))
    _errors(app)
    _game_routes(app, games, tuple(agents))
    _record_routes(app, folder)
    return app


def _errors(app: Flask) -> None:
    app.register_error_handler(TableError, lambda exc: (jsonify(error=str(exc)), exc.status))
    app.register_error_handler(GuardError, lambda exc: (jsonify(error=str(exc)), exc.status))
    app.register_error_handler(RecordError, lambda exc: (jsonify(error=f"bad record: {exc}"), 400))
    app.register_error_handler(HTTPException, lambda exc: (jsonify(error=f"{exc.name}: {exc.description}"),
                                                           exc.code))


def _game_routes(app: Flask, games: Games, agents: tuple[str, ...]) -> None:
    """The page, and the games: what a player at the table may see and do."""
    app.add_url_rule("/", "index", lambda: send_from_directory(STATIC, "index.html"))
    app.add_url_rule("/static/<path:name>", "static_file", lambda name: send_from_directory(STATIC, name))
    app.add_url_rule("/api/options", "options", lambda: jsonify(presets=list(PRESET_NAMES), agents=list(agents),
                                                               records=app.config.get("RECORDS", False)))

    @app.post("/api/games")
    def new_game():
        data = json_body()
        if not isinstance(data, dict):
            raise TableError("a new game is an object {preset, opponent, seed?, seat?}")
        opponent = data.get("opponent", agents[0])
        if opponent not in agents:
            raise TableError(f"the opponent {opponent!r} is not offered by this server; choose one of: "
                             f"{', '.join(agents)}")
        t = Table(data.get("preset", "academie"), opponent, data.get("seed"), data.get("seat", 0))
        game_id = games.add(t)
        return jsonify(id=game_id, state=t.view()), 201

    app.add_url_rule("/api/games/<game_id>", "game_view",
                     lambda game_id: jsonify(id=game_id, state=games.get(game_id).view()))

    @app.post("/api/games/<game_id>/move")
    def move(game_id: str):
        t = games.get(game_id)
        data = json_body()
        if not isinstance(data, dict) or "action" not in data:
            raise TableError('a move is {"action": {"act": "play", "card": "KH"}}')
        with games.lock:
            t.play(data["action"])
        return jsonify(id=game_id, state=t.view())

    @app.post("/api/games/<game_id>/resign")
    def resign(game_id: str):
        t = games.get(game_id)
        with games.lock:
            t.resign()
        return jsonify(id=game_id, state=t.view())

    @app.get("/api/games/<game_id>/beliefs")
    def beliefs(game_id: str):
        t = games.get(game_id)
        seat = request.args.get("seat", str(t.seat))
        if seat != str(t.seat):  # another seat's belief reads that seat's hand
            raise TableError(f"the table gives only your own belief (seat {t.seat}), not that of seat {seat!r}; the "
                             "replay of the saved record shows every player's", 403)
        with games.lock:
            return jsonify(seat_belief(t))

    @app.get("/api/games/<game_id>/record")
    def download(game_id: str):
        t = games.get(game_id)
        body = json.dumps(t.record(), indent=2) + "\n"
        return Response(body, mimetype="application/json",
                        headers={"Content-Disposition": f'attachment; filename="imperiale-{t.seed}.json"'})


def _record_routes(app: Flask, folder: Path | None) -> None:
    """Replays and analyses of records: the page's own, or the files of ``--records``."""
    app.config["RECORDS"] = folder is not None
    app.add_url_rule("/api/replay", "replay", lambda: jsonify(replay_frames(json_body())), methods=["POST"])
    app.add_url_rule("/api/beliefs", "record_beliefs", lambda: jsonify(record_belief(json_body())), methods=["POST"])

    @app.post("/api/analyse")
    def analyse():
        data = json_body()
        if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
            raise TableError("an analysis request is {record, samples?, horizon?, seed?}")
        samples = _int_field(data, "samples", WEB_SAMPLES, 1, MAX_WEB_SAMPLES)
        horizon = _int_field(data, "horizon", None, 1, 12)  # full depth unless asked
        seed = _int_field(data, "seed", 0, 0, 2**63 - 1)
        replay_frames(data["record"])  # a bad record is a 400 before anything streams
        check_work(data["record"], samples)
        return Response(stream_analysis(data["record"], samples, seed, horizon), mimetype="application/x-ndjson")

    @app.get("/api/records")
    def record_list():
        return jsonify(records=[] if folder is None else sorted(_files(folder)))

    @app.get("/api/records/<name>")
    def record_file(name: str):
        from imperiale_env.records.game_records import game_from_record, load_records

        if folder is None:
            raise TableError("the server was started without --records DIR", 404)
        path = _files(folder).get(name)
        if path is None:
            raise TableError(f"no record file {name!r} in the records folder", 404)
        records = load_records(path, follow_links=False)  # a link swapped in since the listing is refused
        for record in records:
            game_from_record(record)  # a JSON file that is not a record is not served
        return jsonify(records[0]) if len(records) == 1 else jsonify(records=records)


def _files(folder: Path) -> dict[str, Path]:
    """The record files of ``folder`` by name: regular files directly inside it, never a symbolic
    link (it could lead anywhere on the machine), so that the folder is all the page can read and
    the names listed are the names served.  A folder removed while the server runs is a clear 404."""
    try:
        return {p.name: p for p in folder.iterdir()
                if not p.is_symlink() and p.is_file() and p.suffix in (".json", ".jsonl")}
    except OSError as exc:
        raise TableError(f"the records folder {str(folder)!r} cannot be read any more ({exc.strerror}); restart "
                         "the server with --records DIR", 404) from None


def serve(host: str = "127.0.0.1", port: int = 8000, records: str | None = None,
          agents: tuple[str, ...] = DEFAULT_AGENTS) -> None:
    """Run the web table until interrupted; options are checked before anything starts."""
    agents = check_agents(agents)
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
        server = make_server(host, port, create_app(records, agents, host), threaded=True)
    except OSError as exc:
        raise ServeError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    if host.strip() in ("0.0.0.0", "::") or not host.startswith(("127.", "localhost", "::1")):
        print(f"imperiale: warning: --host {host} opens the table to other machines of the network; anyone who "
              "reaches it can play and analyse on this computer", file=sys.stderr, flush=True)
    print(f"imperiale: the table is at http://{host}:{server.server_port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
