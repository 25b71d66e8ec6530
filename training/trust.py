"""Which players a data file may name: the built-in players and models, not code.

A player spec such as ``bots.py:Knocker`` or ``mypackage.bots:Knocker`` imports and runs
that code. Typed on the command line it is the user's own choice; read from a data file
(a recipe, a run folder's stored recipe or config, a sweep file) it would run code a
file someone sent could name. Such files may name only the built-in players (and
``ppo:path=...`` models, which are read as numbers), unless the user passes
``--allow-code`` to say they trust the file. Checked on the file's raw values, before
any spec is imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import agents

#: the keys whose values are player specs (comma-separated lists), wherever they sit:
#: a recipe's table and steps, a run's config, a sweep's options
SPEC_KEYS = frozenset(
    {
        "opponents",
        "eval_opponents",
        "teacher",
        "behaviour",
        "imitate",
        "imitate_behaviour",
        "heads_up_teacher",
    }
)
#: values of those keys that name no player (no teacher, the incoming model)
NOT_PLAYERS = frozenset({"", "model"})


def code_specs(data: Any) -> list[str]:
    """Every player spec under :data:`SPEC_KEYS` anywhere in ``data`` (nested mappings
    and lists, as TOML and JSON give them), in whatever list or mapping the key's value
    holds it, that runs code: not a built-in player."""
    found: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key in SPEC_KEYS:
                    found += [s for text in _strings(value) for s in _specs(text) if _runs_code(s)]
                elif isinstance(value, Mapping | list | tuple):
                    stack.append(value)
        elif isinstance(item, list | tuple):
            stack.extend(v for v in item if isinstance(v, Mapping | list | tuple))
    return found


def _strings(value: Any) -> Iterable[str]:
    """Every string in ``value``: itself, or the leaves of the lists and mappings it holds
    (a sweep's grid lists a key's values, its sample ``{"choice": [...]}``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _runs_code(spec: str) -> bool:
    """An installed package's player, a file's or a module's (a bare unknown name
    imports nothing: the run's own checks call it unknown)."""
    kind = agents.spec_kind(spec)
    return kind in ("registered", "file") or (kind == "module" and ":" in spec)


def _specs(value: str) -> Iterable[str]:
    return (s.strip() for s in value.split(",") if s.strip() not in NOT_PLAYERS)


def check_no_code(data: Any, source: str, allow_code: bool) -> None:
    """``ValueError`` naming ``source`` and its first player that runs code, unless
    ``allow_code`` (the user's ``--allow-code``)."""
    if allow_code:
        return
    code = code_specs(data)
    if code:
        more = f" and {len(code) - 1} more" if len(code) > 1 else ""
        raise ValueError(
            f"{source} names a player that runs code ({code[0][:80]!r}{more}): a file seats only the "
            "built-in players and models unless you pass --allow-code to say you trust it"
        )
