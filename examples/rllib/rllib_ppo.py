"""Multi-agent PPO with action masking on RLlib: the PettingZoo env, one shared policy.

Every seat of the table is played by the same policy ("parameter sharing", the usual
choice for a symmetric card game): RLlib's multi-agent PPO (the new API stack) with an
action-masking RLModule (:class:`MaskedPPOModule`), so illegal moves get zero
probability in sampling, in the loss and at play time. It needs its own requirements
(``requirements.txt`` beside it), in a virtualenv of their own because RLlib pins its
own Gymnasium (``make rllib``)::

    .venv-rllib/bin/python examples/rllib/rllib_ppo.py --iterations 5 --players 3 --out runs/rllib-3p

Each iteration prints the mean return of a game (all seats together: with the
``lives`` reward, minus the lives charged in it), the mean game length in moves, the
games and timesteps so far and the policy's entropy; at the end a checkpoint goes to
``--out`` (a new or empty folder) and, with ``--eval-games``, the trained policy plays
that many games against random opponents. :func:`load_policy` reads the checkpoint
back without Ray, :func:`choose_action` picks a move with it.

Ray is started on this machine only, listening on 127.0.0.1, without its dashboard.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from thirtyone_env.envs import multiagent
from thirtyone_env.envs.env_options import REWARDS
from thirtyone_env.game.rules import PRESETS, Rules

# Ray reads this when first imported: without it, Ray advertises the machine's outward
# address instead of 127.0.0.1.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
try:
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    RLLIB_MISSING: ImportError | None = None
except ImportError as e:  # the main virtualenv: this module still imports, main() says why it stops
    RLLIB_MISSING = e
    DefaultPPOTorchRLModule = object  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModule

PROG = "python examples/rllib/rllib_ppo.py"
ENV_NAME = "thirtyone_rllib"
#: the one policy every seat maps to
POLICY_ID = "shared"
MAX_ITERATIONS = 100_000


class RLlibObservations(BaseWrapper):
    """Renames the env's observation key ``"observation"`` to ``"observations"``, the
    name RLlib's action-masking RLModule reads (the mask keeps its name)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        self._space = spaces.Dict({"observations": inner["observation"], "action_mask": inner["action_mask"]})

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = super().observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module over the ``"observations"`` part of a Dict observation;
    the ``"action_mask"`` part sets the logit of every illegal move to the lowest float,
    so sampling, the loss and greedy play never pick one. (RLlib ships a similar module
    among its examples, which are no public API.)"""

    def __init__(self, *, observation_space: spaces.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) != {
            "observations",
            "action_mask",
        }:
            raise ValueError(
                f"MaskedPPOModule needs a Dict observation space of 'observations' and 'action_mask', got {observation_space}"
            )
        # The networks are built for the observations alone; setup() puts the whole
        # space back, so that checkpoints and copies of the module are made with it.
        self._space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """A shallow copy of ``batch`` with the bare observations, and the mask."""
        obs = batch[Columns.OBS]
        return {**batch, Columns.OBS: obs["observations"]}, obs["action_mask"]

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = torch.where(mask > 0, logits, torch.full_like(logits, FLOAT_MIN))
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None and isinstance(batch[Columns.OBS], dict):
            batch, _ = self._split(batch)
        return super().compute_values(batch, embeddings)


def make_pettingzoo_env(config: dict[str, Any]) -> RLlibObservations:
    """The AEC env of ``config`` (``num_players``, ``rules``, ``reward``) as RLlib's
    masking module reads it."""
    return RLlibObservations(
        multiagent.env(
            num_players=int(config.get("num_players", 2)),
            rules=config.get("rules", "standard"),
            reward=config.get("reward", "lives"),
        )
    )


def make_rllib_env(config: dict[str, Any]) -> Any:
    """RLlib's env creator: the PettingZoo env in RLlib's AEC wrapper."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(make_pettingzoo_env(dict(config)))


