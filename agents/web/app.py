"""The web table's HTTP API and pages (FastAPI): play, watch records, show results.

Pages: ``/`` (play), ``/watch`` (records and results folders); static files under
``/static``. API (JSON; every request checked, a bad one answered 4xx with
``{"detail": message}`` and nothing changed):

- ``GET /api/options``: rules presets (with their table sizes) and player names;
- ``POST /api/games`` ``{"rules", "opponents": [spec, ...], "seat", "seed"}``: a new
  game (its unguessable ``id``), the table as the person's seat sees it and the events
  so far; ``GET /api/games/{id}``: the table again;
- ``POST /api/games/{id}/move`` ``{"action": id}``: the person's move; the others' moves
  until the person acts again come back as ``events``, in order;
- ``POST /api/games/{id}/resign``; ``POST /api/games/{id}/save`` (a finished game, as a
  JSON Lines record in the records folder); ``GET /api/games/{id}/record``;
- ``GET /api/records``, ``GET /api/records/frames?path=...&game=k``, ``POST
  /api/records/upload?game=k`` (the record's text as the body): a record as frames;
- ``GET /api/results``, ``GET /api/results/{folder}/{file}`` (a CSV as rows, a PNG as
  the image), only from the folders the server was given.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

import agents
from agents.web import watch
from agents.web.session import GameSession, GameStore
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.files import atomic_write

STATIC = Path(__file__).parent / "static"


class NewGame(BaseModel):
    """A new game: rules preset, opponent specs (one per other seat), the person's seat."""

    model_config = ConfigDict(extra="forbid")
    rules: str = "standard"
    opponents: list[str] = Field(default_factory=lambda: ["ppo", "ppo", "ppo"], min_length=1, max_length=16)
    seat: int = 0
    seed: int | None = None


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Any  # checked by the game: an integer id, legal now


def page(name: str) -> str:
    """A page: the shared shell (head, header, the page's script ``<name>.js``) around
    the page's own part, ``<name>-main.html``."""
    shell = string.Template((STATIC / "shell.html").read_text(encoding="utf-8"))
    return shell.substitute(title=name, main=(STATIC / f"{name}-main.html").read_text(encoding="utf-8"))


