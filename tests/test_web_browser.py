"""The web table in a real headless browser (Debian's chromium, driven by Playwright:
no browser download) against a real server (``thirtyone-web`` on 127.0.0.1): a whole
game against three shipped agents played with the mouse, saved, and stepped through
on the watch page; screenshots of both pages go to the test's temporary folder."""

import os
import shutil
from pathlib import Path

import pytest
from web_server import start_server

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
#: as the machine's probe starts chromium: no sandbox as root, no calls outside
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``thirtyone-web`` on a free port of 127.0.0.1, with a records and a results folder:
    (its start-up URL's address with the token, as a query to add, and its folder)."""
    root = tmp_path_factory.mktemp("web")
    (root / "records").mkdir()
    (root / "results" / "demo").mkdir(parents=True)
    (root / "results" / "demo" / "summary.csv").write_text("player,win_rate\nexpert,0.31\ngreedy,0.19\n")
    server = start_server(
        "--records", str(root / "records"), "--results", str(root / "results"), "--allow-seeds"
    )
    yield server, root
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_a_whole_game_against_three_agents_with_the_mouse(server, browser, tmp_path):
    web, root = server
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{web.url}&step=0")
    page.select_option("#rules", "standard")
    page.select_option("#size", "4")
    assert page.locator("#opponents input").evaluate_all("els => els.map(e => e.value)") == ["ppo"] * 3
    page.fill("#seed", "7")
    page.click("#start")
    page.wait_for_selector("#hand .card")
    assert page.locator("#hand .card").count() == 3
    page.wait_for_selector("#moves button:not([disabled])")
    assert page.locator("#moves button:text-is('stand')").is_disabled()  # illegal moves: disabled buttons
    assert page.locator("#moves button:text-is('draw_stock')").is_enabled()
    clicks = 0
    ready = "() => document.querySelector('#resign').disabled || document.querySelector('#moves button:not([disabled])')"
    page.wait_for_function(ready)
    while not page.locator("#resign").is_disabled():
        labels = page.locator("#moves button:not([disabled])").all_inner_texts()
        # the first move offered (draw from the stock, discard the first card), knocking
        # when it is offered after a few moves
        choice = "knock" if "knock" in labels and clicks > 6 else labels[0]
        page.click(f"#moves button:text-is('{choice}')")
        clicks += 1
        assert clicks < 2000
        page.wait_for_function(ready)
        if clicks == 5:  # a few moves in: the others' moves in the log
            page.wait_for_timeout(700)  # the drawn card's animation
            page.screenshot(path=tmp_path / "play.png")
    status = page.inner_text("#status")
    assert "win" in status or "out of the game" in status, status
    assert page.locator("#log p.settle").count() >= 1  # every round's end was shown
    page.screenshot(path=tmp_path / "play-end.png")
    page.click("#save")
    page.wait_for_selector("#saved:text-matches('saved as')")
    saved = page.inner_text("#saved").split("saved as ", 1)[1]
    assert (root / "records" / saved).is_file()
    assert (tmp_path / "play.png").stat().st_size > 10_000  # (taken a few moves in)
    copy_screenshots(tmp_path, "play.png")


def test_a_bad_opponent_is_named_on_the_page(server, browser):
    web, _ = server
    page = browser.new_page()
    page.goto(f"{web.url}&step=0")
    page.locator("#opponents input").first.fill("nobody")
    page.click("#start")
    page.wait_for_selector("#error:text-matches('unknown player')")
    assert page.locator("#game").is_hidden()


def test_the_api_page_renders_from_the_servers_own_files(server, browser):
    """``/api/docs`` draws Swagger UI's page of the API with every request answered by the
    table itself: a request anywhere else is refused here, and none is made."""
    web, _ = server
    page = browser.new_page()
    elsewhere = []

    def only_the_table(route):
        if route.request.url.startswith(web.base):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_table)
    page.goto(f"{web.base}/api/docs?token={web.token}")
    page.wait_for_selector(".swagger-ui .info .title:text-matches('thirtyone web table')")
    page.wait_for_selector(".swagger-ui .opblock-summary-path[data-path='/api/games']")
    assert not elsewhere, elsewhere


