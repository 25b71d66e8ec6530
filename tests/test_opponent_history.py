"""The opt-in ``opponent_history`` part of the observation: exact counts on stacked
decks, only what the seat saw (a count rebuilt from the public events and the round
results as that seat sees them gives the same numbers), the envs' option, and the
layout without it unchanged (the batched kernels are held to the engine in
``tests/test_vector.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import deal, disc, play

from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.multiagent import raw_env
from thirtyone_env.envs.vector import ThirtyOneVectorEnv
from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, TAKE_DISCARD
from thirtyone_env.game.encoding import HISTORY_FEATURES, HISTORY_ROUNDS, TURN_SCALE, ObsLayout, encode_flat
from thirtyone_env.game.engine import GAME_OVER, ROUND_OVER, legal_actions, new_game, start_round
from thirtyone_env.game.play import apply_action
from thirtyone_env.game.views import public_result


def history(s, seat: int) -> np.ndarray:
    """``seat``'s ``opponent_history`` part: row r-1 is the seat r places after it."""
    layout = ObsLayout(s.num_players, s.rules, opponent_history=True)
    return layout.part(encode_flat(s, seat, layout), "opponent_history")


def knock_round():
    """Three players, seat 0 first: seat 0 takes the 3h (Ah Kh 3h, 24), seat 1 knocks on
    its first turn with 9s 8s 7s (24), seat 2 draws the 6d and throws the 3c (15), seat 0
    draws the 2s and throws it; the showdown costs seat 2 a life."""
    s, rng = deal(["Ah Kh 2c", "9s 8s 7s", "5d 4d 3c"], "3h", "6d 2s", dealer=2)
    play(s, rng, TAKE_DISCARD, disc("2c"), KNOCK)
    before = history(s, 2)
    play(s, rng, DRAW_STOCK, disc("3c"), DRAW_STOCK, disc("2s"))
    return s, rng, before


def test_a_showdown_counts_the_knock_its_turn_and_the_hands_shown():
    s, rng, before = knock_round()
    assert s.phase == ROUND_OVER and s.result.reason == "knock" and s.result.losses == (0, 0, 1)
    assert not before[:, :5].any()  # nothing of the knock until the hands are shown
    assert before[0, 5] == 1.0  # seat 0's one draw so far was a pickup
    r = 1 / HISTORY_ROUNDS
    seat0 = [r, 0.0, 0.0, 0.0, 24 / 31, 1 / 2]  # 2 draws, 1 from the pile
    seat1 = [r, 1.0, 1 / TURN_SCALE, 24 / 31, 24 / 31, 0.0]  # knocked at its turn 1 with 24
    seat2 = [r, 0.0, 0.0, 0.0, 15 / 31, 0.0]
    np.testing.assert_allclose(history(s, 2), [seat0, seat1], rtol=1e-6)  # seat 2's view
    np.testing.assert_allclose(history(s, 0), [seat1, seat2], rtol=1e-6)  # rows relative to the seat
    start_round(s, rng)  # kept across the deal
    np.testing.assert_allclose(history(s, 1), [seat2, seat0], rtol=1e-6)


def test_a_blitz_shows_no_hands_and_counts_no_values():
    s, rng = deal(["Ah Kh 2c", "9s 8s 7s", "5d 4d 3c"], "Qh", "6d 2s", dealer=2)
    play(s, rng, TAKE_DISCARD, disc("2c"))  # Ah Kh Qh: 31
    assert s.result.reason == "blitz"
    r = 1 / HISTORY_ROUNDS
    np.testing.assert_allclose(history(s, 1), [[r, 0, 0, 0, 0, 0], [r, 0, 0, 0, 0, 1.0]], rtol=1e-6)


