"""One benchmark case, run for a fixed time in its own process; prints one JSON line.

Usage: ``python benchmarks/cases.py CASE [--seconds 10]``. Cases of this project:
``engine`` (decisions/s of random legal play on the engine), ``single_env`` /
``single_env_python`` (``ThirtyOneEnv`` steps/s with ``backend="compiled"`` / the
Python engine: random legal agent and opponents, observation built every step), ``batched_env`` (the same on ``ThirtyOneVectorEnv`` at ``--num-envs`` games),
``batched_env_expert`` (the same against three ``ExpertPlayer``),
``harness`` (tournament rounds/s with greedy players, one worker), ``search_table`` /
``search_table_python`` (tournament rounds/s of ``search`` against three experts, its
roll-outs on the compiled kernels / on the engine), ``knock_playouts`` /
``knock_playouts_python`` (measured knocks/s: 4 paired play-outs each, the expert's table,
512 positions at once on the compiled kernels / one by one on the engine), ``train_single`` /
``train_batched`` (MaskablePPO steps/s on 8 single envs in a DummyVecEnv / on the
batched env against three greedy opponents), ``train_batched_expert`` /
``train_batched_frozen`` (the batched run against three ``ExpertPlayer`` / three
``PPOPlayer``, the shipped agent). The peers (run with the peers' venv, ``benchmarks/suite.py --peers``):
``blackjack`` (Gymnasium Blackjack-v1), ``rlcard_gin`` (RLCard gin-rummy),
``pettingzoo_gin`` (PettingZoo classic gin_rummy_v4, AEC), ``openspiel_gin``
(OpenSpiel gin_rummy with its observation tensor). Every case plays random legal
actions from a block of pre-drawn uniforms, so it measures the environment.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from thirtyone_env.harness.command import CommandParser, count_arg, seconds_arg  # noqa: E402 (the repository on the path first)


def _timed(seconds: float, chunk: Callable[[], int]) -> tuple[float, int]:
    """Call ``chunk`` (returns the steps it made) until ``seconds`` pass."""
    chunk()  # warm-up (compilation, caches)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += chunk()
    return steps / (time.perf_counter() - start), steps


class _Uniforms:
    """Pre-drawn uniforms: a random legal pick costs a list index."""

    def __init__(self, seed: int = 0) -> None:
        self.u = np.random.default_rng(seed).random(1 << 16).tolist()
        self.k = 0

    def pick(self, legal: list | np.ndarray) -> int:
        self.k = (self.k + 1) & 0xFFFF
        return legal[int(self.u[self.k] * len(legal))]


def engine(seconds: float, **_: object) -> dict:
    from engine_speed import run  # (this folder is on the path: cases.py runs as a script)

    return {"rate": run(seconds, 4, "standard")["decisions_per_s"], "unit": "decisions/s"}


def single_env(seconds: float, backend: str = "compiled", **_: object) -> dict:
    from thirtyone_env.envs.env import ThirtyOneEnv
    from thirtyone_env.game.policies import RandomPolicy

    env = ThirtyOneEnv(4, "standard", opponents=[RandomPolicy() for _ in range(3)], backend=backend)
    state = list(env.reset(seed=0))
    u = _Uniforms()

    def chunk() -> int:
        info = state[1]
        for _ in range(1000):
            _, _, done, _, info = env.step(int(u.pick(np.flatnonzero(info["action_mask"]))))
            if done:
                _, info = env.reset()
        state[1] = info
        return 1000

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s", "backend": backend}


def single_env_python(seconds: float, **_: object) -> dict:
    return single_env(seconds, backend="python")


def batched_env(seconds: float, num_envs: int = 4096, opponents: object = "random", steps: int = 10) -> dict:
    from thirtyone_env.envs.vector import ThirtyOneVectorEnv

    vec = ThirtyOneVectorEnv(num_envs, 4, "standard", opponents=opponents)
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    # 1 + uniform on the legal actions, 0 elsewhere: the argmax is a uniform legal pick
    noise = 1 + rng.random((64, num_envs, vec.single_action_space.n), dtype=np.float32)
    k = [0]

    def chunk() -> int:
        for _ in range(steps):
            k[0] = (k[0] + 1) % 64
            vec.step((noise[k[0]] * vec.action_masks()).argmax(axis=1))
        return steps * num_envs

    rate, _ = _timed(seconds, chunk)
    result = {"rate": rate, "unit": "steps/s", "num_envs": num_envs}
    games = vec.games
    if games is not None:  # the kernels' state (none when games fall back to Python envs)
        state = sum(
            a.nbytes for a in (games.g, games.seat_i, games.hands, games.stock, games.pile, games.known)
        )
        state += sum(
            a.nbytes for a in (games.disc_seat, games.disc_order, games.rs, games.rew, games.pending)
        )
        result["bytes_per_env"] = round(state / num_envs + vec.layout.size * 4 + vec.single_action_space.n)
    return result


def batched_env_expert(seconds: float, num_envs: int = 4096, **_: object) -> dict:
    from agents.expert import ExpertPlayer

    return batched_env(seconds, num_envs, opponents=[ExpertPlayer()] * 3, steps=1)


def harness(seconds: float, **_: object) -> dict:
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament

    def chunk() -> int:
        games = run_tournament(TournamentConfig(("greedy",) * 4, 200, seed=0, workers=1), agents.from_spec)
        return sum(g.rounds for g in games)

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "rounds/s"}


def search_table(seconds: float, backend: str = "auto", **_: object) -> dict:
    """Tournament rounds/s of ``search`` against three experts, one worker (the same
    four games, seed 0, over and over): search's roll-outs on ``backend``."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament

    players = (f"search:backend={backend}", "expert", "expert", "expert")

    def chunk() -> int:
        games = run_tournament(TournamentConfig(players, 4, seed=0, workers=1), agents.from_spec)
        return sum(g.rounds for g in games)

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "rounds/s"}


