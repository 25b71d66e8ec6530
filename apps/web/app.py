"""The web table's HTTP API and pages (FastAPI): play, watch records, show results.

Pages: ``/`` (play), ``/watch`` (records and results folders); static files under
``/static``. API (JSON; every request checked, a bad one answered 4xx with
``{"detail": message}`` and nothing changed):

- ``GET /api/options``: rules presets (with their table sizes) and player names;
- ``POST /api/games`` ``{"rules", "opponents": [spec, ...], "seat", "seed"}``: a new
  game (its unguessable ``id``; a ``seed`` only where the server allows seeds), the table as the person's seat sees it and the events
  so far; ``GET /api/games/{id}``: the table again;
- ``POST /api/games/{id}/move`` ``{"action": id}``: the person's move; the others' moves
  until the person acts again come back as ``events``, in order;
- ``POST /api/games/{id}/resign``; ``POST /api/games/{id}/save`` (a finished game, as a
  JSON Lines record in the records folder); ``GET /api/games/{id}/record``;
- ``GET /api/records``, ``GET /api/records/frames?path=...&game=k``, ``POST
  /api/records/upload?game=k`` (the record's text as the body): a record as frames;
- ``GET /api/results``, ``GET /api/results/{folder}/{file}`` (a CSV as rows, a PNG as
  the image), only from the folders the server was given.

Every request passes :class:`~apps.web.guard.Guard` (its ``Host``, its ``Origin`` and
the token); opponents are seated by :class:`~apps.web.seats.Seating` (built-in
players within bounds, and known models); the work of a game (building its players,
the opponents' moves, replaying a record) runs off the event loop on at most
``workers`` threads, each within ``move_seconds``; games are bounded in number and
expire when idle (:class:`~apps.web.config.WebConfig`).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import secrets
import string
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from starlette.requests import ClientDisconnect

import agents
from agents.ppo import ZOO
from apps.web import watch
from apps.web.config import WebConfig
from apps.web.guard import Guard
from apps.web.seats import BOUNDS, Seating
from apps.web.session import GameSession, GameStore, MoveTimeout, TableFull
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.files import atomic_write

STATIC = Path(__file__).parent / "static"
#: where Swagger UI's own files are served (under /static/: open, as the page's are)
API_DOCS_STATIC = "/static/api-docs"
#: Longest player spec a new game may name (the built-in specs are a few dozen characters).
MAX_SPEC = 200
#: Uploads read at once (each up to 50 MB held while it is parsed).
UPLOADS_AT_ONCE = 2
#: Seconds an upload's body may take to arrive (50 MB at some 2 MB/s).
BODY_SECONDS = 30


class NewGame(BaseModel):
    """A new game: rules preset, opponent specs (one per other seat), the person's seat.
    Strict: a seat or seed is a JSON integer, never ``true`` or ``"1"``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    rules: str = "standard"
    opponents: list[Annotated[str, StringConstraints(max_length=MAX_SPEC)]] = Field(
        default_factory=lambda: ["ppo", "ppo", "ppo"], min_length=1, max_length=16
    )
    seat: int = 0
    seed: int | None = None


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Any  # checked by the game: an integer id, legal now
    turn: int | None = None  # the view's turn this move is for: a retried move is played once


#: Seconds a new game (its players built: models loaded, kernels compiled on first use)
#: or a record's replay may take.
SETUP_SECONDS = 120
#: Longest part of a request's own text an error answer repeats.
ECHO = 200
#: Content types an upload may have (JSON Lines; plain text would let any page post without a preflight).
UPLOAD_TYPES = ("application/x-ndjson", "application/jsonl", "application/json", "application/jsonlines")


def short(message: str) -> str:
    """An error message cut to :data:`ECHO` characters (it may quote the request)."""
    return message if len(message) <= ECHO else message[: ECHO - 1] + "…"


class Busy(Exception):
    """Every worker is taken, or the game is still busy with an earlier request."""


