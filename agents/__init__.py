"""Players for Thirty-One tables, by name: ``agents.make("expert")``.

Every player follows the protocol of :mod:`thirtyone_env.game.policies`:
``act(observation, action_mask) -> int``, an ``obs_encoding`` (the heuristics read a
:class:`~thirtyone_env.game.views.PlayerView`, which holds no hidden card) and, for players
that use randomness, ``reset(rng)`` to receive the game's players' generator (seeded
from the game's, never the one that deals).

| name      | player                                                            |
|-----------|-------------------------------------------------------------------|
| random    | uniform over legal actions                                        |
| greedy    | take the discard if it helps, else draw; knock at a fixed value    |
| blitz31   | the Blitz31 Windows game's computer player (master suit)           |
| expert    | expected-value draws, knock by estimated survival chance           |
| search    | determinized Monte Carlo search over the fast engine               |
| ppo       | a MaskablePPO policy from ``train.py`` (default: the zoo's model   |
|           | for the table, :mod:`agents.ppo`)                                 |

Command-line tools take players as specs (:func:`from_spec`):

- ``name`` or ``name:key=value,key=value``: a built-in player above, or one an
  installed package registers under the entry point group ``thirtyone.players``
  (``name = "module:Class"``; a built-in name always means the built-in player);
- ``package.module:Class[:options]``: a player class (a class with an ``act``
  method) or a factory by import path; the module must be importable (installed, or
  on ``PYTHONPATH``);
- ``path/to/file.py:Class[:options]``: the same from a Python file.

A factory is a Python function whose return annotation names a player class
(``def cautious(knock_at: float = 30) -> EarlyKnocker``): that is checked before it is
called, so a spec never calls a function that does not say it makes a player
(``os:abort``, a builtin, an unannotated helper). Options are the constructor's keyword
arguments, read as their annotated types (``int``, ``float``, ``bool``, ``str`` or any
of these ``| None``). Naming a module or file runs it, as ``python file.py`` would:
name only code you trust (:func:`spec_kind` tells which specs do, before anything is
imported; the web table refuses them unless started with ``--allow-code``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import math
import re
import sys
import types
import typing
from collections.abc import Collection
from importlib import metadata
from pathlib import Path
from typing import Any

#: name -> "module:attribute" of the player class (imported on first use).
REGISTRY: dict[str, str] = {
    "random": "thirtyone_env.game.policies:RandomPolicy",
    "greedy": "thirtyone_env.game.policies:GreedyPolicy",
    "blitz31": "agents.blitz31:Blitz31Player",
    "expert": "agents.expert:ExpertPlayer",
    "search": "agents.search:SearchPlayer",
    "ppo": "agents.ppo:PPOPlayer",
    "population": "agents.populations:PopulationMember",
}

#: Entry point group under which installed packages register players.
ENTRY_POINT_GROUP = "thirtyone.players"

IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
#: A player by Python file: ``path/to/file.py:Class[:options]``.
FILE_SPEC = re.compile(r"(.+?\.py):([^:]*)(?::(.*))?", re.DOTALL)
SCALARS: dict[Any, str] = {bool: "bool", int: "int", float: "float", str: "str", type(None): "None"}


def names() -> list[str]:
    """Names :func:`make` and :func:`from_spec` accept: the built-in players, then
    those installed packages register under :data:`ENTRY_POINT_GROUP`."""
    return list(REGISTRY) + [n for n in _entry_points() if n not in REGISTRY]


def make(name: str, **kwargs: Any) -> Any:
    """A new player by name (built-in or registered); keyword arguments go to its
    constructor."""
    return _construct(name, _named(name), kwargs)


def check_spec(spec: str) -> None:
    """Raise ``ValueError`` (naming the problem) unless ``spec`` names a player with
    options of the right types. Builds no player and reads no model file: a player
    class may offer a static ``check_options(**options)`` for cheap checks of its own
    (the learned player: that its model file exists)."""
    label, target, kwargs = _parse(spec)
    check = getattr(target, "check_options", None)
    if inspect.isclass(target) and callable(check):
        try:
            check(**kwargs)
        except (ValueError, OSError):
            raise
        except TypeError as e:
            raise ValueError(f"bad options for player {label!r}: {e}") from None
        except Exception as e:  # the player's own check failed: name it, whatever it raised
            raise ValueError(f"player {label!r} could not be checked: {type(e).__name__}: {e}") from None


def check_at_table(specs: Collection[str], num_players: int, rules: Any) -> None:
    """Check each spec (:func:`check_spec`) and that its player takes a seat at this
    table (its ``check_table``: a model for another table is refused): ``ValueError``
    naming the first that does not, before any game is played."""
    from thirtyone_env.harness.driver import check_table

    for spec in specs:
        check_spec(spec)
        check_table(from_spec(spec), num_players, rules, spec)


def from_spec(spec: str) -> Any:
    """A player from a command-line spec (see the module docstring): ``"greedy"``,
    ``"greedy:knock_at=27"``, ``"mypkg.bots:EarlyKnocker:first=20"``,
    ``"bots.py:EarlyKnocker"``. Each value must fit the option's annotated type (a
    number for a numeric option, true/false for a flag), else ``ValueError`` names the
    option."""
    label, target, kwargs = _parse(spec)
    return _construct(label, target, kwargs)


def spec_kind(spec: str) -> str:
    """Which kind of player ``spec`` names, read from its text alone (nothing is
    imported): ``"builtin"`` (a name of :data:`REGISTRY`), ``"registered"`` (an
    installed package's entry point), ``"module"`` (``package.module:Class``) or
    ``"file"`` (``path.py:Class``). The last three run code that is not this package's."""
    head = spec.strip().partition(":")[0].strip()
    if head in REGISTRY:
        return "builtin"
    if head in _entry_points():
        return "registered"
    return "file" if _file_spec(spec.strip()) is not None or head.endswith(".py") else "module"


def spec_options(spec: str) -> dict[str, Any]:
    """The options ``spec`` gives, read as their annotated types, without building the
    player (``ValueError`` as :func:`from_spec` for a bad spec)."""
    return _parse(spec)[2]


def player_class(spec: str) -> Any:
    """The player class (or function) ``spec`` names, without building a player."""
    return _parse(spec)[1]


def spec_files(spec: str) -> list[str]:
    """The files building ``spec`` reads, as the spec writes their paths: a player's
    Python file, and the options its class lists in ``FILE_OPTIONS`` (the learned
    player's model ``path``). What has to travel with the spec to another machine
    (:mod:`agents.portable`); ``ValueError`` for a bad spec, as :func:`from_spec`."""
    spec = spec.strip()
    _, target, kwargs = _parse(spec)
    found = [m.group(1) for m in [_file_spec(spec)] if m is not None]
    found += [kwargs[k] for k in getattr(target, "FILE_OPTIONS", ()) if kwargs.get(k) is not None]
    return found


def relocate(spec: str, moved: dict[str, str], file_options: Collection[str] = ("path",)) -> str:
    """``spec`` with the file paths of :func:`spec_files` replaced as ``moved`` says
    (path as written -> new path): a player file, and the values of
    ``file_options`` (its class's ``FILE_OPTIONS``); the rest kept as written. Reads no
    file (the originals may be on another machine)."""
    spec = spec.strip()
    file_spec = _file_spec(spec)
    if file_spec is not None:
        path, attr, options = file_spec.groups()
        head, options = f"{moved.get(path, path)}:{attr}", options or ""
    else:
        name, _, options = spec.partition(":")
        if name.strip() not in REGISTRY and name.strip() not in _entry_points():  # module:Class[:options]
            attr, _, options = options.partition(":")
            name = f"{name}:{attr}"
        head = name
    files = set(file_options)
    items = []
    for item in filter(None, (s.strip() for s in options.split(","))):
        key, _, raw = item.partition("=")
        if key.strip() in files and raw.strip() in moved:
            item = f"{key.strip()}={moved[raw.strip()]}"
        items.append(item)
    return f"{head}:{','.join(items)}" if items else head


def _file_spec(spec: str) -> re.Match[str] | None:
    """The match of a player-file spec (``path.py:Class[:options]``); None for the others."""
    head = spec.partition(":")[0].strip()
    if head in REGISTRY or head in _entry_points():
        return None
    return FILE_SPEC.fullmatch(spec)


# -- what a spec names ---------------------------------------------------------------


def _parse(spec: str) -> tuple[str, Any, dict[str, Any]]:
    """(label for messages, player class or factory, constructor keyword arguments)."""
    label, target, options = _split(spec.strip())
    params = _options(label, target)
    kwargs: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in options.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"bad player option {item!r} in {spec!r}: expected key=value")
        if key not in params:
            raise ValueError(
                f"bad options for player {label!r}: unknown option {key!r}; options are {sorted(params)}"
            )
        if key in kwargs:
            raise ValueError(f"bad options for player {label!r}: {key!r} is given twice")
        kwargs[key] = _parse_value(label, key, raw.strip(), params[key])
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty and k not in kwargs]
    if missing:
        raise ValueError(f"bad options for player {label!r}: give {', '.join(missing)} (no default)")
    return label, target, kwargs


