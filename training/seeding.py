"""One seeding scheme for a training run: every random stream of a run derives from the
run's ``seed`` (``TrainConfig.seed``) by the fixed rules below, so a run folder's
``config.json`` reproduces the run, and the same seed gives the same run on any machine
and any worker count.

The rules are those the shipped model was trained under (README, model card): changing
one changes what a seed trains, so they stay as they are.

- the learner (``learner``): SB3 seeds Python's ``random``, numpy's legacy generator and
  torch with it (the initial weights, PPO's minibatch order) and so does the imitation
  warm start's fit (its minibatch order);
- the vector env (``envs``): SB3's ``VecEnv.seed`` seeds slot ``i`` with ``envs + i`` (a
  compiled batched env derives its games from it the same way);
- the warm start's collection (``collection``): job ``j`` of ``n`` fixed-size jobs takes
  child ``j`` of ``numpy.random.SeedSequence(seed).spawn(n)`` (its first 32-bit word),
  so the decisions do not depend on how many workers collect them;
- the periodic evaluation (``evaluation``): the table against the ``k``-th evaluation
  opponent is a tournament seeded ``seed + 1000 + k`` (its deals derive from that seed
  through the harness's own ``SeedSequence`` scheme), the same tables at every
  evaluation, so the curve compares the learner with itself on the same deals;
- the league's population (``population``): the members of ``--league-population`` are
  drawn from the training ranges with seed ``seed + 2000``;
- the learning-curve gauntlet (``gauntlet``): seeded ``seed + 3000`` at every point of
  the curve (the same deals each time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The largest run seed: the seeds numpy's legacy generator (which SB3 seeds) takes.
MAX_SEED = 2**32 - 1

#: Where the evaluation tables' seeds start above the run's seed.
EVALUATION_OFFSET = 1000
#: The league population's and the learning-curve gauntlet's seeds above the run's seed.
POPULATION_OFFSET, GAUNTLET_OFFSET = 2000, 3000


@dataclass(frozen=True)
class RunSeeds:
    """The seeds of every random stream of a run with seed ``seed``."""

    seed: int

    @property
    def learner(self) -> int:
        """SB3's seed for the learner (weights, minibatches) and the warm start's fit."""
        return self.seed

    @property
    def envs(self) -> int:
        """The vector env's seed (slot ``i`` plays from ``envs + i``)."""
        return self.seed

    def collection(self, jobs: int) -> list[int]:
        """One seed per collection job: the children of ``SeedSequence(seed)``."""
        return [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(self.seed).spawn(jobs)]

    def evaluation(self, table: int) -> int:
        """The tournament seed of the ``table``-th evaluation opponent."""
        return self.seed + EVALUATION_OFFSET + table

    @property
    def population(self) -> int:
        """The seed the league's population members are drawn with."""
        return self.seed + POPULATION_OFFSET

    @property
    def gauntlet(self) -> int:
        """The learning-curve gauntlet's seed (the same deals at every point)."""
        return self.seed + GAUNTLET_OFFSET
