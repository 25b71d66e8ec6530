"""The heads-up teacher step (``train.py --heads-up-teacher``): the model's own games,
labelled by the teacher exactly where two players are in and by the model elsewhere,
and a refit that weighs the heads-up decisions more."""

import numpy as np
import pytest

import agents
from agents.expert import ExpertPlayer
from agents.ppo import NumpyPolicy
from thirtyone_env import ThirtyOneEnv
from thirtyone_env.game.policies import GreedyPolicy
from training.imitation import Demonstrations, collect, pretrain


def _env():
    return ThirtyOneEnv(num_players=4, opponents=[agents.make("greedy") for _ in range(3)], seat="random")


def test_the_teacher_labels_exactly_the_heads_up_decisions_of_the_models_own_games():
    """The same seeded games three times, played by the behaviour player (here a greedy
    one): labelled by the teacher throughout, by the behaviour itself, and by the
    teacher only with two in. The third is the first where two are in, the second
    elsewhere, and the games are the behaviour's in all three."""
    layout = _env().unwrapped.obs_layout
    teacher_all = collect(_env(), ExpertPlayer(), 2000, 0.99, seed=7, behaviour=GreedyPolicy())
    own = collect(_env(), GreedyPolicy(), 2000, 0.99, seed=7, behaviour=GreedyPolicy())
    mixed = collect(_env(), ExpertPlayer(), 2000, 0.99, seed=7, behaviour=GreedyPolicy(), teach_players_in=2)
    for field in ("obs", "masks", "returns"):
        assert np.array_equal(getattr(mixed, field), getattr(own, field))
        assert np.array_equal(getattr(mixed, field), getattr(teacher_all, field))
    two_in = mixed.obs[:, layout.slices["active"]].sum(axis=1) == 2
    assert 50 < two_in.sum() < len(mixed) - 50
    assert np.array_equal(mixed.actions[two_in], teacher_all.actions[two_in])
    assert np.array_equal(mixed.actions[~two_in], own.actions[~two_in])
    assert (teacher_all.actions[two_in] != own.actions[two_in]).any()  # the labels are the teacher's
    with pytest.raises(ValueError, match="give one"):
        collect(_env(), ExpertPlayer(), 10, 0.99, seed=7, teach_players_in=2)
    with pytest.raises(ValueError, match="measure no knocks or moves"):
        collect(
            _env(),
            ExpertPlayer(),
            10,
            0.99,
            seed=7,
            behaviour=GreedyPolicy(),
            teach_players_in=2,
            move_rollouts=2,
        )
    with pytest.raises(ValueError, match="teach_players_in=1 must be 0"):
        collect(_env(), ExpertPlayer(), 10, 0.99, seed=7, behaviour=GreedyPolicy(), teach_players_in=1)


class _Labelled:
    """An opponent seat with a league's ``label``: who sits there, as the league knows."""

    obs_encoding = "view"

    def __init__(self, label):
        self.label, self.player = label, agents.make(label)

    def act(self, view, mask):
        return self.player.act(view, mask)


def test_teach_against_labels_only_the_ends_against_the_named_opponents():
    """With every opponent greedy, ``teach_against=("greedy",)`` is the heads-up
    teacher; with none greedy it teaches nothing; with a mix it teaches some of the
    heads-up decisions, exactly where the teacher labels, the model's moves elsewhere."""

    def run(labels, against, teacher=None, n=1500):
        env = ThirtyOneEnv(num_players=4, opponents=[_Labelled(x) for x in labels], seat=0)
        return collect(
            env, teacher or ExpertPlayer(), n, 0.99, seed=9, behaviour=GreedyPolicy(),
            teach_players_in=2, teach_against=against,
        )  # fmt: skip

    def own(labels, n=1500):
        return run(labels, (), GreedyPolicy(), n)

    greedy = ("greedy",) * 3
    assert np.array_equal(run(greedy, ("greedy",)).actions, run(greedy, ()).actions)
    experts = ("expert",) * 3
    assert np.array_equal(run(experts, ("greedy",)).actions, own(experts).actions)
    mixed = ("greedy", "greedy", "expert")
    taught, plain, everyone = run(mixed, ("greedy",), n=4000), own(mixed, 4000), run(mixed, (), n=4000)
    moved = taught.actions != plain.actions
    assert moved.any() and (everyone.actions != plain.actions).sum() > moved.sum()
    assert np.array_equal(taught.actions[moved], everyone.actions[moved])


def test_row_weights_decide_which_of_two_conflicting_labels_the_fit_learns():
    """The same observation labelled two ways: the fit learns the label of the heavier
    rows; bad weights are refused."""
    from sb3_contrib import MaskablePPO

    env = _env()
    obs, info = env.reset(seed=1)
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    legal = np.flatnonzero(info["action_mask"])
    a, b = int(legal[0]), int(legal[1])
    n = 128
    demos = Demonstrations(
        np.repeat(obs[None].astype(np.float16), n, axis=0),
        np.repeat(info["action_mask"][None].astype(bool), n, axis=0),
        np.array([a, b] * (n // 2)),
        np.zeros(n, dtype=np.float32),
    )
    for heavy in (a, b):
        weight = np.where(demos.actions == heavy, 4.0, 1.0)
        pretrain(model, demos, 10, batch_size=64, lr=1e-2, row_weight=weight)
        logits = NumpyPolicy.from_sb3(model.policy).logits(obs[None].astype(np.float32))[0]
        assert logits[heavy] > logits[a if heavy == b else b]
    with pytest.raises(ValueError, match="one positive weight for each of the 128"):
        pretrain(model, demos, 1, row_weight=np.zeros(n))


def test_a_steps_saved_decisions_are_fitted_again_only_for_the_same_collection(tmp_path):
    """A run started again before its first checkpoint reads the step's saved decisions
    instead of playing them again, and refuses a file of another collection."""
    from training.collection import saved_or_collected

    path = tmp_path / "heads_up.npz"
    made = collect(_env(), ExpertPlayer(), 50, 0.99, seed=3, behaviour=GreedyPolicy(), teach_players_in=2)
    made.meta = {"teacher": "expert", "decisions": 50}
    calls = []

    def play():
        calls.append(1)
        return made

    first = saved_or_collected(path, made.meta, play, "heads-up teacher step")
    again = saved_or_collected(path, dict(made.meta), play, "heads-up teacher step")
    assert len(calls) == 1 and path.exists()
    assert np.array_equal(again.obs, first.obs) and np.array_equal(again.actions, made.actions)
    with pytest.raises(ValueError, match="holds another collection than this run's heads-up teacher step"):
        saved_or_collected(path, {"teacher": "search", "decisions": 50}, play, "heads-up teacher step")
    assert len(calls) == 1
