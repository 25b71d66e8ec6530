"""The web table's HTTP API through the ASGI test client: whole games for every rules
preset with every answer checked against the cards the person's seat cannot see;
bad requests answered 4xx with a message and the game unchanged; records saved,
listed and stepped through; files served only from the configured folders."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from apps.web.app import create_app  # noqa: E402
from apps.web.config import WebConfig  # noqa: E402
from thirtyone_env.game.cards import format_card  # noqa: E402
from thirtyone_env.game.rules import PRESETS, Rules  # noqa: E402
from thirtyone_env.game.views import player_view  # noqa: E402
from thirtyone_env.harness.records import replay  # noqa: E402

CARD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[cdhs](?![A-Za-z0-9])")
MAX_MOVES = 4000
NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture
def folders(tmp_path):
    records, results = tmp_path / "records", tmp_path / "results"
    records.mkdir()
    (results / "run-a").mkdir(parents=True)
    (results / "run-a" / "summary.csv").write_text("player,wins\nexpert,12\ngreedy,8\n")
    (results / "run-a" / "wins.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    return records, results


def open_client(config: WebConfig) -> TestClient:
    """A client of the app that carries its token, addressed to 127.0.0.1."""
    app = create_app(config)
    return TestClient(
        app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {app.state.token}"}
    )


@pytest.fixture
def client(folders):
    records, results = folders
    with open_client(WebConfig(records=records, results=results, allow_seeds=True)) as c:
        yield c


def hidden_cards(app, key):
    """The cards the person's seat cannot see now, from the server's true state."""
    game = app.state.games.get(key)[0]
    s, me = game.table.state, game.seat
    known = player_view(s, me).known
    hidden = set(s.stock)
    for p, hand in enumerate(s.hands):
        if p != me:
            hidden |= set(hand) - set(known[p])
    for hand, ups in zip(s.table, s.table_up, strict=True):
        hidden |= {c for c, up in zip(hand, ups, strict=True) if c >= 0 and not up}
    return {format_card(c) for c in hidden}


def check_answer(app, key, answer, seat):
    """Nothing in the answer shows a card the seat could not see at a real table."""
    hidden = hidden_cards(app, key)
    shown = set(CARD.findall(json.dumps(answer["state"])))
    assert not shown & hidden, f"the table view shows hidden cards {shown & hidden}"
    for ev in answer["events"]:
        if ev["type"] == "move":
            if ev["seat"] != seat and "stock" in ev["text"]:
                assert not CARD.findall(ev["text"]), ev  # another seat's stock draw: no card
            if "card" in ev:
                assert "discard" in ev["text"] or ev["seat"] == seat, ev
            assert "holding" not in ev["text"], ev  # a knock's value is not said
        elif ev["type"] == "settle":
            showdown = ev["reason"] in ("knock", "stock_exhausted")
            for p, hand in enumerate(ev["hands"]):
                if hand is not None and not showdown:
                    assert p == seat or ev["values"][p] == 31, ev  # a blitzer shows its 31
            for p, value in enumerate(ev["values"]):
                if not showdown and p != seat and value is not None:
                    assert value == 31, ev


def play_out(client, key, answer, seed):
    """Random legal moves until the game is over; every answer checked."""
    rng = np.random.default_rng(seed)
    app, seat = client.app, answer["state"]["seat"]
    check_answer(app, key, answer, seat)
    for _ in range(MAX_MOVES):
        state = answer["state"]
        if state["over"]:
            return answer
        legal = [m["id"] for m in state["moves"] if m["legal"]]
        assert legal and state["my_turn"]
        action = legal[rng.integers(len(legal))]
        r = client.post(f"/api/games/{key}/move", json={"action": action})
        assert r.status_code == 200, r.text
        answer = r.json()
        check_answer(app, key, answer, seat)
    return client.post(f"/api/games/{key}/resign").json()


def table_size(preset):
    rules = Rules.preset(preset)
    return rules.seats or min(4, rules.max_players)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_whole_game_of_every_preset_shows_no_hidden_card(client, preset):
    n = table_size(preset)
    body = {"rules": preset, "opponents": ["expert", "random", "greedy"][: n - 1], "seat": 1, "seed": 11}
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["state"]["players"] == n and answer["events"][0]["type"] == "deal"
    done = play_out(client, answer["id"], answer, seed=5)
    assert done["state"]["over"]
    record = client.get(f"/api/games/{answer['id']}/record")
    assert record.status_code == 200
    lines = [json.loads(x) for x in record.text.splitlines()]
    assert lines[0]["type"] == "game" and lines[0]["seed"] == 11
    assert sum(1 for _ in replay(lines)) > 0  # the record replays on the engine


def test_a_game_against_three_shipped_agents(client):
    r = client.post("/api/games", json={"opponents": ["ppo", "ppo", "ppo"], "seed": 4})
    answer = r.json()
    done = play_out(client, answer["id"], answer, seed=1)
    assert done["state"]["over"] and [s["name"] for s in done["state"]["seats"]] == [
        "you",
        "ppo",
        "ppo",
        "ppo",
    ]


def test_bad_moves_get_a_4xx_and_leave_the_game_unchanged(client):
    answer = client.post("/api/games", json={"opponents": ["greedy", "greedy"], "seed": 2}).json()
    key = answer["id"]
    before = client.get(f"/api/games/{key}").json()["state"]
    legal = {m["id"] for m in before["moves"] if m["legal"]}
    shown_illegal = [m["id"] for m in before["moves"] if not m["legal"]]  # a disabled button
    assert shown_illegal and not set(shown_illegal) & legal
    illegal = shown_illegal[0]
    for body, status, message in [
        ({"action": illegal}, 400, "not legal now"),
        ({"action": "0"}, 400, "an integer"),
        ({"action": True}, 400, "an integer"),
        ({"action": 1.0}, 400, "an integer"),
        ({"action": None}, 400, "an integer"),
        ({"action": [0]}, 400, "an integer"),
        ({}, 422, "action"),
        ({"action": 0, "extra": 1}, 422, "extra"),
    ]:
        r = client.post(f"/api/games/{key}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert message in r.text
    r = client.post(
        f"/api/games/{key}/move", content=b"not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 422
    after = client.get(f"/api/games/{key}")
    assert after.json()["state"] == before and after.json()["events"] == []
    assert client.post("/api/games/nope/move", json={"action": 0}).status_code == 404
    assert len(key) >= 32  # unguessable: 24 random bytes
    other = client.post("/api/games", json={"opponents": ["greedy", "greedy"], "seed": 2}).json()
    assert other["id"] != key and other["state"] == before  # same seed, same deal, its own game


@pytest.mark.parametrize(
    "body, message",
    [
        ({"rules": "nope"}, "unknown rules preset"),
        ({"opponents": ["nobody"]}, "unknown player"),
        ({"opponents": ["greedy:knock_at=x"]}, "knock_at"),
        ({"opponents": ["ppo"], "rules": "switch"}, "ppo"),
        ({"opponents": ["greedy"], "seat": 2}, "seat must be"),
        ({"opponents": ["greedy"], "seed": -1}, "seed must be"),
        ({"rules": "standard", "opponents": ["greedy"] * 12}, "num_players"),
    ],
)
def test_bad_new_games_are_refused_with_the_reason(client, body, message):
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and message in r.json()["detail"], r.text
    assert not client.app.state.games.games


def test_records_are_saved_listed_and_stepped_through(client, folders):
    records, _ = folders
    answer = client.post("/api/games", json={"opponents": ["expert", "greedy"], "seed": 9}).json()
    key = answer["id"]
    assert client.post(f"/api/games/{key}/save").status_code == 409  # not over: a record shows every card
    assert client.get(f"/api/games/{key}/record").status_code == 409
    play_out(client, key, answer, seed=3)
    saved = client.post(f"/api/games/{key}/save").json()["saved"]
    assert (records / saved).is_file()
    assert client.post(f"/api/games/{key}/save").json()["saved"] == saved  # once
    (records / "folder").mkdir()
    shutil.copy(records / saved, records / "folder" / "copy.jsonl")
    listed = client.get("/api/records").json()["records"]
    assert listed == sorted([saved, "folder/copy.jsonl"])
    data = client.get("/api/records/frames", params={"path": "folder/copy.jsonl"}).json()
    assert data["games"] == 1 and data["num_players"] == 3 and data["seed"] == 9
    first = data["frames"][0]
    assert first["deal"] and all(len(h) == 3 for h in first["hands"])  # a record shows every hand
    assert any(f["result"] for f in data["frames"])
    upload = client.post(
        "/api/records/upload",
        content=(records / saved).read_bytes(),
        params={"name": "x.jsonl"},
        headers=NDJSON,
    )
    assert upload.status_code == 200 and upload.json()["frames"] == data["frames"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "holds no game"),
        (b"not json\n", "x.jsonl:1"),
        (b'{"type": "round"}\n', "round' line lacks the keys"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_a_record_that_fails_to_load_gets_a_clear_message(client, content, message):
    r = client.post("/api/records/upload", content=content, params={"name": "x.jsonl"}, headers=NDJSON)
    assert r.status_code == 400 and message in r.json()["detail"], r.text


def test_a_crafted_record_that_does_not_replay_is_refused(client, folders):
    records, _ = folders
    answer = client.post("/api/games", json={"opponents": ["greedy", "greedy"], "seed": 1}).json()
    play_out(client, answer["id"], answer, seed=0)
    lines = [json.loads(x) for x in client.get(f"/api/games/{answer['id']}/record").text.splitlines()]
    lines[1]["actions"][0][1] = 9999  # an action id no table has
    text = "\n".join(json.dumps(x) for x in lines)
    r = client.post(
        "/api/records/upload", content=text.encode(), params={"name": "bad.jsonl"}, headers=NDJSON
    )
    assert r.status_code == 400 and "bad.jsonl" in r.json()["detail"]


def test_files_are_served_only_from_the_configured_folders(client, folders, tmp_path):
    records, results = folders
    (records / "link.jsonl").symlink_to(tmp_path / "secret.csv")
    assert client.get("/api/results").json()["results"] == [
        {"name": "run-a", "plots": ["wins.png"], "tables": ["summary.csv"]}
    ]
    table = client.get("/api/results/run-a/summary.csv").json()
    assert table["header"] == ["player", "wins"] and table["rows"][0] == ["expert", "12"]
    png = client.get("/api/results/run-a/wins.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    (results / "run-a" / "page.png").write_text("<html><script>alert(1)</script></html>")
    fake = client.get("/api/results/run-a/page.png")
    assert fake.status_code == 422 and "is not a PNG image" in fake.json()["detail"]
    for url in [
        "/api/results/run-a/..%2F..%2Fsecret.csv",
        "/api/results/..%2Fsecret.csv/x.csv",
        "/api/results/run-a/.hidden.csv",
        "/api/records/frames?path=../secret.csv",
        "/api/records/frames?path=%2Fetc%2Fpasswd",
        "/api/records/frames?path=link.jsonl",
        "/api/records/frames?path=folder/../../secret.csv",
    ]:
        r = client.get(url)
        assert r.status_code in (400, 404), (url, r.status_code, r.text)
        assert "a,b" not in r.text and "root:" not in r.text
    assert client.get("/static/../app.py").status_code == 404
    assert "link.jsonl" not in client.get("/api/records").json()["records"]


def test_the_pages_and_options(client):
    play, watch_page = client.get("/").text, client.get("/watch").text
    assert '<form class="setup" id="setup">' in play and '<script src="/static/play.js"' in play
    assert '<form class="setup" id="pick">' in watch_page and '<script src="/static/watch.js"' in watch_page
    assert play.startswith("<!doctype html>") and "$" not in play + watch_page
    options = client.get("/api/options").json()
    assert options["presets"]["standard"]["sizes"] == list(range(2, 8))
    assert "ppo" in options["players"] and options["records"] and options["results"]


def test_without_folders_saving_and_watching_say_how_to_enable_them():
    with open_client(WebConfig(allow_seeds=True)) as c:
        answer = c.post("/api/games", json={"opponents": ["greedy"], "seed": 0}).json()
        c.post(f"/api/games/{answer['id']}/resign")
        r = c.post(f"/api/games/{answer['id']}/save")
        assert r.status_code == 409 and "--records" in r.json()["detail"]
        assert c.get("/api/records/frames", params={"path": "x.jsonl"}).status_code == 404
        assert c.get("/api/results/a/b.csv").status_code == 404


def test_python_m_apps_web_is_the_server_command():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "apps.web", "--port", "70000"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and r.stderr == "thirtyone-web: error: --port must be in 0..65535, got 70000\n"


def test_the_command_line_checks_its_options(tmp_path, capsys):
    from apps.web.server import main
    from thirtyone_env.harness.files import FolderLock

    run = tmp_path / "run"
    (run / "inner").mkdir(parents=True)
    with FolderLock(run, "run folder"):  # what a training run leaves behind
        (run / "config.json").write_text("{}")
    for argv, message in [
        (["--records", str(tmp_path / "missing")], "not a folder"),
        (["--records", ""], "--records is empty"),
        (["--results", " "], "--results is empty"),
        (["--records", str(run / "inner")], "lies inside the folder of another run"),
        (["--port", "70000"], "--port must be"),
    ]:
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2 and message in capsys.readouterr().err
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(SystemExit) as e:
            main(["--port", str(s.getsockname()[1])])
        assert e.value.code == 2 and "cannot listen" in capsys.readouterr().err
    assert Path(__file__).parents[1].joinpath("apps/web/static/shell.html").is_file()


def test_the_http_api_describes_itself_behind_the_token(client):
    """FastAPI's OpenAPI document and page, on the same token as every route."""
    schema = client.get("/api/openapi.json").json()
    paths = set(schema["paths"])
    assert {"/api/options", "/api/games", "/api/games/{key}", "/api/games/{key}/move"} <= paths
    assert "/" not in paths and "/watch" not in paths  # pages, not API
    page = client.get("/api/docs").text
    assert "swagger" in page.lower() and "/api/openapi.json" in page
    # Swagger UI's own files come from the table, not a CDN: the page works offline
    linked = re.findall(r"""(?:src|href)=["']?([^"' >]+)""", page)
    assert linked and all(url.startswith("/static/") for url in linked), linked
    anonymous = TestClient(client.app, base_url="http://127.0.0.1")
    for url in linked:  # open as the pages' own files are
        served = anonymous.get(url)
        assert served.status_code == 200 and len(served.content) > 1000, url
    assert anonymous.get("/api/openapi.json").status_code == 401
    assert anonymous.get("/api/docs").status_code == 401


