"""``thirtyone-web`` (or ``make web``): serve the web table on this machine.

    thirtyone-web --port 8031 --records records --results results

Listens on 127.0.0.1 unless ``--host`` says otherwise and prints the address with its
token (``http://127.0.0.1:8031/?token=...``): every request needs the token, as with
Jupyter. A ``--host`` other than loopback prints a warning (anyone who can reach the
address and has the URL can play). The table seats the built-in players and the zoo's
models (and the models of ``--models DIR``); ``--allow-code`` lets a request name a
player by import path or file, which runs that code here; ``--allow-seeds`` lets a
request choose its game's seed (whoever knows a seed can know every card). Bad options (a folder that
is not there, a port in use) get one line and exit code 2 before the server starts;
Ctrl-C or SIGTERM stops it within seconds, whatever its games are doing.
"""

from __future__ import annotations

import argparse
import socket
import sys
import warnings
from pathlib import Path

from apps.web.guard import is_loopback
from thirtyone_env.harness.command import CommandParser
from thirtyone_env.harness.files import check_writable_dir
from thirtyone_env.harness.report import check_not_inside_a_run

PROG = "thirtyone-web"


def check_folder(parser: argparse.ArgumentParser, option: str, value: str | None) -> Path | None:
    """The folder ``value`` of ``option``, resolved; refused in one line when empty or
    not a folder, and for ``--records`` (where saved games are written) when it cannot
    be written or lies inside another run's folder."""
    if value is None:
        return None
    if not value.strip():
        parser.error(f"{option} is empty: name a folder (. for this one)")
    path = Path(value).expanduser()
    if not path.is_dir():
        parser.error(f"{option} {value}: not a folder")
    if option == "--records":
        try:
            check_writable_dir(path, option)
            check_not_inside_a_run(path, option)
        except ValueError as e:
            parser.error(str(e))
    return path.resolve()


def listen(parser: argparse.ArgumentParser, host: str, port: int) -> socket.socket:
    """A socket bound to the address and listening (else one line, exit 2, before any
    server starts): a client that connects as soon as the address is printed waits in
    the backlog until the server accepts, instead of being refused."""
    if not 0 <= port <= 65535:
        parser.error(f"--port must be in 0..65535, got {port}")
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as e:
        parser.error(f"cannot listen on {host}:{port}: {e.strerror or e}")
    return sock


def warnings_for(host: str, allow_code: bool, allow_seeds: bool = False) -> list[str]:
    """What the server warns of at start-up: an address beyond this machine,
    ``--allow-code`` and ``--allow-seeds``."""
    out = []
    if not is_loopback(host.strip("[]")):
        out.append(
            f"listening on {host}, not only this machine: anyone who can reach it and has the URL "
            "below (with its token) can play here"
        )
    if allow_code:
        out.append(
            "--allow-code: a request may name a player by import path or file, which runs that code "
            "on this machine as this user; give the URL only to people you trust"
        )
    if allow_seeds:
        out.append(
            "--allow-seeds: a request may choose its game's seed, and whoever knows the seed can know "
            "every card of the game: for practice and replays, not for play that counts"
        )
    return out


#: Seconds the server waits for open requests once told to stop.
GRACE_SECONDS = 3


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(prog=PROG, description="Serve the Thirty-One web table.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8031, help="port (default 8031; 0: any free one)")
    parser.add_argument(
        "--records", metavar="DIR", default=None, help="game records to watch; saved games go here"
    )
    parser.add_argument("--results", metavar="DIR", default=None, help="evaluate.py results folders to show")
    parser.add_argument(
        "--models",
        metavar="DIR",
        default=None,
        help="models opponents may name (ppo:path=NAME.zip), beside the zoo's",
    )
    parser.add_argument(
        "--allow-code",
        action="store_true",
        help="seat players named by import path or file (module:Class, file.py:Class): "
        "whoever can reach the server then runs code on this machine",
    )
    parser.add_argument(
        "--allow-seeds",
        action="store_true",
        help="let a request choose its game's seed (to replay a deal): whoever knows a seed can know every card",
    )
    parser.add_argument(
        "--move-seconds",
        type=float,
        default=20.0,
        help="seconds the opponents may take between your moves (20)",
    )
    parser.add_argument("--max-games", type=int, default=64, help="games kept at once (64)")
    parser.add_argument(
        "--idle-minutes", type=float, default=30.0, help="minutes after which an untouched game expires (30)"
    )
    args = parser.parse_args(argv)
    folders = {
        name: check_folder(parser, f"--{name}", getattr(args, name))
        for name in ("records", "results", "models")
    }
    try:
        import uvicorn

        from apps.web.app import create_app
        from apps.web.config import WebConfig
    except ImportError as e:
        parser.error(f"the web table needs its extra: pip install -e '.[web]' ({e})")
    try:
        config = WebConfig(
            **folders,
            allow_code=args.allow_code,
            allow_seeds=args.allow_seeds,
            host=args.host,
            move_seconds=args.move_seconds,
            max_games=args.max_games,
            idle_minutes=args.idle_minutes,
        )
    except ValueError as e:
        message = str(e)
        for name in ("move_seconds", "max_games", "idle_minutes"):
            message = message.replace(name, "--" + name.replace("_", "-"))
        parser.error(message)
    sock = listen(parser, args.host, args.port)
    host, port = sock.getsockname()[:2]
    app = create_app(config)
    shown = f"[{host}]" if ":" in host else host
    for line in warnings_for(host, args.allow_code, args.allow_seeds):
        print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=GRACE_SECONDS))
    # a Ctrl-C the moment before uvicorn's loop starts leaves its coroutine unstarted
    warnings.filterwarnings("ignore", "coroutine 'Server.serve' was never awaited", RuntimeWarning)
    try:
        print(
            f"{PROG}: serving the Thirty-One table at http://{shown}:{port}/?token={app.state.token} "
            "(Ctrl-C stops it)",
            flush=True,
        )
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stops in order, then raises the Ctrl-C again
        print(f"{PROG}: stopped", file=sys.stderr, flush=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
