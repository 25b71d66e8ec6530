"""ThirtyOneEnv: the checker suites, determinism, masks, no hidden-information leak,
rewards and clear errors for bad input."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import thirtyone_env  # noqa: F401  (registers ThirtyOne-v0)
from thirtyone_env import IllegalActionError, RandomPolicy, ThirtyOneEnv
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, TAKE_DISCARD
from thirtyone_env.game.cards import parse_card
from thirtyone_env.game.encoding import ObsLayout, encode_flat
from thirtyone_env.game.engine import apply_action, clone_state, legal_actions, new_game, stacked_deck


def random_rollout(env, seed, steps=300):
    """Masked random play; returns everything the agent saw."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    seen = [obs, info["action_mask"]]
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        seen += [obs, info["action_mask"], r, term]
        if term or trunc:
            obs, info = env.reset()
            seen += [obs, info["action_mask"]]
    return seen


@pytest.mark.parametrize("encoding", ["flat", "dict"])
def test_gymnasium_checker(encoding):
    env = gym.make("ThirtyOne-v0", obs_encoding=encoding, render_mode="ansi")
    gym_check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("encoding", ["flat", "dict"])
@pytest.mark.parametrize("episode", ["game", "round"])
def test_sb3_checker(encoding, episode):
    sb3_check_env(ThirtyOneEnv(obs_encoding=encoding, episode=episode), warn=True)


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_players": 2, "rules": "pagat"}, {"num_players": 7, "rules": "dutch"}]
)
def test_observations_in_space_and_masks_legal(kwargs):
    env = ThirtyOneEnv(**kwargs)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=1)
    for _ in range(400):
        assert env.observation_space.contains(obs)
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (env.action_space.n,)
        assert np.array_equal(mask, env.action_masks())
        assert np.array_equal(np.flatnonzero(mask), legal_actions(env.state))
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert "illegal_action" not in info
        if term:
            obs, info = env.reset()


def test_same_seed_same_episode_byte_for_byte():
    a = random_rollout(ThirtyOneEnv(opponents=RandomPolicy()), 7)
    b = random_rollout(ThirtyOneEnv(opponents=RandomPolicy()), 7)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
    c = random_rollout(ThirtyOneEnv(opponents=RandomPolicy()), 8)
    assert any(np.asarray(x).tobytes() != np.asarray(y).tobytes() for x, y in zip(a, c, strict=False))


def test_opponents_use_the_env_generator_not_the_global_one():
    env = ThirtyOneEnv(opponents=RandomPolicy())
    first = random_rollout(env, 3)
    np.random.seed(12345)  # noqa: NPY002  (the global generator must not matter)
    second = random_rollout(env, 3)
    assert all(np.asarray(x).tobytes() == np.asarray(y).tobytes() for x, y in zip(first, second, strict=True))


def test_opponent_hidden_cards_do_not_change_the_observation():
    """Swap an opponent's unseen card with a stock card: the agent's view is unchanged."""
    layout = ObsLayout(4)
    rng = np.random.default_rng(5)
    for trial in range(30):
        s = new_game(None, 4, rng)
        # play a few random moves so the discard history and known cards are non-trivial
        for _ in range(int(rng.integers(0, 12))):
            acts = legal_actions(s)
            if not acts:
                break
            apply_action(s, acts[int(rng.integers(len(acts)))], rng)
        if not legal_actions(s):
            continue
        me = s.current
        base = encode_flat(s, me, layout)
        for opp in range(4):
            if opp == me:
                continue
            hidden = [c for c in s.hands[opp] if not (s.known[opp] >> c) & 1]
            if not hidden or not s.stock:
                continue
            t = clone_state(s)
            i = t.hands[opp].index(hidden[0])
            j = int(rng.integers(len(t.stock)))
            t.hands[opp][i], t.stock[j] = t.stock[j], t.hands[opp][i]
            assert np.array_equal(encode_flat(t, me, layout), base), trial
        # and the stock order never matters
        t = clone_state(s)
        t.stock.reverse()
        assert np.array_equal(encode_flat(t, me, layout), base)


