"""A player's strength card: how it fares, how beatable it is, and how well it decides.

One command (``evaluate.py --card SPEC``) measures four things and writes them as
``card.md``, ``card.png`` and ``card.json``:

1. **The gauntlet** (:mod:`agents.gauntlet`): its margin over the expert in its seat at
   every gauntlet table, with the luck of the cards taken out where the rules allow.
2. **The exploiter** (:mod:`training.exploit`): a best response trained against copies
   of it, and that response's margin over it in its seat, with the training budget: a
   lower bound on how exploitable it is.
3. **Decision regret** (:mod:`thirtyone_env.research`): at a table of experts, its
   mean loss a decision against the oracle's best option at knock, switch and take
   decisions, by own turn.
4. **The rating**: its OpenSkill ordinal at a reference table (it, expert, greedy and
   blitz31, seats rotated on duplicate deals).

Every part is kept in the card's folder as it finishes (``parts/``), so an interrupted
card goes on where it stopped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import agents
from agents import gauntlet as gl
from agents import portable
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.evaluation import TournamentConfig, ratings, run_tournament
from thirtyone_env.harness.files import atomic_write, json_ready, json_text, json_value
from thirtyone_env.harness.progress import counting

#: The reference table of the rating: the player first, then these (as many as fit).
REFERENCE = ("expert", "greedy", "blitz31", "expert", "greedy")
QUESTIONS = ("knock", "switch", "take")
#: Fewer decisions of a question at a turn than this: the card gives no interval there.
FEW = 10
PARTS = "parts"
#: Each part's fields (besides its ``seconds``) and their JSON types, checked when kept.
PART_KEYS: dict[str, dict[str, Any]] = {
    "gauntlet": {"rows": list},
    "regret": {"questions": dict, "table": list},
    "rating": {"table": list, "games": int, "rating": dict, "board": list},
    "exploit": {"config": dict, "margin": dict, "games": int, "curve": list, "training_s": (int, float)},
}


@dataclass(frozen=True)
class CardConfig:
    """What a card measures, and how much."""

    spec: str = field(metadata={"help": "the player of the card"})
    seats: int = field(default=4, metadata={"help": "seats at every table of the card"})
    rules: str = field(default="standard", metadata={"help": "a rules preset or house rules"})
    games: int = field(
        default=400,
        metadata={
            "help": "games a gauntlet table; the rating plays ten times as many, the exploiter's "
            "comparison twice as many (at least 1,000), both a tenth at a chips table's long games"
        },
    )
    decisions: int = field(default=400, metadata={"help": "decisions measured a regret question"})
    rollouts: int = field(default=16, metadata={"help": "play-outs an option of a regret decision"})
    time_limit: float = field(default=1800.0, metadata={"help": "seconds of the exploiter's training"})
    seed: int = field(default=0, metadata={"help": "the seed of every part"})
    workers: int = field(default=1, metadata={"help": "processes"})

    def __post_init__(self) -> None:
        for name in ("games", "decisions", "rollouts", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.rollouts < 2:
            raise ValueError("rollouts must be at least 2: a decision's regret is picked on half of them")

    @property
    def questions(self) -> tuple[str, ...]:
        """The regret questions these rules ask (switch and take need a stock game)."""
        stock = Rules.preset(self.rules).table == "stock"
        return tuple(q for q in QUESTIONS if stock or q == "knock")

    @property
    def reference(self) -> tuple[str, ...]:
        return (self.spec, *REFERENCE[: self.seats - 1])


def _games(config: CardConfig, games: int) -> int:
    """``games`` of a game with lives, fewer where a game runs longer (a tenth at
    banking's 100 rounds), as the recipes' reports do: about the same rounds."""
    from training.recipe import longer_games

    return max(config.seats, games // longer_games(config.rules))


def exploit_config(config: CardConfig) -> Any:
    from training.exploit import ExploitConfig

    return ExploitConfig(config.spec, config.seats, config.rules, config.time_limit, _games(config, max(1000, 2 * config.games)),
                         config.seed, config.workers)  # fmt: skip


def check(config: CardConfig) -> None:
    """Everything checked before the first game: the player and every table of the card
    (``ValueError`` naming the problem)."""
    from training.exploit import check as check_exploit

    rules = Rules.preset(config.rules)
    rules.check_num_players(config.seats)
    gl.check_gauntlet(config.spec, config.seats, config.rules, config.games, config.seed)
    agents.check_at_table(config.reference, config.seats, rules)
    check_exploit(exploit_config(config))
    _study(config, config.questions[0])  # the study's own checks


def _study(config: CardConfig, question: str) -> Any:
    from thirtyone_env.research.config import StudyConfig

    table = (config.spec, *(["expert"] * (config.seats - 1)))
    return StudyConfig(question, table, 0, config.rules, config.decisions, config.rollouts, "lives", config.seed,
                       config.workers)  # fmt: skip


def make(
    config: CardConfig, out: Path, say: Callable[[str], None] = print, progress: bool = True
) -> dict[str, Any]:
    """Measure every part not yet kept in ``out/parts`` and return the card's data."""
    parts = out / PARTS
    parts.mkdir(parents=True, exist_ok=True)
    card: dict[str, Any] = {"config": {k: getattr(config, k) for k in config.__dataclass_fields__}}
    kept = {
        name: read_part(parts / f"{name}.json", name)
        for name in PART_KEYS
        if (parts / f"{name}.json").exists()
    }
    for name, measure in (
        ("gauntlet", _gauntlet),
        ("regret", _regret),
        ("rating", _rating),
        ("exploit", _exploit),
    ):
        path = parts / f"{name}.json"
        if name in kept:
            card[name] = kept[name]
            say(f"card: {name} kept from an earlier start")
            continue
        say(f"card: {name}")
        start = time.perf_counter()
        part = measure(config, out, progress)
        part = json_ready({**part, "seconds": time.perf_counter() - start})
        atomic_write(path, json_text(part))
        card[name] = part
    card["seconds"] = sum(card[p]["seconds"] for p in ("gauntlet", "regret", "rating", "exploit"))
    return card


def read_part(path: Path, name: str) -> dict[str, Any]:
    """A part kept by an earlier start, checked before anything is measured:
    ``ValueError`` naming the file when it is not a part this program wrote."""
    try:
        part = json_value(path.read_bytes())
        if not isinstance(part, dict):
            raise ValueError("it is not a JSON object")
        seconds = part.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < math.inf:
            raise ValueError(f"its 'seconds' is {seconds!r}")
        for key, kind in PART_KEYS[name].items():
            if not isinstance(part.get(key), kind) or isinstance(part.get(key), bool):
                raise ValueError(
                    f"its {key!r} is not {kind.__name__ if isinstance(kind, type) else 'a number'}"
                )
    except (OSError, ValueError) as e:
        raise ValueError(
            f"{path} is not a card part this program measured ({e}): remove it to measure the {name} again"
        ) from None
    return part


def _gauntlet(config: CardConfig, out: Path, progress: bool) -> dict[str, Any]:
    total = gl.planned_games(config.seats, config.games)
    with counting("gauntlet", "games", total, progress) as advance:
        rows = gl.run_gauntlet(
            config.spec,
            config.seats,
            config.rules,
            config.games,
            config.seed,
            config.workers,
            progress=advance,
        )
    return {"rows": rows}


def _regret(config: CardConfig, out: Path, progress: bool) -> dict[str, Any]:
    from thirtyone_env.research import aggregate
    from thirtyone_env.research.study import run_study

    by_question = {}
    for question in config.questions:
        with counting(f"regret: {question}", "decisions", config.decisions, progress) as advance:
            df = run_study(_study(config, question), portable.reader([config.spec]), progress=advance)
        pooled = aggregate.regret(df)
        by_question[question] = {
            "pooled": pooled.to_dict(orient="records")[0] if len(pooled) else {},
            "by_turn": aggregate.regret(df, ("turn",)).to_dict(orient="records"),
        }
    return {"questions": by_question, "table": list(_study(config, "knock").table)}


def _rating(config: CardConfig, out: Path, progress: bool) -> dict[str, Any]:
    tournament = TournamentConfig(
        config.reference, _games(config, 10 * config.games), config.rules, config.seed, config.workers
    )
    with counting("rating", "games", tournament.total_games, progress) as advance:
        games = run_tournament(tournament, portable.reader(config.reference), progress=advance)
    board = ratings(tournament, games)
    mine = next(r for r in board if r["index"] == 0)
    return {"table": list(config.reference), "games": tournament.total_games, "rating": mine, "board": board}


def _exploit(config: CardConfig, out: Path, progress: bool) -> dict[str, Any]:
    from training.exploit import run

    return run(exploit_config(config), out, progress)


def markdown(card: dict[str, Any]) -> str:
    """The card as Markdown."""
    from training.exploit import summary

    c = card["config"]
    g = card["gauntlet"]
    lines = [
        f"# Strength card: `{c['spec']}`",
        "",
        f"{c['seats']} seats, rules `{c['rules']}`, seed {c['seed']}; measured in {card['seconds'] / 60:.0f} minutes "
        f"with {c['workers']} worker(s).",
        "",
        "## Gauntlet (margin over the expert in its seat, "
        + ("luck of the cards taken out)" if any(r.get("luck") for r in g["rows"]) else "plain estimates)"),
        "",
        gl.gauntlet_table(g["rows"], c["rules"]),
        "## Exploiter",
        "",
        summary(card["exploit"]),
        "## Decision regret (mean loss a decision against the oracle's best option, lives)",
        "",
        f"At a table of `{', '.join(card['regret']['table'])}` (the player in seat 0), "
        f"{c['decisions']:,} decisions a question, {c['rollouts']} play-outs an option.",
        "",
        "| decision | decisions | regret [95% CI] |",
        "|---|---:|---|",
    ]
    for q, r in card["regret"]["questions"].items():
        p = r["pooled"]
        if p:
            ci = "" if p["low"] is None or p["low"] != p["low"] else f" [{p['low']:.4f}, {p['high']:.4f}]"
            lines.append(f"| {q} | {p['decisions']:,} | {p['regret']:.4f}{ci} |")
    lines += ["", *_by_turn(card["regret"]["questions"])]
    r = card["rating"]
    lines += [
        "",
        "## Rating",
        "",
        f"OpenSkill ordinal {r['rating']['ordinal']:.2f} (mu {r['rating']['mu']:.2f}, sigma "
        f"{r['rating']['sigma']:.2f}) at `{', '.join(r['table'])}`, {r['games']:,} games.",
        "",
    ]
    return "\n".join(lines)


def _by_turn(questions: dict[str, Any]) -> list[str]:
    """The regret by the player's own turn: a row a turn, a column a question; a turn
    with fewer than :data:`FEW` decisions of a question shows only their number (they
    count in the pooled row above)."""
    cells: dict[int, dict[str, str]] = {}
    for q, r in questions.items():
        for row in r["by_turn"]:
            cells.setdefault(int(row["turn"]), {})[q] = (
                f"{row['regret']:.3f} [{row['low']:.3f}, {row['high']:.3f}] ({row['decisions']})"
                if row["decisions"] >= FEW
                else f"({row['decisions']})"
            )
    if not cells:
        return []
    lines = [
        "By own turn (regret [95% CI] (decisions)):",
        "",
        "| turn | " + " | ".join(questions) + " |",
        "|---:|" + "---|" * len(questions),
    ]
    for turn in sorted(cells):
        lines.append(f"| {turn} | " + " | ".join(cells[turn].get(q, "") for q in questions) + " |")
    return lines


def plot(card: dict[str, Any], path: Path) -> None:
    """Three panels: the gauntlet margins, the exploiter's curve, the regret by question."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from thirtyone_env.harness.report import _save_png

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    rows = [gl.with_nan(r) for r in card["gauntlet"]["rows"]]
    y = np.arange(len(rows))[::-1]
    for yi, r in zip(y, rows, strict=True):
        v, lo, hi = (100 * r[k] for k in ("wins_diff", "wins_low", "wins_high"))
        color = "tab:green" if lo > 0 else "tab:red" if hi < 0 else "tab:gray"
        axes[0].errorbar(v, yi, xerr=[[v - lo], [hi - v]], fmt="o", color=color, capsize=3)
    axes[0].axvline(0, color="black", linewidth=0.8)
    axes[0].set_yticks(y, [r["table"] for r in rows])
    axes[0].set(xlabel="wins minus expert (points)", title="gauntlet")
    e = card["exploit"]
    points = [gl.with_nan(p) for p in (*e["curve"], {"training_s": e["training_s"], **e["margin"]})]
    x = [p["training_s"] / 60 for p in points]
    v = [100 * p["wins_diff"] for p in points]
    err = [
        [100 * (p["wins_diff"] - p["wins_low"]) for p in points],
        [100 * (p["wins_high"] - p["wins_diff"]) for p in points],
    ]
    axes[1].errorbar(x, v, yerr=err, fmt="o-", capsize=3)
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set(xlabel="training (minutes)", ylabel="exploiter minus player (points)", title="exploiter")
    qs = list(card["regret"]["questions"])
    vals = [gl.with_nan(card["regret"]["questions"][q]["pooled"]) for q in qs]
    means = [p.get("regret", np.nan) for p in vals]
    errs = [p.get("regret", np.nan) - p.get("low", np.nan) for p in vals]
    axes[2].bar(qs, means, yerr=errs, capsize=4, color="tab:blue")
    axes[2].set(ylabel="lives lost a decision", title="decision regret")
    fig.suptitle(
        f"Strength card: {card['config']['spec']} ({card['config']['seats']} seats, {card['config']['rules']})"
    )
    fig.tight_layout()
    _save_png(fig, Path(path))


def write(card: dict[str, Any], out: Path) -> None:
    """``card.md``, ``card.png`` and, last, ``card.json`` in ``out``."""
    atomic_write(out / "card.md", markdown(card))
    plot(card, out / "card.png")
    atomic_write(out / "card.json", json_text(card))
