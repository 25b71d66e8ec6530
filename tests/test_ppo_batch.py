"""Frozen networks answer many games in one call: ``act_batch`` of
the learned players gives, row by row, the decision ``act`` gives for that game alone,
samples legal actions reproducibly, and refuses malformed batches naming the model."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.ppo import SHIPPED_MODEL, TIE_FLOOR, TIE_MARGIN, NumpyPolicy, PolicyPlayer, PPOPlayer, load_policy
from thirtyone_env.envs.env import ThirtyOneEnv
from training.league import SnapshotPlayer

DECISIONS = 3000


@pytest.fixture(scope="module")
def shipped() -> PPOPlayer:
    player = PPOPlayer(str(SHIPPED_MODEL))
    player.check_table(4, "standard")  # which observation it takes (with the history or not)
    return player


@pytest.fixture(scope="module")
def played(shipped: PPOPlayer) -> tuple[np.ndarray, np.ndarray]:
    """Flat observations and masks of the learner's seat in real 4-player games: the
    shipped agent playing (a fifth of its moves random, for variety) against itself,
    the expert and greedy."""
    history = shipped.obs_encoding == "flat+history"
    env = ThirtyOneEnv(
        4,
        "standard",
        opponents=[PPOPlayer(), agents.make("expert"), agents.make("greedy")],
        opponent_history=history,
    )
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    observations, masks = [], []
    while len(observations) < DECISIONS:
        mask = info["action_mask"]
        observations.append(obs)
        masks.append(mask)
        move = shipped.act(obs, mask) if rng.random() < 0.8 else int(rng.choice(np.flatnonzero(mask)))
        obs, _, done, truncated, info = env.step(move)
        if done or truncated:
            obs, info = env.reset()
    return np.array(observations, dtype=np.float32), np.array(masks, dtype=np.int8)


def test_act_batch_equals_act_row_by_row(shipped, played):
    observations, masks = played
    alone = np.array([shipped.act(o, m) for o, m in zip(observations, masks, strict=True)])
    assert len(set(alone.tolist())) > 10  # draws, knocks and discards: not one answer
    for size in (1, 7, 256, 1024, DECISIONS):
        batched = np.concatenate(
            [
                shipped.act_batch(observations[i : i + size], masks[i : i + size])
                for i in range(0, DECISIONS, size)
            ]
        )
        assert batched.shape == (DECISIONS,) and batched.dtype.kind == "i"
        np.testing.assert_array_equal(batched, alone, err_msg=f"batches of {size}")
    assert masks[np.arange(DECISIONS), alone].all()


def fresh_policy(input_size: int, actions: int, seed: int = 0) -> NumpyPolicy:
    """A network as SB3 starts one (weights in torch's layout; orthogonal-like scales: hidden gain sqrt(2), the
    action head 0.01): logits of a few thousandths, the start of a recipe without a teacher."""
    rng = np.random.default_rng(seed)
    sizes = [input_size, 256, 256]
    layers = [
        (rng.normal(0, np.sqrt(2 / n), (m, n)).astype(np.float32), np.zeros(m, np.float32))
        for n, m in zip(sizes, sizes[1:], strict=False)
    ]
    head = (
        rng.normal(0, 0.01 / np.sqrt(256), (actions, 256)).astype(np.float32),
        np.zeros(actions, np.float32),
    )
    return NumpyPolicy(layers, head, "Tanh")


@pytest.mark.parametrize("network", ["shipped", "fresh"])
def test_batch_rounding_stays_far_below_the_tie_margin(shipped, played, network):
    """Why the rows agree: BLAS rounds a row differently in batches of other sizes (and
    alone), by far less than the margin inside which a near tie is decided row by row
    (a flip takes two errors adding up to the margin): for a trained network, and for
    a fresh one, whose near ties stay few (each is decided by the slow exact path).
    Only the top's contenders count (legal logits within a thousand margins of it): a
    logit of -118 rounds by more than a top near 0 allows, and is no tie."""
    observations, masks = played
    policy = shipped.policy if network == "shipped" else fresh_policy(observations.shape[1], masks.shape[1])
    legal = masks[:500].astype(bool)
    exact = np.array([policy.row_logits(o) for o in observations[:500]])
    ranked = np.sort(np.where(legal, exact, -np.inf), axis=1)
    top, gap = ranked[:, -1], ranked[:, -1] - ranked[:, -2]
    margin = TIE_MARGIN * (TIE_FLOOR + np.abs(top))
    contenders = legal & (exact >= (top - 1000 * margin)[:, None])
    alone = np.array([policy.logits(o) for o in observations[:500]])
    for rounded in (policy.logits(observations)[:500], policy.logits(observations[:500]), alone):
        error = np.where(contenders, np.abs(rounded - exact), 0).max(axis=1)
        assert (error < margin / 8).all()
        assert error.max() > 0  # float32 and BLAS do round: the margin is needed
    assert np.mean(gap <= margin) < 0.05


def tied_policy(seed: int = 0) -> NumpyPolicy:
    """A random 2-layer net whose actions 3 and 5 have the same weights and biases one
    float32 step apart (5 higher): tied in float32 arithmetic, not in exact."""
    rng = np.random.default_rng(seed)
    hidden, head = rng.normal(size=(16, 20)), rng.normal(size=(8, 16))
    head[5] = head[3]
    bias = np.zeros(8, dtype=np.float32)
    bias[3] = 0.5
    bias[5] = np.nextafter(np.float32(0.5), np.float32(1))
    bias[[0, 1, 2, 4, 6, 7]] = -50.0  # never the best
    return NumpyPolicy([(hidden, rng.normal(size=16))], (head, bias), "Tanh")


def test_a_near_tie_goes_to_the_exactly_higher_logit_in_any_batch():
    policy = tied_policy()
    player = PolicyPlayer(policy, "tied")
    obs = np.random.default_rng(1).normal(size=(64, 20)).astype(np.float32)
    masks = np.ones((64, 8), dtype=np.int8)
    fast = np.where(masks.astype(bool), policy.logits(obs), -np.inf).argmax(axis=1)
    assert (fast == 3).any()  # float32 rounds the two together: the first wins there
    np.testing.assert_array_equal(player.act_batch(obs, masks), 5)
    np.testing.assert_array_equal(player.act_batch(obs[:5], masks[:5]), 5)
    assert [player.act(o, m) for o, m in zip(obs, masks, strict=True)] == [5] * 64
    masks[:, 5] = 0  # illegal: the other one of the pair
    np.testing.assert_array_equal(player.act_batch(obs, masks), 3)


def test_sampling_draws_legal_actions_reproducibly_with_the_policys_odds(shipped, played):
    observations, masks = played
    sampler = PPOPlayer(str(SHIPPED_MODEL), deterministic=False)
    sampler.reset(np.random.default_rng(7))
    first = sampler.act_batch(observations, masks)
    assert masks[np.arange(DECISIONS), first].all()
    sampler.reset(np.random.default_rng(7))
    np.testing.assert_array_equal(sampler.act_batch(observations, masks), first)
    assert (sampler.act_batch(observations, masks) != first).any()  # the generator goes on
    # one game alone draws the same as a batch of one, from the same generator
    alone, batch = (
        PPOPlayer(str(SHIPPED_MODEL), deterministic=False),
        PPOPlayer(str(SHIPPED_MODEL), deterministic=False),
    )
    alone.reset(np.random.default_rng(3))
    batch.reset(np.random.default_rng(3))
    for o, m in zip(observations[:200], masks[:200], strict=True):
        assert alone.act(o, m) == batch.act_batch(o[None], m[None])[0]
    # the frequencies over many copies of one position are the masked softmax
    k = int(np.argmax((masks.sum(axis=1) == 4) & (observations.sum(axis=1) > 0)))
    legal = masks[k].astype(bool)
    z = np.where(legal, shipped.policy.row_logits(observations[k]), -np.inf)
    p = np.exp(z - z.max())
    p /= p.sum()
    rows = 40_000
    draws = sampler.act_batch(
        np.repeat(observations[k : k + 1], rows, 0), np.repeat(masks[k : k + 1], rows, 0)
    )
    counts = np.bincount(draws, minlength=legal.size)
    assert counts[~legal].sum() == 0
    np.testing.assert_allclose(counts / rows, p, atol=4 * np.sqrt(0.25 / rows))


def test_a_malformed_batch_is_refused_naming_the_model(shipped, played):
    observations, masks = played
    obs, mask = observations[:4], masks[:4]
    path = str(SHIPPED_MODEL)
    size = f"observations of size {obs.shape[1]}"
    wrong = [
        (obs[:, :-1], mask, size),
        (obs[0], mask[:1], size),
        (obs, mask[:3], r"action masks of shape \(4, 56\)"),
        (obs, mask[:, :-1], r"action masks of shape \(4, 56\)"),
        (obs, np.zeros_like(mask), "no legal action in the mask of row 0"),
    ]
    for o, m, problem in wrong:
        with pytest.raises(ValueError, match=problem) as err:
            shipped.act_batch(o, m)
        assert path in str(err.value)
    with pytest.raises(ValueError, match=r"action mask of shape \(56,\)"):
        shipped.act(obs[0], mask[0, :-1])
    half = mask.copy()
    half[2] = 0
    with pytest.raises(ValueError, match="row 2"):
        shipped.act_batch(obs, half)


def test_a_snapshot_plays_batches_like_the_model_it_was_taken_from(tmp_path, shipped, played):
    observations, masks = played
    load_policy(SHIPPED_MODEL).save(tmp_path / "snap_000000000001.npz")
    snapshot = SnapshotPlayer(load_policy(tmp_path / "snap_000000000001.npz"), "snap_000000000001.npz")
    np.testing.assert_array_equal(
        snapshot.act_batch(observations, masks), shipped.act_batch(observations, masks)
    )
    with pytest.raises(ValueError, match="snap_000000000001.npz"):
        snapshot.act_batch(observations[:, :5], masks)
