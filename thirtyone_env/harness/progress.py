"""The progress bar of the long commands: a count, its rate and the time left (rich)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


def _clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss, the way the bar shows elapsed and remaining time."""
    s = max(int(seconds), 0)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class RateBar:
    """A rich progress bar of ``total`` ``unit`` with the rate since the start and an
    ETA; ``advance(k)`` counts ``k`` more. ``resumed``: units done before this run
    (shown done, left out of the rate).

    Where the console is not a terminal (a log file, a pipe) rich draws nothing live, so
    the bar prints one plain line (count, rate, elapsed, ETA) to stderr every ``every``
    seconds and at the end instead, as tqdm does; stdout keeps only the results."""

    def __init__(
        self,
        label: str,
        unit: str,
        total: int,
        console: Any,
        disable: bool = False,
        resumed: int = 0,
        every: float = 30.0,
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.plain = not disable and not console.is_terminal
        self.progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>8} " + f"{unit}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=disable or self.plain,
        )
        self.label, self.unit, self.every = label, unit, every
        self.total = total
        self.resumed = resumed
        self.task: Any = None
        self.start = 0.0
        self.last_line = 0.0

    def __enter__(self) -> Callable[[int], None]:
        self.progress.__enter__()
        self.task = self.progress.add_task("", total=self.total, rate="-")
        self.start = self.last_line = time.perf_counter()
        return self.advance

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def advance(self, k: int) -> None:
        self.progress.advance(self.task, k)
        done = self.progress.tasks[0].completed
        now = time.perf_counter()
        rate = max(done - self.resumed, 0) / max(now - self.start, 1e-9)
        self.progress.update(self.task, rate=f"{rate:,.1f}")
        if self.plain and (now - self.last_line >= self.every or done >= self.total):
            self.last_line = now
            left = (self.total - done) / rate if rate > 0 else float("nan")
            eta = _clock(left) if left == left else "-"
            print(
                f"{self.label} {done:,.0f}/{self.total:,} {rate:,.1f} {self.unit}/s "
                f"elapsed {_clock(now - self.start)} ETA {eta}",
                file=sys.stderr,
                flush=True,
            )


def counting(label: str, unit: str, total: int, show: bool = True) -> RateBar:
    """A :class:`RateBar` on stderr (``with counting(...) as advance:``), drawing
    nothing unless ``show``: the progress of a part of a longer command."""
    from rich.console import Console

    return RateBar(label, unit, total, Console(stderr=True), disable=not show)
