"""Player specs for the research command line, without importing a player package.

The game layer knows the simple players only; the full spec language (``expert``,
``search:worlds=64``, ``ppo:path=...``, a class by import path or file) belongs to the
``agents`` package, which the layers of ``thirtyone_env`` never import. It registers
its spec reader under the entry point group :data:`GROUP` (``pyproject.toml``), and
the command line finds it there: any package may register one instead.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

#: Entry point group of the function that turns a player spec into a player.
GROUP = "thirtyone.player_specs"


def spec_reader() -> Callable[[str], Any]:
    """The installed spec reader (``agents.from_spec`` once this project is installed);
    ``ValueError`` naming the group when none is installed."""
    entries = sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name)
    if not entries:
        raise ValueError(
            f"no player spec reader is installed (entry point group {GROUP!r}); install this project "
            "(pip install -e .), whose agents package registers one"
        )
    return entries[0].load()
