"""Builds notebooks/training.ipynb (run it, then execute the notebook to fill outputs)."""

from pathlib import Path

import nbformat as nbf

cells = []


def md(s):
    cells.append(nbf.v4.new_markdown_cell(s))


def code(s):
    cells.append(nbf.v4.new_code_cell(s))


md("""# Training a player: learning curves and how it plays

This notebook reads the folder of one PPO run and shows

1. **learning curves**: the periodic ladder evaluation (`evaluations.csv`: win rate and
   lives lost per round against copies of each heuristic, with 95% intervals), the
   training log (`logs/progress.csv`: mean episode reward) and, for a run with
   `--gauntlet-every`, the small gauntlet (`gauntlet.csv`: wins and lives a round against
   `expert` in the same seat, per table);
2. **how the agent plays** next to the heuristics: its knock-timing profile (hand value
   and own turn at the knock, knock success) and its suit switches by turn, from a
   tournament with duplicate deals.

The table (seats and rules preset) is the run's own, read from its `config.json`: any
run works, whatever its table size and rules. Set `THIRTYONE_RUN` to a run folder: a recipe's PPO step
(`runs/<recipe run>/steps/<k>_ppo`, the default: the newest such folder) or a run of
`python -m training.run_cli`; without
one, and with `THIRTYONE_NOTEBOOK_SMALL=1` (the test suite), it trains a tiny run first.""")

code("""import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import agents
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament

SMALL = os.environ.get("THIRTYONE_NOTEBOOK_SMALL") == "1"
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
# recipes' PPO steps, newest last
PPO_RUNS = sorted((ROOT / "runs").glob("*/steps/*_ppo*/evaluations.csv"), key=lambda p: p.stat().st_mtime)
RUN = Path(os.environ.get("THIRTYONE_RUN", PPO_RUNS[-1].parent if PPO_RUNS else ROOT / "runs" / "ppo"))
GAMES = 24 if SMALL else 2_000  # tournament games for the profiles
if not (RUN / "config.json").exists():
    if not SMALL:
        raise FileNotFoundError(f"no PPO run folder at {RUN}: set THIRTYONE_RUN to one")
    RUN = Path(os.environ.get("TMPDIR", "/tmp")) / "thirtyone-notebook-runs" / f"tiny-{os.getpid()}"
    tiny = (
        "--total-timesteps 512 --n-envs 2 --vec-env dummy --n-steps 128 --batch-size 128 "
        "--net-arch 32,32 --eval-every 256 --eval-games 8 --opponents greedy "
        "--eval-opponents greedy --no-progress --report-games 0"
    )
    tiny = shlex.split(tiny)
    command = [sys.executable, "-m", "training.run_cli", "--run-name", RUN.name, "--runs-dir", str(RUN.parent)]
    subprocess.run([*command, *tiny], check=True, cwd=ROOT)
CONFIG = json.loads((RUN / "config.json").read_text())
PLAYERS, RULES = CONFIG["players"], CONFIG["rules"]  # the run's table: seats and rules preset
print(f"run folder: {RUN} ({PLAYERS} players, rules {RULES!r})")""")

md("## 1. Learning curves")

code("""evals = pd.read_csv(RUN / "evaluations.csv")
# a resumed run keeps its earlier log parts as progress_to_<steps>.csv
parts = sorted((RUN / "logs").glob("progress_to_*.csv")) + [RUN / "logs" / "progress.csv"]
progress = pd.concat([pd.read_csv(p) for p in parts if p.stat().st_size], ignore_index=True)
fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4))
for opponent, rows in evals.groupby("opponent"):
    x = rows["timesteps"]
    a1.plot(x, rows["win_rate"], marker=".", label=f"vs {opponent}s")
    a1.fill_between(x, rows["win_low"], rows["win_high"], alpha=0.2)
    a2.plot(x, rows["lives_lost_per_round"], marker=".", label=f"agent vs {opponent}s")
    a2.fill_between(x, rows["lives_low"], rows["lives_high"], alpha=0.2)
    a2.plot(x, rows["opponent_lives_lost_per_round"], linestyle="--", label=f"the {opponent}s")
a1.axhline(1 / PLAYERS, color="grey", linewidth=0.8, linestyle=":", label=f"fair share ({PLAYERS} players)")
a1.set(title="games won", xlabel="timesteps")
a2.set(title="lives lost per round", xlabel="timesteps")
a3.plot(progress["time/total_timesteps"], progress["rollout/ep_rew_mean"])
a3.set(title="mean episode reward (training)", xlabel="timesteps")
for ax in (a1, a2):
    ax.legend(fontsize=8)
fig.tight_layout()
evals.tail(len(evals["opponent"].unique()))""")

