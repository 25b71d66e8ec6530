"""A Ctrl-C while a command still loads its libraries: one line, not a traceback.

Imports nothing but the standard library's ``signal`` and ``sys``, so a command can
install it before anything heavy loads (torch takes seconds)."""

from __future__ import annotations

import signal
import sys


def quiet_interrupts(prog: str) -> None:
    """From now on, a Ctrl-C that no handler catches (while the command still loads its
    libraries, before :func:`~thirtyone_env.harness.command.run_command` runs) ends in ``prog: interrupted`` and status
    130, not a traceback of the import it landed in. Call it before the heavy imports."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            print(f"\n{prog}: interrupted", file=sys.stderr)
        else:
            previous(kind, value, tb)

    sys.excepthook = hook
    previous_unraisable = sys.unraisablehook

    def unraisable(info: sys.UnraisableHookArgs) -> None:
        # a Ctrl-C that lands where no exception can go on (the weakref callback of
        # importlib's module lock) would be printed with its traceback and lost: send
        # it again, to land in the command's own code
        if isinstance(info.exc_value, KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        else:
            previous_unraisable(info)

    sys.unraisablehook = unraisable
