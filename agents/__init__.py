"""Players for Thirty-One tables, by name: ``agents.make("random")``.

Every player follows the protocol of :mod:`thirtyone_env.policies`:
``act(observation, action_mask) -> int``, optional ``obs_encoding`` and ``reset(rng)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thirtyone_env.policies import RandomPolicy, RulePolicy

REGISTRY: dict[str, Callable[..., Any]] = {
    "random": RandomPolicy,
    "rule": RulePolicy,
}


def names() -> list[str]:
    """Names :func:`make` accepts."""
    return sorted(REGISTRY)


def make(name: str, **kwargs: Any) -> Any:
    """A new player by registry name; keyword arguments go to its constructor."""
    try:
        factory = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown player {name!r}; players are {names()}") from None
    return factory(**kwargs)