md("""### The gauntlet during training

A run with `--gauntlet-every K` plays the small gauntlet every K steps (its tables but
the `search` ones, the same seeded deals each time): the paired difference against
`expert` in the same seat, per table, drawn by the run as `learning_curves.png`.""")

code("""from IPython.display import Image, display

from training.curves import CURVES_PNG, read_curves

curves = pd.DataFrame(read_curves(RUN))
if curves.empty:
    print("this run played no gauntlet (python -m training.run_cli --gauntlet-every K draws these curves)")
else:
    display(Image(filename=str(RUN / CURVES_PNG)))
    display(curves[curves["timesteps"] == curves["timesteps"].max()].set_index("table").round(3))""")

md("""## 2. How the agent plays, next to the heuristics

A tournament at the run's table (its seats and rules): the run's best model (its final
one for a run without evaluations) against `greedy`, `blitz31` and `expert` in turn for
the other seats, every player in every seat equally often on the same deals.""")

code("""model = RUN / "best_model.zip"
if not model.exists():
    model = RUN / "final_model.zip"
    print("no best_model.zip (a run without evaluations): playing", model.name)
HEURISTICS = ["greedy", "blitz31", "expert"]
opponents = [HEURISTICS[i % len(HEURISTICS)] for i in range(PLAYERS - 1)]
config = TournamentConfig((f"ppo:path={model}", *opponents), games=GAMES, rules=RULES, seed=11)
games = run_tournament(config, agents.from_spec)
# one name per player, numbered where a heuristic sits more than once
names = ["agent"] + [
    o if opponents.count(o) == 1 else f"{o} {opponents[: i + 1].count(o)}" for i, o in enumerate(opponents)
]
rows = [r for g in games for r in g.rows]
wins = np.sum([g.wins for g in games], axis=0) / len(games)
table = []
for i, p in enumerate(names):
    mine = [r for r in rows if r[4] == i]
    knocks = [r for r in mine if r[12]]
    table.append(
        {
            "player": p,
            "win rate": wins[i],
            "lives lost/round": np.mean([r[7] for r in mine]),
            "knocks/round": len(knocks) / len(mine),
            "value at knock": np.mean([r[13] for r in knocks]) if knocks else np.nan,
            "turn at knock": np.mean([r[14] for r in knocks]) if knocks else np.nan,
            "knock success": np.mean([r[15] for r in knocks]) if knocks else np.nan,
            "switches/round": np.mean([r[17] for r in mine]),
        }
    )
pd.DataFrame(table).set_index("player").round(3)""")

code("""fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4))
bins = np.arange(0, 33) - 0.5
for i, p in enumerate(names):
    kv = [r[13] for r in rows if r[4] == i and r[12]]
    kt = np.array([r[14] for r in rows if r[4] == i and r[12]])
    style = {"linewidth": 2.4} if p == "agent" else {"linewidth": 1.2}
    if kv:
        a1.hist(kv, bins=bins, histtype="step", density=True, label=p, **style)
        a2.plot(range(1, 11), [(kt == t).mean() for t in range(1, 11)], marker=".", label=p, **style)
a1.set(title="hand value at the knock", xlabel="value", ylabel="share of knocks")
a2.set(title="own turn of the knock", xlabel="turn", ylabel="share of knocks")
draws = np.sum([g.draws_by_turn for g in games], axis=0)
switches = np.sum([g.switches_by_turn for g in games], axis=0)
for i, p in enumerate(names):
    keep = draws[i][:12] >= 10
    turns = np.arange(1, 13)
    a3.plot(turns[keep], switches[i][:12][keep] / draws[i][:12][keep], marker=".", label=p)
a3.set(title="suit switches per draw turn", xlabel="own turn")
for ax in (a1, a2, a3):
    ax.legend(fontsize=8)
fig.tight_layout()""")

md("""Reading it: a learner that has only imitated `expert` knocks like it; PPO then moves
the knock (value and turn) where it pays against this table. A fresh agent that has
learned little knocks early and low and loses many lives; its switch profile looks like
`random`'s at first and settles towards the heuristics' as it learns to keep a suit.""")

nb = nbf.v4.new_notebook()
nb.cells = cells
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, Path(__file__).with_name("training.ipynb"))