def test_the_part_is_what_the_seat_could_count_from_what_it_saw():
    """Random four-player games over many rounds: after every move, each seat's part
    equals a count rebuilt from the events and from the round results as that seat
    sees them (``public_result``), and never looks at a hand."""
    rng = np.random.default_rng(3)
    for _ in range(6):
        s = new_game("standard", 4, rng)
        counts = [[0] * 9 for _ in range(4)]  # rounds knocks turns shown kv showdowns sv draws picks
        turns = [0] * 4
        seen = 0
        while True:
            for kind, seat, data in s.history[seen:]:
                if kind in (ev.DRAW_STOCK, ev.TAKE_DISCARD, ev.KNOCK, ev.STAND):
                    turns[seat] += 1  # each turn opens with one of these
                if kind in (ev.DRAW_STOCK, ev.TAKE_DISCARD):
                    counts[seat][7] += 1
                    counts[seat][8] += kind == ev.TAKE_DISCARD
                if kind == ev.SETTLE:
                    seen_result = public_result(data, 0, s.rules)
                    shown = data.reason in ("knock", "stock_exhausted")
                    for p, v in enumerate(seen_result.values):
                        if v is None and not shown:
                            v = 0.0
                        if data.values[p] is None:
                            continue
                        counts[p][0] += 1
                        if shown:
                            counts[p][5] += 1
                            counts[p][6] += v
                    if data.knocker is not None:
                        k = data.knocker
                        counts[k][1] += 1
                        counts[k][2] += turns[k]
                        if shown:
                            counts[k][3] += 1
                            counts[k][4] += seen_result.values[k]
            seen = len(s.history)
            for seat in range(4):
                for r, row in enumerate(history(s, seat), start=1):
                    rounds, knocks, kturns, kshown, kv, showdowns, sv, draws, picks = counts[(seat + r) % 4]
                    want = [
                        min(1.0, rounds / HISTORY_ROUNDS),
                        knocks / rounds if rounds else 0.0,
                        min(1.0, kturns / knocks / TURN_SCALE) if knocks else 0.0,
                        kv / kshown / 31 if kshown else 0.0,
                        sv / showdowns / 31 if showdowns else 0.0,
                        picks / draws if draws else 0.0,
                    ]
                    np.testing.assert_allclose(row, want, rtol=1e-6, atol=1e-7)
            if s.phase == GAME_OVER:
                break
            if s.phase == ROUND_OVER:
                start_round(s, rng)
                turns, seen = [0] * 4, 0
                continue
            acts = legal_actions(s)
            apply_action(s, acts[int(rng.integers(len(acts)))], rng)
        assert s.round_no > 3


def test_the_envs_add_the_part_last_only_when_asked():
    plain = ThirtyOneEnv(3)
    env = ThirtyOneEnv(3, opponent_history=True)
    assert env.observation_space.shape == (plain.observation_space.shape[0] + 2 * HISTORY_FEATURES,)
    assert env.obs_layout.slices["opponent_history"].stop == env.obs_layout.size
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    vec = ThirtyOneVectorEnv(2, 3, opponent_history=True)
    assert vec.single_observation_space == env.observation_space
    aec = raw_env(3, opponent_history=True)
    assert aec.observation_space("player_0")["observation"].shape == env.observation_space.shape
    for make in (ThirtyOneEnv, raw_env):
        with pytest.raises(ValueError, match="opponent_history='yes'"):
            make(3, opponent_history="yes")
    with pytest.raises(ValueError, match="opponent_history=1"):
        ThirtyOneVectorEnv(2, 3, opponent_history=1)


def test_the_env_passes_the_gymnasium_checker_with_the_part():
    from gymnasium.utils.env_checker import check_env

    check_env(ThirtyOneEnv(4, opponent_history=True), skip_render_check=True)
    check_env(ThirtyOneEnv(4, opponent_history=True, backend="compiled"), skip_render_check=True)


class Recorder:
    """A player that asks for the observation with the history and keeps what it got;
    it draws from the stock and throws its lowest card id (never knocks)."""

    obs_encoding = "flat+history"

    def __init__(self) -> None:
        self.seen: list[np.ndarray] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.seen.append(np.array(observation))
        return int(np.flatnonzero(action_mask)[0])


