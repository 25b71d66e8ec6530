"""Builds notebooks/knock_timing.ipynb and notebooks/suit_switching.ipynb (run it, then
execute the notebooks to fill their outputs:
``jupyter nbconvert --to notebook --execute --inplace notebooks/<name>.ipynb``)."""

from pathlib import Path

import nbformat as nbf

HERE = Path(__file__).resolve().parent


def notebook(cells: list[tuple[str, str]], name: str) -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = [nbf.v4.new_markdown_cell(s) if kind == "md" else nbf.v4.new_code_cell(s) for kind, s in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbf.write(nb, HERE / name)


SETUP = """import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import agents
from thirtyone_env.research import aggregate
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.study import run_study

SMALL = os.environ.get("THIRTYONE_NOTEBOOK_SMALL") == "1"
WORKERS = min(2, os.cpu_count() or 1)
pd.set_option("display.float_format", "{:.3f}".format)
pd.set_option("display.width", 140)


def study(question, table, seat=0, decisions=1000, rollouts=8, seed=0, rules="standard"):
    \"\"\"One oracle study (README, Research) as a DataFrame.\"\"\"
    config = StudyConfig(question=question, table=tuple(table), seat=seat, rules=rules,
                         decisions=decisions, rollouts=rollouts, seed=seed, workers=WORKERS)
    return run_study(config, agents.from_spec)
"""

KNOCK = [
    (
        "md",
        """# When to knock

Every answer here comes from the **decision oracle** (`thirtyone_env.research`, README
*Research*): at a decision of the studied seat it plays *knock* and the player's own
move (its move without knocking, where it knocks) on copies of the true position,
the real players continuing to the end of the round, the stock shuffled afresh for each
of a few paired play-outs. The gain of knocking is measured in lives a round (positive:
knocking was worth it). Every figure has a 95% interval; break-even values resample whole
games (bootstrap).

1. **Break-even by own turn and position** at a 4-player table of experts, and the
   question of the README: *at which hand value should a player knock on its second turn
   from the second seat?*
2. **By table size, by lives and by opponents**, and the knock-gain surface.
3. **Who knocks too early or too late**: every built-in player and the shipped agent,
   each in a seat among experts.
4. **Reference numbers by enumeration**: P(dealt 31) and the mean best-suit value.

Set `THIRTYONE_NOTEBOOK_SMALL=1` to run it in seconds (the test suite does).""",
    ),
    ("code", SETUP + "\nDECISIONS = 200 if SMALL else 20_000"),
    ("md", "## 1. Break-even by own turn and position (4 players, experts)"),
    (
        "code",
        """experts = study("knock", ["expert"] * 4, seat=1, decisions=DECISIONS, seed=1)
table = aggregate.break_even(experts, ("turn", "position"))
print(table[table["turn"] <= 5].to_string(index=False))""",
    ),
    (
        "code",
        """def heatmap(table, title, max_turn=6):
    t = table[table["turn"] <= max_turn]
    grid = t.pivot(index="position", columns="turn", values="break_even")
    fig, ax = plt.subplots(figsize=(8, 3.6))
    im = ax.imshow(grid.to_numpy(dtype=float), cmap="viridis", aspect="auto")
    for r in t.itertuples():
        i, j = list(grid.index).index(r.position), list(grid.columns).index(r.turn)
        text = f"{r.break_even:.1f}\\n[{r.low:.1f}, {r.high:.1f}]" if np.isfinite(r.break_even) else r.verdict
        ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if np.isfinite(r.break_even) else "black")
    ax.set_xticks(range(len(grid.columns)), grid.columns)
    ax.set_yticks(range(len(grid.index)), grid.index)
    ax.set_xlabel("own turn")
    ax.set_ylabel("position (0 = first to play)")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="break-even hand value")
    plt.show()


heatmap(table, "knock break-even, 4 experts")
row = table[(table["turn"] == 2) & (table["position"] == 1)].iloc[0]
print(f"Second turn, second seat (position 1), 4 experts: knock from {row.break_even:.1f} "
      f"[{row.low:.1f}, {row.high:.1f}] ({row.decisions} decisions, {row.verdict})")""",
    ),
    (
        "code",
        """curve = aggregate.gain_by_value(experts[experts["turn"] <= 4], ("turn",), "knock")
fig, ax = plt.subplots(figsize=(8, 4))
for turn, g in curve.groupby("turn"):
    g = g[g["decisions"] >= 10]
    ax.plot(g["value"], g["gain"], marker=".", label=f"turn {turn}")
    ax.fill_between(g["value"], g["low"], g["high"], alpha=0.2)
ax.axhline(0, color="black", linewidth=0.8)
ax.set_xlabel("hand value")
ax.set_ylabel("gain of knocking (lives a round)")
ax.legend()
plt.show()""",
    ),
    (
        "md",
        """The gain curve rises with the hand value and crosses zero at the break-even. Later turns
need more: by then the others have improved their hands, and each of them still gets a
last turn after the knock.""",
    ),
    ("md", "## 2. By table size, lives and opponents; the knock-gain surface"),
    (
        "code",
        """sizes = []
for n in (2, 3, 4):
    df = experts if n == 4 else study("knock", ["expert"] * n, seat=1, decisions=DECISIONS // 2, seed=n)
    sizes.append(df.assign(table_size=n))
sizes = pd.concat(sizes)
by_size = aggregate.break_even(sizes[sizes["turn"] <= 4], ("table_size", "turn"))
print(by_size.pivot(index="table_size", columns="turn", values="break_even").round(1))
by_lives = aggregate.break_even(experts[experts["turn"] <= 3], ("lives", "turn"))
print(by_lives.to_string(index=False))""",
    ),
    (
        "code",
        """# the same expert in seat 1 against other opponents
against = [experts.assign(opponents="expert x3")]
for i, p in enumerate(("greedy", "blitz31")):
    df = study("knock", [p, "expert", p, p], seat=1, decisions=DECISIONS // 2, seed=10 + i)
    against.append(df.assign(opponents=f"{p} x3"))
against = pd.concat(against)
by_opponents = aggregate.break_even(against[against["turn"] <= 4], ("opponents", "turn"))
print(by_opponents.pivot(index="opponents", columns="turn", values="break_even").round(1))
print(by_opponents.to_string(index=False))""",
    ),
    (
        "code",
        """# the knock-gain surface: mean gain of knocking by hand value (rows) and own turn (columns)
surface = aggregate.knock_surface(experts[(experts["turn"] <= 5) & (experts["value"] >= 14)])
print(surface.round(2).to_string())""",
    ),
    (
        "md",
        """Fewer opponents, lower break-even: with one opponent a knock only has to beat one
hand. A player on its last life weighs a loss the same in lives a round, but a loss
there ends its game (the oracle's utility is lives, so read the last-life rows with
that in mind).""",
    ),
    ("md", "## 3. Who knocks too early, who too late"),
    (
        "code",
        """PLAYERS = ["random", "greedy", "blitz31", "expert", "ppo", "search"]
per_player = []
for i, p in enumerate(PLAYERS):
    n = DECISIONS // 4 if p != "search" else (10 if SMALL else 300)
    df = study("knock", [p, "expert", "expert", "expert"], seat=0, decisions=n,
               rollouts=8 if p != "search" else 4, seed=100 + i)
    per_player.append(df.assign(player=p))
per_player = pd.concat(per_player)
print(aggregate.choices(per_player, ("player",)).to_string(index=False))""",
    ),
    (
        "code",
        """timing = aggregate.knock_timing(per_player[per_player["turn"] <= 4], ("player", "turn"))
print(timing.to_string(index=False))
fig, ax = plt.subplots(figsize=(9, 4))
for k, (p, g) in enumerate(timing.groupby("player")):
    g = g[g["difference"].notna()]
    x = g["turn"] + (k - 2.5) * 0.07
    # a percentile interval can leave out its estimate: that side's bar then has length 0
    below = (g["difference"] - g["low"].fillna(g["difference"])).clip(lower=0)
    above = (g["high"].fillna(g["difference"]) - g["difference"]).clip(lower=0)
    ax.errorbar(x, g["difference"], yerr=[below, above], marker="o", capsize=3, linestyle="", label=p)
ax.axhline(0, color="black", linewidth=0.8)
ax.set_xlabel("own turn")
ax.set_ylabel("own knock threshold - break-even (hand value)")
ax.set_title("below 0: knocks too early; above 0: too late")
ax.legend(fontsize=8)
plt.show()""",
    ),
    (
        "md",
        """Reading it: `threshold` is the hand value from which the player knocks more often than
not, `break_even` the value from which knocking gains over *its own* way of waiting (the
oracle plays its move on), and the difference says whether it knocks too early (below
zero) or too late (above). The first table adds the mean gain of the knocks it makes
(`gain_taken`: positive, its knocks pay on average) and of knocking where it waited
(`gain_passed`: mostly clearly negative, as most waits are on poor hands). `random`
follows no threshold; its knocks lose on average.""",
    ),
    ("md", "## 4. Reference numbers by enumeration"),
    (
        "code",
        """from fractions import Fraction
from itertools import combinations

from thirtyone_env.game.cards import hand_value
from thirtyone_env.game.rules import Rules

found = {}
for deck, rules in (("52 cards", Rules()), ("32 cards", Rules(deck="piquet32"))):
    hands = list(combinations(rules.deck_cards, 3))
    values = [hand_value(h, rules) for h in hands]
    p31 = Fraction(sum(v == 31 for v in values), len(hands))
    mean = Fraction(sum(int(v) for v in values), len(hands))
    found[deck] = (p31, mean)
    print(f"{deck}: {len(hands):,} hands, P(dealt 31) = {p31}, mean best-suit value = {mean} = {float(mean):.3f}")
assert found == {"52 cards": (Fraction(6, 5525), Fraction(72311, 5525)), "32 cards": (Fraction(3, 620), Fraction(4857, 310))}""",
    ),
]

SWITCH = [
    (
        "md",
        """# When players switch suits, and what it costs

A **suit switch** is a draw turn after which none of the player's best suits is one it
held before (`thirtyone_env.harness.analysis`). Three views, each with 95% intervals:

1. **The oracle** (`thirtyone_env.research`, question `switch`): at every discard where
   the player could keep a best suit or abandon it, both are played out on copies of
   the true position with the real players continuing. Switch rates by turn, and what a
   switch is worth, *holding the hand value fixed* (the same position both ways; the
   turn comparison standardised to one mix of hand values).
2. **Played games**: turn records joined to the round's outcome on their ids (game,
   round, seat, player), lives lost with and without a switch within strata of the
   hand value: the README's question *do late suit switches cost lives, holding the
   hand value fixed?*
3. **The seed's outward signal**: a discard of another suit than the player's previous
   one. How well does it tell a real switch, per player (precision and recall)?

Set `THIRTYONE_NOTEBOOK_SMALL=1` to run it in seconds (the test suite does).""",
    ),
    (
        "code",
        SETUP.replace(
            "from thirtyone_env.research.config import StudyConfig\n",
            "from thirtyone_env.research.config import StudyConfig\nfrom thirtyone_env.research.records import table_records\n",
        )
        + """
DECISIONS = 200 if SMALL else 8_000
GAMES = 20 if SMALL else 1_500
PLAYERS = ["greedy", "blitz31", "expert", "ppo"]""",
    ),
    ("md", "## 1. The oracle: switch rates and worth by turn"),
    (
        "code",
        """oracle = []
for i, p in enumerate(PLAYERS):
    df = study("switch", [p, "expert", "expert", "expert"], seat=0, decisions=DECISIONS, seed=200 + i)
    oracle.append(df.assign(player=p))
oracle = pd.concat(oracle)
by_turn = aggregate.switch_by_turn(oracle[oracle["turn"] <= 6], ("player", "turn"))
print(by_turn.to_string(index=False))""",
    ),
    (
        "code",
        """fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4))
for p, g in by_turn.groupby("player"):
    a1.errorbar(g["turn"], g["switch_rate"], yerr=[g["switch_rate"] - g["rate_low"], g["rate_high"] - g["switch_rate"]],
                marker="o", capsize=3, label=p)
    a2.errorbar(g["turn"], g["made_gain"], yerr=[g["made_gain"] - g["made_low"], g["made_high"] - g["made_gain"]],
                marker="o", capsize=3, label=p)
a1.set_ylabel("share of such discards that switch")
a2.set_ylabel("gain of its switches over staying (lives a round)")
a2.axhline(0, color="black", linewidth=0.8)
for ax in (a1, a2):
    ax.set_xlabel("own turn")
a1.legend()
plt.show()""",
    ),
    (
        "md",
        """`made_gain` is what the switches the player made were worth over staying (the same
position both ways, so the hand value is held fixed exactly; turns are compared at one
mix of hand values); `passed_gain` what the best switch on offer would have been worth
where it stayed. A player that switches well shows `made_gain` at or above zero and
`passed_gain` below it.""",
    ),
    ("md", "## 2. Played games: do late switches cost lives, holding the hand value fixed?"),
    (
        "code",
        """turns, knocks, rounds = table_records(["expert", "greedy", "blitz31", "ppo"], GAMES, agents.from_spec, seed=7)
draws = turns[turns["kind"].isin(["draw_stock", "take_discard"])]
joined = draws.merge(rounds, on=["game", "round_no", "seat", "player"], validate="many_to_one")
joined["late"] = np.where(joined["turn"] >= 4, "turn 4+", "turns 1-3")
effect = aggregate.stratified_difference(joined, "lost", "switched", "value_after", by=("late",))
print(effect.to_string(index=False))
print(aggregate.stratified_difference(joined, "lost", "switched", "value_after", by=("player", "late")).to_string(index=False))""",
    ),
    (
        "md",
        """Within each hand value reached by the turn (`value_after`), rounds in which the player
switched are compared with rounds in which it did not. This is observational: a player
switches for reasons (a poor suit, a card it saw), so the oracle's paired comparison in
section 1 is the causal one; here the question is what switching players *end up* with.
(The rows are turns; the turns of one round share its outcome, so these intervals are
somewhat narrower than they would be with rounds as the unit.)""",
    ),
    ("md", "## 3. The outward signal: a discard of another suit"),
    (
        "code",
        """signal = aggregate.discard_signal(turns)
print(signal.to_string(index=False))""",
    ),
    (
        "md",
        """Precision: of the turns where a player discarded another suit than last time, the share
that were real switches. Recall: of the real switches, the share the signal shows. A
player who keeps discarding its off-suit cards shows the signal often without switching.""",
    ),
]

if __name__ == "__main__":
    notebook(KNOCK, "knock_timing.ipynb")
    notebook(SWITCH, "suit_switching.ipynb")
