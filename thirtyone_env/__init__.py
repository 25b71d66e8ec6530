"""thirtyone_env: the card game Thirty-One (Scat, Blitz, Knock) for reinforcement learning.

The package has three layers; imports run one way, each layer using only those above
it in this list:

- :mod:`thirtyone_env.game`: the game itself as plain functions over a compact state
  (cards, rules, action ids, events, the engine, table moves, what a seat sees and its
  encoding as features, rewards, the built-in heuristics). No Gymnasium.
- :mod:`thirtyone_env.harness`: tables of players (the one table driver), matches,
  tournaments, game records, replay, analytics, reports and safe file writing.
- :mod:`thirtyone_env.envs`: the RL environments (Gymnasium single and vector envs,
  the numba kernels behind them, the PettingZoo env).

The public names below are importable from here (``from thirtyone_env import
ThirtyOneEnv, Rules``); each is loaded on first use, so ``import thirtyone_env.game...``
loads no Gymnasium. ``ThirtyOne-v0`` and ``ThirtyOne-v1`` (its reward's return varies
with play: :mod:`thirtyone_env.envs.versions`) are registered with Gymnasium as soon as
both this package and Gymnasium are imported, in either order.
"""

from __future__ import annotations

import importlib
import sys

#: public name -> module that defines it
_PUBLIC = {
    "DISCARD_BASE": "thirtyone_env.game.actions",
    "DRAW_STOCK": "thirtyone_env.game.actions",
    "KNOCK": "thirtyone_env.game.actions",
    "NUM_ACTIONS": "thirtyone_env.game.actions",
    "STAND": "thirtyone_env.game.actions",
    "TAKE_DISCARD": "thirtyone_env.game.actions",
    "IllegalActionError": "thirtyone_env.game.actions",
    "RoundResult": "thirtyone_env.game.engine",
    "Policy": "thirtyone_env.game.policies",
    "RandomPolicy": "thirtyone_env.game.policies",
    "GreedyPolicy": "thirtyone_env.game.policies",
    "Rules": "thirtyone_env.game.rules",
    "format_card": "thirtyone_env.game.cards",
    "hand_value": "thirtyone_env.game.cards",
    "parse_card": "thirtyone_env.game.cards",
    "ThirtyOneEnv": "thirtyone_env.envs.env",
}

__all__ = sorted(_PUBLIC)

ENV_ID = "ThirtyOne-v0"  #: the first id; ThirtyOne-v1 changes only the default reward


def __getattr__(name: str) -> object:
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # found once
        return value
    raise AttributeError(f"module 'thirtyone_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


def register_envs() -> None:
    """Register ``ThirtyOne-v0`` and ``ThirtyOne-v1`` with Gymnasium (once; what each
    version changed: :mod:`thirtyone_env.envs.versions`): ``gym.make`` gives the single
    env, ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` the batched one."""
    from gymnasium.envs.registration import register, registry

    entries = {
        "ThirtyOne-v0": (
            "thirtyone_env.envs.env:ThirtyOneEnv",
            "thirtyone_env.envs.versions:make_vector_v0",
        ),
        "ThirtyOne-v1": ("thirtyone_env.envs.versions:make_v1", "thirtyone_env.envs.versions:make_vector_v1"),
    }
    for env_id, (entry, vector_entry) in entries.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry, vector_entry_point=vector_entry)


class _RegisterWithGymnasium:
    """Registers the env right after Gymnasium is first imported (when this package
    came first): ``import thirtyone_env`` must not load Gymnasium, yet
    ``gym.make("ThirtyOne-v0")`` must work in whatever order the two were imported.
    A mere look-up of the module (``importlib.util.find_spec``) executes nothing, so
    the hook stays until the import really runs. A meta path finder by its
    ``find_spec`` alone: ``import thirtyone_env`` loads almost nothing (a command can
    set up its Ctrl-C handling before anything heavy)."""

    def __init__(self) -> None:
        self._looking = False

    def find_spec(self, fullname: str, path: object, target: object = None) -> object:
        if fullname != "gymnasium" or self._looking:
            return None
        import importlib.util

        self._looking = True
        try:
            spec = importlib.util.find_spec("gymnasium")
        finally:
            self._looking = False
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: object) -> None:
            load(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            register_envs()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if "gymnasium" in sys.modules:
    register_envs()
elif not any(isinstance(f, _RegisterWithGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWithGymnasium())
