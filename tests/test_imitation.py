"""The imitation warm start: demonstrations with measured knocks, DAgger behaviour, and
the cost-weighted knock loss."""

import numpy as np
import pytest
from conftest import heads_up_known

import agents
from agents.expert import ExpertPlayer
from thirtyone_env import ThirtyOneEnv
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK
from thirtyone_env.game.engine import DRAW, legal_mask
from thirtyone_env.game.views import player_view
from training.imitation import Demonstrations, collect, knock_gain, pretrain


def _env(opponents=("expert", "greedy", "expert")):
    return ThirtyOneEnv(num_players=4, opponents=[agents.make(o) for o in opponents], seat="random")


def _strong_known_opponent():
    """Heads-up: the opponent took Kh, Qh and Jh from the pile (30, known). My 2c 3d
    4h is a 4 that one card cannot lift past 30: knocking loses the knocker's two
    lives, drawing loses one when the opponent knocks."""
    return heads_up_known("2c 3d 4h", "Kh Qh Jh", lives=4)


@pytest.mark.parametrize("seed", range(3))
def test_knock_gain_is_measured_on_the_true_position(seed):
    """Knocking a 4 against a known 30 costs exactly one life more than drawing, in
    every play-out."""
    env = ThirtyOneEnv(num_players=2, opponents=ExpertPlayer(), seat=0)
    env.reset(seed=seed)
    env.state = _strong_known_opponent()
    teacher = ExpertPlayer()
    mask = legal_mask(env.state)
    assert mask[KNOCK]
    others = mask.copy()
    others[KNOCK] = 0
    alternative = teacher.act(player_view(env.state, 0), others)
    assert alternative != KNOCK and mask[alternative]
    gain = knock_gain(env, teacher, alternative, 4, np.random.default_rng(seed), elimination_penalty=2.0)
    assert gain == -1.0
    assert env.state.phase == DRAW and env.state.current == 0  # the real game did not move


def test_measured_knocks_average_over_the_unknown_stock():
    """The play-outs of a measured knock meet the stock in a fresh order each (nobody at
    the table knows it): with the deterministic expert everywhere, more play-outs give
    other gains on the same decisions, and averages between their single outcomes. (On
    the true order every play-out was the same game, and rollouts bought nothing.)"""
    one = collect(_env(), ExpertPlayer(), 600, 0.99, seed=3, knock_rollouts=1)
    four = collect(_env(), ExpertPlayer(), 600, 0.99, seed=3, knock_rollouts=4)
    assert np.array_equal(one.obs, four.obs)
    where = np.isfinite(one.knock_gain)
    assert np.array_equal(where, np.isfinite(four.knock_gain)) and where.sum() >= 20
    assert not np.array_equal(one.knock_gain[where], four.knock_gain[where])
    singles = np.unique(one.knock_gain[where])
    assert np.isin(singles, np.arange(-3.0, 4.0)).all()  # one play-out: whole lives
    assert not np.isin(four.knock_gain[where], np.arange(-3.0, 4.0)).all()  # quarters


def test_measuring_knocks_plays_copies_and_leaves_the_game_alone():
    """The same deals and the same teacher moves with and without measured knocks; the
    gains sit exactly on the decisions where knocking was a choice, with a legal move
    other than the knock beside each."""
    plain = collect(_env(), ExpertPlayer(), 600, 0.99, seed=3)
    measured = collect(_env(), ExpertPlayer(), 600, 0.99, seed=3, knock_rollouts=2)
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(plain, field), getattr(measured, field))
    assert plain.knock_gain is None
    gains, alternatives = measured.measured()
    where = np.isfinite(gains)
    choice = measured.masks[:, KNOCK] & (measured.masks.sum(1) > 1)
    assert where.any() and not (where & ~choice).any()
    assert measured.masks[np.arange(600), alternatives].all()
    assert (alternatives[where] != KNOCK).all()
    assert (gains[where] != 0).any()


class _Recording:
    """A player that remembers what it answered."""

    def __init__(self, player):
        self.player, self.answers = player, []
        self.obs_encoding = getattr(player, "obs_encoding", "view")

    def reset(self, rng):
        if hasattr(self.player, "reset"):
            self.player.reset(rng)

    def act(self, observation, mask):
        self.answers.append(int(self.player.act(observation, mask)))
        return self.answers[-1]


def test_the_behaviour_player_can_play_on_in_the_measured_knocks():
    """``continuation="behaviour"`` values the knock against playing on as the
    behaviour player would: the same positions and labels, other gains."""
    greedy = agents.make("greedy")
    by_teacher = collect(_env(), ExpertPlayer(), 400, 0.99, seed=4, behaviour=greedy, knock_rollouts=2)
    by_behaviour = collect(
        _env(),
        ExpertPlayer(),
        400,
        0.99,
        seed=4,
        behaviour=greedy,
        knock_rollouts=2,
        continuation="behaviour",
    )
    assert np.array_equal(by_teacher.obs, by_behaviour.obs)
    assert np.array_equal(by_teacher.actions, by_behaviour.actions)
    assert not np.array_equal(by_teacher.knock_gain, by_behaviour.knock_gain, equal_nan=True)
    with pytest.raises(ValueError, match="continuation='me' is not allowed"):
        collect(_env(), ExpertPlayer(), 10, 0.99, seed=4, continuation="me")