def test_a_player_that_asks_for_the_history_gets_it_from_the_engine_and_the_kernels():
    """The same games, the agent's seat without the history: the engine's table and the
    batched kernels hand the ``"flat+history"`` opponent the same observations."""
    from thirtyone_env.game.policies import GreedyPolicy

    a, b = Recorder(), Recorder()
    env = ThirtyOneEnv(4, opponents=[a, GreedyPolicy(), GreedyPolicy()], seat=0)
    vec = ThirtyOneVectorEnv(1, 4, opponents=[b, GreedyPolicy(), GreedyPolicy()], seat=0)
    (obs, info), (vobs, _) = env.reset(seed=4), vec.reset(seed=4)
    assert obs.shape == vobs[0].shape == (ObsLayout(4).size,)  # the agent's own: no history
    rng = np.random.default_rng(0)
    for _ in range(400):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, done, _, info = env.step(action)
        vobs, _, vdone, _, vinfo = vec.step(np.array([action]))
        assert done == vdone[0]
        if done:  # the vector env has dealt the next game already
            assert np.array_equal(obs, vinfo["final_obs"][0])
            obs, info = env.reset()
        assert np.array_equal(obs, vobs[0])
    assert len(a.seen) == len(b.seen) > 100
    assert all(np.array_equal(x, y) for x, y in zip(a.seen, b.seen, strict=True))
    layout = ObsLayout(4, opponent_history=True)
    assert {x.shape for x in a.seen} == {(layout.size,)}
    assert any(layout.part(x, "opponent_history")[:, 1].any() for x in a.seen)  # knocks were seen


def test_a_teacher_without_the_history_labels_a_learner_that_has_it():
    """Imitation in an env with the history: the learner's demonstrations carry it, and
    a teacher trained without it (the zoo's Stop the Bus model) decides on what it reads."""
    from agents.ppo import PPOPlayer
    from training.imitation import collect

    teacher = PPOPlayer("agents/models/ppo_stop_the_bus_4p-v1.zip")  # trained without the history
    env = ThirtyOneEnv(4, "stop_the_bus", opponent_history=True)
    demos = collect(env, teacher, 60, 0.99, seed=2)
    layout = env.obs_layout
    assert demos.obs.shape == (60, layout.size)
    plain = ObsLayout(4, env.rules).size
    assert teacher.policy.input_size == plain < layout.size
    again = teacher.act_batch(demos.obs[:, :plain].astype(np.float32), demos.masks)
    assert (again == demos.actions).mean() > 0.9  # stored as float16: a near tie may round the other way


def test_the_opponent_types_benchmark_reads_a_random_player_from_its_pickups(capsys):
    """``benchmarks/opponent_types.py``: a random player draws from the pile half the
    time, a greedy one only when it pays: after three rounds the read-out names them."""
    import importlib.util
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "opponent_types.py"
    spec = importlib.util.spec_from_file_location("opponent_types", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["greedy", "random", "--games", "40", "--seed", "3"]) == 0
    table = dict(re.findall(r"^\| (\d+\+?) \| \d+ / \d+ \| ([\d.]+)% \|$", capsys.readouterr().out, re.M))
    assert set(table) == {"1", "3", "5", "10+"}
    assert all(float(table[k]) >= 90 for k in ("3", "5", "10+"))
    with pytest.raises(SystemExit) as e:
        bench.main(["greedy", "nobody"])
    assert e.value.code == 2


def test_a_model_that_reads_the_history_says_how_to_get_it_in_ones_own_loop():
    """The shipped 4-player model reads the opponent history: in one's own loop over an
    env without it, ``act`` says which flag gives it; with the flag it plays."""
    import agents

    player = agents.make("ppo")
    player.check_table(4, "standard")
    plain, with_history = ThirtyOneEnv(4), ThirtyOneEnv(4, opponent_history=True)
    obs, info = plain.reset(seed=0)
    with pytest.raises(ValueError, match="make the env with opponent_history=True"):
        player.act(obs, info["action_mask"])
    obs, info = with_history.reset(seed=0)
    assert info["action_mask"][player.act(obs, info["action_mask"])] == 1
