"""Opponents for training: a league of heuristic players and frozen learner snapshots.

A :class:`LeagueSeat` sits in one opponent seat of a ``ThirtyOneEnv`` and becomes a
different player every episode (the env hands each opponent its generator through
``reset(rng)`` at every reset): with probability ``self_play`` one of the newest
``pool_size`` snapshots in ``pool_dir`` (``*.npz`` written by ``train.py``), else one
of the heuristic ``specs`` (so the learner keeps meeting, and beating, the ladder).
Before the pool holds a snapshot, every draw is a heuristic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.ppo import PolicyPlayer, load_policy


class SnapshotPlayer(PolicyPlayer):
    """A frozen policy snapshot at the table (flat observations, masked), named by its
    file. It plays many games in one call (``act_batch``) like any
    :class:`~agents.ppo.PolicyPlayer`; a :class:`LeagueSeat` does not, as it is one
    game's seat and may be another player next episode."""


class LeagueSeat:
    """One opponent seat drawn anew each episode from heuristics and snapshots."""

    def __init__(
        self,
        specs: list[str],
        pool_dir: str | None = None,
        self_play: float = 0.0,
        pool_size: int = 5,
        deterministic: bool = True,
    ) -> None:
        if not specs and not (pool_dir and self_play > 0):
            raise ValueError("a league seat needs heuristic opponents or a self-play pool")
        if not 0.0 <= self_play <= 1.0:
            raise ValueError(f"self_play={self_play!r} must be a share in [0, 1]")
        self.specs = list(specs)
        self.heuristics = [agents.from_spec(s) for s in self.specs]  # fails early on a bad spec
        self.pool_dir = Path(pool_dir) if pool_dir else None
        self.self_play = self_play
        self.pool_size = pool_size
        self.deterministic = deterministic
        self._snapshots: dict[str, SnapshotPlayer] = {}
        self.current: Any = self.heuristics[0] if self.heuristics else None

    @property
    def obs_encoding(self) -> str:
        return getattr(self.current, "obs_encoding", "flat")

    def pool(self) -> list[Path]:
        """The newest ``pool_size`` snapshots, oldest first."""
        if self.pool_dir is None or not self.pool_dir.is_dir():
            return []
        return sorted(self.pool_dir.glob("*.npz"))[-self.pool_size :]

    def reset(self, rng: np.random.Generator) -> None:
        pool = self.pool() if self.self_play > 0 else []
        if pool and (not self.heuristics or rng.random() < self.self_play):
            path = pool[int(rng.integers(len(pool)))]
            key = path.name
            if key not in self._snapshots:
                keep = {p.name for p in pool}
                self._snapshots = {k: v for k, v in self._snapshots.items() if k in keep}
                self._snapshots[key] = SnapshotPlayer(load_policy(path), key, self.deterministic)
            self.current = self._snapshots[key]
        elif self.heuristics:
            self.current = self.heuristics[int(rng.integers(len(self.heuristics)))]
        else:
            raise ValueError(f"the self-play pool {self.pool_dir} holds no snapshot yet")
        reset = getattr(self.current, "reset", None)
        if callable(reset):
            reset(rng)

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)