def test_behaviour_plays_the_moves_and_the_teacher_labels_them():
    """DAgger: the random player's moves are played (the positions differ from the
    teacher's own games), and every label is what the teacher answered there."""
    teacher, behaviour = _Recording(ExpertPlayer()), _Recording(agents.make("random"))
    demos = collect(_env(), teacher, 400, 0.99, seed=5, behaviour=behaviour)
    own = collect(_env(), ExpertPlayer(), 400, 0.99, seed=5)
    assert not np.array_equal(demos.obs, own.obs)
    assert demos.actions.tolist() == teacher.answers[:400]
    assert len(behaviour.answers) == len(teacher.answers)
    assert behaviour.answers != teacher.answers
    assert demos.masks[np.arange(400), demos.actions].all()


def _synthetic(seed: int = 0) -> tuple[Demonstrations, np.ndarray]:
    """Three kinds of knock decision, told apart by one input: knocking always gains
    (A), always loses (B), or mostly loses a little and sometimes gains a lot (C: on
    average it gains)."""
    rng = np.random.default_rng(seed)
    env = _env()
    size, actions = env.observation_space.shape[0], env.action_space.n
    kinds = np.repeat(np.arange(3), 600)
    obs = np.zeros((kinds.size, size), dtype=np.float16)
    obs[np.arange(kinds.size), kinds] = 1.0
    masks = np.zeros((kinds.size, actions), dtype=bool)
    masks[:, [KNOCK, DRAW_STOCK, 1]] = True
    gains = np.where(kinds == 0, 1.0, -1.0).astype(np.float32)
    lucky = rng.random(kinds.size) < 0.3
    gains[kinds == 2] = np.where(lucky[kinds == 2], 2.0, -0.5)  # mean +0.25, but mostly a loss
    alternatives = np.full(kinds.size, DRAW_STOCK)
    demos = Demonstrations(
        obs, masks, alternatives.copy(), np.zeros(kinds.size, np.float32), gains, alternatives
    )
    return demos, obs[[0, 600, 1200]]


def test_pretrain_knocks_where_the_measured_gain_is_positive_on_average():
    """The knock is a cost-weighted choice: it follows the mean gain (kind C knocks
    though most of its outcomes were losses), and the move instead of a knock is the
    teacher's."""
    from agents.ppo import NumpyPolicy
    from training.config import TrainConfig
    from training.envs import make_env_fn
    from training.models import build_model

    config = TrainConfig(net_arch="32,32", opponents="expert", n_envs=1, vec_env="dummy")
    from stable_baselines3.common.vec_env import DummyVecEnv

    model = build_model(config, DummyVecEnv([make_env_fn(config, 0)]))
    demos, probes = _synthetic()
    pretrain(model, demos, epochs=30, batch_size=256, lr=3e-3)
    policy = NumpyPolicy.from_sb3(model.policy)
    mask = demos.masks[0]
    choices = [int(np.argmax(np.where(mask, policy.logits(p.astype(np.float32)), -1e9))) for p in probes]
    assert choices == [KNOCK, DRAW_STOCK, KNOCK]


def test_saved_demonstrations_round_trip_and_concatenate(tmp_path):
    measured = collect(_env(), ExpertPlayer(), 300, 0.99, seed=1, knock_rollouts=1)
    plain = collect(_env(), ExpertPlayer(), 200, 0.99, seed=2)
    np.savez(tmp_path / "m.npz", **measured.arrays())
    np.savez(tmp_path / "p.npz", **plain.arrays())
    loaded = Demonstrations.load(tmp_path / "m.npz")
    assert np.array_equal(loaded.knock_gain, measured.knock_gain, equal_nan=True)
    assert Demonstrations.load(tmp_path / "p.npz").knock_gain is None
    both = Demonstrations.concat([loaded, Demonstrations.load(tmp_path / "p.npz")])
    assert len(both) == 500
    assert np.isnan(both.knock_gain[300:]).all() and np.array_equal(both.alternatives[300:], plain.actions)


