"""The run's environments: a picklable factory per vector slot (each slot builds its
own opponent seats, self-play snapshots included) and the vector env of the run's kind
(``batched``, ``subproc`` or ``dummy``), seeded by the run's seeding scheme."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import gymnasium

from training.config import TrainConfig


def make_env_fn(config: TrainConfig, rank: int, opponents_only: bool = False) -> Any:
    """A picklable env factory for one vector slot (each slot builds its own seats);
    with ``opponents_only``, a factory of the opponent seats alone."""
    trainer = os.getpid()  # the process that made the factory handles Ctrl-C

    made: list[Any] = []  # this process's league, made on first use (in the env worker)

    def seats() -> list[Any]:
        from training.league import LeagueSeat

        if not made:
            made.append(make_league(config))
        return [LeagueSeat(league=made[0]) for _ in range(config.players - 1)]

    if opponents_only:
        return seats

    def build() -> Any:
        from sb3_contrib.common.wrappers import ActionMasker
        from stable_baselines3.common.monitor import Monitor

        from thirtyone_env.envs.env import ThirtyOneEnv

        if os.getpid() != trainer:  # an env worker process: Ctrl-C is the trainer's to handle
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        env = ThirtyOneEnv(
            num_players=config.players,
            rules=config.rules,
            opponents=seats(),
            seat="random" if config.seat == "random" else int(config.seat),
            episode=config.episode,
            reward=config.reward,
            obs_encoding=config.obs_encoding,
            opponent_history=config.opponent_history,
        )
        return ActionMasker(Monitor(LeagueSlot(env, made[0])), lambda e: e.unwrapped.action_masks())

    return build


class LeagueSlot(gymnasium.Wrapper):
    """One vector slot's env with its league: ``refresh_league`` (which the trainer calls
    through ``VecEnv.env_method`` after each snapshot, between two steps) reads the
    snapshot folder again in the process the slot lives in."""

    def __init__(self, env: Any, league: Any) -> None:
        super().__init__(env)
        self.league = league

    def refresh_league(self) -> None:
        self.league.refresh()


def make_league(config: TrainConfig) -> Any:
    """The run's league: the ``--opponents`` players, with ``--league`` the population
    of randomised heuristics and PFSP draws, and the snapshot pool with ``--self-play``."""
    from training.league import League

    population: list[tuple[str, Any]] = []
    if config.league and config.league_population:
        from agents.populations import TRAIN_RANGES, PopulationPlayer, draw_members

        members = draw_members(TRAIN_RANGES, config.league_population, config.seeds.population)
        population = [(f"pop{k}", PopulationPlayer(m)) for k, m in enumerate(members)]
    return League(
        config.opponent_specs,
        str(config.run_dir / "pool") if config.self_play > 0 else None,
        config.self_play,
        config.pool_size,
        config.opponent_deterministic,
        population=population,
        pfsp_power=config.pfsp_power if config.league else 0.0,
        population_share=config.league_population_share if config.league else None,
    )


def league_seats(vec: Any) -> list[list[Any]] | None:
    """Each game's opponent seats of a batched run's vector env (``None`` for other
    vector envs: their seats live in the env workers)."""
    inner = getattr(getattr(vec, "venv", None), "venv", None)  # VecMonitor -> SB3 wrapper -> ours
    games = getattr(inner, "games", None)
    return games.players if games is not None else None


def make_vec(config: TrainConfig) -> Any:
    """The run's vector env of ``config.n_envs`` games, seeded (slot ``i``: ``envs + i``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if config.vec == "batched":
        from thirtyone_env.envs.vector import sb3_vec_env

        specs = config.opponent_specs
        if (
            not config.league
            and config.self_play == 0
            and len(set(specs)) == 1
            and specs[0] in ("greedy", "random")
        ):
            opponents: Any = specs[0]  # played inside the kernels
        else:  # each game's league seats; the players they stand for are shared, asked in batches
            opponents = make_env_fn(config, -1, opponents_only=True)
        vec = VecMonitor(
            sb3_vec_env(
                config.n_envs,
                config.players,
                config.rules,
                opponents=opponents,
                seat="random" if config.seat == "random" else int(config.seat),
                episode=config.episode,
                reward=config.reward,
                opponent_history=config.opponent_history,
            )
        )
        vec.seed(config.seeds.envs)
        return vec
    fns = [make_env_fn(config, i) for i in range(config.n_envs)]
    if config.vec == "subproc" and config.n_envs > 1:
        vec = SubprocVecEnv(fns, start_method="fork" if sys.platform != "win32" else "spawn")
    else:
        vec = DummyVecEnv(fns)
    vec.seed(config.seeds.envs)
    return vec


def observation_shape(config: TrainConfig) -> tuple[int, int]:
    """The width of the run's flat observation and its number of actions."""
    from thirtyone_env.envs.env import ThirtyOneEnv

    env = ThirtyOneEnv(
        num_players=config.players, rules=config.rules, opponent_history=config.opponent_history
    )
    return int(env.observation_space.shape[0]), int(env.action_space.n)