def test_a_game_the_person_is_knocked_out_of_plays_on_to_its_end(client):
    """Out of the game, the person watches it end: the answer says who won, and the
    record is the whole game (its winners written), not an unfinished one."""
    r = client.post("/api/games", json={"opponents": ["expert", "expert", "expert"], "seed": 2})
    answer = r.json()
    done = play_out(client, answer["id"], answer, seed=2)  # random moves: out before the end
    state = done["state"]
    assert state["out"] and state["finished"] and state["winners"] and state["seat"] not in state["winners"]
    lines = [json.loads(x) for x in client.get(f"/api/games/{answer['id']}/record").text.splitlines()]
    assert lines[-1]["type"] == "end" and lines[-1]["winners"] == state["winners"]
    assert sum(1 for _ in replay(lines)) > 0


def test_a_request_chooses_no_seed_unless_the_server_allows_seeds():
    """Whoever knows a game's seed can deal its cards: by default a request may not set
    one (a finished game's record states its seed, and the same seed deals the same
    cards again), and the page shows no seed field."""
    with open_client(WebConfig()) as c:
        assert c.get("/api/options").json()["seeds"] is False
        r = c.post("/api/games", json={"opponents": ["greedy"], "seed": 3})
        assert r.status_code == 400 and "may not choose the seed" in r.json()["detail"]
        assert c.post("/api/games", json={"opponents": ["greedy"]}).status_code == 200
    with open_client(WebConfig(allow_seeds=True)) as c:
        assert c.get("/api/options").json()["seeds"] is True
        first, again = (
            c.post("/api/games", json={"opponents": ["greedy"], "seed": 3}).json() for _ in range(2)
        )
        assert first["state"] == again["state"]


