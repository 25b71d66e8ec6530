"""Train a Thirty-One player with MaskablePPO, against heuristics and itself.

    python train.py --run-name mine --total-timesteps 2000000 --opponents expert,greedy
    python train.py --resume runs/mine                 # go on from the last checkpoint
    python train.py --resume runs/mine --total-timesteps 4000000   # ... and further
    (on resume only --total-timesteps and --time-limit may differ from the run's config)

Every option is a field of :class:`training.TrainConfig` (``--help`` lists them);
the training code is the package :mod:`training`, this script its command line.
A run writes ``runs/<name>/``: ``config.json``, ``versions.json``, ``logs/`` (TensorBoard
and ``progress.csv``; a resumed run keeps the earlier part as ``progress_to_<steps>.csv``,
never over an earlier one), ``evaluations.csv`` (the periodic ladder evaluation),
``checkpoints/`` (``ckpt_<steps>.zip``), ``pool/`` (self-play snapshots),
``demonstrations.npz`` (the imitation warm start's decisions), ``best_model.zip`` (best
evaluation so far) and ``final_model.zip``. Every file is written atomically with the
user's umask. Evaluation rows later than the checkpoint a run resumes from (a crash)
are set aside in ``evaluations_set_aside.csv`` with the best model they chose.

Every option is checked before the run folder is created; the folder is locked for
the whole run (a second train.py on it is refused). Ctrl-C (or SIGTERM) saves a
checkpoint before exiting, or during the warm start the decisions collected so far
(``--resume`` goes on from them); a fresh start that fails before saving anything
removes its folder. Bad input exits with code 2 and a message that names the problem.
"""

import os
import sys

# numpy's BLAS (the frozen opponents' batched forward passes) on one thread unless told
# otherwise, before numpy loads: its thread per core waits on the learner's torch threads
# (about 5x slower against frozen networks on 2 busy cores)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from thirtyone_env.harness.interrupts import quiet_interrupts  # noqa: E402

quiet_interrupts("train.py")  # a Ctrl-C while torch loads: one line, not a traceback
from training.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
