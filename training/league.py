"""Opponents for training: a league of built-in players, randomised heuristics and frozen
learner snapshots, drawn per game.

A :class:`League` holds the pool and decides who sits down; a :class:`LeagueSeat` sits in
one opponent seat of one game and becomes a different member every episode (the env
hands each opponent its generator through ``reset(rng)``, so the draws are the run's):

- with probability ``self_play`` (once the pool holds a snapshot) one of the newest
  ``pool_size`` snapshots in ``pool_dir`` (``*.npz`` written by ``train.py``), else one of
  the heuristics: with probability ``population_share`` a ``population`` member
  (:mod:`agents.populations`: heuristics with randomised knock, pickup and discard
  habits, drawn from the run's seed), else one of the ``specs`` (built-in players), so
  a population of sixteen does not crowd out the three built-ins it sits beside;
- within each kind, by prioritised fictitious self-play when ``pfsp_power`` > 0: a
  member the learner scores less against is drawn more often, weight
  ``(1 - p) ** pfsp_power`` with ``p`` the learner's smoothed win share against it
  (:meth:`League.record` is told each finished game); uniform otherwise.

Seats of one league share its player objects and name the one they stand for
(``delegate``), so the batched env asks each member (the expert, a snapshot) for all its
waiting games in one call. The league also rates every member and the learner with
OpenSkill (Plackett-Luce, by the order the seats finished) from the finished games it is
told about (:meth:`League.rate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.ppo import PolicyPlayer, load_policy
from thirtyone_env.harness.driver import check_seated

#: The learner's name in the league's ratings.
LEARNER = "learner"


class SnapshotPlayer(PolicyPlayer):
    """A frozen policy snapshot at the table (flat observations, masked), named by its
    file. It plays many games in one call (``act_batch``) like any
    :class:`~agents.ppo.PolicyPlayer`; a :class:`LeagueSeat` is one game's seat and may
    be another player next episode, so it names the player it stands for
    (:meth:`LeagueSeat.delegate`) and the batched env asks that one."""


class League:
    """The pool of one run's opponents (see the module doc).

    Args:
        specs: built-in player specs (each one member, labelled by its spec).
        pool_dir: the folder of the learner's snapshots (``None``: no self-play).
        self_play: share of draws that take a snapshot once there is one.
        pool_size: the newest snapshots kept in the pool.
        deterministic: snapshots play their argmax (else sample).
        population: extra heuristic members as ``(label, player)`` pairs.
        pfsp_power: prioritised fictitious self-play's exponent (0: uniform draws).
        population_share: share of the heuristic draws that take a population member
            when there are both kinds (``None``: by head count, as one pool).
    """

    def __init__(
        self,
        specs: list[str],
        pool_dir: str | None = None,
        self_play: float = 0.0,
        pool_size: int = 5,
        deterministic: bool = True,
        population: list[tuple[str, Any]] | None = None,
        pfsp_power: float = 0.0,
        population_share: float | None = None,
    ) -> None:
        if not 0.0 <= self_play <= 1.0:
            raise ValueError(f"self_play={self_play!r} must be a share in [0, 1]")
        if not specs and not population and not (pool_dir and self_play > 0):
            raise ValueError("a league needs built-in players, a population or a self-play pool")
        if pfsp_power < 0:
            raise ValueError(f"pfsp_power={pfsp_power!r} must be 0 or more")
        if population_share is not None and not 0.0 <= population_share <= 1.0:
            raise ValueError(f"population_share={population_share!r} must be a share in [0, 1]")
        self.population_share = population_share
        self.heuristics: list[tuple[str, Any]] = [(s, agents.from_spec(s)) for s in specs]
        self.heuristics += list(population or [])
        self.kinds = {label: "builtin" for label in specs}
        self.kinds.update({label: "population" for label, _ in population or []})
        self.pool_dir = Path(pool_dir) if pool_dir else None
        self.self_play = self_play
        self.pool_size = pool_size
        self.deterministic = deterministic
        self.pfsp_power = pfsp_power
        self.snapshots: dict[str, SnapshotPlayer] = {}  # label -> player, the pool's newest
        self._pool: list[Path] | None = None  # read on first use, then on refresh() only
        #: per member label: [the learner's score against it, games]
        self.results: dict[str, list[float]] = {}
        self.ratings: dict[str, Any] = {}
        self._model: Any = None
        self.seated: tuple[int, Any] | None = None  #: (players, rules) its seats were told

    # -- the pool ---------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the snapshot folder again. The trainer calls this after adding a
        snapshot, on its own league and (through each vector slot's ``refresh_league``)
        on those of the env workers, between two steps: when a snapshot joins the draws
        is then a matter of steps, not of time, and a seed repeats its run."""
        if self.pool_dir is None or not self.pool_dir.is_dir():
            self._pool = []
        else:
            self._pool = sorted(self.pool_dir.glob("*.npz"))[-self.pool_size :]
        keep = {p.name for p in self._pool}
        self.snapshots = {k: v for k, v in self.snapshots.items() if k in keep}

    def pool(self) -> list[Path]:
        """The newest ``pool_size`` snapshots, oldest first, as last read."""
        if self._pool is None:
            self.refresh()
        return self._pool  # type: ignore[return-value]

    def _snapshot(self, path: Path) -> tuple[str, SnapshotPlayer]:
        label = path.name
        if label not in self.snapshots:
            player = SnapshotPlayer(load_policy(path), label, self.deterministic)
            if self.seated is not None:  # it reads what the learner reads (with or without the history)
                player.check_table(*self.seated)
            self.snapshots[label] = player
        return label, self.snapshots[label]

    # -- drawing ----------------------------------------------------------------------

    def draw(self, rng: np.random.Generator) -> tuple[str, Any]:
        """One member for one seat of one game: ``(label, player)``."""
        pool = self.pool() if self.self_play > 0 else []
        if pool and (not self.heuristics or rng.random() < self.self_play):
            path = pool[self._pick(rng, [p.name for p in pool])]
            if path.name not in self.snapshots and not path.exists():  # pruned since the last look
                self.refresh()
                pool = self._pool or [path]
                path = pool[-1]
            return self._snapshot(path)
        if not self.heuristics:
            raise ValueError(f"the self-play pool {self.pool_dir} holds no snapshot yet")
        members = self.heuristics
        kinds = {self.kinds[label] for label, _ in members}
        if self.population_share is not None and len(kinds) == 2:
            kind = "population" if rng.random() < self.population_share else "builtin"
            members = [m for m in members if self.kinds[m[0]] == kind]
        return members[self._pick(rng, [label for label, _ in members])]

    def _pick(self, rng: np.random.Generator, labels: list[str]) -> int:
        """An index into ``labels``: uniform, or weighted by PFSP."""
        if self.pfsp_power == 0 or len(labels) == 1:
            return int(rng.integers(len(labels)))
        weights = np.array([self.weight(label) for label in labels])
        cdf = np.cumsum(weights / weights.sum())
        return min(int(np.searchsorted(cdf, rng.random(), side="right")), len(labels) - 1)

    def win_share(self, label: str) -> float:
        """The learner's smoothed win share against member ``label`` (1/2 unseen)."""
        score, games = self.results.get(label, (0.0, 0.0))
        return (score + 1.0) / (games + 2.0)

    def weight(self, label: str) -> float:
        """PFSP's draw weight of a member: ``(1 - win share) ** pfsp_power``."""
        return max(1e-6, (1.0 - self.win_share(label)) ** self.pfsp_power)

    # -- results ----------------------------------------------------------------------

    def record(self, labels: list[str], score: float) -> None:
        """A finished game: the learner scored ``score`` (1 a win, 1/k a shared one, 0
        a loss) against the members ``labels`` at its table."""
        for label in labels:
            entry = self.results.setdefault(label, [0.0, 0.0])
            entry[0] += score
            entry[1] += 1.0

    def rate(self, labels: list[str | None], order: list[int]) -> None:
        """OpenSkill ratings from a finished game: ``labels`` per seat (``None``: the
        learner), ``order[p]`` the place seat ``p`` finished in (0 = first; ties share)."""
        if self._model is None:
            from openskill.models import PlackettLuce

            self._model = PlackettLuce()
        names = [LEARNER if x is None else x for x in labels]
        if len(set(names)) < len(names):  # one member in two seats: rate the game once per name
            firsts: dict[str, int] = {}
            for name, place in zip(names, order, strict=True):
                firsts[name] = min(place, firsts.get(name, place))
            names, order = list(firsts), list(firsts.values())
        if len(names) < 2:
            return
        teams = [[self.ratings.setdefault(n, self._model.rating(name=n))] for n in names]
        rated = self._model.rate(teams, ranks=[float(p) for p in order])
        for n, team in zip(names, rated, strict=True):
            self.ratings[n] = team[0]

    def table(self) -> list[dict[str, Any]]:
        """Every member seen so far: label, kind, learner's win share against it, games,
        draw weight and OpenSkill rating (mu, sigma, ordinal), strongest first."""
        rows = []
        for label in sorted(set(self.results) | set(self.ratings)):
            r = self.ratings.get(label)
            score, games = self.results.get(label, (0.0, 0.0))
            rows.append(
                {
                    "label": label,
                    "kind": "learner" if label == LEARNER else self.kinds.get(label, "snapshot"),
                    "games": int(games),
                    "learner_win_share": self.win_share(label) if games else None,
                    "weight": self.weight(label) if label != LEARNER else None,
                    "mu": r.mu if r is not None else None,
                    "sigma": r.sigma if r is not None else None,
                    "ordinal": r.ordinal() if r is not None else None,
                }
            )
        return sorted(rows, key=lambda row: -(row["ordinal"] if row["ordinal"] is not None else -1e9))


