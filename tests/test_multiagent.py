"""The PettingZoo AEC environment: PettingZoo's own test suites, hidden information,
masks of non-acting agents, elimination and rewards."""

import copy

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from thirtyone_env.envs import multiagent
from thirtyone_env.game.engine import clone_state
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.game.views import public_result

# PettingZoo's api_test warns on any Dict observation; its own card games use the same
# {"observation", "action_mask"} layout.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]


@pytest.mark.parametrize(
    "rules", ["standard", "pagat", "no_elimination", "banking", "switch", "stop_the_bus"]
)
def test_pettingzoo_api_and_seed_tests(rules):
    api_test(multiagent.env(num_players=3, rules=rules), num_cycles=400, verbose_progress=False)
    seed_test(lambda: multiagent.env(num_players=3, rules=rules), num_cycles=300)


def test_dict_encoding_passes_api_test():
    api_test(multiagent.env(num_players=2, obs_encoding="dict"), num_cycles=200, verbose_progress=False)


def random_game(env, seed):
    """Masked random play to the end; returns every (agent, reward, termination) seen."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        seen.append((agent, reward, term))
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    return seen


def test_players_leave_as_they_are_eliminated_and_lives_add_up():
    env = multiagent.env(num_players=4)
    seen = random_game(env, 7)
    terminated_order = [a for a, _, term in seen if term]
    assert len(terminated_order) == 4 and len(set(terminated_order)) == 4
    totals = {}
    for agent, reward, _ in seen:
        totals[agent] = totals.get(agent, 0.0) + reward
    # lives reward: each player's rewards sum to minus the lives charged over the game:
    # exactly the lives lost for the winner; at least all its lives for the others (a
    # charge that puts a player out on the free ride counts whole)
    state = env.unwrapped.state_
    start = env.unwrapped.rules.lives
    for agent, total in totals.items():
        seat = int(agent.split("_")[1])
        if seat in state.winners:
            assert total == pytest.approx(-(start - state.lives[seat]))
        else:
            assert total <= -start
    assert env.agents == []


def test_a_game_started_at_a_standing_has_only_the_seats_in_as_agents():
    env = multiagent.env(num_players=4)
    env.reset(seed=3, options={"lives": [None, 2, None, 1]})
    assert env.agents == ["player_1", "player_3"]
    rng = np.random.default_rng(0)
    seen = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        seen.add(agent)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen == {"player_1", "player_3"}
    assert env.unwrapped.state_.winners in ((1,), (3,))


def test_non_acting_agents_see_no_other_hand_and_have_empty_masks():
    raw = multiagent.raw_env(num_players=4)
    raw.reset(seed=3)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        s = raw.state_
        if not raw.agents:
            break
        if raw.terminations[raw.agent_selection]:
            raw.step(None)
            continue
        for agent in raw.agents:
            seat = raw.agent_name_mapping[agent]
            obs = raw.observe(agent)
            if agent != raw.agent_selection:
                assert not obs["action_mask"].any()
            # swap a card of another hand that `seat` has not seen with a stock card
            for other in range(4):
                hidden = [c for c in s.hands[other] if not (s.known[other] >> c) & 1]
                if other == seat or not hidden or not s.stock:
                    continue
                twin = clone_state(s)
                k = twin.hands[other].index(hidden[0])
                twin.hands[other][k], twin.stock[0] = twin.stock[0], twin.hands[other][k]
                raw.state_ = twin
                swapped = raw.observe(agent)
                raw.state_ = s
                np.testing.assert_array_equal(obs["observation"], swapped["observation"])
                checked += 1
        mask = raw.observe(raw.agent_selection)["action_mask"]
        assert mask.any()
        raw.step(int(rng.choice(np.flatnonzero(mask))))
        if not raw.agents:
            break
    assert checked > 100


def test_win_reward_and_illegal_move_ends_the_game():
    env = multiagent.env(num_players=2, reward="win")
    seen = random_game(env, 2)
    final = {}
    for agent, reward, term in seen:
        if term:
            final[agent] = final.get(agent, 0.0) + reward
    assert sorted(final.values()) == [-1.0, 1.0]
    env = multiagent.env(num_players=3)
    env.reset(seed=0)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    mover = env.agent_selection
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[mover] == -6.0  # every life it could still lose: 4 and a knocker's 2
    assert all(r == 0.0 for a, r in env.rewards.items() if a != mover)


def test_rate_reward_is_the_lives_reward_plus_a_share_a_round():
    """Same seed and moves: each agent's ``"rate"`` return is its ``"lives"`` return
    plus 1/3 for every round it was dealt into (the winner: every round of the game)."""
    returns, states = {}, {}
    for reward in ("lives", "rate"):
        env = multiagent.env(num_players=3, reward=reward)
        seen = random_game(env, 4)
        returns[reward] = {a: sum(r for agent, r, _ in seen if agent == a) for a in env.possible_agents}
        states[reward] = env.unwrapped.state_
    state = states["rate"]
    rounds = {a: round(3 * (returns["rate"][a] - returns["lives"][a]), 9) for a in returns["rate"]}
    assert all(float(r).is_integer() and r >= 1 for r in rounds.values())
    (winner,) = state.winners
    assert rounds[f"player_{winner}"] == state.round_no == max(rounds.values())


def test_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="reward"):
        multiagent.raw_env(reward="money")
    with pytest.raises(ValueError, match="obs_encoding"):
        multiagent.raw_env(obs_encoding="pixels")
    with pytest.raises(ValueError, match="num_players"):
        multiagent.raw_env(num_players=12)


@pytest.mark.parametrize("rules", ["standard", "switch", "stop_the_bus"])
def test_render_shows_no_hidden_card_unless_a_seat_is_named(rules):
    """One render is seen by every seat's agent: by default it shows the table as a
    spectator sees it, no hand nor card a seat holds unseen; ``render_seat`` shows that
    seat's view, its hand included."""
    from thirtyone_env.game.cards import format_card
    from thirtyone_env.game.engine import ROUND_OVER
    from thirtyone_env.game.views import player_view

    raw = multiagent.raw_env(num_players=3, rules=rules, render_mode="ansi")
    raw.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(60):
        s = raw.state_
        if s.phase >= ROUND_OVER:
            break
        text = raw.render()
        assert "hand:" not in text and "you " not in text
        for p in range(3):
            public = set().union(*(player_view(s, q).known[p] for q in range(3) if q != p))
            for card in set(s.hands[p]) - public:
                assert format_card(card) not in text, (p, format_card(card), text)
        _obs, _r, term, trunc, info = raw.last()
        if term or trunc:
            break
        raw.step(int(rng.choice(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"]))))
    seen = multiagent.raw_env(num_players=3, rules=rules, render_mode="ansi", render_seat=1)
    seen.reset(seed=1)
    text = seen.render()
    assert text.count("hand:") == 1 and "you seat 1:" in text
    with pytest.raises(ValueError, match="render_seat=3 is not allowed"):
        multiagent.raw_env(num_players=3, render_seat=3)


SHOWDOWNS = ("knock", "stock_exhausted")  # every hand in the round is shown


def hidden_from(full, seat, rules):
    """Seats whose hand ``seat`` never saw in the round ``full`` settled: all others
    unless every hand was laid down (a showdown; the points game's blitz); a blitzer
    shows the 31."""
    if full.reason in SHOWDOWNS or (full.reason == "blitz" and rules.scoring == "points"):
        return set()
    return {p for p in range(len(full.values)) if p != seat and p not in full.blitzers}


def swap_hidden_card(raw, rng):
    """A twin of ``raw`` in which one seat other than the mover holds a card it has not
    shown in place of the stock's bottom card (so the mover's draw is the same); the
    seat, or None where there is none to swap."""
    s = raw.state_
    candidates = [
        p
        for p in range(raw.num_players)
        if p != s.current and s.active[p] and any(not (s.known[p] >> c) & 1 for c in s.hands[p])
    ]
    if len(s.stock) < 2 or not candidates:
        return None, None
    twin = copy.deepcopy(raw, {id(s.hand_values): s.hand_values})  # (the large hand-value table is shared)
    p = candidates[int(rng.integers(len(candidates)))]
    hand = twin.state_.hands[p]
    k = next(i for i, c in enumerate(hand) if not (s.known[p] >> c) & 1)
    hand[k], twin.state_.stock[0] = twin.state_.stock[0], hand[k]
    return twin, p


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_infos_carry_no_hidden_hand(preset):
    """Random games of every preset, with a short turn cap so that void rounds come
    often: after every step each agent's info holds its own view of the
    last round (other hands' values only after a showdown, a blitzer's 31) and the
    winners, nothing else; and where a round ends void (or in a blitz settled without
    ranking the other hands), a twin game in which another seat holds a different
    hidden card, and the round ends the same way, gives every other agent the very
    same info."""
    rules = Rules.preset(preset).replace(max_turns_per_round=5)
    raw = multiagent.raw_env(num_players=rules.seats or 3, rules=rules)
    rng = np.random.default_rng(13)
    raw.reset(seed=13)
    hidden_values = twins = 0
    for _ in range(500):
        if not raw.agents:
            raw.reset()
        agent = raw.agent_selection
        if raw.terminations[agent]:
            raw.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(raw.observe(agent)["action_mask"])))
        twin, swapped = swap_hidden_card(raw, rng)
        round_before, result_before = raw.state_.round_no, raw.state_.result
        raw.step(action)
        full = raw.state_.result
        for name, info in raw.infos.items():
            seat = raw.agent_name_mapping[name]
            assert set(info) <= {"round_result", "winners"}
            if "round_result" not in info:
                continue
            seen = info["round_result"]
            assert seen == public_result(full, seat, rules)
            for p in hidden_from(full, seat, rules):
                assert seen.values[p] is None, (name, full)
                hidden_values += full.values[p] is not None
        settled_once = full is not result_before and full.round_no == round_before
        if twin is None or not settled_once:
            continue
        if full.reason == "void" or (full.reason == "blitz" and rules.scoring != "points"):
            twin.step(action)
            other = twin.state_.result
            if (other.round_no, other.reason, other.blitzers) != (full.round_no, full.reason, full.blitzers):
                continue  # the swapped card decided the round (its own 31): nothing to compare
            assert twin.agent_selection == raw.agent_selection, ("who acts next", full)
            for name, info in raw.infos.items():
                if raw.agent_name_mapping[name] != swapped:
                    assert twin.infos[name] == info, (name, full)
                    mine, theirs = raw.observe(name), twin.observe(name)
                    for part in ("observation", "action_mask"):
                        np.testing.assert_array_equal(mine[part], theirs[part], err_msg=f"{name} {part}")
                    twins += 1
    assert hidden_values > 0 and twins > 0


def test_built_in_and_shipped_players_sit_in_the_aec_loop():
    """``observe_for`` hands each scripted seat the observation its player reads (a
    ``PlayerView`` for the heuristics, the flat encoding for the zoo's model), so a
    whole game plays with three kinds of players beside a random learner."""
    import agents

    env = multiagent.env(num_players=4)
    env.reset(seed=7)
    scripted = {
        "player_1": agents.make("greedy"),
        "player_2": agents.make("expert"),
        "player_3": agents.make("ppo"),
    }
    rng = np.random.default_rng(0)
    moves = {a: 0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent in scripted:
            seen = env.unwrapped.observe_for(agent, scripted[agent])
            assert np.array_equal(seen["action_mask"], obs["action_mask"])
            action = scripted[agent].act(seen["observation"], seen["action_mask"])
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        assert obs["action_mask"][action] == 1
        moves[agent] += 1
        env.step(action)
    assert all(moves.values())
    assert scripted["player_3"].obs_encoding == "flat+history"  # told the table: the 4p model


def test_the_layout_goes_by_the_single_envs_name_too():
    from thirtyone_env import ThirtyOneEnv

    raw = multiagent.raw_env(num_players=3)
    assert raw.obs_layout is raw.layout
    assert raw.obs_layout.describe() == ThirtyOneEnv(num_players=3).obs_layout.describe()


def test_render_without_a_mode_or_before_reset_says_so():
    import warnings

    for kwargs, expected in (({}, "without a render_mode"), ({"render_mode": "ansi"}, "before reset")):
        env = multiagent.raw_env(**kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert env.render() is None
        assert any(expected in str(w.message) for w in caught), [str(w.message) for w in caught]
