"""``python -m apps.notebook RUN_DIR`` (``make notebook RUN=runs/x``): the training
notebook, executed headless on a run, its HTML written next to the run.

``RUN_DIR`` is a run folder with a ``config.json`` (a single run, or one step of a
recipe run) or a recipe run (``recipe.toml``), whose last PPO step is read (the
notebook plots PPO's evaluations). The notebook runs in a Jupyter kernel without a
browser (nbclient, figures in matplotlib's ``Agg`` backend) with ``THIRTYONE_RUN``
set to the run; the executed notebook becomes ``<run>/training-notebook.html``
(``-2``, ``-3``, ... when an earlier one is there: nothing is written over). Bad input
exits with code 2 and one line before the notebook starts; a cell that fails still
writes the HTML, with the error in it, and exits with code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from thirtyone_env.harness.command import CommandParser, run_command
from thirtyone_env.harness.files import atomic_write, check_writable_dir

PROG = "python -m apps.notebook"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "training.ipynb"
HTML = "training-notebook"


def ppo_run(path: Path) -> Path:
    """The run folder the notebook reads: ``path`` itself, or a recipe run's last PPO
    step (``ValueError`` naming what is missing)."""
    if not path.is_dir():
        raise ValueError(f"{path}: no such run folder")
    if (path / "config.json").exists():
        return path
    if (path / "recipe.toml").exists():
        steps = sorted(
            (p.parent for p in (path / "steps").glob("*_ppo*/config.json")),
            key=lambda p: p.stat().st_mtime,
        )
        if not steps:
            raise ValueError(
                f"{path}: this recipe run has no PPO step, and the notebook plots PPO's evaluations"
            )
        return steps[-1]
    raise ValueError(f"{path}: not a run folder (no config.json, no recipe.toml)")


def html_path(run: Path) -> Path:
    """``<run>/training-notebook.html``, numbered after any earlier one."""
    path, n = run / f"{HTML}.html", 1
    while path.exists():
        n += 1
        path = run / f"{HTML}-{n}.html"
    return path


class _OwnCtrlC(asyncio.SelectorEventLoop):
    """An event loop on which nbclient's own Ctrl-C handler is not installed: it shuts the
    kernel down while a cell still waits on it, and its clean-up then fails with
    tracebacks. The command's handler interrupts the running cell instead."""

    def add_signal_handler(self, sig: int, callback: Any, *args: Any) -> None:
        if sig != signal.SIGINT:
            super().add_signal_handler(sig, callback, *args)

    def remove_signal_handler(self, sig: int) -> bool:
        return False if sig == signal.SIGINT else super().remove_signal_handler(sig)


class Stopped(Exception):
    """Raised between cells to end the run after a Ctrl-C."""


def execute(run: Path, notebook: Path, timeout: int, progress: bool = False) -> tuple[Any, str, str | None]:
    """The notebook executed on ``run``: the executed notebook, its HTML, and the
    first error (``None`` if none); ``progress``: a bar of the code cells run. A Ctrl-C
    interrupts the running cell, shuts the kernel down in order and raises
    ``KeyboardInterrupt``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    from thirtyone_env.harness.progress import counting

    nb = nbformat.read(notebook, as_version=4)
    os.environ["THIRTYONE_RUN"] = str(run.resolve())
    os.environ["MPLBACKEND"] = "Agg"
    loop, interrupted = _OwnCtrlC(), threading.Event()
    error = None

    def executed(**_: Any) -> None:
        advance(1)
        if interrupted.is_set():  # pressed between cells (or while the kernel started)
            raise Stopped

    def on_ctrl_c(signum: int, frame: Any) -> None:
        interrupted.set()
        if client.km is not None and client.km.has_kernel:
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(client.km.interrupt_kernel()))

    cells = sum(c.cell_type == "code" for c in nb.cells)
    with counting("notebook", "cells", cells, progress) as advance:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(notebook.parent)}},
            on_cell_executed=executed,
            # the kernel's own log from errors up: its warning about TCP on loopback
            # says nothing about the notebook (the cells' output is kept whole)
            extra_arguments=["--IPKernelApp.log_level=ERROR"],
        )
        previous = signal.signal(signal.SIGINT, on_ctrl_c)
        try:
            loop.run_until_complete(client.async_execute())
        except CellExecutionError as e:
            error = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        except Stopped:
            pass
        finally:
            signal.signal(signal.SIGINT, previous)
            loop.close()
    if interrupted.is_set():
        raise KeyboardInterrupt
    html, _ = HTMLExporter().from_notebook_node(nb)
    return nb, html, error


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog=PROG, description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("run", type=Path, help="a run folder (config.json) or a recipe run (recipe.toml)")
    p.add_argument("--timeout", type=int, default=1800, help="seconds a cell may take (default 1800)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        if args.timeout < 1:
            raise ValueError(f"--timeout={args.timeout} must be at least 1")
        run = ppo_run(args.run)
        out = html_path(run)
        check_writable_dir(run, "the run folder")  # before the notebook runs, not after
        print(f"executing {NOTEBOOK.relative_to(ROOT)} on {run} ...", flush=True)
        _, html, error = execute(run, NOTEBOOK, args.timeout, progress=not args.no_progress)
        atomic_write(out, html, replace=False)
        print(f"notebook: {out}")
        if error:
            print(f"{PROG}: a cell failed: {error}", file=sys.stderr)
            return 1
        return 0

    return run_command(PROG, "the notebook", body, interrupted="interrupted: nothing written")


if __name__ == "__main__":
    sys.exit(main())
