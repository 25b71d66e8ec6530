"""Players from specs (``"expert"``, ``"search:worlds=64"``, ``"ppo"``,
``"file.py:Class"``) without importing a player package.

The game layer knows the simple players only; the full spec language belongs to the
``agents`` package, which the layers of ``thirtyone_env`` never import. It registers
its spec reader under the entry point group :data:`GROUP` (``pyproject.toml``), and
the envs and the research command find it there: any package may register one instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from thirtyone_env.harness.parallel import Backend

#: Entry point group of the function ``reader(specs, backend)`` that gives the function
#: turning a player spec into a player.
GROUP = "thirtyone.player_specs"


def spec_reader(specs: Iterable[str] = (), backend: Backend | None = None) -> Callable[[str], Any]:
    """How to build the players of ``specs`` for work on ``backend``: the installed
    reader (``agents.portable.reader`` once this project is installed: a spec's files
    travel with it to a Ray cluster's workers); ``ValueError`` naming the group when
    none is installed."""
    entries = sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name)
    if not entries:
        raise ValueError(
            f"no player spec reader is installed (entry point group {GROUP!r}); install this project "
            "(pip install -e .), whose agents package registers one"
        )
    return entries[0].load()(specs, backend)


def spec_player(spec: str) -> Any:
    """A new player from ``spec`` (``ValueError`` naming the problem for a bad one)."""
    return spec_reader([spec])(spec)
