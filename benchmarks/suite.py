"""The benchmark suite: this project's engine and envs next to the peers, one table.

Usage: ``python benchmarks/suite.py [--seconds 10] [--peers] [--cases ...]``
(``make bench``; ``make bench PEERS=1`` adds the peers, ``BENCH_SECONDS=3`` shortens
each case). Each case of
``benchmarks/cases.py`` runs for a fixed time in its own process. ``--peers``
creates ``.venv-peers`` on first use (RLCard, OpenSpiel, PettingZoo classic; kept apart
from the project's venv) and runs the peer cases there. Prints the table, with each
environment's speed as a multiple of every peer's, and writes
``benchmarks/results/<time>.json`` (figures and the machine) and ``<time>.png`` (bars,
log scale) atomically. Training against three experts and three frozen networks
is also given as a share of the run against three greedy players (the ``ratios``).
"""

from __future__ import annotations

import io
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from thirtyone_env.harness.command import CommandParser, seconds_arg
from thirtyone_env.harness.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
OURS = (
    "engine",
    "single_env",
    "single_env_python",
    "batched_env",
    "batched_env_expert",
    "harness",
    "search_table",
    "search_table_python",
    "knock_playouts",
    "knock_playouts_python",
    "train_single",
    "train_batched",
    "train_batched_expert",
    "train_batched_frozen",
)
#: Training against strong opponents as a share of the same run against greedy ones
#: (the speed targets): name -> (case, the greedy case, target).
RATIOS = {
    "expert/greedy training": ("train_batched_expert", "train_batched", 0.40),
    "frozen/greedy training": ("train_batched_frozen", "train_batched", 0.50),
}
PEERS = ("blackjack", "rlcard_gin", "pettingzoo_gin", "openspiel_gin")
ENV_CASES = (
    "single_env",
    "single_env_python",
    "batched_env",
    "blackjack",
    "rlcard_gin",
    "pettingzoo_gin",
    "openspiel_gin",
)
#: PettingZoo dropped gin_rummy after 1.24, so the peers pin the last release with it.
PEER_PACKAGES = ("rlcard", "open_spiel", "pettingzoo[classic]==1.24.3", "gymnasium", "numpy")
PEERS_VENV = ROOT / ".venv-peers"


def peers_python() -> Path:
    """The peers' interpreter, creating their venv on first use."""
    py = PEERS_VENV / "bin" / "python"
    if not py.exists():
        print(f"installing the peers into {PEERS_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", *PEER_PACKAGES], check=True)
    return py


#: Every case runs on one core: numpy's BLAS too (unless the caller says otherwise).
#: With its default of a thread per core, a frozen network's forward pass in the env
#: waits on a BLAS thread the learner's process competes with (training against
#: three frozen networks: 1,460 steps/s against 7,070 with one BLAS thread on 2 busy cores).
ONE_CORE = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_case(python: Path | str, case: str, seconds: float) -> dict:
    cmd = [str(python), str(ROOT / "benchmarks" / "cases.py"), case, "--seconds", str(seconds)]
    env = {**ONE_CORE, **os.environ}
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=seconds * 10 + 300)
    if out.returncode != 0:
        return {"case": case, "error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }


def ratios(results: dict[str, dict]) -> dict[str, float]:
    """The :data:`RATIOS` whose two cases both ran in this run."""
    return {
        name: results[case]["rate"] / results[base]["rate"]
        for name, (case, base, _) in RATIOS.items()
        if "rate" in results.get(case, {}) and "rate" in results.get(base, {})
    }


def table(results: dict[str, dict]) -> str:
    peers = [p for p in PEERS if "rate" in results.get(p, {})]
    head = f"{'case':<22}{'rate':>14}  {'unit':<12}" + "".join(f"{'x ' + p:>18}" for p in peers)
    lines = [head, "-" * len(head)]
    for case, r in results.items():
        if "rate" not in r:
            lines.append(f"{case:<22}{'-':>14}  {r.get('error', '')}")
            continue
        row = f"{case:<22}{r['rate']:>14,.0f}  {r['unit']:<12}"
        if case in ENV_CASES:
            row += "".join(f"{r['rate'] / results[p]['rate']:>18.2f}" for p in peers)
        lines.append(row)
    shares = ratios(results)
    if shares:
        lines.append("")
        lines.append(
            ", ".join(f"{name}: {v:.2f} (target {RATIOS[name][2]:.2f})" for name, v in shares.items())
        )
    return "\n".join(lines)


def plot(results: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [c for c in ENV_CASES if "rate" in results.get(c, {})]
    rates = [results[c]["rate"] for c in names]
    colors = ["tab:blue" if c in OURS else "tab:gray" for c in names]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh(names, rates, color=colors)
    ax.set_xscale("log")
    ax.set_xlabel("environment steps per second, one core (log scale)")
    ax.set_title("thirtyone (blue) and peers (gray): random legal play")
    for y, r in enumerate(rates):
        ax.text(r, y, f" {r:,.0f}", va="center", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def main() -> None:
    parser = CommandParser(prog="benchmarks/suite.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=seconds_arg, default=10.0, help="seconds a case (default 10)")
    parser.add_argument("--peers", action="store_true", help="also run the peers (installs them once)")
    parser.add_argument("--cases", nargs="+", default=None, help=f"subset of {[*OURS, *PEERS]}")
    args = parser.parse_args()
    cases = args.cases or [*OURS, *(PEERS if args.peers else ())]
    unknown = [c for c in cases if c not in (*OURS, *PEERS)]
    if unknown:
        parser.error(f"unknown case(s) {unknown}; cases are {[*OURS, *PEERS]}")
    py_peers = peers_python() if any(c in PEERS and c != "blackjack" for c in cases) else None
    results: dict[str, dict] = {}
    for case in cases:
        python = py_peers if case in PEERS and case != "blackjack" else sys.executable
        print(f"{case} ({args.seconds:g} s) ...", flush=True)
        results[case] = run_case(python, case, args.seconds)
    print()
    print(table(results))
    out_dir = ROOT / "benchmarks" / "results"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    while (out_dir / f"{stamp}.json").exists():  # two runs in one second keep both
        stamp += "-1"
    record = {"machine": machine(), "seconds": args.seconds, "results": results, "ratios": ratios(results)}
    path = atomic_write(out_dir / f"{stamp}.json", json.dumps(record, indent=2))
    plot(results, out_dir / f"{stamp}.png")
    print(f"\nresults: {path}\nplot: {out_dir / f'{stamp}.png'}")


if __name__ == "__main__":
    main()