class Workers:
    """Game work off the event loop: at most ``count`` daemon threads at once, each
    answer waited for at most ``seconds``. A daemon thread never holds the process at
    exit, so Ctrl-C and SIGTERM stop the server whatever a thread is doing."""

    def __init__(self, count: int) -> None:
        self.slots = threading.BoundedSemaphore(count)
        self.count = count

    async def run(self, work: Callable[[], Any], seconds: float) -> Any:
        if not self.slots.acquire(blocking=False):
            raise Busy(f"the table is busy: {self.count} games are being computed; try again in a moment")
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if not done.done():
                done.set_result(value) if ok else done.set_exception(value)

        def thread() -> None:
            try:
                ok, value = True, work()
            except Exception as e:  # handed to the request
                ok, value = False, e
            finally:
                self.slots.release()
            with contextlib.suppress(RuntimeError):  # the server stopped meanwhile
                loop.call_soon_threadsafe(settle, ok, value)

        threading.Thread(target=thread, name="thirtyone-table", daemon=True).start()
        return await asyncio.wait_for(asyncio.shield(done), seconds)


def page(name: str) -> str:
    """A page: the shared shell (head, header, the page's script ``<name>.js``) around
    the page's own part, ``<name>-main.html``."""
    shell = string.Template((STATIC / "shell.html").read_text(encoding="utf-8"))
    return shell.substitute(title=name, main=(STATIC / f"{name}-main.html").read_text(encoding="utf-8"))


