"""A recipe: the table a player is trained for and the steps that train it, read from a
TOML file (``recipes/*.toml``), checked whole before any work.

A recipe file has a ``[table]`` section (the fields of :class:`Table`) and one
``[[step]]`` section per step, in order (``kind`` and the options of that step kind,
:mod:`training.steps`). Anything wrong (an unknown section, step kind or option, a value
of the wrong type or out of range, a player that cannot be built, a model that does not
fit the table, a missing file) raises :class:`RecipeError`: one line naming the file,
the step and the option.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import read_small_text
from training.seeding import MAX_SEED
from training.steps import MODEL, STEPS, Imitation, Step, option

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the folder of the recipe files: the zoo's and the defaults
RECIPES = Path(__file__).resolve().parents[1] / "recipes"
#: the recipe ``train.py --rules R --players N`` runs, with a teacher and without
DEFAULT, NO_TEACHER = "default.toml", "no_teacher.toml"
#: the default recipe with a teacher where the table (``Rules.table``) needs one of its own
DEFAULT_FOR_TABLE = {"bus": "default_bus.toml"}


class RecipeError(ValueError):
    """A recipe that cannot run, said in one line."""


@dataclass(frozen=True)
class Table:
    """The table the recipe trains for, and what every step shares."""

    rules: str = option("standard", "a rules preset, or house rules: PRESET:OPTION=VALUE,...")
    players: int = option(4, "table size")
    seat: str = option("random", "the learner's seat: 'random' or 0..players-1")
    opponents: str = option("expert,greedy", "comma-separated player specs, one drawn per seat per game")
    eval_opponents: str = option(
        "expert,greedy", "the report's tables: the learner against players-1 copies of each spec"
    )
    start: str = option(
        "random", "the model the first step starts from: 'random' (a fresh network) or a file"
    )
    net_arch: str = option("256,256", "hidden layer sizes of the policy and value networks")
    activation: str = option("tanh", "'tanh' or 'relu'")
    opponent_history: bool = option(False, "add the opponents' shown play to the model's input")
    gamma: float = option(0.995, "discount factor of the returns the steps learn from")
    seed: int = option(0, "the recipe's seed: step k's is this plus k unless it sets its own")
    report_games: int = option(
        1000,
        "games a report table starts with: each step's model against its start, on the same deals, "
        "played on until a 2-point difference in wins is resolved (0: no comparison)",
    )
    report_most_games: int = option(
        32_000, "the most games a report table plays on to (a 2-point difference needs 2,000 to 10,000)"
    )
    torch_threads: int = option(1, "torch threads of the fits and of PPO")
    time_limit: float = option(
        0.0,
        "seconds for the whole recipe, its reports included (0: none); train.py --time-limit overrides it",
    )


@dataclass(frozen=True)
class PlannedStep:
    """A step of a recipe with the settings every step has."""

    index: int
    name: str
    step: Step
    opponents: str
    opponent_history: bool
    seed: int
    repeat: int
    until_time: bool
    time_share: float = 1.0


@dataclass(frozen=True)
class Recipe:
    """A recipe read and checked: its file, table and steps."""

    source: str
    table: Table
    steps: tuple[PlannedStep, ...]

    def teachers(self) -> list[str]:
        return [t for s in self.steps for t in s.step.teachers()]

    def to_toml(self) -> str:
        """The recipe as a TOML file (every option written out): stored in a run folder."""
        lines = ["[table]"]
        lines += [f"{f.name} = {_toml(getattr(self.table, f.name))}" for f in dataclasses.fields(Table)]
        for s in self.steps:
            lines += ["", "[[step]]", f"kind = {_toml(s.step.kind)}", f"name = {_toml(s.name)}"]
            lines += [f"opponents = {_toml(s.opponents)}", f"opponent_history = {_toml(s.opponent_history)}"]
            lines += [f"seed = {s.seed}", f"repeat = {s.repeat}", f"until_time = {_toml(s.until_time)}"]
            lines += [f"time_share = {_toml(s.time_share)}"]
            given = [(f.name, getattr(s.step, f.name)) for f in dataclasses.fields(s.step)]
            lines += [f"{name} = {_toml(value)}" for name, value in given if value is not None]
        return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return repr(value)


TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
#: options every step may set besides its own, with their types
COMMON_TYPES = {
    "name": str,
    "opponents": str,
    "opponent_history": bool,
    "seed": int,
    "repeat": int,
    "until_time": bool,
    "time_share": float,
}


def _typed(value: Any, kind: Any, where: str) -> Any:
    """``value`` as a field of type ``kind`` (an integer stands for a float), or a
    :class:`RecipeError` naming ``where``."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "tuple[str, ...]":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise RecipeError(f"{where}={value!r} must be a list of strings")
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise RecipeError(f"{where}={value!r} must be {TYPE_WORDS[kind]}, not {type(value).__name__}")
    return value


def _field_type(cls: type, f: dataclasses.Field) -> Any:
    """A field's type; an optional one (``int | None``) takes its type when given."""
    names = {"str": str, "int": int, "float": float, "bool": bool}
    kind = str(f.type).removesuffix(" | None")
    return names.get(kind, kind)


