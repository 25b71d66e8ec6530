"""A real ``thirtyone-web`` for the tests: started on a free port of 127.0.0.1 in its own
process, its address and token read from the line it prints at start-up."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"http://(127\.0\.0\.1:\d+)/\?token=([A-Za-z0-9_-]+)")


@dataclass
class Server:
    base: str  #: http://127.0.0.1:PORT
    token: str
    proc: subprocess.Popen
    line: str  #: what it printed to stdout at start-up

    @property
    def url(self) -> str:
        """The start-up URL, with its token."""
        return f"{self.base}/?token={self.token}"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self) -> Any:
        """An ``httpx.Client`` of this server that carries the token."""
        import httpx

        return httpx.Client(base_url=self.base, headers=self.auth, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(*args: str) -> Server:
    """``python -m apps.web.server --port 0 ARGS``, once it listens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "apps.web.server", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    found = URL.search(line)
    if found is None:
        proc.kill()
        raise AssertionError(f"the server printed no URL with a token: {line!r} {proc.stderr.read()}")
    return Server(f"http://{found.group(1)}", found.group(2), proc, line)


@contextlib.contextmanager
def serving(*args: str) -> Iterator[Server]:
    """:func:`start_server`, stopped at the end of the block."""
    server = start_server(*args)
    try:
        yield server
    finally:
        server.stop()
