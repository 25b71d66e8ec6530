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
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> "module:attribute" of the player class (imported on first use).
REGISTRY: dict[str, str] = {
    "random": "thirtyone_env.policies:RandomPolicy",
    "greedy": "thirtyone_env.policies:GreedyPolicy",
    "blitz31": "agents.blitz31:Blitz31Player",
    "expert": "agents.expert:ExpertPlayer",
    "search": "agents.search:SearchPlayer",
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
    (``name:key=value,key=value``; values are read as int, float, true/false or text)."""
    name, _, params = spec.partition(":")
    kwargs: dict[str, Any] = {}
    for item in filter(None, params.split(",")):
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"bad player option {item!r} in {spec!r}: expected key=value")
        kwargs[key.strip()] = _parse_value(raw.strip())
    try:
        return make(name.strip(), **kwargs)
    except TypeError as e:
        raise ValueError(f"bad options for player {name!r}: {e}") from None


def _parse_value(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw
