"""One parallel runner, two backends: local processes or a Ray cluster.

Tournaments, gauntlets and research studies cut their work into seed-keyed tasks
(each task's randomness comes from its own child of the run's seed) and gather the
results in task order, so a result never depends on where or by how many workers the
tasks ran. :func:`ordered_map` runs such tasks:

- ``Backend("local", workers)``: ``workers`` processes of this machine
  (``multiprocessing``; one worker runs the tasks in this process);
- ``Backend("ray", workers, address)``: Ray tasks, at most ``workers`` in flight (``0``:
  twice the cluster's CPUs). ``address`` (or ``RAY_ADDRESS``) names a running cluster
  (``ray start --head``); without one a local Ray is started on 127.0.0.1. A task whose
  worker or node dies is run again (Ray's ``max_retries``); since a task's result
  depends on its seed alone, the rerun gives the same result and nothing is counted
  twice.

The code must be importable on every node (this project installed there, as on the
head node); players are named by spec, never by an object.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import signal
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

BACKENDS = ("local", "ray")
NO_RAY = "the ray backend needs Ray: pip install 'thirtyone[cluster]'"
#: Times Ray runs a task again after its worker or node died.
RAY_RETRIES = 5


def available_cpus() -> int:
    """CPUs this process may run on (its affinity where the OS tells it): the most
    local worker processes a command starts."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Backend:
    """Where tasks run: ``kind`` (``"local"`` or ``"ray"``), ``workers`` (processes, or
    Ray tasks in flight; ``0`` with Ray: twice the cluster's CPUs) and, for Ray, the
    cluster ``address`` (``None``: ``RAY_ADDRESS``, else a new local Ray)."""

    kind: str = "local"
    workers: int = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise ValueError(f"unknown backend {self.kind!r}; backends are {list(BACKENDS)}")
        if not isinstance(self.workers, int) or isinstance(self.workers, bool) or self.workers < 0:
            raise ValueError(f"workers must be a non-negative integer, got {self.workers!r}")
        if self.kind == "local" and self.workers < 1:
            raise ValueError("local workers must be at least 1")
        if self.address is not None and self.kind != "ray":
            raise ValueError("a cluster address needs the ray backend")
        if self.kind == "ray" and importlib.util.find_spec("ray") is None:
            raise ValueError(NO_RAY)


def _ignore_interrupt() -> None:
    """Local workers leave Ctrl-C to the main process; the pool's SIGTERM just ends them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def ordered_map(fn: Callable[[Any], Any], tasks: Iterable[Any], backend: Backend) -> Iterator[Any]:
    """``fn(task)`` for every task, yielded in task order. ``fn`` must be a module-level
    function (workers import it); ``tasks`` is read lazily."""
    if backend.kind == "ray":
        yield from _ray_map(fn, tasks, backend)
    elif backend.workers <= 1:
        yield from map(fn, tasks)
    else:
        with mp.get_context().Pool(backend.workers, initializer=_ignore_interrupt) as pool:
            yield from pool.imap(fn, tasks)


#: Seconds a cluster's address has to answer before a run is refused.
REACH_TIMEOUT = 5.0


def check_reachable(address: str) -> None:
    """``ValueError`` unless ``address`` (``host:port``, or ``ray://host:port`` for Ray
    Client) answers a TCP connection within :data:`REACH_TIMEOUT` seconds: a run meant
    for a cluster that is not there stops before its first game, in one line, instead of
    waiting on Ray's retries. ``"auto"`` and ``"local"`` are Ray's own to resolve."""
    if address in ("auto", "local"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"cluster address {address!r} is not host:port (ray start --head prints it)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT):
            pass
    except OSError as e:
        raise ValueError(f"cannot reach the Ray cluster at {address}: {e}") from None


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, connected to ``address`` (else ``RAY_ADDRESS``, else a new
    local Ray listening on 127.0.0.1 only); an existing connection is kept."""
    if not (address or os.environ.get("RAY_ADDRESS")):
        # a local Ray's processes name the loopback address, not the machine's outward
        # one (read when ray is first imported; workers inherit it)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ValueError(NO_RAY) from None
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if target is None:  # a new Ray of our own, never one that happens to run here
            kwargs["_node_ip_address"] = "127.0.0.1"
        else:
            check_reachable(target)
        try:
            ray.init(address=target or "local", **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ValueError(f"cannot reach the Ray cluster at {target}: {e}") from None
    return ray


def _apply(fn: Callable[[Any], Any], task: Any) -> Any:
    """One task on a Ray worker (any picklable callable, builtins included)."""
    return fn(task)


def _ray_map(fn: Callable[[Any], Any], tasks: Iterable[Any], backend: Backend) -> Iterator[Any]:
    ray = connect(backend.address)
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES, retry_exceptions=False)(_apply)
    window = backend.workers or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    pending: deque = deque()
    it = iter(tasks)
    try:
        for task in it:
            pending.append(remote.remote(fn, task))
            if len(pending) >= window:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
