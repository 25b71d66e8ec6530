"""One run by its flags: ``python -m training.run_cli``, one option per
:class:`TrainConfig` field (its ``--help`` text from the field's metadata), ``--resume
RUN_DIR``, ``--no-progress`` and ``--sweep FILE``. This is the run each step of a recipe
is made of (``train.py`` runs recipes), with every option of every step at once: for
experiments and sweeps over single runs. Bad input exits with code 2 and ``PROG: error:
...``, never a traceback; Ctrl-C (or SIGTERM) exits with 130 once the run saved what it
could."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thirtyone_env.harness.command import CommandParser
from training.config import TrainConfig
from training.run import train
from training.run_folder import stored_config

PROG = "python -m training.run_cli"
#: argparse's type of each field type (a bool field is a --flag / --no-flag pair)
ARG_TYPES = {"int": int, "float": float, "str": str}


def build_parser() -> argparse.ArgumentParser:
    """The parser: an option per config field (only those given are set)."""
    parser = CommandParser(
        prog=PROG,
        description="One training run by its flags (train.py runs recipes of such runs).",
        argument_default=argparse.SUPPRESS,
    )
    for f in dataclasses.fields(TrainConfig):
        flags = ["--" + f.name.replace("_", "-"), *f.metadata.get("aliases", ())]
        help_text = f"{f.metadata['help']} (default: {f.default})"
        if f.type == "bool":
            parser.add_argument(*flags, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            parser.add_argument(*flags, type=ARG_TYPES[str(f.type)], help=help_text)
    parser.add_argument(
        "--resume", metavar="RUN_DIR", default=None, help="go on with the run in this folder (its config)"
    )
    parser.add_argument("--no-progress", action="store_true", default=False, help="no progress bar")
    parser.add_argument(
        "--allow-code",
        action="store_true",
        default=False,
        help="let the run folder (--resume) or sweep file name players that run code",
    )
    parser.add_argument(
        "--sweep",
        metavar="FILE",
        default=None,
        help="run the sweep in this JSON file as Ray Tune trials with ASHA (training.sweep; "
        "with --ray-address to join a cluster)",
    )
    return parser


def config_from_args(args: argparse.Namespace) -> tuple[TrainConfig, bool]:
    """The run's config and whether it resumes a run folder's."""
    given = {k: v for k, v in vars(args).items() if k not in ("resume", "no_progress", "sweep", "allow_code")}
    resume = getattr(args, "resume", None)
    if resume is None:
        return TrainConfig(**given), False
    return stored_config(Path(resume), given, getattr(args, "allow_code", False)), True


def sweep_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--sweep FILE``: the sweep's trials on Ray; its summary table. Exit code 1
    when a trial failed (its error is in the summary)."""
    import importlib.util

    from training import sweep as sw

    if any(importlib.util.find_spec(m) is None for m in ("ray", "pyarrow")):
        raise ValueError("--sweep needs Ray Tune: pip install 'thirtyone[cluster]'")
    given = [
        k
        for k, v in vars(args).items()
        if k not in ("sweep", "no_progress", "ray_address", "allow_code") and v is not None
    ]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise ValueError(f"--sweep takes the trials' options from its file: put {flags} in its 'base'")
    spec = sw.Sweep.read(args.sweep, args.allow_code)
    try:
        rows = sw.run_sweep(spec, getattr(args, "ray_address", None) or None)
    except KeyboardInterrupt:
        print(
            f"{PROG}: the sweep was interrupted; its trials are kept in {spec.folder}: "
            "run the same command to go on",
            file=sys.stderr,
        )
        raise
    sw.print_summary(rows, spec)
    print(f"sweep summary: {spec.folder / sw.SUMMARY}, {spec.folder / sw.PLOT}")
    return 1 if any(r["status"] == "error" for r in rows) else 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_again(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """``sys.unraisablehook`` that sends a stop again when Python dropped it: a Ctrl-C or
    SIGTERM that lands while a finalizer (a ``__del__``, a weakref callback) runs raises
    its ``KeyboardInterrupt`` there, where Python prints it and goes on, and the run
    would never stop. Sent again, it lands in the run's own code once the finalizer is
    done."""

    def handle(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            sent = unraisable.exc_value.args == (f"signal {signal.SIGTERM}",)
            again = signal.SIGTERM if sent else signal.SIGINT
            # from a thread, a moment later: raised here, it would be dropped again
            threading.Timer(0.1, os.kill, (os.getpid(), again)).start()
            return
        hook(unraisable)

    handle.stops_again = True  # type: ignore[attr-defined]
    return handle


def stop_like_ctrl_c() -> None:
    """SIGTERM (kill, a job scheduler) stops a run as Ctrl-C does: what it did is saved;
    and neither is lost in a finalizer (:func:`_stop_again`)."""
    signal.signal(signal.SIGTERM, _interrupt)
    if not getattr(sys.unraisablehook, "stops_again", False):
        sys.unraisablehook = _stop_again(sys.unraisablehook)


def exit_code(prog: str, work: Callable[[], int]) -> int:
    """A training command's exit code for ``work()``: its own, 2 for bad input or a place
    that cannot be written (one line ``PROG: error: ...``, never a traceback), 130 when
    interrupted (Ctrl-C or SIGTERM, once what could be saved is saved)."""
    stop_like_ctrl_c()
    try:
        return work()
    except (ValueError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    """Train as the command line says; the exit code (0, 2: bad input, 130: interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def work() -> int:
        if args.sweep is not None:
            return sweep_main(parser, args)
        config, resume = config_from_args(args)
        if not resume:  # a recipe's steps train inside its folder, not through this command
            from thirtyone_env.harness.report import check_not_inside_a_run

            check_not_inside_a_run(config.run_dir, "the run folder")
        try:
            train(config, resume=resume, progress=not args.no_progress)
        except KeyboardInterrupt:
            if config.run_dir.is_dir():
                print(f"{PROG}: interrupted: go on with: {PROG} --resume {config.run_dir}", file=sys.stderr)
            raise
        return 0

    return exit_code(PROG, work)


if __name__ == "__main__":
    sys.exit(main())
