"""What a finished study reports: its summary (``summary.json``), plots and printed table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from thirtyone_env.research import aggregate, plots
from thirtyone_env.research.config import StudyConfig


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return df.to_dict(orient="records")


def summarize(config: StudyConfig, df: pd.DataFrame) -> dict[str, Any]:
    """The answers of a study, by its question (every figure with its 95% interval)."""
    decisions = int(df.groupby(["game", "round", "turn"]).ngroups) if len(df) else 0
    out: dict[str, Any] = {"study": config.study_dict(), "decisions": decisions, "rows": len(df)}
    q = config.question
    if q in ("knock", "take"):
        alt = q
        out["break_even_by_turn_and_position"] = _records(
            aggregate.break_even(df, ("turn", "position"), alt, seed=config.seed)
        )
        out["break_even_by_turn"] = _records(aggregate.break_even(df, ("turn",), alt, seed=config.seed))
        out["break_even_pooled"] = _records(aggregate.break_even(df, (), alt, seed=config.seed))[0]
        out["gain_by_value"] = _records(aggregate.gain_by_value(df, (), alt))
        out["choices"] = _records(aggregate.choices(df, (), alt))[0]
        out["choices_by_turn"] = _records(aggregate.choices(df, ("turn",), alt))
        out["timing_by_turn"] = _records(aggregate.knock_timing(df, ("turn",), alt, seed=config.seed))
    else:
        out["switch_by_turn"] = _records(aggregate.switch_by_turn(df))
        out["switch"] = _records(aggregate.switch_by_turn(df, ()))[0] if len(df) else {}
    out["regret"] = _records(aggregate.regret(df))[0] if len(df) else {}
    out["regret_by_turn"] = _records(aggregate.regret(df, ("turn",)))
    return out


def write_plots(out: Path, config: StudyConfig, df: pd.DataFrame) -> list[Path]:
    """The study's PNGs in ``out``; returns their paths."""
    who = f"{config.table[config.seat]} in seat {config.seat}, {len(config.table)} players, {config.rules}"
    paths = []
    if config.question in ("knock", "take"):
        alt = config.question
        path = Path(out) / "break_even.png"
        plots.break_even_heatmap(
            aggregate.break_even(df, ("turn", "position"), alt, seed=config.seed),
            path,
            f"{alt}: break-even ({who})",
        )
        paths.append(path)
        path = Path(out) / "gain_curve.png"
        early = df[df["turn"] <= plots.CURVE_TURNS]
        plots.gain_curve(
            aggregate.gain_by_value(early, ("turn",), alt),
            path,
            f"gain of {alt} by hand value ({who})",
            by="turn",
        )
        paths.append(path)
    else:
        path = Path(out) / "switches.png"
        plots.switch_panels(aggregate.switch_by_turn(df), path, f"suit switches ({who})")
        paths.append(path)
    return paths


def _fmt(x: Any, spec: str = ".2f") -> str:
    return "-" if x is None or pd.isna(x) else format(x, spec)


def interval(low: Any, high: Any, spec: str = ".2f", point: Any = None) -> str:
    """``[low, high]`` with an open end in words (``no upper bound``): a bound that is
    infinite, or missing beside a ``point`` that is not (resamples that never crossed
    on that side), is not a number."""

    def end(x: Any, word: str) -> str:
        missing = x is None or pd.isna(x)
        if (not missing and math.isinf(x)) or (missing and point is not None and not pd.isna(point)):
            return f"no {word} bound"
        return _fmt(x, spec)

    return f"[{end(low, 'lower')}, {end(high, 'upper')}]"


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as a few printable lines."""
    s = summary["study"]
    lines = [
        f"{s['question']}: {summary['decisions']:,} decisions of {s['table'][s['seat']]} in seat {s['seat']}"
    ]
    if "break_even_by_turn" in summary:
        lines.append(
            "break-even hand value by own turn: "
            + "; ".join(
                f"{r['turn']}: {_fmt(r['break_even'], '.1f')} {interval(r['low'], r['high'], '.1f', r['break_even'])}"
                for r in summary["break_even_by_turn"][:6]
            )
        )
        lines.append(
            "its own threshold - break-even by turn: "
            + "; ".join(
                f"{r['turn']}: {_fmt(r['difference'], '+.1f')} {interval(r['low'], r['high'], '+.1f')} {r['verdict']}"
                for r in summary["timing_by_turn"][:4]
            )
        )
        c = summary["choices"]
        lines.append(
            f"its own choices: took it {c['taken']:,} times, gain {_fmt(c['gain_taken'], '+.3f')} "
            f"[{_fmt(c['low_taken'], '+.3f')}, {_fmt(c['high_taken'], '+.3f')}]; passed {c['passed']:,}, "
            f"gain there {_fmt(c['gain_passed'], '+.3f')} [{_fmt(c['low_passed'], '+.3f')}, {_fmt(c['high_passed'], '+.3f')}]"
        )
    if "switch_by_turn" in summary:
        for r in summary["switch_by_turn"][:8]:
            lines.append(
                f"turn {r['turn']}: switches {_fmt(r['switch_rate'], '.1%')} of {r['decisions']:,} discards; "
                f"its switches gain {_fmt(r['made_gain'], '+.3f')} [{_fmt(r['made_low'], '+.3f')}, "
                f"{_fmt(r['made_high'], '+.3f')}], the best it passed up {_fmt(r['passed_gain'], '+.3f')} "
                f"[{_fmt(r['passed_low'], '+.3f')}, {_fmt(r['passed_high'], '+.3f')}] lives a round"
            )
    r = summary.get("regret") or {}
    if r:
        lines.append(
            f"regret (its choice against the oracle's best option, a decision): {_fmt(r['regret'], '.4f')} "
            f"[{_fmt(r['low'], '.4f')}, {_fmt(r['high'], '.4f')}] over {r['decisions']:,} decisions"
        )
    return lines