def test_known_cards_are_the_ones_taken_from_the_discard_pile():
    # seat 1 (after dealer 0) takes the upcard Kh; seat 2 must see Kh in row "next-but-one"
    deck = stacked_deck(["2c 3d 4h", "5c 6d 7h", "8c 9d Jh", "Qc 2d 3h"], upcard="Kh", dealer=0)
    env = ThirtyOneEnv(num_players=4, seat=2, opponents=RandomPolicy(), illegal_action="raise")

    class TakeThenDiscard:
        obs_encoding = "view"

        def act(self, view, mask):
            if mask[TAKE_DISCARD]:
                return TAKE_DISCARD
            return DISCARD_BASE + parse_card("5c")

    env.opponents[-1] = TakeThenDiscard()  # relative seat 3 from seat 2 = seat 1
    obs, _ = env.reset(seed=0, options={"deck": deck, "dealer": 0})
    layout = env.obs_layout
    known = layout.part(obs, "known_cards")
    # seat 1 is 3 seats after seat 2 -> row index 2 of known_cards (relative seat 3)
    assert known[2, parse_card("Kh")] == 1.0
    assert known.sum() == 1.0
    hist = layout.part(obs, "discard_history")
    assert hist[3, parse_card("5c")] == 1.0  # the most recent discard, by relative seat 3
    assert layout.part(obs, "top_discard")[parse_card("5c")] == 1.0
    assert np.flatnonzero(layout.part(obs, "hand")).tolist() == sorted(map(parse_card, ["8c", "9d", "Jh"]))


def test_lives_reward_and_round_episode():
    # Agent (seat 1, first to play) knocks at once with a 9 against better hands: -2.
    deck = stacked_deck(["As Ks Qd", "2c 3c 4c", "Ad Kd 5h", "Ah Kh 6s"], upcard="9s", dealer=0)
    env = ThirtyOneEnv(seat=1, episode="round", illegal_action="raise")
    obs, info = env.reset(seed=0, options={"deck": deck, "dealer": 0})
    obs, reward, term, trunc, info = env.step(KNOCK)
    assert term and not trunc
    assert reward == -2.0
    (result,) = info["round_results"]
    assert result.reason == "knock" and result.knocker == 1


def test_rate_reward_pays_a_share_for_every_round_played():
    """``reward="rate"``: the lives reward plus 1/4 (a 4-seat table's fair share) for
    each round settled with the agent in, the rounds skipped at ``reset`` included;
    exactly, step for step, against the same games under ``reward="lives"``."""
    deck = stacked_deck(["As Ks Qd", "2c 3c 4c", "Ad Kd 5h", "Ah Kh 6s"], upcard="9s", dealer=0)
    env = ThirtyOneEnv(seat=1, episode="round", reward="rate", illegal_action="raise")
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    assert env.step(KNOCK)[1] == -2.0 + 0.25
    rate, lives = ThirtyOneEnv(reward="rate"), ThirtyOneEnv(reward="lives")
    rng = np.random.default_rng(5)
    for seed in range(30):
        a, b = rate.reset(seed=seed)[1], lives.reset(seed=seed)[1]
        rounds = len(a.get("skipped_rounds", ()))
        total = 0.0
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(a["action_mask"])))
            _, r_rate, done, _, a = rate.step(action)
            _, r_lives, _, _, b = lives.step(action)
            rounds += len(a.get("round_results", ()))
            total += r_rate - r_lives
        assert total == pytest.approx(0.25 * rounds)
    with pytest.raises(ValueError, match="reward='rate' is for lives games"):
        ThirtyOneEnv(rules="no_elimination", reward="rate")


def test_win_reward_on_elimination():
    deck = stacked_deck(["As Ks Qd", "2c 3c 4c", "Ad Kd 5h", "Ah Kh 6s"], upcard="9s", dealer=0)
    env = ThirtyOneEnv(rules=thirtyone_env.Rules(lives=1, free_ride=False), seat=1, reward="win")
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    obs, reward, term, _, info = env.step(KNOCK)
    assert term and reward == -1.0
    assert info["round_results"][0].eliminated == (1,)


def test_illegal_action_penalize_and_raise():
    env = ThirtyOneEnv()
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, term, trunc, info = env.step(illegal)
    assert (reward, term, trunc) == (-6.0, True, False)  # 4 lives and a knocker's 2 still to lose
    assert info["illegal_action"]["action"] == illegal
    with pytest.raises(RuntimeError, match="reset"):
        env.step(DRAW_STOCK)
    env = ThirtyOneEnv(illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action .*legal: 0 \(draw_stock\)"):
        env.step(illegal)


@pytest.mark.parametrize("action", [-1, 56, 1000, 2.5, "knock", None, True])
def test_action_outside_the_space_is_a_clear_error(action):
    env = ThirtyOneEnv()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="outside the action space|is a .*, not an integer id"):
        env.step(action)