class LeagueSeat:
    """One opponent seat drawn anew each episode from a :class:`League`.

    Args (without ``league``, a league of its own is made from them):
        specs, pool_dir, self_play, pool_size, deterministic: see :class:`League`.
        league: the run's league, shared by every seat (its members are shared too).
    """

    def __init__(
        self,
        specs: list[str] | None = None,
        pool_dir: str | None = None,
        self_play: float = 0.0,
        pool_size: int = 5,
        deterministic: bool = True,
        league: League | None = None,
    ) -> None:
        self.league = league or League(list(specs or []), pool_dir, self_play, pool_size, deterministic)
        first = self.league.heuristics[0] if self.league.heuristics else (None, None)
        self.label, self.current = first
        self.previous: str | None = None  #: the member of the episode before this one

    def check_table(self, num_players: int, rules: Any) -> None:
        """Tell the league's built-in members the table (the zoo's ``ppo`` picks its
        model there; a model for another table is refused)."""
        check_seated([player for _, player in self.league.heuristics], num_players, rules)
        self.league.seated = (num_players, rules)

    def delegate(self) -> Any:
        """The player deciding for this seat until the next ``reset``."""
        return self.current

    @property
    def obs_encoding(self) -> str:
        return getattr(self.current, "obs_encoding", "flat")

    def reset(self, rng: np.random.Generator) -> None:
        self.previous = self.label
        self.label, self.current = self.league.draw(rng)
        reset = getattr(self.current, "reset", None)
        if callable(reset):
            reset(rng)

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)