def _split(spec: str) -> tuple[str, Any, str]:
    """Which kind of spec this is: (label, class or factory, options text)."""
    head, _, rest = spec.partition(":")
    head = head.strip()
    if head in REGISTRY or head in _entry_points():
        return head, _named(head), rest
    file_spec = FILE_SPEC.fullmatch(spec)
    if file_spec:
        path, attr, options = file_spec.groups()
        label = f"{path}:{attr}"
        return label, _player_attribute(_load_file(path), attr.strip(), label), options or ""
    if head.endswith(".py"):
        raise ValueError(f"player {spec!r}: name the class in the file, as {head}:ClassName")
    attr, _, options = rest.partition(":")
    if attr and "=" not in attr and IMPORT_PATH.fullmatch(head):
        label = f"{head}:{attr.strip()}"
        return label, _player_attribute(_import(head), attr.strip(), label), options
    raise ValueError(
        f"unknown player {head!r}; players are {names()}, or a class by import path "
        "(package.module:Class) or file (path/to/file.py:Class)"
    )


def _named(name: str) -> Any:
    """The class of a built-in or registered player name."""
    if name in REGISTRY:
        module, attr = REGISTRY[name].split(":")
        return getattr(importlib.import_module(module), attr)
    entry = _entry_points().get(name)
    if entry is None:
        raise ValueError(f"unknown player {name!r}; players are {names()}")
    try:
        module = _import(entry.module)
    except ValueError as e:
        raise ValueError(
            f"player {name!r} (entry point {entry.value!r} of {ENTRY_POINT_GROUP}): {e}"
        ) from None
    return _player_attribute(module, entry.attr or "", f"{name} ({entry.value})")


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """Players installed packages register, by name (read again when ``sys.path``
    changes)."""
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _entry_points_on(path: tuple[str, ...]) -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry)  # the first on sys.path, as for modules
    return found