def test_numpy_actions_accepted():
    env = ThirtyOneEnv()
    _, info = env.reset(seed=0)
    a = np.flatnonzero(info["action_mask"])[0]
    env.step(np.int64(a))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rules": "nope"}, "unknown rules preset 'nope'"),
        ({"num_players": 1}, "num_players"),
        ({"num_players": 10}, "num_players"),
        ({"seat": 4}, "seat=4"),
        ({"episode": "match"}, "episode='match'"),
        ({"reward": "points"}, "reward='points'"),
        ({"obs_encoding": "image"}, "obs_encoding='image'"),
        ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
        ({"opponents": [RandomPolicy()]}, "1 policies given for 3"),
        ({"opponents": 5}, "opponents must be"),
    ],
)
def test_bad_arguments_name_the_problem(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ThirtyOneEnv(**kwargs)


def test_sb3_make_vec_env_renders_frames_for_its_default_render_mode():
    """SB3's ``make_vec_env`` asks every env for ``render_mode="rgb_array"``: frames of
    one size (the table as the agent's seat sees it, drawn), no warning; a mode the env
    lacks gets Gymnasium's warning and no rendering."""
    import warnings

    from stable_baselines3.common.env_util import make_vec_env

    from thirtyone_env.envs.frames import FRAME_SIZE

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        venv = make_vec_env("ThirtyOne-v1", n_envs=2, seed=3)
    obs = venv.reset()
    assert obs.shape == (2, venv.observation_space.shape[0])
    first = venv.envs[0].unwrapped.render()
    assert first.shape == (*FRAME_SIZE, 3) and first.dtype == np.uint8 and first.min() < 100 < first.max()
    masks = np.stack(venv.env_method("action_masks"))
    obs, rewards, dones, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    after = venv.envs[0].unwrapped.render()
    assert rewards.shape == (2,) and after.shape == first.shape and not np.array_equal(after, first)
    venv.close()
    with pytest.raises(ValueError, match="render_mode='rgb' is not allowed; allowed values: None, 'ansi'"):
        ThirtyOneEnv(render_mode="rgb")


def test_the_compiled_backend_declares_no_render_mode_and_passes_gymnasiums_checker():
    """It renders nothing, so its metadata lists no mode (the checker draws each one
    listed); SB3's ``rgb_array`` is taken with a warning and leaves no mode."""
    env = ThirtyOneEnv(backend="compiled")
    assert env.metadata["render_modes"] == [] and ThirtyOneEnv.metadata["render_modes"]
    gym_check_env(env)
    with pytest.warns(UserWarning, match="does not render"):
        env = ThirtyOneEnv(backend="compiled", render_mode="rgb_array")
    assert env.render_mode is None
    env.reset(seed=0)
    assert env.render() is None


def test_frames_without_matplotlib_say_what_to_install(monkeypatch):
    """A frame drawn where matplotlib cannot be imported is Gymnasium's
    ``DependencyNotInstalled`` naming the package, not a bare import error."""
    import sys

    from gymnasium.error import DependencyNotInstalled

    from thirtyone_env.envs.frames import text_frame

    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(DependencyNotInstalled, match="pip install matplotlib"):
        text_frame("seat 0")


def test_bad_reset_options():
    env = ThirtyOneEnv()
    with pytest.raises(ValueError, match="appears twice"):
        env.reset(seed=0, options={"deck": ["As", "As"]})
    with pytest.raises(ValueError, match="unknown card"):
        env.reset(seed=0, options={"deck": ["Xx"]})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(seed=0, options={"shuffle": False})
    with pytest.raises(ValueError, match="not in the piquet32 deck"):
        ThirtyOneEnv(rules="dutch").reset(seed=0, options={"deck": ["2c"]})


def test_render_ansi_shows_own_hand_only():
    env = ThirtyOneEnv(render_mode="ansi", seat=0)
    env.reset(seed=4)
    text = env.render()
    assert "you seat 0" in text and "hand:" in text
    for p in (1, 2, 3):
        for c in env.state.hands[p]:
            if not (env.state.known[p] >> c) & 1:
                line = next(ln for ln in text.splitlines() if f"seat {p}:" in ln)
                assert thirtyone_env.format_card(c) not in line


def test_policy_protocol_opponents_and_layout_parts():
    env = ThirtyOneEnv(opponents=[RandomPolicy(), thirtyone_env.GreedyPolicy(), RandomPolicy()])
    obs, info = env.reset(seed=2)
    parts = env.obs_layout.split(obs)
    assert set(parts) >= {"hand", "top_discard", "discard_history", "known_cards", "dead_cards", "phase"}
    assert parts["hand"].sum() == 3
    assert parts["phase"][0] == 1.0  # agent to draw
    assert sum(p.size for p in parts.values()) == obs.size


def test_clamped_settlement_costs_no_reward():
    """Two players on the free ride tie for lowest under all_lose: both would go out,
    so both stay at 0 lives and the 'lives' reward is 0, not -1."""
    rules = thirtyone_env.Rules(knocker_tie="all_lose", lives=1)
    deck = stacked_deck(["2c 3d 5h", "2d 3h 5s"], upcard="9s", dealer=1)

    class Stander:
        def act(self, obs, mask):
            return 3 if mask[3] else int(np.flatnonzero(mask)[0])

    env = ThirtyOneEnv(num_players=2, rules=rules, seat=0, opponents=Stander())
    env.reset(seed=0, options={"deck": deck, "dealer": 1})
    env.state.lives[:] = [0, 0]
    _, reward, _, _, info = env.step(KNOCK)
    result = info["round_results"][0]
    assert result.values == (5, 5) and result.losses == (0, 0) and env.state.lives == [0, 0]
    assert reward == 0.0


def test_mask_is_zero_after_an_illegal_action_ends_the_episode():
    env = ThirtyOneEnv()
    _, info = env.reset(seed=0)
    _, _, term, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert term and not info["action_mask"].any() and not env.action_masks().any()


def test_hand_value_features_on_a_stacked_deck():
    """hand_values and discard_values, checked against hand_value by brute force."""
    from itertools import combinations

    from thirtyone_env.game.cards import hand_value

    deck = stacked_deck(["2c 3d 4h", "5c 6d 7h", "8c 9d Jh", "Qc 2d 3h"], upcard="Kh", dealer=0)
    env = ThirtyOneEnv(num_players=4, seat=2, opponents=RandomPolicy(), illegal_action="raise")

    class TakeThenDiscard:
        obs_encoding = "view"

        def act(self, view, mask):
            return TAKE_DISCARD if mask[TAKE_DISCARD] else DISCARD_BASE + parse_card("5c")

    env.opponents[-1] = TakeThenDiscard()
    obs, _ = env.reset(seed=0, options={"deck": deck, "dealer": 0})
    layout = env.obs_layout
    hand = [parse_card(c) for c in ("8c", "9d", "Jh")]
    top, known = parse_card("5c"), parse_card("Kh")  # Kh sits known in seat 1's hand

    def best3(cards):
        return max(hand_value(list(t)) for t in combinations(cards, 3))

    unseen = [c for c in range(52) if c not in (*hand, top, known)]
    after = [best3([*hand, u]) for u in unseen]
    now = hand_value(hand)
    expected = [now, best3([*hand, top]), np.mean(after), np.mean([v > now for v in after])]
    np.testing.assert_allclose(
        layout.part(obs, "hand_values"), np.divide(expected, [31, 31, 31, 1]), rtol=1e-6
    )
    assert not layout.part(obs, "discard_values").any()
    # take the 5c: four cards, each discard scored by the three kept
    obs, *_ = env.step(TAKE_DISCARD)
    four = [*hand, top]
    dv = layout.part(obs, "discard_values")
    assert sorted(np.flatnonzero(dv)) == sorted(four)
    for card in four:
        assert dv[card] == pytest.approx(hand_value([c for c in four if c != card]) / 31)
    assert layout.part(obs, "hand_values")[0] == pytest.approx(best3(four) / 31)


@pytest.mark.parametrize("preset", sorted(thirtyone_env.game.rules.PRESETS))
def test_infos_show_no_hidden_hand_value(preset):
    """Every preset, random play with a short turn cap (void rounds come often): the
    round results in ``info`` (played and skipped) list another seat's hand value only
    after a showdown or for a blitzer's 31, and info holds nothing but public keys."""
    rules = thirtyone_env.Rules.preset(preset).replace(max_turns_per_round=5)
    env = ThirtyOneEnv(num_players=rules.seats or 3, rules=rules, opponents=RandomPolicy(), seat=1)
    rng = np.random.default_rng(4)
    public = {"action_mask", "seat", "round", "lives", "phase", "round_results", "skipped_rounds"}
    _, info = env.reset(seed=4)
    unshown = 0
    for _ in range(300):
        assert set(info) <= public
        for result in info.get("round_results", []) + info.get("skipped_rounds", []):
            if result.reason in ("knock", "stock_exhausted"):
                continue
            unshown += 1
            for p, value in enumerate(result.values):
                if p != env.seat and p not in result.blitzers:
                    assert value is None, result
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            _, info = env.reset()
    assert unshown > 0


def test_opponents_take_the_player_specs_every_command_takes():
    """``opponents="expert"`` (or a list mixing specs and players) seats a new player
    from the spec in each seat, as ``evaluate.py --players`` would; a bad spec is
    refused naming it."""
    env = ThirtyOneEnv(4, opponents="expert")
    kinds = [type(o).__name__ for o in env.opponents]
    assert kinds == ["ExpertPlayer"] * 3 and len({id(o) for o in env.opponents}) == 3
    mixed = ThirtyOneEnv(3, opponents=["ppo", RandomPolicy()], seat=0)
    assert type(mixed.opponents[0]).__name__ == "PPOPlayer" and isinstance(mixed.opponents[1], RandomPolicy)
    obs, info = mixed.reset(seed=2)
    for _ in range(30):  # the zoo's 3-player model plays its seat
        obs, _, term, _, info = mixed.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term:
            obs, info = mixed.reset()
    with pytest.raises(ValueError, match="unknown player 'expret'"):
        ThirtyOneEnv(3, opponents="expret")
    with pytest.raises(ValueError, match="no zoo model for 5 players"):
        ThirtyOneEnv(5, opponents="ppo")


def test_the_vector_env_takes_player_specs_too():
    from thirtyone_env.envs.vector import ThirtyOneVectorEnv

    venv = ThirtyOneVectorEnv(2, opponents="expert")
    obs, info = venv.reset(seed=1)
    for _ in range(10):
        obs, _, _, _, info = venv.step(np.array([np.flatnonzero(m)[0] for m in info["action_mask"]]))
    assert obs.shape == (2, venv.single_observation_space.shape[0])
    with pytest.raises(ValueError, match="unknown player 'nobody'"):
        ThirtyOneVectorEnv(2, opponents="nobody")


@pytest.mark.parametrize(
    ("kwargs", "forfeit"),
    [
        ({}, -6.0),
        ({"backend": "compiled"}, -6.0),
        ({"episode": "round"}, -2.0),
        ({"episode": "round", "backend": "compiled"}, -2.0),
        ({"reward": "rate", "backend": "compiled"}, -6.0),
        ({"reward": "win"}, -1.0),
        ({"reward": "win", "backend": "compiled"}, -1.0),
        ({"rules": "stop_the_bus"}, -4.0),  # 3 lives, a knocker charged 1
        ({"rules": "banking"}, -21.0),  # every chip held, the ante in the pot and a blitz chip
        ({"rules": "banking", "episode": "round"}, -2.0),  # the ante and a blitz chip
        ({"rules": "no_elimination"}, -1.0),  # rounds score 0 or more
    ],
)
def test_an_illegal_action_costs_the_worst_the_episode_could_bring(kwargs, forfeit):
    env = ThirtyOneEnv(**kwargs)
    obs, info = env.reset(seed=3)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, term, _, info = env.step(illegal)
    assert term and reward == forfeit and info["illegal_action"]["action"] == illegal


@pytest.mark.parametrize("rules", ["standard", "cut_throat", "stop_the_bus", "banking", "no_elimination"])
def test_no_game_played_returns_less_than_forfeiting_at_its_start(rules):
    """Random legal play, the worst there is, never returns less than an illegal first
    move: a learner without masks is never paid to forfeit."""
    env = ThirtyOneEnv(rules=rules, opponents="greedy", seat=0)
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    rng = np.random.default_rng(1)
    worst = np.inf
    for game in range(25):
        _, info = env.reset(seed=100 + game)
        done, total = False, 0.0
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, done, _, info = env.step(action)
            total += reward
        worst = min(worst, total)
        _, info = env.reset(seed=100 + game)
        _, forfeit, *_ = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
        assert forfeit <= total, (game, forfeit, total)
    assert np.isfinite(worst)


def test_numpy_integers_are_taken_as_ints_and_bools_are_refused():
    """A sweep's ``np.arange`` gives NumPy integers: table size, seat and game count
    take them as plain ints; a bool (NumPy's too) or a float is still refused."""
    from thirtyone_env.envs.vector import ThirtyOneVectorEnv

    env = ThirtyOneEnv(num_players=np.int64(3), seat=np.int32(1))
    assert (env.num_players, env.seat_option) == (3, 1) and type(env.seat_option) is int
    vec = ThirtyOneVectorEnv(np.int64(2), np.int64(3), seat=np.int64(2))
    assert type(vec.num_envs) is int and vec.reset(seed=0)[0].shape[0] == 2
    for bad in (True, np.bool_(True), 1.0):
        with pytest.raises(ValueError, match="seat=.* is not allowed"):
            ThirtyOneEnv(seat=bad)
    with pytest.raises(ValueError, match="num_players must be an int"):
        ThirtyOneEnv(num_players=np.bool_(True))