# -- what the server's own folders and a request's types may hold ----------------------


def test_links_that_loop_are_refused_and_not_listed(folders, tmp_path):
    records, results = folders
    models = tmp_path / "models"
    models.mkdir()
    (records / "loop.jsonl").symlink_to(records / "loop.jsonl")
    (results / "run-a" / "loop.csv").symlink_to(results / "run-a" / "loop.csv")
    (results / "looped").symlink_to(results / "looped")
    (models / "loop.zip").symlink_to(models / "loop.zip")
    with open_client(WebConfig(records=records, results=results, models=models)) as client:
        assert client.get("/api/records").json()["records"] == []
        r = client.get("/api/records/frames", params={"path": "loop.jsonl"})
        assert r.status_code == 400 and "loops" in r.json()["detail"], r.text
        listed = client.get("/api/results").json()["results"]
        assert [x["name"] for x in listed] == ["run-a"] and listed[0]["tables"] == ["summary.csv"]
        r = client.get("/api/results/run-a/loop.csv")
        assert r.status_code == 400 and "loops" in r.json()["detail"], r.text
        r = client.post("/api/games", json={"opponents": ["ppo:path=loop.zip"]})
        assert r.status_code == 400 and "no such model" in r.json()["detail"], r.text


def test_a_record_naming_a_player_with_a_lone_surrogate_is_refused(client, folders):
    answer = client.post("/api/games", json={"opponents": ["greedy"], "seed": 2}).json()
    play_out(client, answer["id"], answer, seed=1)
    lines = client.get(f"/api/games/{answer['id']}/record").text.splitlines()
    head = json.loads(lines[0])
    head["players"] = ["\ud800", "greedy"]
    text = "\n".join([json.dumps(head), *lines[1:]])  # json writes the surrogate as an escape
    assert "\\ud800" in text
    r = client.post("/api/records/upload", content=text.encode(), params={"name": "s.jsonl"}, headers=NDJSON)
    assert r.status_code == 400 and "s.jsonl:1" in r.json()["detail"] and "surrogate" in r.json()["detail"]
    records, _ = folders
    (records / "s.jsonl").write_text(text)
    r = client.get("/api/records/frames", params={"path": "s.jsonl"})
    assert r.status_code == 400 and "surrogate" in r.json()["detail"], r.text