def _shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared policy."""
    return POLICY_ID


def build_config(
    *,
    num_players: int = 2,
    rules: str = "standard",
    reward: str = "lives",
    seed: int = 0,
    batch_size: int = 1000,
    minibatch_size: int = 250,
    epochs: int = 2,
    lr: float = 3e-4,
    hidden: Sequence[int] = (64, 64),
) -> PPOConfig:
    """The PPO configuration: one local env runner and one local learner (small
    batches, no extra processes), every seat mapped to one masking RLModule."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_rllib_env)
    module = RLModuleSpec(
        module_class=MaskedPPOModule,
        model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [], "vf_share_layers": False},
    )
    return (
        PPOConfig()
        .environment(
            ENV_NAME,
            env_config={"num_players": num_players, "rules": rules, "reward": reward},
            # RLlib's check steps the env with an unmasked random move, which only makes
            # PettingZoo warn of an illegal one; tests/test_rllib.py runs PettingZoo's api_test.
            disable_env_checking=True,
        )
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=batch_size,
            minibatch_size=minibatch_size,
            num_epochs=epochs,
            lr=lr,
            gamma=0.99,
        )
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=_shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY_ID: module}))
        .debugging(seed=seed)
    )


def start_ray(num_cpus: int = 1) -> None:
    """Starts a Ray of this process's own on 127.0.0.1 only, without the dashboard (a
    no-op if this process has started one already). ``address="local"``: a plain
    ``ray.init()`` would join any Ray already running on the machine (another user's,
    or a test's cluster) instead of starting one."""
    import ray

    if not ray.is_initialized():
        ray.init(
            address="local",
            num_cpus=num_cpus,
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            log_to_driver=False,
            object_store_memory=128 * 1024 * 1024,
            configure_logging=False,
        )


def summarize(result: dict[str, Any]) -> dict[str, float]:
    """The numbers of one ``algo.train()`` result that the progress line shows."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(POLICY_ID, {})
    return {
        "episode_return_mean": float(runners.get("episode_return_mean", float("nan"))),
        "episode_len_mean": float(runners.get("episode_len_mean", float("nan"))),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "timesteps": int(result.get("num_env_steps_sampled_lifetime", 0)),
        "entropy": float(learner.get("entropy", float("nan"))),
    }


def train(
    config: PPOConfig, iterations: int, report: Callable[[int, dict[str, float]], None] | None = None
) -> tuple[Algorithm, list[dict[str, float]]]:
    """Builds the algorithm and trains ``iterations`` times; returns it (still open)
    and each iteration's summary."""
    algo = config.build_algo()
    history = []
    for i in range(1, iterations + 1):
        row = summarize(algo.train())
        history.append(row)
        if report is not None:
            report(i, row)
    return algo, history


def module_path(checkpoint: str | Path) -> Path:
    """Where an algorithm checkpoint keeps the shared policy's RLModule."""
    return Path(checkpoint) / "learner_group" / "learner" / "rl_module" / POLICY_ID


