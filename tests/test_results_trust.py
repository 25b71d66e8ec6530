"""Nothing lost and clear errors for tournaments, records, replay and
terminal play: destinations probed before the games, folders locked for a run, record
folders marked complete, bounded work, replay that checks every stated standing, and
files that keep the user's umask."""

import json
import os
import stat
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from conftest import recorded_heads_up

import agents
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.evaluation import (
    ROW_FIELDS,
    TournamentConfig,
    deal_chunks,
    run_tournament,
    worker_count,
    write_record_manifest,
)
from thirtyone_env.harness.files import NAME_MAX, FolderLock
from thirtyone_env.harness.match import play_game
from thirtyone_env.harness.records import (
    MANIFEST,
    game_lines,
    read_games,
    read_manifest,
    replay,
    write_lines,
)
from thirtyone_env.harness.replay import main as replay_main
from thirtyone_env.harness.report import default_out_name

ROOT = Path(__file__).resolve().parents[1]
REPLAY = "python -m thirtyone_env.harness.replay"


def run(args, cwd=ROOT, stdin="", umask=None):
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,
    )


def evaluate(*args, cwd=ROOT, umask=None):
    return run([str(ROOT / "evaluate.py"), "--no-progress", *args], cwd=cwd, umask=umask)


def replay_cli(*args):
    return run(["-m", "thirtyone_env.harness.replay", *map(str, args)])


def play_cli(*args, stdin=""):
    return run(["-m", "apps.play", *map(str, args)], stdin=stdin)


def refused(r, message):
    """Exit 2 with ``message`` on stderr, no traceback, and no game played."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert "python evaluate.py --players" not in r.stdout  # the tournament never started


# -- 4: the results folder is probed before any game, default names stay short ------


def test_out_below_a_file_is_refused_before_playing(tmp_path):
    (tmp_path / "plain").write_text("a file")
    r = evaluate("--players", "greedy", "random", "--games", "2", "--out", str(tmp_path / "plain" / "res"))
    refused(r, "is a file, not a folder")


def test_out_name_over_255_bytes_is_refused_before_playing(tmp_path):
    r = evaluate("--players", "greedy", "random", "--games", "2", "--out", str(tmp_path / ("x" * 300)))
    refused(r, f"longer than {NAME_MAX} bytes")


def unwritable_folder(tmp_path):
    """A folder this process cannot write in (root writes anywhere but in /proc/1)."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir(mode=0o500)
        return folder
    if not os.access("/proc/1", os.F_OK) or os.access("/proc/1", os.W_OK):
        pytest.skip("no folder here that root cannot write")
    return Path("/proc/1")


def test_unwritable_out_is_refused_before_playing(tmp_path):
    folder = unwritable_folder(tmp_path)
    r = evaluate("--players", "greedy", "random", "--games", "2", "--out", str(folder / "res"))
    refused(r, "is not writable")


def test_default_names_are_short_plain_and_never_nest():
    name = default_out_name("standard", ("ppo:path=runs/x/best_model.zip", "expert"), 0)
    assert "/" not in name and "\\" not in name and name.startswith("standard-ppo-path=runs")
    assert name.endswith("-s0")
    other = default_out_name("standard", ("ppo:path=runs/y/best_model.zip", "expert"), 0)
    assert other != name  # a hash keeps tournaments apart where characters were replaced
    long = default_out_name("standard", tuple(f"greedy:knock_at={27 + k}.{'0' * 90}1" for k in range(4)), 7)
    assert len(long) <= 120 and long.endswith("-s7")
    assert default_out_name("standard", ("greedy:knock_at=27", "expert"), 3) == (
        "standard-greedy-knock_at=27_expert-s3"
    )


