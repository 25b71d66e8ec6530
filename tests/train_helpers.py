"""What the train.py tests share: the repository root and the arguments of a tiny run
(seconds on one core: two in-process envs, small rollouts and network, evaluations
and checkpoints at 256 and 512 steps) and of a tiny imitation warm start."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TINY = [
    "--total-timesteps", "512", "--n-envs", "2", "--vec-env", "dummy", "--n-steps", "128",
    "--batch-size", "128", "--n-epochs", "1", "--net-arch", "32,32", "--eval-every", "256",
    "--eval-games", "8", "--checkpoint-every", "256", "--opponents", "greedy,random",
    "--eval-opponents", "greedy", "--no-progress", "--report-games", "0",
]  # fmt: skip
WARM = ["--imitate", "greedy", "--imitate-decisions", "300", "--imitate-epochs", "1"]


def run_train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``train.py`` with ``args`` from the repository root, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "training.run_cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
