"""Players that travel to other machines with the files they read, by content.

A spec such as ``ppo:path=runs/a/best_model.zip`` or ``bots.py:Knocker`` names a file
that exists on the machine where the command was typed; the workers of a Ray cluster
on other nodes do not have it. :class:`PortableReader` reads every file the given
specs read (:func:`agents.spec_files`, with the files beside a model that say its
table) once, where it is made, and carries their bytes with a SHA-256 of each. Called
on any machine it writes the files into that machine's cache folder (once, under
their digest, atomically) and builds the player from the spec with the paths moved
there: the same bytes everywhere, so the same games.

:func:`reader` is what the command-line tools and the research layer (through the
``thirtyone.player_specs`` entry point) build players with: :func:`agents.from_spec`
itself where the work stays on this machine, a portable reader where it goes to Ray.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import agents
from thirtyone_env.harness.files import atomic_write
from thirtyone_env.harness.parallel import Backend

#: Environment variable naming the folder carried files are written to on a worker
#: (default: ``thirtyone-<user id>/carried`` in the system's temporary folder).
CACHE_ENV = "THIRTYONE_CACHE"


@dataclass(frozen=True)
class CarriedFile:
    """A file's name and bytes (``digest``: their SHA-256), with the files that belong
    beside it (a model's run config)."""

    name: str
    data: bytes = field(repr=False)
    digest: str
    companions: tuple[CarriedFile, ...] = ()

    @classmethod
    def read(cls, path: str | os.PathLike, companions: Iterable[Path] = ()) -> CarriedFile:
        path = Path(path).expanduser()
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read {path} to send it to the workers: {e.strerror or e}") from None
        return cls(path.name, data, hashlib.sha256(data).hexdigest(), tuple(cls.read(p) for p in companions))

    def place(self, folder: Path | None = None) -> Path:
        """The file written on this machine (once: a copy with the right bytes is
        kept), in ``folder`` or its own folder of the cache named by its digest, with
        its companions beside it; its path."""
        folder = folder or cache_dir() / self.digest
        path = folder / self.name
        if not _holds(path, self.digest):
            atomic_write(path, self.data)
        for companion in self.companions:
            companion.place(folder)
        return path


def cache_dir() -> Path:
    """This machine's folder of carried files (:data:`CACHE_ENV`)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"thirtyone-{uid}" / "carried"


@functools.lru_cache(maxsize=256)
def _verified(path_text: str, size: int, mtime_ns: int, digest: str) -> bool:
    return hashlib.sha256(Path(path_text).read_bytes()).hexdigest() == digest


def _holds(path: Path, digest: str) -> bool:
    """Whether ``path`` is a file with these bytes (hashed once per file version)."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return path.is_file() and _verified(str(path), stat.st_size, stat.st_mtime_ns, digest)


class PortableReader:
    """Builds players from specs on any machine: ``reader(spec)``. The files of the
    specs given when it is made travel inside it (it is pickled with their bytes);
    other specs are built as they are (:func:`agents.from_spec`)."""

    def __init__(self, specs: Iterable[str]) -> None:
        self.carried: dict[str, dict[str, CarriedFile]] = {}
        self.options: dict[str, tuple[str, ...]] = {}  # each spec's file options
        for spec in dict.fromkeys(specs):
            files: dict[str, CarriedFile] = {}
            target = agents.player_class(spec)
            companions = getattr(target, "companion_files", None)
            options = tuple(getattr(target, "FILE_OPTIONS", ()))
            for text in agents.spec_files(spec):
                extra = companions(text) if callable(companions) and not text.endswith(".py") else []
                files[text] = CarriedFile.read(text, extra)
            if files:
                self.carried[spec], self.options[spec] = files, options

    def local_spec(self, spec: str) -> str:
        """``spec`` with its carried files written on this machine and named there."""
        files = self.carried.get(spec)
        if not files:
            return spec
        moved = {text: str(f.place()) for text, f in files.items()}
        return agents.relocate(spec, moved, self.options[spec])

    def __call__(self, spec: str) -> Any:
        return agents.from_spec(self.local_spec(spec))


def reader(specs: Iterable[str] = (), backend: Backend | None = None) -> Callable[[str], Any]:
    """How players are built for work on ``specs`` that runs on ``backend``:
    :func:`agents.from_spec` where it stays on this machine (the files are where the
    specs say), a :class:`PortableReader` carrying the files the specs read where it
    goes to a Ray cluster."""
    if backend is not None and backend.kind == "ray":
        return PortableReader(specs)
    return agents.from_spec