def _import(module: str) -> types.ModuleType:
    """A module by import path; a failure to import it is a ``ValueError``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise ValueError(
                f"cannot import module {module!r}: no module named {e.name!r} (is it installed, or on PYTHONPATH?)"
            ) from None
        raise ValueError(f"cannot import module {module!r}: {e}") from None
    except Exception as e:  # the module's own code failed
        raise ValueError(f"cannot import module {module!r}: {type(e).__name__}: {e}") from None


def _load_file(path_text: str) -> types.ModuleType:
    """The module of a player file, run once per process (kept in ``sys.modules``
    under a name made from its resolved path, so every game of a tournament and every
    worker process, forked or spawned, uses the same classes)."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ValueError(f"player file not found: {path}")
    resolved = path.resolve()
    name = "_thirtyone_player_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, resolved)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"cannot load player file {path}: not a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise ValueError(f"cannot load player file {path}: {type(e).__name__}: {e}") from None
    return module


def _player_attribute(module: types.ModuleType, attr: str, label: str) -> Any:
    """``module.attr`` (dotted for a nested name), which must be a player class (with
    an ``act`` method) or a function that makes a player."""
    if not attr:
        raise ValueError(f"player {label!r}: name a class or function after the ':'")
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            where = getattr(module, "__file__", None) or module.__name__
            raise ValueError(f"player {label!r}: {where} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if inspect.isclass(obj):
        if not _is_player_class(obj):
            raise ValueError(
                f"player {label!r}: class {obj.__name__} has no act(observation, action_mask) method"
            )
    elif inspect.isfunction(obj):
        _check_factory(obj, label)
    else:
        raise ValueError(
            f"player {label!r}: {attr} is not a player class or factory function "
            f"(it is of type {type(obj).__name__})"
        )
    return obj


def _is_player_class(obj: Any) -> bool:
    return inspect.isclass(obj) and callable(getattr(obj, "act", None))


def _check_factory(function: Any, label: str) -> None:
    """A factory must say it makes a player: its return annotation, resolved, is a
    class with an ``act`` method. Checked before the function is ever called, so a
    spec cannot call a function that does something else (write a file, stop the
    process, open a socket)."""
    annotation = _type_hints(function).get("return", inspect.Parameter.empty)
    if not _is_player_class(annotation):
        shown = (
            "none"
            if annotation is inspect.Parameter.empty
            else getattr(annotation, "__name__", repr(annotation))
        )
        raise ValueError(
            f"player {label!r}: {function.__name__} is a function whose return annotation "
            f"({shown}) is not a player class; a factory must be annotated "
            f"'-> PlayerClass' (a class with an act method)"
        )


def _construct(label: str, target: Any, kwargs: dict[str, Any]) -> Any:
    """``target(**kwargs)``: a player, or ``ValueError`` naming ``label``."""
    try:
        player = target(**kwargs)
    except TypeError as e:
        raise ValueError(f"bad options for player {label!r}: {e}") from None
    except ValueError as e:  # the player refused a value: say which player
        raise ValueError(f"player {label!r}: {e}") from None
    except Exception as e:  # a user's or package's player failed: name it, whatever it raised
        raise ValueError(f"player {label!r} could not be built: {type(e).__name__}: {e}") from None
    if not callable(getattr(player, "act", None)):
        raise ValueError(
            f"player {label!r}: {getattr(target, '__name__', target)} returned an object of type "
            f"{type(player).__name__}, which has no act(observation, action_mask) method"
        )
    return player


# -- options ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _options(label: str, target: Any) -> dict[str, Any]:
    """The keyword options of a player class or factory, each an
    ``inspect.Parameter`` whose annotation is resolved where it can be. Read once per
    player (a tournament builds a player per game); callers must not change it."""
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError) as e:
        raise ValueError(f"player {label!r}: cannot read its options ({e})") from None
    hints = _type_hints(target)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        k: p.replace(annotation=hints.get(k, p.annotation))
        for k, p in params.items()
        if p.kind in kinds and k != "self"
    }


