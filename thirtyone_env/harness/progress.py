"""The progress bar of the long commands: a count, its rate and the time left (rich)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class RateBar:
    """A rich progress bar of ``total`` ``unit`` with the rate since the start and an
    ETA; ``advance(k)`` counts ``k`` more. ``resumed``: units done before this run
    (shown done, left out of the rate)."""

    def __init__(
        self, label: str, unit: str, total: int, console: Any, disable: bool = False, resumed: int = 0
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>8} " + f"{unit}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=disable,
        )
        self.total = total
        self.resumed = resumed
        self.task: Any = None
        self.start = 0.0

    def __enter__(self) -> Callable[[int], None]:
        self.progress.__enter__()
        self.task = self.progress.add_task("", total=self.total, rate="-")
        self.start = time.perf_counter()
        return self.advance

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def advance(self, k: int) -> None:
        self.progress.advance(self.task, k)
        fresh = self.progress.tasks[0].completed - self.resumed
        self.progress.update(
            self.task, rate=f"{max(fresh, 0) / max(time.perf_counter() - self.start, 1e-9):,.1f}"
        )