def _build(cls: type, values: dict[str, Any], where: str) -> Any:
    """``cls(**values)`` with every key known and of its field's type."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in values:
        if key not in fields:
            raise RecipeError(f"{where}: unknown option {key!r}; options: {', '.join(fields)}")
    typed = {k: _typed(v, _field_type(cls, fields[k]), f"{where}: {k}") for k, v in values.items()}
    return cls(**typed)


#: The bounds of the table's numbers (a seed as train.py's runs take it).
TABLE_BOUNDS = (
    ("report_games", 0, 10**7),
    ("report_most_games", 0, 10**7),
    ("torch_threads", 1, 1024),
    ("seed", 0, MAX_SEED),
)


#: The most any count of a step may be (a PPO step's timesteps run to 10**12 at most).
MAX_STEP_COUNT = 10**12


def parse(data: dict[str, Any], source: str) -> Recipe:
    """A recipe from a TOML document's data, its form checked (:func:`check` checks
    what needs the players and files)."""
    unknown = set(data) - {"table", "step"}
    if unknown:
        raise RecipeError(f"{source}: unknown section {sorted(unknown)[0]!r}; sections: [table], [[step]]")
    if not isinstance(data.get("table", {}), dict):
        raise RecipeError(f"{source}: [table] must be a table")
    table = _build(Table, data.get("table", {}), f"{source}: [table]")
    if not table.time_limit >= 0:
        raise RecipeError(f"{source}: [table] time_limit={table.time_limit} must be 0 or more")
    for key, low, high in TABLE_BOUNDS:
        value = getattr(table, key)
        if not low <= value <= high:
            raise RecipeError(f"{source}: [table] {key}={value} must be {low}..{high}")
    raw = data.get("step", [])
    if not isinstance(raw, list) or not raw:
        raise RecipeError(f"{source}: no [[step]]: a recipe names at least one step")
    steps, names = [], []
    for k, values in enumerate(raw, start=1):
        if not isinstance(values, dict):
            raise RecipeError(f"{source}: step {k} is {type(values).__name__}, not a [[step]] table")
        values = dict(values)
        kind = values.pop("kind", None)
        if not isinstance(kind, str) or kind not in STEPS:
            raise RecipeError(f"{source}: step {k}: kind={kind!r} is not a step; steps: {', '.join(STEPS)}")
        common = {key: values.pop(key) for key in list(values) if key in COMMON_TYPES}
        where = f"{source}: step {k} ({kind})"
        for key, value in common.items():
            common[key] = _typed(value, COMMON_TYPES[key], f"{where}: {key}")
        if common.get("name") == "":
            raise RecipeError(f"{where}: name is empty (leave it out for the kind's own name)")
        name = common.get("name") or _numbered(kind, [s["kind"] for s in raw[: k - 1] if isinstance(s, dict)])
        if name in names:
            raise RecipeError(f"{where}: name={name!r} is taken by an earlier step")
        where = f"{source}: step {k} ({name})"
        try:
            step = _build(STEPS[kind], values, where)
        except TypeError as e:
            raise RecipeError(f"{where}: {e}") from None
        for f in dataclasses.fields(step):
            value = getattr(step, f.name)
            if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_STEP_COUNT:
                raise RecipeError(f"{where}: {f.name}={value} must be 0..{MAX_STEP_COUNT:,}")
        if not 0 <= common.get("seed", 0) <= MAX_SEED:
            raise RecipeError(f"{where}: seed={common['seed']} must be 0..{MAX_SEED}")
        repeat = common.get("repeat", 1)
        if not 1 <= repeat <= MAX_STEP_COUNT:
            raise RecipeError(f"{where}: repeat={repeat} must be at least 1")
        share = common.get("time_share", 1.0)
        if not 0 < share <= 1:
            raise RecipeError(f"{where}: time_share={share} must be more than 0 and at most 1")
        if isinstance(step, Imitation):
            for pooled in step.pool:
                if pooled not in names or not isinstance(steps[names.index(pooled)].step, Imitation):
                    raise RecipeError(f"{where}: pool names {pooled!r}, not an earlier imitation step")
            if step.pool and step.aggregate:
                raise RecipeError(
                    f"{where}: aggregate fits new decisions with the earlier ones; pool fits earlier "
                    "ones instead of recording: give one"
                )
        names.append(name)
        steps.append(
            PlannedStep(
                index=k,
                name=name,
                step=step,
                opponents=common.get("opponents", table.opponents),
                opponent_history=common.get("opponent_history", table.opponent_history),
                seed=common.get("seed", (table.seed + k) % (MAX_SEED + 1)),
                repeat=repeat,
                until_time=common.get("until_time", False),
                time_share=share,
            )
        )
    return Recipe(source, table, tuple(steps))


def _numbered(kind: str, earlier: list[str]) -> str:
    count = earlier.count(kind)
    return kind if not count else f"{kind}{count + 1}"


def read(path: str | Path, allow_code: bool = False) -> Recipe:
    """The recipe in a TOML file, its form checked; a player that runs code is refused
    before anything is imported unless ``allow_code`` (:mod:`training.trust`)."""
    path = Path(path)
    try:
        text = read_small_text(path)
    except FileNotFoundError:
        raise RecipeError(f"{path}: no such recipe file") from None
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        raise RecipeError(f"{path}: cannot read the recipe: {e}") from None
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # a BOM some editors write
    except tomllib.TOMLDecodeError as e:
        raise RecipeError(f"{path}: not a TOML file: {e}") from None
    except RecursionError:
        raise RecipeError(f"{path}: not a TOML file: nested too deep to read") from None
    from training.trust import check_no_code

    try:
        check_no_code(data, str(path), allow_code)
    except ValueError as e:
        raise RecipeError(str(e)) from None
    return parse(data, str(path))


#: teachers that search their own knocks by play-outs: the default recipe copies their
#: moves rather than measure each knock again with the teacher playing on (with search
#: playing on, no job of 5,000 decisions was done in 48 minutes on 2 cores)
SEARCHING = ("search",)


def default(rules: str, players: int, teacher: str | None = None) -> Recipe:
    """The default recipe for a table: ``recipes/no_teacher.toml`` for ``teacher='none'``,
    else the table's own (:data:`DEFAULT_FOR_TABLE`, by the rules' ``table``) or
    ``recipes/default.toml``, with ``teacher`` (when given) in every step that has one: a
    teacher of :data:`SEARCHING` with its knocks copied (``knock_rollouts = 0``). Without
    ``teacher`` the file's own teacher stands."""
    name = NO_TEACHER if teacher == "none" else DEFAULT_FOR_TABLE.get(_table_kind(rules), DEFAULT)
    data = tomllib.loads((RECIPES / name).read_text(encoding="utf-8"))
    table = data.setdefault("table", {})
    table.update(rules=rules, players=players)
    fewer = longer_games(rules)
    for key in ("report_games", "report_most_games"):
        if key in table:
            table[key] = max(100, table[key] // fewer)
    if teacher not in (None, "none"):
        searching = teacher.strip().partition(":")[0].strip() in SEARCHING
        for step in data.get("step", []):
            options = _options(STEPS[step["kind"]])
            if "teacher" in options:
                step["teacher"] = teacher
            if searching and "knock_rollouts" in options:
                step["knock_rollouts"] = 0
    return parse(data, str(RECIPES / name))


def _table_kind(rules: str) -> str:
    """The table of these rules (``Rules.table``), or ``"stock"`` for a name that is no
    preset (which the recipe's check names)."""
    from thirtyone_env.game.rules import Rules

    try:
        return Rules.preset(rules).table
    except ValueError:
        return "stock"


#: about the rounds of a game with lives, which the recipes' report sizes are set for
ROUNDS_OF_A_GAME = 10


def longer_games(rules: str) -> int:
    """How many times longer than a game with lives a game of these rules runs: a chips
    game plays on to its ``max_rounds`` (100 at banking), so its reports play a tenth of
    the games for about the same rounds; 1 elsewhere (and for a name that is no preset,
    which the recipe's check names)."""
    from thirtyone_env.game.rules import Rules

    try:
        r = Rules.preset(rules)
    except ValueError:
        return 1
    length = r.max_rounds if r.scoring == "chips" else r.num_rounds if r.scoring == "points" else 0
    return max(1, length // ROUNDS_OF_A_GAME)


def with_settings(recipe: Recipe, settings: dict[str, Any]) -> Recipe:
    """The recipe with ``table.OPTION`` or ``STEP.OPTION`` values replaced (``STEP``: a
    step's name; ``steps.OPTION``: every step that has the option)."""
    data = {"table": dataclasses.asdict(recipe.table), "step": [_step_data(s) for s in recipe.steps]}
    for key, value in settings.items():
        section, _, name = key.partition(".")
        if not name:
            raise RecipeError(
                f"--set {key}: give SECTION.OPTION=VALUE (table.seed=3, imitation.decisions=1000)"
            )
        if section == "table":
            data["table"][name] = value
            continue
        targets = [
            s
            for s in data["step"]
            if s["name"] == section
            or (section == "steps" and (name in _options(STEPS[s["kind"]]) or name in COMMON_TYPES))
        ]
        if not targets:
            names = ", ".join(s["name"] for s in data["step"])
            raise RecipeError(f"--set {key}: {section!r} is no step of {recipe.source} (steps: {names})")
        for s in targets:
            s[name] = value
    return parse(data, recipe.source)


def _options(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _step_data(s: PlannedStep) -> dict[str, Any]:
    values = {f.name: getattr(s.step, f.name) for f in dataclasses.fields(s.step)}
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return {
        "kind": s.step.kind,
        "name": s.name,
        "opponents": s.opponents,
        "opponent_history": s.opponent_history,
        "seed": s.seed,
        "repeat": s.repeat,
        "until_time": s.until_time,
        "time_share": s.time_share,
        **values,
    }


def parse_value(text: str) -> Any:
    """A ``--set`` value as TOML reads it (``3``, ``0.5``, ``true``, ``"expert"``), a
    bare word as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


__all__ = ["MODEL", "Recipe", "RecipeError", "Table", "default", "parse", "read", "with_settings"]