def create_app(config: WebConfig | None = None) -> FastAPI:
    """The app, behind its :class:`~apps.web.guard.Guard`; its token is
    ``app.state.token`` (``config.token``, or a fresh random one)."""
    config = config or WebConfig()
    token = config.token or secrets.token_urlsafe(32)
    records, results = config.records, config.results
    # the HTTP API's own description (OpenAPI) and its page, behind the token like every
    # route: /api/openapi.json, /api/docs. Swagger UI's scripts and styles are served by
    # the table itself (fastapi-offline's copy, under the open /static/), not a CDN: the
    # page works offline and tells no other site who reads it.
    app = FastAPIOffline(
        title="thirtyone web table",
        description="Play Thirty-One against built-in and learned players, watch and replay games.",
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
        swagger_ui_oauth2_redirect_url="/api/docs/oauth2-redirect",
        static_url=API_DOCS_STATIC,
    )
    store = GameStore(config.max_games, config.idle_minutes * 60)
    seating = Seating(
        model_folders=(ZOO, *([config.models] if config.models else [])), allow_code=config.allow_code
    )
    workers = Workers(config.workers)
    uploads = asyncio.Semaphore(UPLOADS_AT_ONCE)
    app.state.games = store
    app.state.token = token
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(Guard, token=token, host=config.host)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        """FastAPI's 422, without the ``input`` it would echo whole: where and what."""
        problems = [
            f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
            for e in error.errors()[:5]
        ]
        kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        as_json = kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))
        if not as_json and any(tuple(e.get("loc", ()))[:1] == ("body",) for e in error.errors()):
            sent = repr(kind[:60]) if kind else "none"
            problems.insert(0, f"send the body as JSON with Content-Type application/json (sent: {sent})")
        return JSONResponse({"detail": short("; ".join(problems))}, status_code=422)

    def game_of(key: str) -> tuple[GameSession, threading.Lock]:
        found = store.get(key)
        if found is None:
            raise HTTPException(
                404, "no such game (games are kept while the server runs, until idle too long)"
            )
        return found

    def answer(key: str, game: GameSession) -> dict[str, Any]:
        return {"id": key, "state": game.view(), "events": game.take_events()}

    @contextlib.contextmanager
    def holding(game: GameSession, lock: threading.Lock, seconds: float = 2.0) -> Iterator[None]:
        """The game's lock; 409 for a game stopped while a player would not answer (its
        thread may hold the lock for good), 503 while an earlier request holds it."""
        if not lock.acquire(timeout=seconds):
            if game.stopped:
                raise HTTPException(409, game.stopped)
            raise HTTPException(503, "this game is still busy with an earlier request; try again in a moment")
        try:
            yield
        finally:
            lock.release()

    async def off_loop(work: Callable[[], Any], game: GameSession | None = None) -> Any:
        """``work()`` on a worker, its failures as 4xx/5xx answers. A move is waited
        for a little past its time limit (the opponents stop at the limit between two
        moves; one that will not answer inside its move is cut off here); building a
        game's players or replaying a record, for :data:`SETUP_SECONDS`."""
        seconds = config.move_seconds + 5 if game is not None else max(SETUP_SECONDS, config.move_seconds + 5)
        try:
            return await workers.run(work, seconds)
        except MoveTimeout:
            raise HTTPException(
                504, f"the opponents took more than {config.move_seconds:g} s to move: the game was stopped"
            ) from None
        except TimeoutError:
            if game is None:
                raise HTTPException(504, f"no answer within {seconds:g} s") from None
            game.stop(f"an opponent gave no move within {config.move_seconds:g} s: the game was stopped")
            raise HTTPException(504, game.stopped) from None
        except (Busy, TableFull) as e:
            raise HTTPException(503, str(e)) from None
        except (ValueError, OSError) as e:  # (after TimeoutError, an OSError)
            raise HTTPException(400, short(str(e))) from None

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
        """The rules presets with their table sizes, the players and models a game may seat."""
        presets = {}
        for name in sorted(PRESETS):
            rules = Rules.preset(name)
            sizes = [n for n in range(2, rules.max_players + 1) if rules.seats in (None, n)]
            presets[name] = {"table": rules.table, "scoring": rules.scoring, "sizes": sizes}
        players = [n for n in agents.names() if n in BOUNDS or config.allow_code]
        return {
            "presets": presets,
            "players": players,
            "models": seating.model_names(),
            "allow_code": config.allow_code,
            "seeds": config.allow_seeds,
            "records": records is not None,
            "results": results is not None,
        }

    @app.post("/api/games")
    async def new_game(body: NewGame) -> dict[str, Any]:
        """Start a game: rules, opponents (specs), the person's seat, a seed; its id, state and events."""
        if body.seed is not None and not config.allow_seeds:
            raise HTTPException(
                400,
                "this server deals its own shuffles: a request may not choose the seed (whoever knows it "
                "knows every card); a server started with --allow-seeds lets it",
            )
        specs = [s.strip() for s in body.opponents]

        def build() -> GameSession:
            store.check_room()
            return GameSession(body.rules, specs, body.seat, body.seed, seating.build, config.move_seconds)

        game = await off_loop(build)
        try:
            key = store.add(game)
        except TableFull as e:
            raise HTTPException(503, str(e)) from None
        lock = store.games[key][1]

        def begin() -> dict[str, Any]:
            with holding(game, lock, config.move_seconds):
                game.begin()
                return answer(key, game)

        try:
            return await off_loop(begin, game)
        except HTTPException:
            store.remove(key)  # its id was never given out: nobody could finish or clear it
            raise

    @app.get("/api/games/{key}")
    def get_game(key: str) -> dict[str, Any]:
        """The game as the person's seat sees it, and the events since the last answer."""
        game, lock = game_of(key)
        with holding(game, lock):
            return answer(key, game)

    @app.post("/api/games/{key}/move")
    async def move(key: str, body: Move) -> dict[str, Any]:
        """Play the person's move; the opponents play on to the person's next decision."""
        game, lock = game_of(key)

        def play() -> dict[str, Any]:
            with holding(game, lock, config.move_seconds):
                try:
                    game.move(body.action, body.turn)
                except ValueError as e:
                    raise HTTPException(409 if "not your turn" in str(e) else 400, short(str(e))) from None
                return answer(key, game)

        return await off_loop(play, game)

    @app.post("/api/games/{key}/resign")
    def resign(key: str) -> dict[str, Any]:
        """Stop playing this game (it can then be saved)."""
        game, lock = game_of(key)
        with holding(game, lock):
            game.resign()
            return answer(key, game)

    @app.get("/api/games/{key}/record")
    def record(key: str) -> PlainTextResponse:
        """The finished game as a JSON Lines record (every card: only once it is over)."""
        game, lock = game_of(key)
        with holding(game, lock):
            try:
                text = "\n".join(game.record_lines()) + "\n"
            except ValueError as e:
                raise HTTPException(409, str(e)) from None
        headers = {"Content-Disposition": 'attachment; filename="thirtyone-game.jsonl"'}
        return PlainTextResponse(text, media_type="application/x-ndjson", headers=headers)

    @app.post("/api/games/{key}/save")
    def save(key: str) -> dict[str, Any]:
        """Save the finished game's record into the server's records folder."""
        if records is None:
            raise HTTPException(409, "the server has no records folder: start it with --records DIR")
        game, lock = game_of(key)
        with holding(game, lock):
            try:
                lines = game.record_lines()
            except ValueError as e:
                raise HTTPException(409, str(e)) from None
            if game.saved is None:
                name = f"web-{game.rules_name}-{game.num_players}p-seed{game.seed}-{key[:8]}.jsonl"
                try:
                    atomic_write(records / name, "\n".join(lines) + "\n", replace=False)
                except (OSError, ValueError) as e:  # the folder gone, full or read-only
                    raise HTTPException(
                        507, short(f"the server could not write the record into its records folder: {e}")
                    ) from None
                game.saved = name
            return {"saved": game.saved}

    def record_frames(games: list[list[dict[str, Any]]], k: int, name: str) -> dict[str, Any]:
        if not 0 <= k < len(games):
            raise ValueError(f"{name} holds {len(games)} game(s): game must be 0..{len(games) - 1}")
        return {"name": name, "games": len(games), "game": k, **watch.frames(games[k], name)}

    @app.get("/api/records")
    def list_records() -> dict[str, Any]:
        """The records in the server's records folder."""
        return {"records": watch.list_records(records) if records is not None else []}

    @app.get("/api/records/frames")
    async def record_file(path: str = Query(..., max_length=500), game: int = 0) -> dict[str, Any]:
        """A record's game, move by move, to step through on the watch page."""
        if records is None:
            raise HTTPException(404, "the server has no records folder: start it with --records DIR")
        root = records

        def load() -> dict[str, Any]:
            try:
                games = watch.load_record(root, path)
            except FileNotFoundError:
                raise HTTPException(404, short(f"no record {path!r} in the records folder")) from None
            return record_frames(games, game, path)

        return await off_loop(load)

    @app.post("/api/records/upload")
    async def upload(request: Request, game: int = 0, name: str = "upload") -> dict[str, Any]:
        """A record sent by the browser, checked and replayed, move by move (never stored)."""
        name = name[:100]
        kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind not in UPLOAD_TYPES:
            raise HTTPException(
                415,
                f"a record is uploaded as JSON Lines (Content-Type application/x-ndjson), not {kind[:60]!r}",
            )
        if uploads.locked():
            raise HTTPException(503, f"{UPLOADS_AT_ONCE} records are being uploaded; try again in a moment")
        async with uploads:  # a place first, then the body: at most UPLOADS_AT_ONCE bodies held
            body = await read_body(request, watch.MAX_RECORD_BYTES)

            def load() -> dict[str, Any]:
                try:
                    text = body.decode("utf-8")
                except UnicodeDecodeError:
                    raise ValueError(f"cannot load record {name}: it is not UTF-8 text") from None
                return record_frames(watch.parse_record(text, name), game, name)

            return await off_loop(load)

    @app.get("/api/results")
    def list_results() -> dict[str, Any]:
        """The results folders (tournaments, gauntlets, research) in the server's results folder."""
        return {"results": watch.list_results(results) if results is not None else []}

    @app.get("/api/results/{folder}/{file}", response_model=None)
    def result_file(folder: str, file: str) -> Any:
        """A file of a results folder (CSV, JSON, PNG)."""
        if results is None:
            raise HTTPException(404, "the server has no results folder: start it with --results DIR")
        try:
            path = watch.inside(results, f"{folder}/{file}", watch.PLOTS + watch.TABLES)
        except FileNotFoundError:
            raise HTTPException(404, short(f"no file {folder}/{file} in the results folder")) from None
        except ValueError as e:
            raise HTTPException(400, short(str(e))) from None
        if path.suffix.lower() in watch.PLOTS:
            if not watch.is_png(path):
                raise HTTPException(422, short(f"{folder}/{file} is not a PNG image"))
            return FileResponse(path, media_type="image/png")
        try:
            return watch.read_table(path)
        except csv.Error as e:
            raise HTTPException(
                422, short(f"{folder}/{file} is not a CSV table the server can read: {e}")
            ) from None

    return app


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it is longer than ``limit``:
    a ``Content-Length`` over it before anything is read, and a streamed body once
    more than ``limit`` bytes have come. One that has not arrived within
    :data:`BODY_SECONDS` is refused (408), so a stalled client cannot hold an upload's
    place; a client that hangs up is answered quietly (400), not logged as a failure."""
    too_large = HTTPException(413, f"a record may be at most {limit // 2**20} MB")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise HTTPException(400, "the Content-Length header is not a number")
        if int(length) > limit:
            raise too_large

    async def collect() -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        return await asyncio.wait_for(collect(), BODY_SECONDS)
    except asyncio.TimeoutError:
        raise HTTPException(408, f"the record did not arrive within {BODY_SECONDS} s") from None
    except ClientDisconnect:
        raise HTTPException(400, "the client hung up before the record arrived") from None