def test_a_fit_past_its_deadline_stops_after_its_first_epoch():
    """A time limit bounds the fit: past the deadline it ends with the first epoch
    whole; without one it fits every epoch. The fit's time is estimated from a few
    batches on a copy of the network, which the estimate leaves as it was."""
    import time

    import torch as th
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.config import TrainConfig
    from training.envs import make_env_fn
    from training.imitation import fit_seconds
    from training.models import build_model

    config = TrainConfig(net_arch="32,32", opponents="expert", n_envs=1, vec_env="dummy")
    model = build_model(config, DummyVecEnv([make_env_fn(config, 0)]))
    demos, _ = _synthetic()
    before = [p.detach().clone() for p in model.policy.parameters()]
    assert fit_seconds(model, demos, 10 * len(demos), 3) > 0
    assert fit_seconds(model, None, 10 * len(demos), 3) > 0  # before any decision is collected
    assert all(th.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    assert pretrain(model, demos, epochs=3, batch_size=256, deadline=time.monotonic())["epochs"] == 1
    assert pretrain(model, demos, epochs=3, batch_size=256)["epochs"] == 3


def test_a_collection_past_its_stop_time_ends_with_the_episode_it_is_in():
    """A time limit reaches into a collection job: past ``stop_at`` the job ends with
    its first episode whole, and its decisions (measured knocks included) are the first
    ones of the same job run to the end."""
    import time

    full = collect(_env(), ExpertPlayer(), 400, 0.99, seed=6, knock_rollouts=1)
    cut = collect(_env(), ExpertPlayer(), 400, 0.99, seed=6, knock_rollouts=1, stop_at=time.time())
    assert 0 < len(cut) < len(full) == 400
    n = len(cut)
    for a, b in ((cut.obs, full.obs[:n]), (cut.actions, full.actions[:n]), (cut.returns, full.returns[:n])):
        assert np.array_equal(a, b)
    assert np.array_equal(cut.knock_gain, full.knock_gain[:n], equal_nan=True)


def _npz(path, **arrays):
    np.savez_compressed(path, **arrays)
    return path


def test_a_demonstrations_file_made_to_exhaust_memory_is_refused_before_it_is_read(tmp_path):
    """Only the members' headers are read: an array whose header declares more than its
    member holds, or a small file that would inflate a thousandfold (a zip bomb), is
    refused in one line; saved demonstrations (about 30 times) read."""
    import io
    import zipfile

    n = 9_000
    bomb = _npz(tmp_path / "bomb.npz", obs=np.zeros((n, 1000)), masks=np.ones((n, 56), bool),
                actions=np.zeros(n, np.int64), returns=np.zeros(n))  # fmt: skip
    with pytest.raises(ValueError, match=r"would inflate to .* times\): no saved demonstrations do"):
        Demonstrations.load(bomb)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**9, 10)}
    )
    liar = tmp_path / "liar.npz"
    with zipfile.ZipFile(liar, "w") as z:
        z.writestr("obs.npy", header.getvalue() + b"\0" * 64)
    with pytest.raises(ValueError, match=r"its obs.npy declares 80,000,000,000 bytes and holds"):
        Demonstrations.load(liar)
    text = tmp_path / "text.npz"
    text.write_bytes(b"no zip at all")
    with pytest.raises(ValueError, match="not a demonstrations file"):
        Demonstrations.load(text)
    rng = np.random.default_rng(0)
    fine = _npz(tmp_path / "fine.npz", obs=rng.integers(0, 2, (2000, 100)).astype(np.float32),
                masks=np.ones((2000, 56), bool), actions=np.zeros(2000, np.int64), returns=np.zeros(2000))  # fmt: skip
    assert len(Demonstrations.load(fine)) == 2000


def test_a_damaged_or_unreadable_demonstrations_file_is_one_line_naming_it(tmp_path):
    """A member whose compressed bytes are damaged, or stored by a method zipfile lacks,
    is refused with the file's name, not zlib's or zipfile's traceback."""
    import struct
    import zipfile

    from training.collection import read_demonstrations

    rng = np.random.default_rng(1)
    good = tmp_path / "good.npz"
    np.savez_compressed(good, obs=rng.random((3000, 40)).astype(np.float32), masks=np.ones((3000, 56), bool),
                        actions=np.zeros(3000, np.int64), returns=np.zeros(3000))  # fmt: skip
    raw = good.read_bytes()
    member = zipfile.ZipFile(good).getinfo("obs.npy")
    name_len, extra_len = struct.unpack("<HH", raw[member.header_offset + 26 : member.header_offset + 30])
    start = member.header_offset + 30 + name_len + extra_len
    damaged = bytearray(raw)
    for k in range(start + 2000, start + 2060):
        damaged[k] ^= 0x5A
    method = bytearray(raw)
    struct.pack_into("<H", method, member.header_offset + 8, 99)
    central = raw.find(b"PK\x01\x02")
    while central >= 0:
        size = struct.unpack("<H", raw[central + 28 : central + 30])[0]
        if raw[central + 46 : central + 46 + size] == b"obs.npy":
            struct.pack_into("<H", method, central + 10, 99)
        central = raw.find(b"PK\x01\x02", central + 4)
    for name, data in (("damaged.npz", damaged), ("method.npz", method)):
        path = tmp_path / name
        path.write_bytes(bytes(data))
        with pytest.raises(ValueError, match=f"cannot read demonstrations {path}"):
            read_demonstrations(path)