def search_table_python(seconds: float, **_: object) -> dict:
    return search_table(seconds, backend="python")


def _knock_positions(count: int) -> list:
    """``count`` decisions where knocking is a choice, from 4-player games of the expert
    against expert, greedy and Blitz31 (seed 0): (state, the expert's best other move,
    the players by seat)."""
    import agents
    from thirtyone_env.envs.env import ThirtyOneEnv
    from thirtyone_env.game.actions import KNOCK
    from thirtyone_env.game.engine import clone_state
    from thirtyone_env.game.views import player_view

    env = ThirtyOneEnv(num_players=4, opponents=[agents.make(o) for o in ("expert", "greedy", "blitz31")])
    me = agents.make("expert")
    out = []
    _, info = env.reset(seed=0)
    while len(out) < count:
        s, mask = env.state, info["action_mask"]
        if mask[KNOCK] and mask.sum() > 1:
            others = mask.copy()
            others[KNOCK] = 0
            table = tuple(me if p == env.seat else env.opponents[(p - env.seat) % 4 - 1] for p in range(4))
            out.append((clone_state(s), me.act(player_view(s, env.seat), others), table))
        _, _, terminated, truncated, info = env.step(me.act(player_view(s, env.seat), mask))
        if terminated or truncated:
            _, info = env.reset()
    return out


def knock_playouts(seconds: float, backend: str = "compiled", **_: object) -> dict:
    """Measured knocks a second (4 paired play-outs of KNOCK and the expert's other move,
    the expert playing on) of 512 positions: all at once on the compiled kernels
    (``playouts.measure_many``, as the DAgger collector measures them) or one by one in
    the engine (``oracle.measure``)."""
    from thirtyone_env.envs.playouts import measure_many
    from thirtyone_env.game.actions import KNOCK
    from thirtyone_env.game.encoding import ObsLayout
    from thirtyone_env.harness.driver import encodings_of, player_move
    from thirtyone_env.research.oracle import measure

    positions = _knock_positions(512)
    layout = ObsLayout(4, positions[0][0].rules)

    def chunk() -> int:
        seeds = [np.random.SeedSequence(k) for k in range(len(positions))]
        if backend == "compiled":
            states, alts, tables = zip(*positions, strict=True)
            measure_many(list(states), [(KNOCK, a) for a in alts], list(tables), seeds, 4)
        else:
            for (s, a, table), seed in zip(positions, seeds, strict=True):
                move = player_move(table, encodings_of(table, "flat"), layout, "rollout")
                measure(s, (KNOCK, a), move, seed, 4)
        return len(positions)

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "knocks/s"}


def knock_playouts_python(seconds: float, **_: object) -> dict:
    return knock_playouts(seconds, backend="engine")


