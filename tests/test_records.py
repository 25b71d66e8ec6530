"""Game records: JSON Lines that replay on the engine to the same lives, from the
harness, the env and play_game; the replay command."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import recorded_heads_up

import agents
from thirtyone_env import ThirtyOneEnv
from thirtyone_env.game.actions import KNOCK
from thirtyone_env.game.policies import RandomPolicy
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.match import play_game
from thirtyone_env.harness.records import game_lines, read_games, replay, write_lines
from thirtyone_env.harness.replay import main as replay_main

ROOT = Path(__file__).resolve().parents[1]


def final_of(game):
    *_, (state, _seat, _action) = replay(game)
    return state


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips(name, tmp_path):
    rules = Rules.preset(name).replace(max_rounds=30)
    rng = np.random.default_rng(11)
    n = rules.seats or 3
    players = [agents.make(x) for x in ("expert", "greedy", "random", "blitz31")[:n]]
    rec = play_game(players, rng, rules, keep_history=True)
    path = write_lines(tmp_path / "g.jsonl", game_lines(rules, n, rec.histories, rec.winners, rec.lives))
    (game,) = list(read_games(path))
    assert game[0]["rules"]["table"] == rules.table
    state = final_of(game)  # replay checks every round's lives and the end itself
    assert tuple(state.lives) == rec.lives and tuple(state.winners) == rec.winners
    assert state.round_no == len(rec.rounds)


class NeverKnocks(RandomPolicy):
    obs_encoding = "view"

    def act(self, observation, action_mask):
        mask = action_mask.copy()
        if mask.sum() > 1:
            mask[KNOCK] = 0
        return super().act(observation, mask)


def reshuffling_game():
    """A heads-up pagat game (the discard pile is reshuffled when the stock runs out)
    where nobody knocks, and its record lines: round 1 reshuffles once, and a later
    round ends before the stock runs out (the first seed that gives such a game)."""
    rules = Rules.preset("pagat").replace(max_turns_per_round=150, max_rounds=4)
    for seed in range(100):
        rec = play_game([NeverKnocks(), NeverKnocks()], np.random.default_rng(seed), rules, keep_history=True)
        lines = game_lines(rules, 2, rec.histories, rec.winners, rec.lives)
        counts = [len(r["reshuffles"]) for r in map(json.loads, lines) if r["type"] == "round"]
        if counts[0] == 1 and 0 in counts[1:]:
            return rec, lines
    raise AssertionError("no seed of 100 gave the game")


def quiet_round(lines) -> int:
    """The first round of a record that never reshuffles."""
    return next(r["round_no"] for r in map(json.loads, lines) if r["type"] == "round" and not r["reshuffles"])


def test_reshuffled_stocks_replay_exactly(tmp_path):
    rec, lines = reshuffling_game()
    rounds = [json.loads(x) for x in lines if json.loads(x)["type"] == "round"]
    assert any(r["reshuffles"] for r in rounds), "the test needs a reshuffle"
    (game,) = list(read_games(write_lines(tmp_path / "r.jsonl", lines)))
    assert tuple(final_of(game).lives) == rec.lives


def with_round(lines, round_no, change):
    """The record lines with ``change`` made to the line of round ``round_no``."""
    lines = list(lines)
    for i, text in enumerate(lines):
        line = json.loads(text)
        if line["type"] == "round" and line["round_no"] == round_no:
            change(line)
            lines[i] = json.dumps(line)
            return lines
    raise AssertionError(f"no round {round_no}")


@pytest.mark.parametrize(
    "record, round_no, change, problem",
    [
        (
            reshuffling_game,
            1,
            lambda line: line["reshuffles"].append(list(line["reshuffles"][0])),
            "the record has 2 reshuffles of the discard pile, but the replay reshuffles 1 time: "
            "reshuffle 2 is never used",
        ),
        (
            reshuffling_game,
            None,  # the round that never reshuffles
            lambda line: line["reshuffles"].append(line["deck"][-3:]),
            "the record has 1 reshuffle of the discard pile, but the replay reshuffles 0 times: "
            "reshuffle 1 is never used",
        ),
        (
            recorded_heads_up,
            1,
            lambda line: line["reshuffles"].append([]),
            "the record has 1 reshuffle of the discard pile, but these rules never reshuffle "
            "(stock_exhausted='void'): reshuffle 1 is never used",
        ),
    ],
    ids=["one-too-many", "in-a-round-that-never-reshuffles", "under-rules-that-never-reshuffle"],
)
def test_a_recorded_reshuffle_the_replay_never_makes_is_refused(
    tmp_path, capsys, record, round_no, change, problem
):
    """A record says what happened: a reshuffle in it that the replayed game never
    makes is refused, naming the round line, by the replay and by the command."""
    _rec, lines = record()
    round_no = quiet_round(lines) if round_no is None else round_no
    (genuine,) = list(read_games(write_lines(tmp_path / "genuine.jsonl", lines)))
    final_of(genuine)
    path = write_lines(tmp_path / "extra.jsonl", with_round(lines, round_no, change))
    (game,) = list(read_games(path))
    with pytest.raises(ValueError, match=f"^round {round_no}: {re.escape(problem)}$"):
        final_of(game)
    assert replay_main([str(path)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{path}: game 0: round {round_no}: {problem}")


def test_recorded_reshuffled_cards_the_replay_never_draws_are_refused(tmp_path):
    """Every card a recorded reshuffle lists must be drawn: one more from that stock,
    left in it when the round ended, is refused."""
    _rec, lines = reshuffling_game()
    (genuine,) = list(read_games(write_lines(tmp_path / "genuine.jsonl", lines)))
    left: list[list[int]] = []  # the stock as each round ends
    for _ in replay(genuine, on_settle=lambda s: left.append(list(s.stock))):
        pass
    listed = len(json.loads(lines[1])["reshuffles"][-1])
    changed = with_round(lines, 1, lambda line: line["reshuffles"][-1].append(left[0][0]))
    (game,) = list(read_games(write_lines(tmp_path / "more.jsonl", changed)))
    problem = f"round 1: recorded reshuffle 1 lists {listed + 1} cards drawn from its stock, the replay draws {listed}"
    with pytest.raises(ValueError, match=f"^{re.escape(problem)}$"):
        final_of(game)


def test_a_tampered_record_is_caught(tmp_path):
    rec, lines = recorded_heads_up()
    first = json.loads(lines[1])
    first["deck"][0], first["deck"][1] = first["deck"][1], first["deck"][0]  # other hands
    lines[1] = json.dumps(first)
    (game,) = list(read_games(write_lines(tmp_path / "t.jsonl", lines)))
    with pytest.raises(ValueError):
        list(replay(game))


def test_env_saves_its_game(tmp_path):
    env = ThirtyOneEnv(num_players=3, opponents=agents.make("expert"))
    obs, info = env.reset(seed=4)
    with pytest.raises(RuntimeError, match="once the episode is over"):  # it would show every card
        env.save_record(str(tmp_path / "early.jsonl"))
    assert not (tmp_path / "early.jsonl").exists()
    rng = np.random.default_rng(1)
    term = False
    while not term:
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    path = env.save_record(str(tmp_path / "env.jsonl"))
    (game,) = list(read_games(path))
    assert game[0]["players"].count("agent") == 1
    state = final_of(game)
    assert list(state.lives) == list(env.unwrapped.state.lives)
    before = Path(path).read_bytes()
    with pytest.raises(ValueError, match="exists: refusing to replace it"):
        env.save_record(path)  # never over a file: not even its own earlier record
    assert Path(path).read_bytes() == before


def test_evaluate_records_every_game_and_replay_prints_it(tmp_path):
    out, rec_dir = tmp_path / "results", tmp_path / "records"
    r = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--players", "expert", "greedy", "random", "--games", "6",
         "--no-progress", "--out", str(out), "--record", str(rec_dir)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    files = sorted(rec_dir.glob("deal_*.jsonl"))
    games = [g for f in files for g in read_games(f)]
    assert len(games) == 6
    for game in games:
        final_of(game)
    p = subprocess.run(
        [sys.executable, "-m", "thirtyone_env.harness.replay", str(files[0]), "--game", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "-- round 1, dealer seat" in p.stdout and "round over" in p.stdout and "winners:" in p.stdout
    # a second run refuses to mix records into the same folder
    r = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--players", "expert", "greedy", "--games", "2",
         "--no-progress", "--out", str(out.with_name("results2")), "--record", str(rec_dir)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2 and "is not empty (it holds 'deal_000000.jsonl')" in r.stderr, r.stderr


def test_replay_of_a_damaged_file_exits_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "game", "rules": {}}\nnot json\n')
    p = subprocess.run(
        [sys.executable, "-m", "thirtyone_env.harness.replay", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 2 and "bad.jsonl" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "thirtyone_env.harness.replay", str(tmp_path / "none.jsonl")],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert p.returncode == 2 and "not found" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "thirtyone_env.harness.replay", "/dev/zero"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 2 and "/dev/zero is not a regular file" in p.stderr, p.stderr


def test_a_record_that_leaves_rules_at_their_defaults_replays_and_prints(tmp_path, capsys):
    """A record may state only the rules fields that differ from the defaults: the
    replay takes the rest from ``Rules()``, and so does the printed game."""
    _rec, lines = recorded_heads_up()
    head = json.loads(lines[0])
    defaults = Rules()
    head["rules"] = {k: v for k, v in head["rules"].items() if getattr(defaults, k) != v}
    assert "table" not in head["rules"]
    lines[0] = json.dumps(head)
    path = write_lines(tmp_path / "short.jsonl", lines)
    assert replay_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert f"table={defaults.table}," in out and "winners:" in out