def load_policy(checkpoint: str | Path) -> RLModule:
    """The shared policy of an algorithm checkpoint, for play (no Ray needed). RLlib's
    checkpoints are pickles, which run code as they load: load only your own."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    return RLModule.from_checkpoint(module_path(Path(checkpoint).resolve()))


def choose_action(module: RLModule, observation: dict[str, np.ndarray]) -> int:
    """The policy's most likely legal move for one observation of
    :func:`make_pettingzoo_env` (the mask rules out every illegal one)."""
    import torch

    batch = {
        "obs": {
            "observations": torch.as_tensor(observation["observations"][None], dtype=torch.float32),
            "action_mask": torch.as_tensor(observation["action_mask"][None], dtype=torch.float32),
        }
    }
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"][0]
    return int(torch.argmax(logits))


def play_against_random(
    module: RLModule, *, num_players: int, rules: str, games: int, seed: int = 0
) -> float:
    """The share of ``games`` the policy wins in one seat (moving round the table game
    by game) against uniformly random legal play in the others."""
    env = make_pettingzoo_env({"num_players": num_players, "rules": rules})
    rng = np.random.default_rng(seed)
    wins = 0
    for game in range(games):
        ours = f"player_{game % num_players}"
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                if agent == ours and int(ours.split("_")[1]) in info.get("winners", ()):
                    wins += 1
                env.step(None)
            elif agent == ours:
                env.step(choose_action(module, obs))
            else:
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return wins / games


def check_out_folder(out: str) -> Path:
    """``--out`` as an absolute path, if it is new or an empty folder; else ValueError."""
    path = Path(out).expanduser().resolve()
    if path.exists():
        if not path.is_dir():
            raise ValueError(f"--out {out}: exists and is not a folder")
        if any(path.iterdir()):
            raise ValueError(f"--out {out}: the folder is not empty; name a new one")
    return path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Train one shared policy for every seat with RLlib's multi-agent PPO."
    )
    parser.add_argument("--iterations", type=int, default=5, help="training iterations (default 5)")
    parser.add_argument("--players", type=int, default=2, help="seats at the table, 2-4 (default 2)")
    parser.add_argument("--rules", default="standard", help=f"rules preset: {sorted(PRESETS)}")
    parser.add_argument("--reward", default="lives", help=f"reward per seat: {list(REWARDS)} (default lives)")
    parser.add_argument("--seed", type=int, default=0, help="seed of RLlib and the env (default 0)")
    parser.add_argument(
        "--batch-size", type=int, default=1000, help="env steps an iteration learns from (default 1000)"
    )
    parser.add_argument("--eval-games", type=int, default=0, help="games against random players at the end")
    parser.add_argument("--out", required=True, help="checkpoint folder: new, or empty")
    args = parser.parse_args(argv)
    if not 1 <= args.iterations <= MAX_ITERATIONS:
        parser.error(f"--iterations must be 1..{MAX_ITERATIONS:,}, got {args.iterations}")
    if args.rules not in PRESETS:
        parser.error(f"unknown rules preset {args.rules!r}; presets are {sorted(PRESETS)}")
    if not 2 <= args.players <= 4:
        parser.error(f"--players must be 2..4, got {args.players}")
    try:
        Rules.preset(args.rules).check_num_players(args.players)
    except ValueError as e:
        parser.error(f"--players {args.players}: {e}")
    if args.reward not in REWARDS:
        parser.error(f"--reward must be one of {list(REWARDS)}, got {args.reward!r}")
    if args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    if not 64 <= args.batch_size <= 1_000_000:
        parser.error(f"--batch-size must be 64..1,000,000, got {args.batch_size}")
    if args.eval_games < 0:
        parser.error(f"--eval-games must be 0 or more, got {args.eval_games}")
    try:
        args.out_path = check_out_folder(args.out)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    return args


def print_row(i: int, row: dict[str, float]) -> None:
    print(
        f"iteration {i:>3}: episode return mean {row['episode_return_mean']:+.2f}"
        f"  game length {row['episode_len_mean']:.1f}"
        f"  games {row['episodes']:,}  timesteps {row['timesteps']:,}  entropy {row['entropy']:.3f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if RLLIB_MISSING is not None:
        print(
            f"{PROG}: error: RLlib is not installed here ({RLLIB_MISSING}); run `make rllib` and use .venv-rllib/bin/python",
            file=sys.stderr,
        )
        return 2
    start = time.perf_counter()
    start_ray()
    config = build_config(
        num_players=args.players,
        rules=args.rules,
        reward=args.reward,
        seed=args.seed,
        batch_size=args.batch_size,
        minibatch_size=max(32, args.batch_size // 4),
    )
    print(f"PPO, {args.players} seats sharing one policy, rules {args.rules}, seed {args.seed}", flush=True)
    algo, _ = train(config, args.iterations, print_row)
    try:
        args.out_path.mkdir(parents=True, exist_ok=True)
        algo.save_to_path(args.out_path)
    finally:
        algo.stop()
    print(f"checkpoint: {args.out_path} ({time.perf_counter() - start:.0f} s)")
    print(f"policy: {module_path(args.out_path)}")
    if args.eval_games:
        share = play_against_random(
            load_policy(args.out_path),
            num_players=args.players,
            rules=args.rules,
            games=args.eval_games,
            seed=args.seed,
        )
        print(
            f"against random players: won {share:.1%} of {args.eval_games} games (chance {1 / args.players:.1%})"
        )
    return 0


if __name__ == "__main__":
    # Run the importable module's main: RLlib pickles the RLModule class and the env
    # creator into the checkpoint, by reference to rllib_ppo (by value from __main__).
    from rllib_ppo import main as importable_main

    sys.exit(importable_main())
