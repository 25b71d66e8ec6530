"""``thirtyone-web`` (or ``make web``): serve the web table on this machine.

    thirtyone-web --port 8031 --records records --results results

Listens on 127.0.0.1 unless ``--host`` says otherwise and prints the address. Bad
options (a folder that is not there, a port in use) get one line and exit code 2
before the server starts; Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from pathlib import Path

PROG = "thirtyone-web"


def check_folder(parser: argparse.ArgumentParser, option: str, value: str | None) -> Path | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        parser.error(f"{option} {value}: not a folder")
    return path.resolve()


def listen(parser: argparse.ArgumentParser, host: str, port: int) -> socket.socket:
    """A socket bound to the address (else one line, exit 2, before any server starts)."""
    if not 0 <= port <= 65535:
        parser.error(f"--port must be in 0..65535, got {port}")
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        parser.error(f"cannot listen on {host}:{port}: {e.strerror or e}")
    return sock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="Serve the Thirty-One web table.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8031, help="port (default 8031; 0: any free one)")
    parser.add_argument(
        "--records", metavar="DIR", default=None, help="game records to watch; saved games go here"
    )
    parser.add_argument("--results", metavar="DIR", default=None, help="evaluate.py results folders to show")
    args = parser.parse_args(argv)
    records = check_folder(parser, "--records", args.records)
    results = check_folder(parser, "--results", args.results)
    try:
        import uvicorn

        from agents.web.app import create_app
    except ImportError as e:
        parser.error(f"the web table needs its extra: pip install -e '.[web]' ({e})")
    sock = listen(parser, args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"{PROG}: serving the Thirty-One table at http://{shown}:{port}/ (Ctrl-C stops it)", flush=True)
    config = uvicorn.Config(create_app(records, results), log_level="warning")
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
