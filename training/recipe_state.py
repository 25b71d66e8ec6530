"""A recipe run's state file (``recipe.json``): what its steps did, read back checked.

A resumed run trusts nothing of the file it did not write: the file may have been
edited or come from someone else. :func:`read_state` refuses, naming the file and the
field, anything but the state :func:`write_state` writes: the time spent (finite, not
negative), the model the recipe started from (the recipe's own, or one trained inside
the run folder), each step's model (inside the run folder), the comparison rows of
the report, and which model the recipe holds now (its start or a step's).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import atomic_write, json_value

#: The state's file in a recipe run folder.
STATE = "recipe.json"
#: The fields of the state and of each step's entry.
STATE_KEYS = {"time_limit", "seconds", "start", "model", "from", "steps", "stopped"}
STEP_KEYS = {"pass", "kind", "seconds", "report_seconds", "model", "model_in", "kept", "rows"}
#: A report row's text fields; every other field is a number (or null).
ROW_TEXT, ROW_LISTS, ROW_FLAGS = {"table"}, {"opponents"}, {"luck"}
#: The fields a report row must give (training.report reads them).
ROW_NEEDS = {"table", "games", "wins_diff", "wins_low", "wins_high", "lives_diff", "lives_low", "lives_high"}
#: Most bytes a state file may hold (a run of many steps writes far less).
MAX_STATE_BYTES = 16 << 20


class StateError(ValueError):
    """A state file this program did not write."""


def read_state(root: Path, start: str | None) -> dict[str, Any]:
    """The run's state (``{}`` before its first start), checked; ``start``: the model
    the recipe names as its start (resolved), None when it trains its own. Model paths
    come back absolute (those the file holds relative to the folder, joined to it)."""
    path = root / STATE
    if not path.exists():
        return {}
    if not path.is_file() or path.stat().st_size > MAX_STATE_BYTES:
        raise StateError(f"{path} is not a recipe run's state file")
    try:
        state = json_value(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise StateError(f"{path} is not a recipe run's state file: {e}") from None
    where = root.resolve()
    state = _paths(state, lambda text: text if Path(text).is_absolute() else str(where / text))
    problem = _problem(state, where, start)
    if problem:
        raise StateError(f"{path} is not a state this program wrote: {problem}")
    return state


def write_state(root: Path, state: dict[str, Any]) -> None:
    """Write the state with its models inside the run folder as paths relative to it, so
    that the folder resumes wherever it is moved (a start the recipe names elsewhere
    stays as it is)."""
    where = root.resolve()

    def relative(text: str) -> str:
        path = Path(text)
        return (
            path.relative_to(where).as_posix() if path.is_absolute() and path.is_relative_to(where) else text
        )

    atomic_write(root / STATE, json.dumps(_paths(state, relative), indent=1))


def _paths(state: Any, change: Callable[[str], str]) -> Any:
    """``state`` with ``change`` applied to each model path it holds (text only:
    anything else is left for :func:`_problem` to name)."""
    if not isinstance(state, dict):
        return state

    def one(value: Any) -> Any:
        return change(value) if isinstance(value, str) else value

    out = {k: one(v) if k in ("start", "model") else v for k, v in state.items()}
    if isinstance(state.get("steps"), list):
        out["steps"] = [
            {k: one(v) if k in ("model", "model_in") else v for k, v in step.items()}
            if isinstance(step, dict)
            else step
            for step in state["steps"]
        ]
    return out


def _seconds(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def _inside(path: Any, root: Path) -> bool:
    return isinstance(path, str) and Path(path).is_absolute() and Path(path).resolve().is_relative_to(root)


def _problem(state: Any, root: Path, start: str | None) -> str:
    """What makes ``state`` other than a state this program writes ('' if nothing)."""
    if not isinstance(state, dict):
        return "it is not an object"
    unknown = sorted(set(state) - STATE_KEYS)
    if unknown:
        return f"unknown field(s) {unknown}"
    for key in ("time_limit", "seconds"):
        if key in state and not _seconds(state[key]):
            return f"{key!r} is {state[key]!r}, not a number of seconds"
    if not isinstance(state.get("stopped", ""), str):
        return "'stopped' is not text"
    if "start" not in state:
        return "" if set(state) <= {"time_limit", "seconds"} else "it names no start"
    if not ({"model", "from", "steps"} <= set(state)):
        return "it lacks 'model', 'from' or 'steps'"
    first = state["start"]
    if start is not None and first != start:
        return f"its start {first!r} is not the recipe's start {start!r}"
    if start is None and not _inside(first, root):
        return f"its start {first!r} lies outside the run folder"
    steps = state["steps"]
    if not isinstance(steps, list):
        return "'steps' is not a list"
    models, names = [first], ["start"]
    for k, step in enumerate(steps):
        problem = _step_problem(step, root, models)
        if problem:
            return f"step {k}: {problem}"
        models.append(step["model"])
        names.append(step["pass"])
    if state["model"] not in models:
        return f"its model {state['model']!r} is neither its start nor a step's"
    if state["from"] not in names:
        return f"'from' is {state['from']!r}, no step of the run"
    return ""


def _step_problem(step: Any, root: Path, models: list[str]) -> str:
    if not isinstance(step, dict) or set(step) != STEP_KEYS:
        return f"not an entry with the fields {sorted(STEP_KEYS)}"
    if not isinstance(step["pass"], str) or not isinstance(step["kind"], str):
        return "'pass' and 'kind' must be text"
    if not (_seconds(step["seconds"]) and _seconds(step["report_seconds"])):
        return "its seconds are not numbers of seconds"
    if not isinstance(step["kept"], bool):
        return "'kept' is not true or false"
    if not _inside(step["model"], root):
        return f"its model {step['model']!r} lies outside the run folder"
    if step["model_in"] not in models:
        return f"it started from {step['model_in']!r}, neither the start nor an earlier step's model"
    rows = step["rows"]
    if not isinstance(rows, list) or not all(isinstance(r, dict) and set(r) >= ROW_NEEDS for r in rows):
        return f"'rows' must be report rows, each with {sorted(ROW_NEEDS)}"
    for row in rows:
        for key, value in row.items():
            if not _row_value(key, value):
                return f"a report row's {key!r} is {value!r}"
    return ""


def _row_value(key: str, value: Any) -> bool:
    if key in ROW_TEXT:
        return isinstance(value, str)
    if key in ROW_LISTS:
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    if key in ROW_FLAGS:
        return isinstance(value, bool)
    if key == "games":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    )