def test_default_results_folder_of_long_specs(tmp_path):
    specs = [f"greedy:knock_at={26 + k}.{'0' * 80}1" for k in range(3)]
    r = evaluate("--players", *specs, "--games", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (folder,) = (tmp_path / "results").iterdir()
    assert len(folder.name) <= 120 and (folder / "results.json").is_file()


# -- 5: one run per folder at a time ----------------------------------------------


def test_a_second_run_into_a_locked_out_folder_is_refused(tmp_path):
    out = tmp_path / "res"
    with FolderLock(out, "--out"):
        r = evaluate("--players", "greedy", "random", "--games", "2", "--out", str(out))
    refused(r, "in use by another running process")
    assert not (out / "results.json").exists()


def test_a_second_run_into_a_locked_record_folder_is_refused(tmp_path):
    rec = tmp_path / "rec"
    with FolderLock(rec, "--record"):
        r = evaluate(
            "--players",
            "greedy",
            "random",
            "--games",
            "2",
            "--out",
            str(tmp_path / "res"),
            "--record",
            str(rec),
        )
    refused(r, "in use by another running process")
    assert not list(rec.glob("deal_*.jsonl"))
    assert not (tmp_path / "res").exists()  # the refused run leaves no folder of its own behind


# -- 6, 11: terminal play checks its record file and options first ---------------


def test_play_never_replaces_an_existing_record(tmp_path):
    record = tmp_path / "mine.jsonl"
    record.write_text("precious\n")
    r = play_cli("--opponents", "greedy", "--seed", "1", "--record", record, stdin="1\n" * 3000)
    assert r.returncode == 2 and "exists: refusing to replace it" in r.stderr, r.stderr
    assert record.read_text() == "precious\n"
    assert "Thirty-One" not in r.stdout  # refused before the game


@pytest.mark.parametrize("where", ["folder", "below a file"])
def test_play_refuses_an_unwritable_record_before_the_game(tmp_path, where):
    (tmp_path / "f").write_text("x")
    target = tmp_path if where == "folder" else tmp_path / "f" / "g.jsonl"
    r = play_cli("--opponents", "greedy", "--seed", "1", "--record", target, stdin="1\n" * 3000)
    assert r.returncode == 2 and "--record" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "Thirty-One" not in r.stdout


def test_play_seed_minus_one_is_a_clear_error():
    r = play_cli("--opponents", "greedy", "--seed", "-1")
    assert r.returncode == 2 and "--seed must be a non-negative integer" in r.stderr
    assert "Traceback" not in r.stderr


def test_play_abandoned_before_a_round_ends_writes_no_header_only_record(tmp_path):
    record = tmp_path / "g.jsonl"
    r = play_cli("--opponents", "greedy", "--seed", "1", "--record", record, stdin="q\n")
    assert r.returncode == 0 and "nothing written" in r.stdout
    assert not record.exists()


# -- 8: a record folder is complete only with its manifest ------------------------


def test_evaluate_record_folder_has_a_manifest_written_last(tmp_path):
    rec = tmp_path / "rec"
    r = evaluate(
        "--players", "greedy", "random", "--games", "4", "--out", str(tmp_path / "res"), "--record", str(rec)
    )
    assert r.returncode == 0, r.stderr
    manifest = read_manifest(rec)
    assert manifest["complete"] and manifest["games"] == 4
    assert [f["name"] for f in manifest["files"]] == ["deal_000000.jsonl", "deal_000001.jsonl"]
    assert manifest["config"]["players"] == ["greedy", "random"] and manifest["config"]["seed"] == 0
    assert replay_cli(rec).returncode == 0


def test_an_interrupted_record_folder_says_so(tmp_path):
    rec = tmp_path / "rec"
    config = TournamentConfig(("greedy", "random"), games=4, seed=2, record_dir=str(rec))
    run_tournament(config, agents.from_spec)  # the games, but the run stops before the manifest
    with pytest.raises(ValueError, match="incomplete record"):
        read_manifest(rec)
    r = replay_cli(rec)
    assert r.returncode == 2 and "incomplete record" in r.stderr and "Traceback" not in r.stderr
    r = replay_cli(rec / "deal_000000.jsonl")
    assert r.returncode == 0 and "warning: incomplete record" in r.stderr
    write_record_manifest(config)
    assert replay_cli(rec).returncode == 0
    assert "incomplete" not in replay_cli(rec / "deal_000000.jsonl").stderr
    (rec / "deal_000001.jsonl").unlink()
    r = replay_cli(rec)
    assert r.returncode == 2 and "lacks 'deal_000001.jsonl'" in r.stderr


def test_a_finished_tournament_is_never_replaced(tmp_path):
    """A rerun goes to a new default folder; an explicit --out over finished results is
    refused before any game, and the earlier results stay byte for byte."""
    first = evaluate("--players", "greedy", "random", "--games", "4", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (done,) = (tmp_path / "results").iterdir()
    before = (done / "results.json").read_bytes()
    second = evaluate("--players", "greedy", "random", "--games", "2", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [done.name, f"{done.name}-2"]
    refused(
        evaluate("--players", "greedy", "random", "--games", "2", "--out", str(done), cwd=tmp_path),
        "holds the results of an earlier run",
    )
    assert (done / "results.json").read_bytes() == before


# -- 9: bounded work ---------------------------------------------------------------


def test_a_billion_games_or_ten_thousand_workers_are_refused(tmp_path):
    out = str(tmp_path / "res")
    refused(
        evaluate("--players", "greedy", "random", "--games", "1000000000", "--out", out), "--games must be"
    )
    refused(
        evaluate("--players", "greedy", "random", "--workers", "10000", "--out", out), "--workers must be"
    )
    refused(
        evaluate("--players", "greedy", "random", "--ray-address", "127.0.0.1:6379", "--out", out),
        "--ray-address needs --cluster ray",
    )
    refused(
        evaluate("--players", "greedy", "random", "--cluster", "ray", "--workers", "-1", "--out", out),
        "--workers must be 0",
    )


def test_a_tournament_larger_than_memory_is_refused_before_playing(tmp_path):
    meminfo = Path("/proc/meminfo")
    if not meminfo.is_file():
        pytest.skip("the OS does not say how much memory is available")
    available = next(
        int(x.split()[1]) * 1024 for x in meminfo.read_text().splitlines() if x.startswith("MemAvailable")
    )
    if available > 50e9:
        pytest.skip("this machine holds a million games' statistics")
    out = tmp_path / "res"
    refused(
        evaluate("--players", "greedy", "random", "--games", "1000000", "--out", str(out)), "GB are available"
    )
    assert not out.exists()


def test_tasks_are_lazy_and_workers_never_outnumber_them():
    chunks = deal_chunks(10**12, 8)
    assert next(chunks) == list(range(8)) and next(chunks) == list(range(8, 16))  # no list of all
    assert worker_count(TournamentConfig(("a", "b"), games=4, workers=8), chunk=8) == 1
    assert worker_count(TournamentConfig(("a", "b"), games=40, workers=8), chunk=2) == 8
    assert worker_count(TournamentConfig(("a", "b"), games=40, workers=8), chunk=4) == 5


def test_results_are_the_same_on_one_or_three_workers():
    base = dict(players=("greedy", "random"), games=12, seed=5)
    one = run_tournament(TournamentConfig(**base, workers=1), agents.from_spec, chunk=1)
    three = run_tournament(TournamentConfig(**base, workers=3), agents.from_spec, chunk=1)
    assert [(g.deal, g.rotation, g.wins, g.rows) for g in one] == [
        (g.deal, g.rotation, g.wins, g.rows) for g in three
    ]


# -- 13: replay checks every stated standing; bad files are named ------------------


def scored_record(preset, seed=3):
    """A finished three-player game of a points or chips preset."""
    rules = Rules.preset(preset).replace(max_rounds=12)
    players = [agents.make("expert"), agents.make("greedy"), agents.make("random")]
    return rules, play_game(players, np.random.default_rng(seed), rules, keep_history=True)


def record_lines(rules, rec, score):
    return game_lines(rules, 3, rec.histories, rec.winners, rec.lives, score)


def final_score(rules, rec):
    """The final points or chips of a game, as the engine replays it."""
    game = [json.loads(x) for x in record_lines(rules, rec, ())]
    *_, (state, _, _) = replay(game)
    return list(state.score)


@pytest.mark.parametrize(("preset", "field"), [("banking", "score_after"), ("no_elimination", "gains")])
def test_falsified_chips_or_points_of_a_round_are_caught(tmp_path, preset, field):
    rules, rec = scored_record(preset)
    lines = record_lines(rules, rec, final_score(rules, rec))
    path = write_lines(tmp_path / "true.jsonl", lines)
    assert replay_cli(path).returncode == 0
    first = json.loads(lines[1])
    assert first["result"]["lives_after"] and first["result"][field]
    first["result"][field][0] += 5  # the lives stay true: only the standing is false
    lines[1] = json.dumps(first)
    path = write_lines(tmp_path / "false.jsonl", lines)
    (game,) = list(read_games(path))
    with pytest.raises(ValueError, match=f"round 1: the record states {field} = "):
        list(replay(game))
    r = replay_cli(path)
    assert r.returncode == 2 and f"game 0: round 1: the record states {field}" in r.stderr


def test_a_falsified_final_score_is_caught(tmp_path):
    rules, rec = scored_record("banking", seed=4)
    score = final_score(rules, rec)
    score[1] += 10
    path = write_lines(tmp_path / "g.jsonl", record_lines(rules, rec, score))
    r = replay_cli(path)
    assert r.returncode == 2 and "game end: the record states score = " in r.stderr, r.stderr


def test_empty_and_header_only_files_say_so(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = replay_cli(empty)
    assert r.returncode == 2 and "holds no game" in r.stderr
    header = tmp_path / "header.jsonl"
    write_lines(header, game_lines(Rules(), 2, []))
    r = replay_cli(header)
    assert r.returncode == 2 and "no rounds" in r.stderr and "Traceback" not in r.stderr


def test_a_missing_key_is_named_in_a_sentence(tmp_path):
    rec, lines = recorded_heads_up()
    second = json.loads(lines[2])
    del second["deck"], second["actions"]
    lines[2] = json.dumps(second)
    path = write_lines(tmp_path / "k.jsonl", lines)
    r = replay_cli(path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{path}:3: the 'round' line lacks the keys 'deck' and 'actions'" in r.stderr


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [("deck", 5, "a list of card ids"), ("actions", [[0]], "a list of [seat, action id, name] entries")],
)
def test_a_value_of_the_wrong_shape_is_named(tmp_path, key, value, what):
    rec, lines = recorded_heads_up()
    first = json.loads(lines[1])
    first[key] = value
    lines[1] = json.dumps(first)
    path = write_lines(tmp_path / "w.jsonl", lines)
    r = replay_cli(path)
    assert r.returncode == 2 and f"{path}:2: the 'round' line's {key!r} must be {what}" in r.stderr, r.stderr


def test_deeply_nested_brackets_are_a_clear_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(
        json.dumps({"type": "game", "rules": {}, "num_players": 2})
        + "\n"
        + "[" * 100_000
        + "]" * 100_000
        + "\n"
    )
    r = replay_cli(path)
    assert r.returncode == 2 and f"{path}:2: nested too deeply" in r.stderr and "Traceback" not in r.stderr


def test_a_record_of_another_version_or_a_number_too_long_is_named_with_its_line(tmp_path):
    rec, lines = recorded_heads_up()
    head = json.loads(lines[0])
    for version in (3, "2", True):
        path = write_lines(
            tmp_path / f"v{version}.jsonl", [json.dumps({**head, "version": version}), *lines[1:]]
        )
        r = replay_cli(path)
        assert r.returncode == 2 and f"{path}:1: a record of version {version!r}" in r.stderr, r.stderr
    first = json.loads(lines[1])
    text = json.dumps({**first, "dealer": "DIGITS"}).replace('"DIGITS"', "9" * 5000)
    path = write_lines(tmp_path / "long.jsonl", [lines[0], text, *lines[2:]])
    r = replay_cli(path)
    assert r.returncode == 2 and f"{path}:2: not a JSON line" in r.stderr and "Traceback" not in r.stderr


def test_a_version_1_record_replays_unless_it_is_banking(tmp_path):
    """Version 1 differs only in banking's deal: its other games replay as they are, a
    banking game is refused in one line rather than replayed from decks dealt another way."""
    rec, lines = recorded_heads_up()
    head = json.loads(lines[0])
    assert head["version"] == 2
    old = write_lines(tmp_path / "v1.jsonl", [json.dumps({**head, "version": 1}), *lines[1:]])
    r = replay_cli(old, "--game", 0)
    assert r.returncode == 0, r.stderr
    banking = {**head, "version": 1, "rules": {**head["rules"], "table": "widow", "scoring": "chips"}}
    path = write_lines(tmp_path / "bank.jsonl", [json.dumps(banking), *lines[1:]])
    r = replay_cli(path)
    assert r.returncode == 2 and f"{path}:1: a banking record of version 1" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_replay_streams_a_large_record(tmp_path, capsys):
    rec, lines = recorded_heads_up(1)
    path = write_lines(tmp_path / "big.jsonl", lines * 300)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with open(os.devnull, "w") as sink:
            sys.stdout, saved = sink, sys.stdout
            try:
                code = replay_main([str(path), "--game", "0"])
            finally:
                sys.stdout = saved
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    assert peak < size / 4, (peak, size)  # one game at a time, never the whole file


# -- 14: files and folders keep the user's umask -----------------------------------


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_results_and_records_keep_the_umask(tmp_path):
    out, rec = tmp_path / "res", tmp_path / "rec"
    r = evaluate(
        "--players", "greedy", "random", "--games", "2", "--out", str(out), "--record", str(rec), umask=0o022
    )
    assert r.returncode == 0, r.stderr
    assert mode(out) == 0o755 and mode(rec) == 0o755
    for f in ("results.json", "games.csv", "knock_values.png"):
        assert mode(out / f) == 0o644, f
    assert mode(rec / MANIFEST) == 0o644 and mode(rec / "deal_000000.jsonl") == 0o644
    record = tmp_path / "game.jsonl"
    p = run(
        ["-m", "apps.play", "--opponents", "greedy", "--seed", "5", "--record", str(record)],
        stdin="1\n" * 3000,
        umask=0o022,
    )
    assert p.returncode == 0, p.stderr
    assert mode(record) == 0o644


# -- resuming an interrupted tournament -------------------------------------------


def test_an_interrupted_tournament_goes_on_from_its_finished_work_units(tmp_path):
    """A folder holding a tournament's configuration and its first finished work units
    (what an interrupted run leaves) is finished by the same command: only the rest is
    played, and the games are those of an uninterrupted run, byte for byte. Another
    tournament in that folder is refused."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, outcome_json, run_tournament

    args = ["--players", "expert", "greedy", "random", "--games", "96", "--seed", "4"]
    whole = tmp_path / "whole"
    assert evaluate(*args, "--out", str(whole)).returncode == 0
    assert not (whole / "partial").exists()
    config = TournamentConfig(("expert", "greedy", "random"), 96, "standard", 4, 1)
    games = run_tournament(config, agents.from_spec, chunk=8)
    interrupted = tmp_path / "interrupted"
    interrupted.mkdir()
    (interrupted / ".lock").touch()  # every run of ours locks its folder first
    marker = json.loads((whole / "tournament.json").read_text())  # what the tournament is
    (interrupted / "tournament.json").write_text(json.dumps(marker))
    (interrupted / "partial").mkdir()
    for k in (0, 2):  # units of 8 deal sets, 3 games each
        unit = [g for g in games if k * 8 <= g.deal < (k + 1) * 8]
        (interrupted / "partial" / f"unit_{k:06d}.json").write_text(outcome_json(unit))
    r = evaluate(*args, "--out", str(interrupted))
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())
    assert "going on" in said and "2 work units" in said
    assert (interrupted / "games.csv").read_bytes() == (whole / "games.csv").read_bytes()
    assert not (interrupted / "partial").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".lock").touch()
    (other / "tournament.json").write_text(json.dumps(marker))
    refused(
        evaluate(*args[:-1], "5", "--out", str(other)),
        "holds an interrupted tournament with other options (seed)",
    )


def test_a_folder_of_files_named_like_results_but_not_ours_is_refused(tmp_path):
    """A user's own ``games.csv`` in a folder no run of ours wrote (no lock file) is never
    replaced, though its name is one a results folder holds."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "games.csv").write_text("my,own,data\n")
    r = evaluate("--players", "greedy", "random", "--games", "4", "--out", str(mine))
    refused(r, "which no run of this program wrote")
    assert (mine / "games.csv").read_text() == "my,own,data\n" and not (mine / ".lock").exists()


@pytest.mark.parametrize("where", ["unrelated", "finished", "inside_results", "holds_out", "inside_out"])
def test_a_record_goes_into_a_new_or_empty_folder_apart_from_every_results_folder(tmp_path, where):
    """``--record`` never writes among other files, into or inside a finished run's
    folder, or nested with ``--out``; refused before any game, nothing created."""
    finished = tmp_path / "finished"
    if where in ("finished", "inside_results"):
        assert (
            evaluate("--players", "greedy", "random", "--games", "2", "--out", str(finished)).returncode == 0
        )
    out, rec = tmp_path / "out", tmp_path / "rec"
    if where == "unrelated":
        rec.mkdir()
        (rec / "notes.txt").write_text("mine")
        message = "is not empty (it holds 'notes.txt')"
    elif where == "finished":
        rec, message = finished, "is not empty"
    elif where == "inside_results":
        rec, message = finished / "rec", "lies inside the folder of another run"
    elif where == "holds_out":
        out, message = rec / "out", "lie one inside the other"
    else:
        rec, message = out / "rec", "lie one inside the other"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    r = evaluate("--players", "greedy", "random", "--games", "2", "--out", str(out), "--record", str(rec))
    refused(r, message)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_record_run_never_takes_over_an_interrupted_tournament(tmp_path):
    """A tournament with ``--record`` into a folder holding another tournament's
    unfinished work is refused, as without it: that work is never deleted."""
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").touch()
    (out / "tournament.json").write_text(json.dumps({"players": ["expert", "expert"]}))
    (out / "partial").mkdir()
    (out / "partial" / "unit_000000.json").write_text("[]")
    r = evaluate(
        "--players", "random", "greedy", "--games", "4", "--out", str(out), "--record", str(tmp_path / "r")
    )
    refused(r, "holds an interrupted tournament with other options")
    assert (out / "partial" / "unit_000000.json").read_text() == "[]" and not (tmp_path / "r").exists()
    (out / "tournament.json").write_text("[" * 200_000 + "]" * 200_000)
    refused(
        evaluate("--players", "random", "greedy", "--games", "4", "--out", str(out)),
        "cannot read its tournament.json",
    )


def test_the_default_results_folder_goes_on_with_an_interrupted_run_of_the_same_command(tmp_path):
    """Without ``--out``, the same command finds the interrupted run's folder and goes
    on with it (a finished one of that name is never touched: the next name is taken)."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, outcome_json, run_tournament
    from thirtyone_env.harness.report import default_out_name

    args = ["--players", "greedy", "random", "--games", "32", "--seed", "2"]
    whole = tmp_path / "whole"
    assert evaluate(*args, "--out", str(whole)).returncode == 0
    results = tmp_path / "cwd" / "results"
    name = default_out_name("standard", ("greedy", "random"), 2)
    done = results / name  # a finished run of another seed's name would be skipped over
    interrupted = results / f"{name}-2"
    for folder in (done, interrupted):
        folder.mkdir(parents=True)
        (folder / ".lock").touch()
    (done / "results.json").write_text("{}")
    (interrupted / "tournament.json").write_text((whole / "tournament.json").read_text())
    (interrupted / "partial").mkdir()
    games = run_tournament(
        TournamentConfig(("greedy", "random"), 32, "standard", 2, 1), agents.from_spec, chunk=8
    )
    unit = [g for g in games if g.deal < 8]
    (interrupted / "partial" / "unit_000000.json").write_text(outcome_json(unit))
    r = evaluate(*args, cwd=tmp_path / "cwd")
    assert r.returncode == 0, r.stderr
    assert "going on" in " ".join(r.stdout.split())
    assert (interrupted / "games.csv").read_bytes() == (whole / "games.csv").read_bytes()
    assert (done / "results.json").read_text() == "{}" and not (results / f"{name}-3").exists()


BOOM_AT_PLAY = """
class Boom:
    def act(self, observation, action_mask):
        raise RuntimeError("boom at its first move")
"""


def test_a_tournament_that_fails_before_any_work_unit_leaves_nothing_that_refuses_another(tmp_path):
    """A player that fails at its first move ends the run in one line; the folder it
    created is gone, so another tournament may use that ``--out``."""
    (tmp_path / "boom.py").write_text(BOOM_AT_PLAY)
    out = tmp_path / "out"
    r = evaluate("--players", "greedy", f"{tmp_path / 'boom.py'}:Boom", "--games", "4", "--out", str(out))
    assert r.returncode == 2 and "boom at its first move" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    assert evaluate("--players", "greedy", "random", "--games", "4", "--out", str(out)).returncode == 0


def test_a_player_that_calls_exit_is_named_and_ends_nothing_but_the_run(tmp_path):
    """A player's ``sys.exit(3)`` in ``act`` is its own failure: one line naming it,
    status 2, the folder gone (not the player's status with no word)."""
    (tmp_path / "quits.py").write_text(
        "import sys\nclass Quits:\n    def act(self, observation, action_mask):\n        sys.exit(3)\n"
    )
    out = tmp_path / "out"
    r = evaluate("--players", "greedy", f"{tmp_path / 'quits.py'}:Quits", "--games", "4", "--out", str(out))
    assert r.returncode == 2 and "raised SystemExit(3) in act" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_player_names_are_shown_as_given_not_read_as_markup(tmp_path):
    """Names with brackets (``ppo[v2]``, ``[/bold]``) are text: shown whole, no error."""
    names = ["--names", "[/bold]", "ppo[v2]"]
    r = evaluate("--players", "greedy", "random", "--games", "4", *names, "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert "[/bold]" in r.stdout and "ppo[v2]" in r.stdout


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ({"name": "deal_000000.jsonl", "games": 1.9}, "a whole number of games"),
        ({"name": "deal_000000.jsonl", "games": True}, "a whole number of games"),
        ({"name": "deal_000000.jsonl", "games": -1}, "a whole number of games"),
        (None, "a file is listed twice"),
        ({"games": float("nan")}, "are not the"),
        ({"games": "2"}, "are not the"),
        ({"games": 10**30}, "are not the"),
        ({"complete": False}, "does not say the record is complete"),
        ({"version": 7}, "type and version"),
    ],
)
def test_a_manifest_that_lies_about_its_files_is_refused(tmp_path, entry, named):
    """A record's manifest names each file once with a whole number of games, says it
    is complete, and counts the games its files hold."""
    from thirtyone_env.harness.records import read_manifest

    rec = tmp_path / "rec"
    r = evaluate(
        "--players", "greedy", "random", "--games", "4", "--out", str(tmp_path / "o"), "--record", str(rec)
    )
    assert r.returncode == 0, r.stderr
    manifest = json.loads((rec / "manifest.json").read_text())
    files = manifest["files"]
    if entry is not None and "name" not in entry:  # a top-level field
        manifest.update(entry)
    else:
        manifest["files"] = [files[0], files[0]] if entry is None else [entry, *files[1:]]
    (rec / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=named):
        read_manifest(rec)


@pytest.fixture(scope="module")
def whole_tournament(tmp_path_factory):
    """The tournament.json of a finished run of the tampered tournament's options."""
    whole = tmp_path_factory.mktemp("whole") / "whole"
    args = ["--players", "greedy", "random", "--games", "32", "--seed", "4"]
    assert evaluate(*args, "--out", str(whole)).returncode == 0
    return (whole / "tournament.json").read_text()


@pytest.mark.parametrize(
    "tamper",
    [
        "both_win", "one_game_short", "seat_out_of_range", "link", "rounds_1e30", "text_in_a_count",
        "huge_value", "no_rows", "a_round_twice", "counts_not_counts", "markup_reason",
    ],
)  # fmt: skip
def test_a_kept_work_unit_no_run_could_have_written_is_refused(tmp_path, tamper, whole_tournament):
    """A kept unit is checked against the tournament before it counts: its deal sets in
    every rotation, one game's wins, seats that are a rotation, rounds the rules play,
    each round's rows with their fields' types and bounds, counts by turn that are
    counts; a link is no unit. Refused before any game is played."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, outcome_json, run_tournament

    args = ["--players", "greedy", "random", "--games", "32", "--seed", "4"]
    games = run_tournament(
        TournamentConfig(("greedy", "random"), 32, "standard", 4, 1), agents.from_spec, chunk=8
    )
    unit = [g for g in games if g.deal < 8]
    if tamper == "both_win":
        unit[0].wins = (1.0, 1.0)
    elif tamper == "one_game_short":
        unit = unit[1:]
    elif tamper == "seat_out_of_range":
        unit[0].seats = (7, 9)
    elif tamper == "rounds_1e30":
        unit[0].rounds = 10**30
    elif tamper in ("text_in_a_count", "huge_value", "markup_reason"):
        field, value = {
            "text_in_a_count": ("lives_before", "four"),
            "huge_value": ("final_value", 1e300),
            "markup_reason": ("reason", "<script>"),
        }[tamper]
        row = list(unit[0].rows[0])
        row[ROW_FIELDS.index(field)] = value
        unit[0].rows[0] = tuple(row)
    elif tamper == "no_rows":
        unit[0].rows = []
    elif tamper == "a_round_twice":
        unit[0].rows = [*unit[0].rows, unit[0].rows[0]]
    elif tamper == "counts_not_counts":
        unit[0].draws_by_turn = [list("junk")] * 2
    out = tmp_path / "out"
    (out / "partial").mkdir(parents=True)
    (out / ".lock").touch()
    (out / "tournament.json").write_text(whole_tournament)
    target = out / "partial" / "unit_000000.json"
    if tamper == "link":
        (tmp_path / "elsewhere.json").write_text(outcome_json(unit))
        target.symlink_to(tmp_path / "elsewhere.json")
    else:
        target.write_text(outcome_json(unit))
    r = evaluate(*args, "--out", str(out))
    refused(r, "cannot read the finished work unit")
    assert "games" not in r.stdout.lower()  # nothing played before the refusal
    assert not (out / "results.json").exists() and not (out / "games.csv").exists()


def test_a_record_whose_deck_is_too_short_for_its_deal_says_so(tmp_path):
    """A round line whose deck cannot even deal its hands is named as that, with its
    round (not read as a reshuffle the record lacks)."""
    rec = tmp_path / "rec"
    r = evaluate(
        "--players", "greedy", "random", "--games", "2", "--out", str(tmp_path / "o"), "--record", str(rec)
    )
    assert r.returncode == 0, r.stderr
    path = rec / "deal_000000.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    first = next(x for x in lines if x["type"] == "round")
    first["deck"] = first["deck"][:5]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = replay_cli(path)
    assert r.returncode == 2 and "round 1: its deck is short of the cards its deal needs" in r.stderr, (
        r.stderr
    )


@pytest.mark.parametrize("owner", ["tournament", "training run"])
def test_no_command_writes_inside_another_runs_folder(tmp_path, owner):
    """Every run leaves its lock in its folder: a tournament's results, a study's, a
    training run's. The tournament, the study, a recipe run, a run by flags and the
    terminal game's record are all refused a destination inside such a folder, before
    any game."""
    theirs = tmp_path / "theirs"
    if owner == "tournament":
        assert evaluate("--players", "greedy", "random", "--games", "2", "--out", str(theirs)).returncode == 0
    else:
        theirs.mkdir()
        with FolderLock(theirs, "run folder"):  # what a training run leaves behind
            (theirs / "config.json").write_text("{}")
    message = "lies inside the folder of another run"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    commands = [
        [str(ROOT / "evaluate.py"), "--no-progress", "--players", "greedy", "random", "--games", "2",
         "--out", str(theirs / "inner")],
        ["-m", "thirtyone_env.research", "knock", "--decisions", "10", "--rollouts", "2",
         "--out", str(theirs / "study")],
        [str(ROOT / "train.py"), "--runs-dir", str(theirs), "--run-name", "nested", "--no-progress"],
        ["-m", "training.run_cli", "--runs-dir", str(theirs), "--run-name", "nested", "--no-progress"],
        ["-m", "apps.play", "--opponents", "greedy", "--seed", "1", "--record", str(theirs / "game.jsonl")],
    ]  # fmt: skip
    for args in commands:
        r = run(args, stdin="1\n" * 50)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_the_terminal_games_record_folder_must_exist_before_the_game(tmp_path):
    r = play_cli(
        "--opponents", "greedy", "--seed", "1", "--record", tmp_path / "none" / "g.jsonl", stdin="1\n" * 50
    )
    assert r.returncode == 2 and "does not exist" in r.stderr and "You" not in r.stdout, r.stderr


def test_the_run_marks_are_the_names_their_owners_write():
    from thirtyone_env.harness.report import LOCKED_RUN_MARKS
    from thirtyone_env.research.folder import STUDY
    from training.recipe_run import RECIPE_FILE
    from training.run_folder import CONFIG
    from training.sweep import SWEEP

    assert LOCKED_RUN_MARKS == (STUDY, CONFIG, RECIPE_FILE, SWEEP)


def test_a_record_line_longer_than_any_round_is_refused_unread(tmp_path):
    """A crafted line of millions of tiny JSON values costs some 30 times its length to
    parse: past ``MAX_LINE`` it is refused before ``json.loads``."""
    from apps.web.watch import MAX_LINE as WEB_MAX_LINE
    from apps.web.watch import parse_record
    from thirtyone_env.harness.records import MAX_LINE

    rec, lines = recorded_heads_up()
    long = '{"type": "round", "pad": "' + "a" * MAX_LINE + '"}'
    path = write_lines(tmp_path / "long.jsonl", [lines[0], long, *lines[2:]])
    r = replay_cli(path)
    assert r.returncode == 2 and f"{path}:2: a line longer than {MAX_LINE:,} characters" in r.stderr, r.stderr
    # what any client may upload to the web table has a smaller limit
    upload = json.dumps({**json.loads(lines[1]), "actions": [[]] * (WEB_MAX_LINE // 3)})
    assert len(upload) < MAX_LINE
    with pytest.raises(ValueError, match=f"up.jsonl:2: a line longer than {WEB_MAX_LINE:,} characters"):
        parse_record("\n".join([lines[0], upload]), "up.jsonl")
