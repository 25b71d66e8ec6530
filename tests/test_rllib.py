"""RLlib on real Ray (``rllib_ppo``): a few iterations of multi-agent PPO with
action masking from the command line, its checkpoint played back legal move by legal
move, RLlib's PettingZoo wrapper passing every reward through, and the envs' checkers
under RLlib's pinned Gymnasium.

RLlib lives in its own virtualenv (``make rllib``: .venv-rllib); everywhere else this
file is skipped, and Ray starts only here, once for the module, on 127.0.0.1.
"""

import contextlib
import io
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

# Every Ray address stays on the loopback interface; read by Ray when it is first imported.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
#: the example (not a package of the project); its workers import it by name too
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rllib"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")]))
pytest.importorskip("ray.rllib.algorithms.ppo")
import gymnasium as gym  # noqa: E402
import ray  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

import thirtyone_env  # noqa: E402, F401  (registers ThirtyOne-v0)

sys.path.insert(0, str(EXAMPLE))
import rllib_ppo  # noqa: E402

from thirtyone_env.envs import multiagent  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    # a seat that is not to act has an all-zero mask (the env's contract)
    pytest.mark.filterwarnings("ignore:Action mask numpy array is all zeros"),
]

ROW = re.compile(
    r"iteration +(\d+): episode return mean (\S+) +game length (\S+) +games ([\d,]+) +timesteps ([\d,]+) +entropy (\S+)"
)
BATCH = 400


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two iterations on a 3-seat table through ``main``: its printed rows and the
    checkpoint folder. Ray stops at the end of the module."""
    out = tmp_path_factory.mktemp("rllib") / "ckpt"
    args = [
        "--iterations",
        "2",
        "--players",
        "3",
        "--seed",
        "1",
        "--batch-size",
        str(BATCH),
        "--out",
        str(out),
    ]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = rllib_ppo.main(args)
    assert code == 0
    node_ips = {node["NodeManagerAddress"] for node in ray.nodes()}
    yield printed.getvalue(), out, node_ips
    ray.shutdown()


def test_ppo_trains_on_the_pettingzoo_env_and_saves_a_checkpoint(trained):
    text, out, node_ips = trained
    assert node_ips == {"127.0.0.1"}
    rows = [ROW.search(line) for line in text.splitlines()]
    rows = [[float(x.replace(",", "")) for x in m.groups()] for m in rows if m]
    assert [r[0] for r in rows] == [1, 2], text
    steps = [r[4] for r in rows]
    assert BATCH <= steps[0] < steps[1], text  # every iteration samples at least a batch
    assert 0 < rows[0][3] < rows[1][3], text  # whole games end within each batch
    for _, ret, length, _, _, entropy in rows:
        # lives reward: a game's return over all seats is minus the lives charged (>= 0)
        assert ret < 0 and length > 3
        assert 0 < entropy < math.log(multiagent.raw_env().action_space("player_0").n)
    assert f"checkpoint: {out}" in text
    assert (rllib_ppo.module_path(out) / "module_state.pkl").is_file()


def test_the_checkpointed_policy_plays_only_legal_moves(trained):
    module = rllib_ppo.load_policy(trained[1])
    assert isinstance(module, rllib_ppo.MaskedPPOModule)
    env = rllib_ppo.make_pettingzoo_env({"num_players": 3})
    chosen = 0
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter(max_iter=600):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = rllib_ppo.choose_action(module, obs)
            assert obs["action_mask"][action] == 1, (agent, action)
            env.step(action)
            chosen += 1
    assert chosen > 300


def test_sampling_from_the_module_never_picks_a_masked_move(trained):
    import torch

    module = rllib_ppo.load_policy(trained[1])
    env = rllib_ppo.make_pettingzoo_env({"num_players": 3})
    env.reset(seed=5)
    obs = env.observe(env.agent_selection)
    legal = np.flatnonzero(obs["action_mask"])
    batch = {
        "obs": {
            "observations": torch.as_tensor(np.repeat(obs["observations"][None], 256, 0)),
            "action_mask": torch.as_tensor(np.repeat(obs["action_mask"][None], 256, 0)),
        }
    }
    with torch.no_grad():
        logits = module.forward_exploration(batch)["action_dist_inputs"]
    samples = torch.distributions.Categorical(logits=logits).sample().numpy()
    assert set(samples.tolist()) <= set(legal.tolist())


def test_rllibs_wrapper_passes_every_reward_through():
    """Masked random games through RLlib's PettingZooEnv: each seat's rewards add up to
    what the bare AEC env pays it."""
    for seed in range(3):
        env = rllib_ppo.make_rllib_env({"num_players": 3, "rules": "pagat"})
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        via_rllib: dict[str, float] = {}
        done = False
        while not done:
            live = {a: o for a, o in obs.items() if o["action_mask"].any()}
            assert len(live) == 1  # one seat acts at a time
            obs, rewards, terms, _, _ = env.step(
                {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in live.items()}
            )
            for agent, r in rewards.items():
                via_rllib[agent] = via_rllib.get(agent, 0.0) + r
            done = terms["__all__"]
        direct = rllib_ppo.make_pettingzoo_env({"num_players": 3, "rules": "pagat"})
        direct.reset(seed=seed)
        rng = np.random.default_rng(seed)
        totals: dict[str, float] = {}
        for agent in direct.agent_iter():
            o, r, term, trunc, _ = direct.last()
            totals[agent] = totals.get(agent, 0.0) + r
            direct.step(None if term or trunc else int(rng.choice(np.flatnonzero(o["action_mask"]))))
        assert via_rllib == pytest.approx(totals)


@pytest.mark.parametrize("rules", ["standard", "banking"])
def test_the_envs_pass_their_checkers_under_rllibs_gymnasium(rules):
    assert gym.__version__.startswith("1.")
    api_test(multiagent.env(num_players=3, rules=rules), num_cycles=200, verbose_progress=False)
    api_test(rllib_ppo.make_pettingzoo_env({"rules": rules}), num_cycles=100, verbose_progress=False)
    for encoding in ("flat", "dict"):
        check_env(gym.make("ThirtyOne-v0", rules=rules, obs_encoding=encoding).unwrapped)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "5"], "--players must be 2..4"),
        (["--players", "1"], "--players must be 2..4"),
        (["--iterations", "0"], "--iterations must be"),
        (["--rules", "nope"], "unknown rules preset 'nope'"),
        (["--reward", "nope"], "--reward must be one of"),
        (["--seed", "-1"], "--seed must be"),
        (["--iterations", "x"], "invalid int value"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        rllib_ppo.main([*args, "--out", str(tmp_path / "new")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err.strip().splitlines()[-1] and "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_a_folder_in_use_is_refused(tmp_path, capsys):
    (tmp_path / "theirs.txt").write_text("keep me")
    with pytest.raises(SystemExit) as e:
        rllib_ppo.main(["--out", str(tmp_path)])
    assert e.value.code == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["theirs.txt"]
