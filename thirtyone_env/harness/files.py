"""Writing results safely: atomic files, destination probes and run locks.

Every writer of the project (run folders, results, records, models, logs) goes
through here so that

- a reader or a crash never sees half a file (:func:`atomic_write` writes a temporary
  file beside the target, fsyncs it and renames it over the target);
- a file keeps the permissions any new file of the user gets (the umask), not the
  0600 of :func:`tempfile.mkstemp`, so colleagues on a shared machine can read results;
- a destination is probed before the long work starts (:func:`check_writable_dir`,
  :func:`check_new_file`), so a typo costs a second, not a tournament;
- two runs never write one folder at once (:class:`FolderLock`: an exclusive
  ``flock`` held for the run's duration, released by the kernel even on a crash);
- a JSON result is strict JSON any reader takes (:func:`json_text`: no ``NaN`` literal).

Standard library only.
"""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

#: Longest file name most file systems take (bytes).
NAME_MAX = 255


def json_ready(x: Any) -> Any:
    """``x`` as strict JSON takes it: numpy numbers as Python ones, ``nan`` and the
    infinities (an interval of one sample, a ratio of two zero variances) as ``None``,
    tuples as lists, other objects (paths) as their text."""
    if isinstance(x, dict):
        return {str(k): json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)


def json_value(text: str | bytes) -> Any:
    """The values of JSON ``text`` someone may have crafted: ``ValueError`` for text that
    is no JSON and for nesting too deep to read (Python's reader would raise
    ``RecursionError``, which no caller expects of a data file)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("its JSON is nested too deep to read") from None


def read_json_object(
    path: str | os.PathLike, entry_fits: Callable[[Any], bool], what: str, shape: str
) -> dict[str, Any]:
    """The JSON object a program's own record file holds (``{}`` when there is none),
    each of its values passing ``entry_fits``: ``ValueError`` "``path`` is not
    ``what``: ..." for a file that cannot be read, is no JSON or is nested too deep, or
    is not of that ``shape`` (said in words)."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json_value(path.read_bytes())
        if not isinstance(data, dict) or not all(entry_fits(v) for v in data.values()):
            raise ValueError(f"not {shape}")
    except (OSError, ValueError) as e:
        raise ValueError(f"{path} is not {what}: {e}") from None
    return data


def json_text(x: Any, indent: int = 1) -> str:
    """``x`` as strict JSON text (:func:`json_ready`), ending in a newline: Python's
    ``json`` would write ``NaN``, which JavaScript, ``jq`` and most readers refuse."""
    return json.dumps(json_ready(x), indent=indent, allow_nan=False) + "\n"


def _umask() -> int:
    """The process's umask (read without changing it where the OS allows)."""
    try:  # Linux: /proc says it without a race
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """Permissions a new regular file gets under the current umask."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """Permissions a new folder gets under the current umask."""
    return 0o777 & ~_umask()


def atomic_write(path: str | os.PathLike, data: bytes | str, *, replace: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically with the user's umask; returns the path.

    The parent folder is created if needed. The temporary file lies beside the target
    (same file system, so the rename is atomic) and is removed if anything fails. With
    ``replace=False`` a file that exists by then (made by anyone, even a moment ago) is
    never replaced: ``ValueError`` names it (the file is linked into place, which fails
    where a name exists, instead of renamed over it).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, file_mode())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise ValueError(f"{path} exists: refusing to replace it (give a new name)") from None
            finally:
                Path(tmp).unlink(missing_ok=True)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def make_dir(path: str | os.PathLike) -> Path:
    """Create a folder (and its parents) with the user's umask; ``ValueError`` names
    the path when it cannot be made (a file in the way, no permission)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"{path} cannot be a folder: a file of that name is in the way") from None
    except OSError as e:
        raise ValueError(f"cannot create folder {path}: {e.strerror or e}") from None
    return path


def check_name(name: str, what: str) -> None:
    """``ValueError`` unless ``name`` is one path component a file system takes."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"{what} {name!r} is not a file or folder name")
    if len(name.encode()) > NAME_MAX:
        raise ValueError(f"{what} is {len(name.encode())} bytes long; file names take at most {NAME_MAX}")


def check_writable_dir(path: str | os.PathLike, what: str = "folder") -> Path:
    """``ValueError`` unless files can be written in ``path`` (a folder, or a place one
    can be created): the nearest existing ancestor must be a writable folder and no
    component a file. Creates nothing; every component's length is checked."""
    path = Path(path)
    for part in path.parts:
        if part not in ("/", "..", ".") and len(part.encode()) > NAME_MAX:
            raise ValueError(f"{what} {path}: the name {part[:40]!r}... is longer than {NAME_MAX} bytes")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ValueError(f"{what} {path}: {probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {path}: {probe} is not writable")
    return path


def read_small_text(path: str | os.PathLike, most: int = 16 << 20) -> str:
    """The UTF-8 text of a small input file (a recipe, a sweep): ``ValueError`` for a
    path that is not a regular file (a FIFO or a device would block or never end), or
    holds more than ``most`` bytes; ``OSError`` as reading gives it."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is not a regular file")
    if path.exists() and path.stat().st_size > most:
        raise ValueError(
            f"{path} holds {path.stat().st_size:,} bytes, more than the {most:,} such a file may"
        )
    return path.read_text(encoding="utf-8")


def check_new_file(path: str | os.PathLike, what: str = "file") -> Path:
    """``ValueError`` unless ``path`` names a file that does not exist yet in a place
    where it can be written (never replace a file the program did not write)."""
    path = Path(path)
    check_name(path.name, what)  # first: a name too long makes is_dir() raise
    if path.is_dir():
        raise ValueError(f"{what} {path} is a folder; give a file name")
    if path.exists() or path.is_symlink():
        raise ValueError(f"{what} {path} exists: refusing to replace it (give a new name)")
    check_writable_dir(path.parent if str(path.parent) else ".", f"{what} {path}:")
    return path


class FolderLock:
    """An exclusive lock on a folder for the duration of a run.

    ``with FolderLock(folder, "run"):`` creates ``folder/.lock`` and holds an ``flock``
    on it; a second holder (another process) gets ``ValueError`` at once, naming the
    folder. The kernel drops the lock when the process ends, however it ends, so a
    crashed run never leaves a stale lock. The lock file itself stays (it is empty).
    """

    NAME = ".lock"

    def __init__(self, folder: str | os.PathLike, what: str = "folder") -> None:
        self.folder = Path(folder)
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        import fcntl

        make_dir(self.folder)
        fd = os.open(self.folder / self.NAME, os.O_RDWR | os.O_CREAT, file_mode())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise ValueError(
                    f"{self.what} {self.folder} is in use by another running process: "
                    "wait for it to finish or pick another folder"
                ) from None
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
