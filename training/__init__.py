"""Training a Thirty-One player (the engine of ``train.py``): a package beside
:mod:`agents`, built on it and on :mod:`thirtyone_env` and never imported by them, one
module per job:

- :mod:`~training.config`: :class:`TrainConfig`, every option of a run;
- :mod:`~training.seeding`: the one seeding scheme every random stream follows;
- :mod:`~training.cli`: the command line (``train.py``'s ``main``);
- :mod:`~training.run`: a run from its checks to its final model;
- :mod:`~training.run_folder`: the run folder (config, checkpoints, resume);
- :mod:`~training.envs`: the env factories and the vector env;
- :mod:`~training.models`: building, saving and loading the learner's model;
- :mod:`~training.callback`: the SB3 callback (checkpoints, snapshots, evaluations);
- :mod:`~training.evaluations`: the ladder evaluation and ``evaluations.csv``;
- :mod:`~training.collection`: the warm start's demonstrations (jobs, files);
- :mod:`~training.warm_start`: the imitation warm start of a run;
- :mod:`~training.imitation`: demonstrations from a teacher, measured knocks, the fit;
- :mod:`~training.measured_moves`: policy improvement from measured moves;
- :mod:`~training.improvement`, :mod:`~training.heads_up`: the steps that use them;
- :mod:`~training.league`: the league of opponents and self-play snapshots;
- :mod:`~training.sweep`: sweeps of runs as Ray Tune trials.

Imports run one way, each layer importing only those below it: cli; run; warm_start,
callback; collection, run_folder; envs, models, evaluations; config; seeding. torch and
stable-baselines3 are imported only once training starts (``--help`` and the checks of
a config need neither).
"""

from training.config import TrainConfig
from training.seeding import RunSeeds

__all__ = ["RunSeeds", "TrainConfig"]