def create_app(records: Path | None = None, results: Path | None = None) -> FastAPI:
    """The app; ``records``/``results``: the folders it lists, reads and saves into."""
    app = FastAPI(title="thirtyone web table", docs_url=None, redoc_url=None)
    store = GameStore()
    app.state.games = store
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def game_of(key: str) -> tuple[GameSession, Any]:
        found = store.get(key)
        if found is None:
            raise HTTPException(404, "no such game (games are kept while the server runs)")
        return found

    def answer(key: str, game: GameSession) -> dict[str, Any]:
        return {"id": key, "state": game.view(), "events": game.take_events()}

    pages = {name: page(name) for name in ("play", "watch")}

    @app.get("/", include_in_schema=False)
    def play_page() -> HTMLResponse:
        return HTMLResponse(pages["play"])

    @app.get("/watch", include_in_schema=False)
    def watch_page() -> HTMLResponse:
        return HTMLResponse(pages["watch"])

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> RedirectResponse:
        return RedirectResponse("/static/favicon.svg")

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        presets = {}
        for name in sorted(PRESETS):
            rules = Rules.preset(name)
            sizes = [n for n in range(2, rules.max_players + 1) if rules.seats in (None, n)]
            presets[name] = {"table": rules.table, "scoring": rules.scoring, "sizes": sizes}
        return {
            "presets": presets,
            "players": agents.names(),
            "records": records is not None,
            "results": results is not None,
        }

    @app.post("/api/games")
    def new_game(body: NewGame) -> dict[str, Any]:
        specs = [s.strip() for s in body.opponents]
        try:
            for spec in specs:
                agents.check_spec(spec)
            game = GameSession(body.rules, specs, body.seat, body.seed, agents.from_spec)
        except (ValueError, OSError) as e:
            raise HTTPException(400, str(e)) from None
        key = store.add(game)
        return answer(key, game)

    @app.get("/api/games/{key}")
    def get_game(key: str) -> dict[str, Any]:
        game, lock = game_of(key)
        with lock:
            return answer(key, game)

    @app.post("/api/games/{key}/move")
    def move(key: str, body: Move) -> dict[str, Any]:
        game, lock = game_of(key)
        with lock:
            try:
                game.move(body.action)
            except ValueError as e:
                raise HTTPException(409 if "not your turn" in str(e) else 400, str(e)) from None
            return answer(key, game)

    @app.post("/api/games/{key}/resign")
    def resign(key: str) -> dict[str, Any]:
        game, lock = game_of(key)
        with lock:
            game.resign()
            return answer(key, game)

    @app.get("/api/games/{key}/record")
    def record(key: str) -> PlainTextResponse:
        game, lock = game_of(key)
        with lock:
            try:
                text = "\n".join(game.record_lines()) + "\n"
            except ValueError as e:
                raise HTTPException(409, str(e)) from None
        headers = {"Content-Disposition": 'attachment; filename="thirtyone-game.jsonl"'}
        return PlainTextResponse(text, media_type="application/x-ndjson", headers=headers)

    @app.post("/api/games/{key}/save")
    def save(key: str) -> dict[str, Any]:
        if records is None:
            raise HTTPException(409, "the server has no records folder: start it with --records DIR")
        game, lock = game_of(key)
        with lock:
            try:
                lines = game.record_lines()
            except ValueError as e:
                raise HTTPException(409, str(e)) from None
            if game.saved is None:
                name = f"web-{game.rules_name}-{game.num_players}p-seed{game.seed}-{key[:8]}.jsonl"
                atomic_write(records / name, "\n".join(lines) + "\n", replace=False)
                game.saved = name
            return {"saved": game.saved}

    def record_frames(games: list[list[dict[str, Any]]], k: int, name: str) -> dict[str, Any]:
        if not 0 <= k < len(games):
            raise HTTPException(400, f"{name} holds {len(games)} game(s): game must be 0..{len(games) - 1}")
        try:
            out = watch.frames(games[k], name)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        return {"name": name, "games": len(games), "game": k, **out}

    @app.get("/api/records")
    def list_records() -> dict[str, Any]:
        return {"records": watch.list_records(records) if records is not None else []}

    @app.get("/api/records/frames")
    def record_file(path: str = Query(..., max_length=500), game: int = 0) -> dict[str, Any]:
        if records is None:
            raise HTTPException(404, "the server has no records folder: start it with --records DIR")
        try:
            games = watch.load_record(records, path)
        except FileNotFoundError:
            raise HTTPException(404, f"no record {path!r} in the records folder") from None
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        return record_frames(games, game, path)

    @app.post("/api/records/upload")
    async def upload(request: Request, game: int = 0, name: str = "upload") -> dict[str, Any]:
        body = await request.body()
        if len(body) > watch.MAX_RECORD_BYTES:
            raise HTTPException(413, f"a record may be at most {watch.MAX_RECORD_BYTES // 2**20} MB")
        try:
            games = watch.parse_record(body.decode("utf-8"), name[:100])
        except UnicodeDecodeError:
            raise HTTPException(400, f"cannot load record {name[:100]}: it is not UTF-8 text") from None
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        return record_frames(games, game, name[:100])

    @app.get("/api/results")
    def list_results() -> dict[str, Any]:
        return {"results": watch.list_results(results) if results is not None else []}

    @app.get("/api/results/{folder}/{file}", response_model=None)
    def result_file(folder: str, file: str) -> Any:
        if results is None:
            raise HTTPException(404, "the server has no results folder: start it with --results DIR")
        try:
            path = watch.inside(results, f"{folder}/{file}", watch.PLOTS + watch.TABLES)
        except FileNotFoundError:
            raise HTTPException(404, f"no file {folder}/{file} in the results folder") from None
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        if path.suffix.lower() in watch.PLOTS:
            return FileResponse(path, media_type="image/png")
        return watch.read_table(path)

    return app
