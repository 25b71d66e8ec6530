"""Players for Thirty-One tables, by name: ``agents.make("expert")``.

Every player follows the protocol of :mod:`thirtyone_env.policies`:
``act(observation, action_mask) -> int``, an ``obs_encoding`` (the heuristics read a
:class:`~thirtyone_env.views.PlayerView`, which holds no hidden card) and, for players
that use randomness, ``reset(rng)`` to receive the generator of the game.

| name      | player                                                            |
|-----------|-------------------------------------------------------------------|
| random    | uniform over legal actions                                        |
| greedy    | take the discard if it helps, else draw; knock at a fixed value    |
| blitz31   | the Blitz31 Windows game's computer player (master suit)           |
| expert    | expected-value draws, knock by estimated survival chance           |
| search    | determinized Monte Carlo search over the fast engine               |
| ppo       | a MaskablePPO policy from ``train.py`` (default: the shipped one)  |
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

#: name -> "module:attribute" of the player class (imported on first use).
REGISTRY: dict[str, str] = {
    "random": "thirtyone_env.policies:RandomPolicy",
    "greedy": "thirtyone_env.policies:GreedyPolicy",
    "blitz31": "agents.blitz31:Blitz31Player",
    "expert": "agents.expert:ExpertPlayer",
    "search": "agents.search:SearchPlayer",
    "ppo": "agents.ppo:PPOPlayer",
}


def names() -> list[str]:
    """Names :func:`make` accepts."""
    return list(REGISTRY)


def make(name: str, **kwargs: Any) -> Any:
    """A new player by registry name; keyword arguments go to its constructor."""
    if name not in REGISTRY:
        raise ValueError(f"unknown player {name!r}; players are {names()}")
    module, attr = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), attr)(**kwargs)


def from_spec(spec: str) -> Any:
    """A player from a command-line spec: ``"greedy"`` or ``"greedy:knock_at=27"``
    (``name:key=value,key=value``). Each value must fit the type of the option's
    default (a number for a numeric option, true/false for a flag), else ``ValueError``
    names the option."""
    name, _, params = spec.partition(":")
    name = name.strip()
    if name not in REGISTRY:
        raise ValueError(f"unknown player {name!r}; players are {names()}")
    module, attr = REGISTRY[name].split(":")
    cls = getattr(importlib.import_module(module), attr)
    params_of = {k: p for k, p in inspect.signature(cls).parameters.items() if k != "self"}
    kwargs: dict[str, Any] = {}
    for item in filter(None, params.split(",")):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"bad player option {item!r} in {spec!r}: expected key=value")
        if key not in params_of:
            raise ValueError(
                f"bad options for player {name!r}: unknown option {key!r}; options are {sorted(params_of)}"
            )
        kwargs[key] = _parse_value(name, key, raw.strip(), str(params_of[key].annotation))
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ValueError(f"bad options for player {name!r}: {e}") from None


def _parse_value(player: str, key: str, raw: str, annotation: str) -> Any:
    """``raw`` read as the option's annotated type (``bool``, ``int``, ``float``, ``str``;
    ``... | None`` also takes ``none``)."""
    kinds = [k.strip() for k in annotation.split("|")]
    if "None" in kinds and raw.lower() == "none":
        return None
    if "bool" in kinds:
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"player {player!r} option {key!r} takes true or false, got {raw!r}")
        return raw.lower() == "true"
    if "int" in kinds or "float" in kinds:
        for cast in (int, float) if "float" in kinds else (int,):
            try:
                return cast(raw)
            except ValueError:
                pass
        kind = "a number" if "float" in kinds else "an integer"
        raise ValueError(f"player {player!r} option {key!r} takes {kind}, got {raw!r}")
    if "str" in kinds:
        return raw
    raise ValueError(f"player {player!r} option {key!r} cannot be set from a spec")
