"""Opponents for training: a league of heuristic players and frozen learner snapshots.

A :class:`LeagueSeat` sits in one opponent seat of a ``ThirtyOneEnv`` and becomes a
different player every episode (the env hands each opponent its generator through
``reset(rng)`` at every reset): with probability ``self_play`` one of the newest
``pool_size`` snapshots in ``pool_dir`` (``*.npz`` written by ``train.py``), else one
of the heuristic ``specs`` (so the learner keeps meeting, and beating, the ladder).
Before the pool holds a snapshot, every draw is a heuristic.

On the batched env a seat names the player it stands for this episode (``delegate``);
seats built with one ``shared`` cache play the same player objects, so the batched env
asks each of them (the expert, a snapshot) for all its waiting games in one call.
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
    :class:`~agents.ppo.PolicyPlayer`; a :class:`LeagueSeat` is one game's seat and may
    be another player next episode, so it names the player it stands for
    (:meth:`LeagueSeat.delegate`) and the batched env asks that one."""


class LeagueSeat:
    """One opponent seat drawn anew each episode from heuristics and snapshots.

    Args:
        shared: a cache of players (by spec, by snapshot) that seats made with the same
            dict share; without it the seat builds its own.
    """

    def __init__(
        self,
        specs: list[str],
        pool_dir: str | None = None,
        self_play: float = 0.0,
        pool_size: int = 5,
        deterministic: bool = True,
        shared: dict[str, Any] | None = None,
    ) -> None:
        if not specs and not (pool_dir and self_play > 0):
            raise ValueError("a league seat needs heuristic opponents or a self-play pool")
        if not 0.0 <= self_play <= 1.0:
            raise ValueError(f"self_play={self_play!r} must be a share in [0, 1]")
        self.specs = list(specs)
        self._shared = shared if shared is not None else {}
        self.heuristics = [self._player(s) for s in self.specs]  # fails early on a bad spec
        self.pool_dir = Path(pool_dir) if pool_dir else None
        self.self_play = self_play
        self.pool_size = pool_size
        self.deterministic = deterministic
        self.current: Any = self.heuristics[0] if self.heuristics else None

    def _player(self, spec: str) -> Any:
        """The (shared) player of a heuristic spec."""
        key = f"spec:{spec}"
        if key not in self._shared:
            self._shared[key] = agents.from_spec(spec)
        return self._shared[key]

    def delegate(self) -> Any:
        """The player deciding for this seat until the next ``reset``."""
        return self.current

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
            key = f"snapshot:{path.name}"
            if key not in self._shared:
                keep = {f"snapshot:{p.name}" for p in pool}  # forget snapshots that left the pool
                for old in [k for k in self._shared if k.startswith("snapshot:") and k not in keep]:
                    del self._shared[old]
                self._shared[key] = SnapshotPlayer(load_policy(path), path.name, self.deterministic)
            self.current = self._shared[key]
        elif self.heuristics:
            self.current = self.heuristics[int(rng.integers(len(self.heuristics)))]
        else:
            raise ValueError(f"the self-play pool {self.pool_dir} holds no snapshot yet")
        reset = getattr(self.current, "reset", None)
        if callable(reset):
            reset(rng)

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)