def test_the_watch_page_steps_through_a_record(server, browser, tmp_path):
    web, root = server
    base = web.base
    if not list((root / "records").glob("*.jsonl")):  # (when run alone) a game to watch
        import httpx

        client = httpx.Client(base_url=base, headers=web.auth)
        game = client.post("/api/games", json={"opponents": ["expert", "greedy"], "seed": 3}).json()
        state = game["state"]
        while state["round"] == 1 and not state["over"]:  # a record needs a finished round
            move = next(m["id"] for m in state["moves"] if m["legal"])
            state = client.post(f"/api/games/{game['id']}/move", json={"action": move}).json()["state"]
        client.post(f"/api/games/{game['id']}/resign")  # saved once over
        saved = client.post(f"/api/games/{game['id']}/save")
        assert saved.status_code == 200, saved.text
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{base}/watch?token={web.token}")
    page.click("#pick button[type=submit]")
    page.wait_for_selector("#hands .card")
    first = page.inner_text("#event")
    assert "deals" in first
    hands = page.locator("#hands .seat").count()
    assert page.locator("#hands .card[data-card]").count() == 3 * hands  # a record shows every hand
    page.click("#next")
    page.click("#next")
    second = page.inner_text("#event")
    assert second != first and "move 3 /" in page.inner_text("#where")
    page.click("#prev")
    assert "move 2 /" in page.inner_text("#where")
    page.keyboard.press("ArrowRight")
    assert "move 3 /" in page.inner_text("#where")
    page.click("#last")
    page.wait_for_selector("#result div")
    page.screenshot(path=tmp_path / "replay.png")
    page.click("#results summary")
    page.wait_for_selector("table.data td:text-is('expert')")
    copy_screenshots(tmp_path, "replay.png")


def test_every_presets_records_open_and_upload_on_the_watch_page(server, browser, tmp_path):
    """``evaluate.py --record`` of every preset, the Switch carry-over offers included:
    each file opens from the records folder, and one is uploaded, in the browser."""
    import sys

    sys.path.insert(0, str(ROOT))
    import evaluate
    from thirtyone_env.game.rules import PRESETS, Rules

    web, root = server
    for preset in sorted(PRESETS):
        seats = Rules.preset(preset).seats or 3
        players = ["expert", "greedy", "blitz31", "random"][:seats]
        args = [
            "--players",
            *players,
            "--rules",
            preset,
            "--games",
            str(seats),
            "--seed",
            "4",
            "--workers",
            "1",
        ]
        args += [
            "--record",
            str(root / "records" / f"eval-{preset}"),
            "--out",
            str(tmp_path / preset),
            "--no-progress",
        ]
        assert evaluate.main(args) == 0
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{web.base}/watch?token={web.token}")
    page.wait_for_selector("#records option[value^='eval-']", state="attached")
    names = [n for n in page.locator("#records option").all_inner_texts() if n.startswith("eval-")]
    assert {n.split("/")[0] for n in names} == {f"eval-{p}" for p in PRESETS}
    for name in names:
        page.select_option("#records", name)
        page.click("#pick button[type=submit]")
        page.wait_for_function(
            "name => document.querySelector('#title').textContent.includes(name) "
            "|| document.querySelector('#error').textContent",
            arg=name,
        )
        assert page.inner_text("#error") == "", (name, page.inner_text("#error"))
        page.click("#last")
        page.wait_for_selector("#result div")
    switch = next(iter(sorted((root / "records" / "eval-switch").glob("*.jsonl"))))
    page.set_input_files("#upload", str(switch))
    page.wait_for_function("() => document.querySelector('#title').textContent.includes('upload') "
                           "|| document.querySelector('#title').textContent.includes('.jsonl') "
                           "|| document.querySelector('#error').textContent")  # fmt: skip
    assert page.inner_text("#error") == ""


def copy_screenshots(folder: Path, name: str) -> None:
    """With THIRTYONE_SCREENSHOTS=DIR, keep a copy of the screenshot there (the README's)."""
    target = os.environ.get("THIRTYONE_SCREENSHOTS")
    if target:
        shutil.copy(folder / name, Path(target) / f"web-{name}")
