"""Players that travel to other machines with the files they read, by content.

A spec such as ``ppo:path=runs/a/best_model.zip`` or ``bots.py:Knocker`` names a file
that exists on the machine where the command was typed; the workers of a Ray cluster
on other nodes do not have it. :class:`PortableReader` reads every file the given
specs read (:func:`agents.spec_files`, with the files beside a model that say its
table) once, where it is made, and carries their bytes with a SHA-256 of each. Called
on any machine it writes the files into that machine's cache folder (under their
digest, atomically) and builds the player from the spec with the paths moved there:
the same bytes everywhere, so the same games.

What runs is what was carried: a copy already in the cache is hashed again on every
use (never trusted for its size and time, which anyone who can write the file can
keep), and the cache folder is private (the user's own, mode 0700, no symbolic link),
so no other user can put or swap a file between that check and the load that follows.
A folder that is not is refused, never used.

:func:`reader` is what the command-line tools and the research layer (through the
``thirtyone.player_specs`` entry point) build players with: :func:`agents.from_spec`
itself where the work stays on this machine, a portable reader where it goes to Ray.
"""

from __future__ import annotations

import hashlib
import os
import stat
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
        """The file written on this machine, in ``folder`` or its own folder of the
        cache named by its digest, with its companions beside it; its path. A copy
        already there is kept only if its bytes, hashed now, are these."""
        folder = folder or cache_dir() / self.digest
        path = folder / self.name
        if not _holds(path, self.digest):
            atomic_write(path, self.data)
        for companion in self.companions:
            companion.place(folder)
        return path


def cache_dir() -> Path:
    """This machine's folder of carried files (:data:`CACHE_ENV`), made private
    (mode 0700) where it is new; ``ValueError`` names it where it exists but is not
    private (:func:`_private_dir`). The default lies in the system's temporary folder,
    which every user can write: the ``thirtyone-<uid>`` folder made there is checked
    the same way, so no one else can have made it or reach inside."""
    root = os.environ.get(CACHE_ENV)
    if root:
        folder = Path(root).expanduser()
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(
                f"cannot make the cache folder {folder} ({CACHE_ENV}): {e.strerror or e}"
            ) from None
        return _private_dir(folder)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return _private_dir(_private_dir(Path(tempfile.gettempdir()) / f"thirtyone-{uid}") / "carried")


def _private_dir(folder: Path) -> Path:
    """``folder``, made with mode 0700 if it is missing, else checked to be a real
    folder (not a symbolic link) owned by this user that no group or other user can
    reach; ``ValueError`` names it and says what is wrong. (Where the system has no
    user ids, only that it is a folder.)"""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise ValueError(f"cannot make the cache folder {folder}: {e.strerror or e}") from None
    else:
        os.chmod(folder, 0o700)  # the umask may have taken bits the owner needs
        return folder
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        problem = "is a symbolic link"
    elif not stat.S_ISDIR(info.st_mode):
        problem = "is not a folder"
    elif hasattr(os, "getuid") and info.st_uid != os.getuid():
        problem = f"is owned by user id {info.st_uid}, not by you ({os.getuid()})"
    elif hasattr(os, "getuid") and info.st_mode & 0o077:
        problem = f"can be reached by other users (mode {stat.S_IMODE(info.st_mode):04o}, not 0700)"
    else:
        return folder
    raise ValueError(
        f"refusing the cache folder {folder}: it {problem}; remove it or set {CACHE_ENV} to a private folder"
    )


def _holds(path: Path, digest: str) -> bool:
    """Whether ``path`` is a regular file (not a symbolic link) with these bytes,
    hashed now: every use reads the file again, since a file of the same size and
    time may hold other bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        return hashlib.sha256(f.read()).hexdigest() == digest


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