def test_a_save_the_records_folder_cannot_take_is_answered_with_the_reason(client, folders):
    records, results = folders
    answer = client.post("/api/games", json={"opponents": ["greedy"], "seed": 4}).json()
    play_out(client, answer["id"], answer, seed=2)
    records.rmdir()
    records.write_text("a file where the folder was")
    r = client.post(f"/api/games/{answer['id']}/save")
    assert r.status_code == 507 and "could not write the record" in r.json()["detail"], r.text
    records.unlink()
    records.mkdir()
    saved = client.post(f"/api/games/{answer['id']}/save").json()["saved"]  # the folder is back
    assert (records / saved).is_file()
    shutil.rmtree(results)
    assert client.get("/api/results").json() == {"results": []}


@pytest.mark.parametrize(
    "body", [{"opponents": ["greedy"], "seat": True}, {"opponents": ["greedy"], "seat": "1"},
             {"opponents": ["greedy"], "seed": True}, {"opponents": ["greedy"], "seed": 1.0}],
)  # fmt: skip
def test_a_seat_or_seed_is_a_json_integer(client, body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 422, r.text
    assert not client.app.state.games.games


def test_a_moves_turn_is_a_json_integer(client):
    answer = client.post("/api/games", json={"opponents": ["greedy"], "seed": 3}).json()
    state = answer["state"]
    move = next(m["id"] for m in state["moves"] if m["legal"])
    for turn in (str(state["turn"]), True):
        r = client.post(f"/api/games/{answer['id']}/move", json={"action": move, "turn": turn})
        assert r.status_code == 422, (turn, r.text)
    r = client.post(f"/api/games/{answer['id']}/move", json={"action": move, "turn": state["turn"]})
    assert r.status_code == 200, r.text
