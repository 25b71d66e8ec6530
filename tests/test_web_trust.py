"""What the web table trusts, tried against a real server (``thirtyone-web`` on a free
port of 127.0.0.1): no request runs code the server was not started with, no request
takes the server down, hangs it or fills its memory, and only this machine's own pages
with the token get an answer."""

import http.client
import json
import signal
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
from web_server import serving, start_server  # noqa: E402

SLOW = '''
import time


class Slow:
    """Sleeps ``delay`` seconds before each move (a player that will not answer)."""

    obs_encoding = "view"

    def __init__(self, delay: float = 60.0) -> None:
        self.delay = delay

    def act(self, view, action_mask):
        time.sleep(self.delay)
        return int(action_mask.nonzero()[0][0])
'''


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """A server with a records and a results folder, as a user starts it."""
    root = tmp_path_factory.mktemp("web")
    (root / "records").mkdir()
    (root / "results").mkdir()
    server = start_server(
        "--records", str(root / "records"), "--results", str(root / "results"), "--allow-seeds"
    )
    yield server, root
    server.stop()


@pytest.fixture
def client(web):
    server, _ = web
    with server.client() as c:
        yield c


def alive(server) -> bool:
    return (
        server.proc.poll() is None and httpx.get(f"{server.base}/api/options", headers=server.auth).is_success
    )


# -- no code from a request ------------------------------------------------------------


def test_a_request_cannot_name_code_to_run(web, client, tmp_path):
    server, _ = web
    written = tmp_path / "written.py"
    player = tmp_path / "player.py"
    player.write_text(
        f"open({str(tmp_path / 'ran')!r}, 'w').close()\nclass X:\n    def act(self, o, m):\n        return 0\n"
    )
    for spec in [
        "os:abort",
        f"thirtyone_env.harness.files:atomic_write:path={written},data=x",
        f"{player}:X",
        "signal:pause",
        "http.server:test",
    ]:
        r = client.post("/api/games", json={"opponents": [spec]})
        assert r.status_code == 400, (spec, r.text)
        assert "--allow-code" in r.json()["detail"]
    assert not written.exists() and not (tmp_path / "ran").exists()
    assert alive(server)


def test_players_are_held_to_bounds(client):
    for spec, message in [
        ("search:time_limit=inf", "finite number"),
        ("search:batch=3000000", "allows 2..16"),
        ("search:time_limit=none", "cannot be none"),
        ("search:worlds=100000000", "allows 1..256"),
        ("search:backend=python", "cannot be set at the web table"),
        ("ppo:path=/etc/passwd", "without a folder"),
        ("ppo:path=../agents/models/ppo_standard_2p-v2.zip", "without a folder"),
        ("ppo:path=nothing.zip", "no such model"),
        ("greedy:knock_at=nan", "knock_at"),
    ]:
        r = client.post("/api/games", json={"opponents": [spec, "greedy"]})
        assert r.status_code == 400 and message in r.json()["detail"], (spec, r.text)
    r = client.post(
        "/api/games",
        json={"opponents": ["search:worlds=8,batch=4,time_limit=0.05", "ppo:path=ppo_standard_3p-v1.zip"]},
    )
    assert r.status_code == 200, r.text
    assert "ppo_standard_3p-v1.zip" in client.get("/api/options").json()["models"]