def _type_hints(target: Any) -> dict[str, Any]:
    """Annotations as real types (``typing.get_type_hints``); where one of them cannot
    be resolved, each is resolved alone, and one that still cannot stays a string."""
    function = target.__init__ if inspect.isclass(target) else target
    try:
        return typing.get_type_hints(function)
    except Exception:  # a name only imported for type checking, say
        namespace = dict(getattr(function, "__globals__", {}))
        return {k: _resolve(a, namespace) for k, a in getattr(function, "__annotations__", {}).items()}


def _resolve(annotation: Any, namespace: dict[str, Any]) -> Any:
    """A string annotation evaluated in its module (as ``get_type_hints`` does), or
    the string where that fails."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, namespace)  # noqa: S307 (the module's own annotation)
    except Exception:
        return annotation


def _kinds(annotation: Any, default: Any) -> set[str]:
    """The spec-settable types an option takes: some of bool, int, float, str, None."""
    if annotation is inspect.Parameter.empty:
        return {SCALARS[type(default)]} if type(default) in SCALARS else set()
    if isinstance(annotation, str):  # one that could not be resolved: read its text
        text = annotation.replace(" ", "").replace("typing.", "")
        if m := re.fullmatch(r"Optional\[(.*)\]", text):
            parts = [*m.group(1).split(","), "None"]
        elif m := re.fullmatch(r"Union\[(.*)\]", text):
            parts = m.group(1).split(",")
        else:
            parts = text.split("|")
        return {p for p in parts if p in SCALARS.values()}
    if annotation in SCALARS:
        return {SCALARS[annotation]}
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a, default) for a in typing.get_args(annotation)))
    if annotation is None:
        return {"None"}
    return set()


def _parse_value(player: str, key: str, raw: str, param: Any) -> Any:
    """``raw`` read as the option's annotated type (``bool``, ``int``, ``float``,
    ``str``; ``... | None`` also takes ``none``)."""
    kinds = _kinds(param.annotation, param.default)
    if "None" in kinds and raw.lower() == "none":
        return None
    if "bool" in kinds:
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"player {player!r} option {key!r} takes true or false, got {raw!r}")
        return raw.lower() == "true"
    if "int" in kinds or "float" in kinds:
        for cast in (int, float) if "float" in kinds else (int,):
            try:
                value = cast(raw)
            except ValueError:
                continue
            if math.isfinite(value):  # no option means "not a number" or "infinitely"
                return value
        if "str" not in kinds:
            kind = "a finite number" if "float" in kinds else "an integer"
            raise ValueError(f"player {player!r} option {key!r} takes {kind}, got {raw!r}")
    if "str" in kinds:
        return raw
    raise ValueError(
        f"player {player!r} option {key!r} cannot be set from a spec "
        "(only options annotated int, float, bool or str, or these | None, can)"
    )