def _train(seconds: float, venv: object) -> dict:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=1024, n_epochs=4, seed=0, verbose=0)
    steps_per_call = 256 * venv.num_envs
    model.learn(steps_per_call)  # warm-up

    def chunk() -> int:
        model.learn(steps_per_call, reset_num_timesteps=False)
        return steps_per_call

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s", "num_envs": venv.num_envs}


def train_single(seconds: float, **_: object) -> dict:
    from sb3_contrib.common.wrappers import ActionMasker
    from stable_baselines3.common.vec_env import DummyVecEnv

    from thirtyone_env.envs.env import ThirtyOneEnv

    def make() -> object:
        return ActionMasker(ThirtyOneEnv(4, "standard"), lambda e: e.unwrapped.action_masks())

    return _train(seconds, DummyVecEnv([make] * 8))


def train_batched(seconds: float, num_envs: int = 64, opponents: object = "greedy", **_: object) -> dict:
    from thirtyone_env.envs.vector import sb3_vec_env

    return _train(seconds, sb3_vec_env(num_envs, 4, "standard", opponents=opponents))


def train_batched_expert(seconds: float, num_envs: int = 64, **_: object) -> dict:
    from agents.expert import ExpertPlayer

    return train_batched(seconds, num_envs, opponents=[ExpertPlayer()] * 3)


def train_batched_frozen(seconds: float, num_envs: int = 64, **_: object) -> dict:
    from agents.ppo import PPOPlayer

    return train_batched(seconds, num_envs, opponents=[PPOPlayer()] * 3)


# -- peers ---------------------------------------------------------------------------


def blackjack(seconds: float, **_: object) -> dict:
    import gymnasium as gym

    env = gym.make("Blackjack-v1")
    env.reset(seed=0)
    u = _Uniforms()

    def chunk() -> int:
        for _ in range(2000):
            _, _, term, trunc, _ = env.step(u.pick((0, 1)))
            if term or trunc:
                env.reset()
        return 2000

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s"}


def rlcard_gin(seconds: float, **_: object) -> dict:
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": 0})
    state, _ = env.reset()
    u = _Uniforms()
    box = [state]

    def chunk() -> int:
        state = box[0]
        for _ in range(500):
            state, _ = env.step(u.pick(list(state["legal_actions"])))
            if env.is_over():
                state, _ = env.reset()
        box[0] = state
        return 500

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s"}


def pettingzoo_gin(seconds: float, **_: object) -> dict:
    from pettingzoo.classic import gin_rummy_v4

    env = gin_rummy_v4.env()
    env.reset(seed=0)
    u = _Uniforms()

    def chunk() -> int:
        for _ in range(500):
            agent = env.agent_selection
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            env.step(int(u.pick(np.flatnonzero(obs["action_mask"]))))
            del agent
        return 500

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s"}


def openspiel_gin(seconds: float, **_: object) -> dict:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    box = [game.new_initial_state()]
    u = _Uniforms()

    def chunk() -> int:
        steps = 0
        while steps < 500:
            s = box[0]
            if s.is_terminal():
                box[0] = game.new_initial_state()
                continue
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[int(u.pick(range(len(outcomes))))][0])
                continue
            s.observation_tensor(s.current_player())
            s.apply_action(u.pick(s.legal_actions()))
            steps += 1
        return steps

    rate, _ = _timed(seconds, chunk)
    return {"rate": rate, "unit": "steps/s"}


CASES = {
    f.__name__: f
    for f in (
        engine,
        single_env,
        single_env_python,
        batched_env,
        batched_env_expert,
        harness,
        search_table,
        search_table_python,
        knock_playouts,
        knock_playouts_python,
        train_single,
        train_batched,
        train_batched_expert,
        train_batched_frozen,
        blackjack,
        rlcard_gin,
        pettingzoo_gin,
        openspiel_gin,
    )
}


def main() -> None:
    parser = CommandParser(prog="benchmarks/cases.py", description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--seconds", type=seconds_arg, default=10.0, help="seconds of the case (default 10)")
    parser.add_argument("--num-envs", type=count_arg, default=None, help="envs of a vector case")
    args = parser.parse_args()
    kwargs = {} if args.num_envs is None else {"num_envs": args.num_envs}
    result = CASES[args.case](args.seconds, **kwargs)
    result["case"] = args.case
    result["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