def test_with_allow_code_the_server_says_so_and_still_calls_no_bare_function(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    with serving("--allow-code") as server:
        warning = server.proc.stderr.readline()
        assert "--allow-code" in warning and "runs that code" in warning
        refused = server.client().post("/api/games", json={"opponents": ["greedy"], "seed": 3})
        assert refused.status_code == 400 and "may not choose the seed" in refused.json()["detail"]
        c = server.client()
        r = c.post("/api/games", json={"opponents": [f"{tmp_path / 'slow.py'}:Slow:delay=0"]})
        assert r.status_code == 200, r.text
        r = c.post("/api/games", json={"opponents": ["os:abort"]})
        assert r.status_code == 400 and "not a player class or factory" in r.json()["detail"]
        assert alive(server)


# -- who may ask -----------------------------------------------------------------------


def test_every_request_needs_the_token(web):
    server, _ = web
    for path in (
        "/",
        "/watch",
        "/api/docs",
        "/api/openapi.json",
        "/api/options",
        "/api/records",
        "/api/results",
    ):
        r = httpx.get(server.base + path)
        assert r.status_code == 401 and "token" in r.text, path
        assert httpx.get(server.base + path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.post(f"{server.base}/api/games", json={"opponents": ["greedy"]}).status_code == 401
    assert httpx.get(f"{server.base}/static/play.js").status_code == 200  # the page's own files need none
    # the start-up URL: the token goes into a cookie, and the page loads without it in the address
    with httpx.Client(base_url=server.base, follow_redirects=True) as browser_like:
        r = browser_like.get(f"/?token={server.token}&step=0")
        assert r.status_code == 200 and "Thirty-One" in r.text
        assert str(r.url).endswith("/?step=0")  # redirected: the token left the address bar
        cookie = r.history[0].headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert browser_like.get("/api/options").status_code == 200
    with httpx.Client(base_url=server.base, follow_redirects=True) as browser_like:  # the API's page too
        r = browser_like.get(f"/api/docs?token={server.token}")
        assert r.status_code == 200 and str(r.url).endswith("/api/docs") and r.history[0].status_code == 303
        assert browser_like.get("/api/openapi.json").status_code == 200  # what the page asks for next
    assert len(server.token) >= 32


def test_the_printed_address_takes_a_connection_at_once():
    """The address is printed only once the socket listens: a client that connects the
    moment it reads the line is answered, never refused."""
    import socket

    with serving() as server:
        host, port = server.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(
                f"GET /api/options HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {server.token}\r\nConnection: close\r\n\r\n".encode()
            )
            assert sock.recv(64).startswith(b"HTTP/1.1 200")


def test_only_this_machine_names_are_answered(web):
    server, _ = web
    port = server.base.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", "attacker.localhost.evil", "10.1.2.3", ""):
        r = httpx.get(f"{server.base}/api/options", headers={**server.auth, "Host": host})
        assert r.status_code in (400, 421), (host, r.status_code)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", "127.0.0.1"):
        r = httpx.get(f"{server.base}/api/options", headers={**server.auth, "Host": host})
        assert r.status_code == 200, host


def test_a_change_from_another_sites_page_is_refused(web, client):
    server, _ = web
    for origin in ("http://evil.example", "null", "http://localhost.evil.example"):
        r = client.post("/api/games", json={"opponents": ["greedy"]}, headers={"Origin": origin})
        assert r.status_code == 403, origin
    r = client.post("/api/games", json={"opponents": ["greedy"]}, headers={"Origin": server.base})
    assert r.status_code == 200
    assert (
        client.get("/api/options", headers={"Origin": "http://evil.example"}).status_code == 200
    )  # reads only


def test_a_host_beyond_this_machine_is_warned_of():
    from apps.web.server import warnings_for

    assert warnings_for("127.0.0.1", False) == [] and warnings_for("::1", False) == []
    assert warnings_for("localhost", False) == []
    [line] = warnings_for("0.0.0.0", False)
    assert "not only this machine" in line and "token" in line
    assert len(warnings_for("192.168.1.5", True)) == 2


# -- no request takes the server down --------------------------------------------------


def test_a_move_has_a_time_limit_and_the_server_stops_on_signals(tmp_path):
    """A player that will not answer: the request gets 504 within seconds (at a game's
    start, seed 1, or after the person's moves, seed 0), the game is stopped, the server
    answers the rest at once and stops on SIGTERM or Ctrl-C while the thread sleeps."""
    (tmp_path / "slow.py").write_text(SLOW)
    for sig, seed in ((signal.SIGTERM, 0), (signal.SIGINT, 1)):
        with serving("--allow-code", "--allow-seeds", "--move-seconds", "1") as server:
            c = server.client()
            started = time.monotonic()
            body = {"opponents": [f"{tmp_path / 'slow.py'}:Slow:delay=600"], "seed": seed}
            r = c.post("/api/games", json=body)
            key = r.json().get("id")
            while r.status_code == 200:  # the person's moves, until the slow player must move
                state = r.json()["state"]
                move = next(m["id"] for m in state["moves"] if m["legal"])
                r = c.post(f"/api/games/{key}/move", json={"action": move, "turn": state["turn"]})
            assert r.status_code == 504 and "1 s" in r.json()["detail"], r.text
            assert time.monotonic() - started < 15
            assert (key is None) == (seed == 1)  # seed 1: the slow player moves first
            if key is not None:
                for refused in (
                    c.get(f"/api/games/{key}"),
                    c.post(f"/api/games/{key}/move", json={"action": 0}),
                ):
                    assert refused.status_code == 409 and "stopped" in refused.json()["detail"], refused.text
            quick = time.monotonic()
            assert alive(server) and time.monotonic() - quick < 2  # the sleeping thread holds nothing else
            server.proc.send_signal(sig)
            server.proc.wait(timeout=10)  # within seconds, whatever the thread is doing
            # Ctrl-C: one line and 130, as every command; SIGTERM: uvicorn stops and dies of it
            assert server.proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM)


def test_games_are_bounded_and_a_game_in_play_is_never_evicted():
    with serving("--max-games", "2", "--allow-seeds") as server:
        c = server.client()
        keys = [
            c.post("/api/games", json={"opponents": ["greedy"], "seed": k}).json()["id"] for k in range(2)
        ]
        r = c.post("/api/games", json={"opponents": ["greedy"]})
        assert r.status_code == 503 and "the table is full" in r.json()["detail"]
        assert all(c.get(f"/api/games/{k}").status_code == 200 for k in keys)
        c.post(f"/api/games/{keys[0]}/resign")  # a finished game makes room
        assert c.post("/api/games", json={"opponents": ["greedy"]}).status_code == 200
        assert c.get(f"/api/games/{keys[1]}").status_code == 200


def test_idle_games_expire():
    with serving("--idle-minutes", "0.01") as server:
        c = server.client()
        key = c.post("/api/games", json={"opponents": ["greedy"]}).json()["id"]
        assert c.get(f"/api/games/{key}").status_code == 200
        time.sleep(1.0)
        r = c.get(f"/api/games/{key}")
        assert r.status_code == 404 and "idle" in r.json()["detail"]


def test_the_servers_limits_are_checked_before_it_starts(capsys):
    from apps.web.server import main

    for argv, message in [
        (["--move-seconds", "0"], "--move-seconds must be a positive number"),
        (["--max-games", "0"], "--max-games must be an integer"),
        (["--idle-minutes", "nan"], "--idle-minutes must be a positive number"),
    ]:
        with pytest.raises(SystemExit) as e:
            main([*argv, "--port", "0"])
        assert e.value.code == 2 and message in capsys.readouterr().err


def test_a_move_sent_twice_is_played_once(client):
    answer = client.post("/api/games", json={"opponents": ["greedy", "greedy"], "seed": 5}).json()
    key, state = answer["id"], answer["state"]
    move = next(m["id"] for m in state["moves"] if m["legal"])
    body = {"action": move, "turn": state["turn"]}
    first = client.post(f"/api/games/{key}/move", json=body)
    assert first.status_code == 200 and first.json()["state"]["turn"] == state["turn"] + 1
    again = client.post(f"/api/games/{key}/move", json=body)
    assert again.status_code == 409 and "sent twice" in again.json()["detail"]
    assert client.get(f"/api/games/{key}").json()["state"] == first.json()["state"]


# -- uploads ---------------------------------------------------------------------------


def play_a_round(client) -> str:
    """A record of a game with one round played and then resigned."""
    answer = client.post("/api/games", json={"opponents": ["greedy", "greedy"], "seed": 1}).json()
    key, state = answer["id"], answer["state"]
    while state["round"] == 1 and not state["over"]:
        move = next(m["id"] for m in state["moves"] if m["legal"])
        state = client.post(f"/api/games/{key}/move", json={"action": move}).json()["state"]
    client.post(f"/api/games/{key}/resign")
    return client.get(f"/api/games/{key}/record").text


def test_uploads_take_json_lines_only(client):
    text = play_a_round(client)
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
        headers = {"Content-Type": kind} if kind else {}
        r = client.post("/api/records/upload", content=text.encode(), headers=headers)
        assert r.status_code == 415, kind
    ok = client.post(
        "/api/records/upload", content=text.encode(), headers={"Content-Type": "application/x-ndjson"}
    )
    assert ok.status_code == 200 and ok.json()["frames"]


def test_a_large_upload_is_refused_before_it_is_read(web):
    """A Content-Length over the limit is answered at once, with no body sent at all;
    a streamed body is cut off once it passes the limit."""
    server, _ = web
    host, port = server.base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("POST", "/api/records/upload")
    conn.putheader("Authorization", f"Bearer {server.token}")
    conn.putheader("Content-Type", "application/x-ndjson")
    conn.putheader("Content-Length", str(800 * 2**20))
    conn.endheaders()
    r = conn.getresponse()
    assert r.status == 413 and b"at most 50 MB" in r.read()
    conn.close()

    def chunks():
        block = b" " * 2**20
        for _ in range(60):
            yield block

    r = httpx.post(
        f"{server.base}/api/records/upload",
        content=chunks(),
        headers={**server.auth, "Content-Type": "application/x-ndjson"},
        timeout=60,
    )
    assert r.status_code == 413
    assert alive(server)


def test_a_big_upload_does_not_freeze_the_other_requests(web, client):
    """Parsing runs off the event loop: while a 40 MB upload is read and refused, the
    server answers other requests at once."""
    server, _ = web
    line = json.dumps({"type": "note", "text": "x" * 200}) + "\n"
    body = ("\n" * 10 + line * (40 * 2**20 // len(line))).encode()
    done = threading.Event()
    answer: dict = {}

    def upload():
        answer["r"] = httpx.post(
            f"{server.base}/api/records/upload",
            content=body,
            headers={**server.auth, "Content-Type": "application/x-ndjson"},
            timeout=120,
        )
        done.set()

    thread = threading.Thread(target=upload)
    thread.start()
    slowest = 0.0
    while not done.is_set():
        started = time.monotonic()
        assert client.get("/api/options").status_code == 200
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)
    thread.join()
    assert answer["r"].status_code == 400
    assert len(answer["r"].json()["detail"]) <= 200  # the answer quotes no more than a short prefix
    assert slowest < 1.5, slowest


def test_upload_caps_and_errors_that_echo_little(client):
    kind = {"Content-Type": "application/x-ndjson"}
    many = "\n".join(["{}"] * 200_001)
    r = client.post("/api/records/upload", content=many.encode(), headers=kind)
    assert r.status_code == 400
    long_type = json.dumps({"type": "z" * 100_000}) + "\n"
    r = client.post("/api/records/upload", content=long_type.encode(), headers=kind)
    assert (
        r.status_code == 400 and len(r.json()["detail"]) <= 200 and "unknown line type" in r.json()["detail"]
    )
    lines = "\n".join(["\n".join([json.dumps({"type": "game"})] * 1)] * 10_001)
    r = client.post("/api/records/upload", content=lines.encode(), headers=kind)
    assert r.status_code == 400 and len(r.json()["detail"]) <= 200


# -- the folders it serves -------------------------------------------------------------


def test_a_results_table_the_csv_module_cannot_read_is_a_4xx(web, client):
    _, root = web
    folder = root / "results" / "broken"
    folder.mkdir(exist_ok=True)
    (folder / "nul.csv").write_bytes(b"a,b\n1,\x002\n")
    (folder / "huge.csv").write_text("a\n" + "x" * 200_000 + "\n")
    for name in ("huge.csv",):  # a field over the csv module's limit
        r = client.get(f"/api/results/broken/{name}")
        assert r.status_code == 422 and "not a CSV table" in r.json()["detail"], (name, r.text)


def test_a_linked_folder_out_of_the_results_is_not_listed(web, client, tmp_path):
    _, root = web
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("a\n1\n")
    (root / "results" / "linked").symlink_to(outside, target_is_directory=True)
    inside = root / "results" / "real"
    inside.mkdir()
    (inside / "ok.csv").write_text("a\n1\n")
    (inside / "link.csv").symlink_to(outside / "secret.csv")
    listed = {x["name"]: x for x in client.get("/api/results").json()["results"]}
    assert "linked" not in listed and listed["real"]["tables"] == ["ok.csv"]
    assert client.get("/api/results/linked/secret.csv").status_code == 400
    assert client.get("/api/results/real/link.csv").status_code == 400


# -- what a request may weigh ----------------------------------------------------------


def test_bodies_and_specs_are_bounded_and_errors_quote_little(client):
    long_spec = "random:" + "," * 10_000
    r = client.post("/api/games", json={"opponents": [long_spec]})
    assert r.status_code == 422 and len(r.text) < 400
    r = client.post("/api/games", json={"opponents": ["random"], "zz": "x" * 100_000})
    assert r.status_code == 413  # over 64 KB: refused before it is parsed
    r = client.post("/api/games", json={"opponents": ["random"], "zz": "x" * 30_000})
    assert r.status_code == 422 and len(r.text) < 400 and "zz" in r.text  # names the field, quotes none of it

    def chunks():
        for _ in range(100):
            yield b" " * 4096

    r = client.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413


def test_a_game_whose_start_timed_out_is_forgotten(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    with serving("--allow-code", "--allow-seeds", "--move-seconds", "1", "--max-games", "2") as server:
        c = server.client()
        body = {
            "opponents": [f"{tmp_path / 'slow.py'}:Slow:delay=30"],
            "seed": 1,
        }  # the slow seat moves first
        assert c.post("/api/games", json=body).status_code == 504
        keys = [c.post("/api/games", json={"opponents": ["random"]}).json()["id"] for _ in range(2)]
        for key in keys:
            c.post(f"/api/games/{key}/resign")
        r = c.post("/api/games", json={"opponents": ["random"]})
        assert r.status_code == 200, r.text  # a finished game made room; the failed start holds none


def test_a_crafted_records_names_and_seed_are_not_echoed_as_given(client):
    text = play_a_round(client)
    lines = [json.loads(x) for x in text.splitlines()]
    lines[0]["seed"] = json.loads("[" * 300 + "]" * 300)
    lines[0]["players"] = ["x" * 5000, {"a": 1}, "c"]
    r = client.post(
        "/api/records/upload",
        content="\n".join(json.dumps(x) for x in lines).encode(),
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["seed"] is None and r.json()["players"] == ["seat 0", "seat 1", "seat 2"]


def test_only_two_uploads_are_held_at_once(web):
    server, _ = web
    done = []

    def slow_body():
        for _ in range(20):
            time.sleep(0.1)
            yield b"\n" * 1024

    def upload():
        done.append(
            httpx.post(
                f"{server.base}/api/records/upload",
                content=slow_body(),
                headers={**server.auth, "Content-Type": "application/x-ndjson"},
                timeout=60,
            ).status_code
        )

    threads = [threading.Thread(target=upload) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.7)
    r = httpx.post(
        f"{server.base}/api/records/upload",
        content=b"\n",
        headers={**server.auth, "Content-Type": "application/x-ndjson"},
    )
    for t in threads:
        t.join()
    assert r.status_code == 503 and "being uploaded" in r.json()["detail"]
    assert done == [400, 400]  # (empty records), read in turn


def test_the_token_survives_a_malformed_cookie_and_odd_hosts_are_refused(web):
    server, _ = web
    port = server.base.rsplit(":", 1)[1]
    cookie = f'x=a b; junk="; thirtyone-token-{port}={server.token}'
    assert httpx.get(f"{server.base}/api/options", headers={"Cookie": cookie}).status_code == 200
    for host in (f"[::1]evil.example:{port}", f"127.0.0.1:{port}:1", "127.0.0.1:x"):
        r = httpx.get(f"{server.base}/api/options", headers={**server.auth, "Host": host})
        assert r.status_code in (400, 421), host


def test_a_model_link_out_of_its_folder_is_neither_listed_nor_seated(tmp_path):
    from apps.web.seats import Seating

    models, outside = tmp_path / "models", tmp_path / "outside"
    models.mkdir()
    outside.mkdir()
    (outside / "real.zip").write_bytes(b"PK")
    (models / "out.zip").symlink_to(outside / "real.zip")
    (models / "loop.zip").symlink_to(models / "loop.zip")
    (models / ".hidden.zip").write_bytes(b"PK")
    (models / "mine.zip").write_bytes(b"PK")
    seating = Seating(model_folders=(models,))
    assert seating.model_names() == ["mine.zip"]  # what resolve_model seats, nothing else
    with pytest.raises(ValueError, match="no such model"):
        seating.resolve_model("out.zip")


def _request(messages):
    """A Starlette request whose body arrives as ``messages`` (then never more)."""
    import asyncio

    from starlette.requests import Request

    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        await asyncio.sleep(3600)  # a client that stalls

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [], "query_string": b""}
    return Request(scope, receive)


def test_an_upload_body_that_stalls_or_hangs_up_is_answered_and_frees_its_place(monkeypatch):
    """A stalled body is refused after ``BODY_SECONDS`` (408), so two stalled clients
    cannot hold the upload places; a client that hangs up gets a quiet 400."""
    import asyncio

    from fastapi import HTTPException

    from apps.web import app as web_app

    monkeypatch.setattr(web_app, "BODY_SECONDS", 0.2)
    stalled = _request([{"type": "http.request", "body": b"{", "more_body": True}])
    with pytest.raises(HTTPException) as e:
        asyncio.run(web_app.read_body(stalled, 1000))
    assert e.value.status_code == 408 and "did not arrive within 0.2 s" in e.value.detail
    gone = _request([{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}])
    with pytest.raises(HTTPException) as e:
        asyncio.run(web_app.read_body(gone, 1000))
    assert e.value.status_code == 400 and "hung up" in e.value.detail
    whole = _request(
        [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.request", "body": b"c"}]
    )
    assert asyncio.run(web_app.read_body(whole, 1000)) == b"abc"


def test_a_body_sent_as_a_form_is_told_to_come_as_json(client):
    r = client.post("/api/games", data={"rules": "standard"})
    assert r.status_code == 422
    assert "send the body as JSON with Content-Type application/json" in r.json()["detail"]
    r = client.post(
        "/api/games", content=b'{"seat": "x"}', headers={"Content-Type": "application/vnd.api+json"}
    )
    assert r.status_code == 422 and "send the body" not in r.json()["detail"]  # JSON, one bad field
