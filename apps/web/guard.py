"""Who may talk to the web table: the ``Host`` it answers, the ``Origin`` of a change,
and the token that every request but the static files must carry.

- **Host.** A page on another site can reach a server on this machine by DNS
  rebinding (its own name made to point at 127.0.0.1): the browser then sends that
  name as ``Host``. So the server answers only loopback names and addresses
  (``localhost``, ``127.0.0.1``, ``[::1]``) and the host it was started on; started on
  every interface (``0.0.0.0``), it also answers this machine's names and literal IP
  addresses, which no rebinding can produce.
- **Origin.** A request that changes something (not ``GET``/``HEAD``/``OPTIONS``) with
  an ``Origin`` header must come from the page's own origin (``http://`` + its
  ``Host``): no other site's page can start games, move or upload.
- **Token.** A random token, printed in the start-up URL as Jupyter does
  (``http://127.0.0.1:8031/?token=...``). Opening that URL stores it in a cookie
  (``HttpOnly``, ``SameSite=Strict``) and sends the browser on to the page; other
  clients give it as ``Authorization: Bearer TOKEN`` or ``?token=TOKEN``. Compared in
  constant time.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: paths served without the token (nothing in them depends on a game or a folder)
OPEN_PATHS = ("/static/", "/favicon.ico")
#: the pages a URL with the token may open: the token goes into a cookie, which the
#: page's own requests then carry
PAGES = ("/", "/watch", "/api/docs")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, no port) is this machine by loopback."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, str | None]:
    """``Host`` header value as (host, port); IPv6 literals lose their brackets. A
    value of any other shape (``[::1]evil``, a port that is not a number) gives an
    empty host, which no check allows."""
    value = value.strip()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return "", None
        return host, rest[1:] or None
    host, sep, port = value.rpartition(":")
    if not sep:
        return value, None
    return (host, port) if port.isdigit() and ":" not in host else ("", None)


class HostCheck:
    """The ``Host`` values the server answers (see the module doc)."""

    def __init__(self, bound: str) -> None:
        self.wildcard = bound in WILDCARDS
        names = {bound.strip("[]").lower()} if not self.wildcard else set()
        if self.wildcard:
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.names = frozenset(names)

    def allows(self, host: str) -> bool:
        host = host.lower()
        if not host or is_loopback(host) or host in self.names:
            return bool(host)
        if self.wildcard:
            try:
                ipaddress.ip_address(host)
                return True
            except ValueError:
                return False
        return False


#: Largest request body but an upload's (a new game, a move): a few hundred bytes in use.
MAX_BODY = 64 * 1024
#: The paths whose bodies are checked by their own endpoint (uploads, up to 50 MB).
LARGE_BODY_PATHS = ("/api/records/upload",)


def limit_body(receive: Any, limit: int, refused: list[bool]) -> Any:
    """``receive`` that stops a request body at ``limit`` bytes: past it the app sees
    a disconnect and ``refused[0]`` is set."""
    seen = 0

    async def limited() -> Any:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                refused[0] = True
                return {"type": "http.disconnect"}
        return message

    return limited


def cookie_name(scope: Scope) -> str:
    """The token's cookie, one per port: two tables on one machine keep their own."""
    server = scope.get("server") or ("", 0)
    return f"thirtyone-token-{server[1]}"


class Guard:
    """ASGI middleware in front of the app: ``Host``, ``Origin`` and token checks, each
    refusal a short plain-text 4xx that names what is wrong and echoes nothing."""

    def __init__(self, app: ASGIApp, token: str, host: str) -> None:
        self.app = app
        self.token = token
        self.hosts = HostCheck(host)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket (or other) routes: refused before the app
            return
        headers = _headers(scope)
        host, _port = split_host(headers.get("host", ""))
        if not self.hosts.allows(host):
            await _refuse(send, 421, "this server answers only requests addressed to this machine (Host)")
            return
        origin = headers.get("origin")
        if (
            scope["method"] not in SAFE_METHODS
            and origin is not None
            and origin != f"http://{headers.get('host', '')}"
        ):
            await _refuse(send, 403, "a request from another site's page (Origin) is refused")
            return
        path = scope.get("path", "")
        if path.startswith(OPEN_PATHS):
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [None])[-1]
        if scope["method"] == "GET" and path in PAGES and self.matches(given):
            await _enter(send, scope, query, self.token)  # the start-up URL: the token into a cookie
            return
        if not (
            self.matches(given)
            or self.matches(_bearer(headers.get("authorization", "")))
            or self.matches(_cookie(headers.get("cookie", ""), cookie_name(scope)))
        ):
            await _refuse(
                send,
                401,
                "this table needs its token: open the URL thirtyone-web printed when it started "
                "(or send 'Authorization: Bearer TOKEN')",
            )
            return
        if path.startswith(LARGE_BODY_PATHS):
            await self.app(scope, receive, send)
            return
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            await _refuse(send, 413, f"a request body may be at most {MAX_BODY // 1024} KB")
            return
        refused = [False]
        started = [False]

        async def sending(message: Any) -> None:
            if refused[0] and not started[0]:
                return  # the app's answer to a body cut off: ours (413) goes instead
            started[0] = True
            await send(message)

        try:
            await self.app(scope, limit_body(receive, MAX_BODY, refused), sending)
        except Exception:  # the app's reading of a body cut off at the limit
            if not refused[0]:
                raise
        if refused[0] and not started[0]:
            await _refuse(send, 413, f"a request body may be at most {MAX_BODY // 1024} KB")

    def matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}


def _bearer(value: str) -> str | None:
    kind, _, token = value.partition(" ")
    return token.strip() if kind.lower() == "bearer" and token.strip() else None


def _cookie(value: str, name: str) -> str | None:
    """The value of cookie ``name``, read pair by pair (a malformed cookie another site
    on this machine set does not hide the token, as a whole-header parser lets it)."""
    for pair in value.split(";"):
        key, sep, given = pair.strip().partition("=")
        if sep and key == name:
            return given.strip().strip('"')
    return None


async def _refuse(send: Any, status: int, message: str) -> None:
    body = (message + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _enter(send: Any, scope: Scope, query: dict[str, list[str]], token: str) -> None:
    """The answer to the start-up URL: the token as a cookie, and a redirect to the
    same page without it (so it leaves the address bar and the history)."""
    rest = {k: v for k, v in query.items() if k != "token"}
    location = scope["path"] + (("?" + urlencode(rest, doseq=True)) if rest else "")
    cookie = f"{cookie_name(scope)}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode()),
                (b"set-cookie", cookie.encode()),
                (b"content-length", b"0"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
