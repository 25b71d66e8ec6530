"""Training a Thirty-One player with MaskablePPO (the engine of ``train.py``), one
module per job:

- :mod:`~agents.training.config`: :class:`TrainConfig`, every option of a run;
- :mod:`~agents.training.seeding`: the one seeding scheme every random stream follows;
- :mod:`~agents.training.cli`: the command line (``train.py``'s ``main``);
- :mod:`~agents.training.run`: a run from its checks to its final model;
- :mod:`~agents.training.run_folder`: the run folder (config, checkpoints, resume);
- :mod:`~agents.training.envs`: the env factories and the vector env;
- :mod:`~agents.training.models`: building, saving and loading the learner's model;
- :mod:`~agents.training.callback`: the SB3 callback (checkpoints, snapshots, evaluations);
- :mod:`~agents.training.evaluations`: the ladder evaluation and ``evaluations.csv``;
- :mod:`~agents.training.collection`: the warm start's demonstrations (jobs, files);
- :mod:`~agents.training.warm_start`: the imitation warm start of a run.

Imports run one way, each layer importing only those below it: cli; run; warm_start,
callback; collection, run_folder; envs, models, evaluations; config; seeding. torch and
stable-baselines3 are imported only once training starts (``--help`` and the checks of
a config need neither).
"""

from agents.training.config import TrainConfig
from agents.training.seeding import RunSeeds

__all__ = ["RunSeeds", "TrainConfig"]
