"""The CLI's rendering of passbench.core.progress.Progress: a rich progress bar with ETA."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class RichProgress:
    """Shows one bar per stage; warnings go to stderr above the bar."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}", style="dim"),
            console=self.console,
            transient=False,
        )
        self._task: TaskID | None = None

    def start(self, total: int, description: str) -> None:
        if self._task is None:
            # A finished stage's bar stays printed above; drop it from the display so the
            # next stage (`passbench run` has several) does not draw it again.
            for task in list(self._bar.task_ids):
                self._bar.remove_task(task)
            self._bar.start()
        else:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(description, total=total, info="")

    def advance(self, n: int = 1, *, info: str = "") -> None:
        if self._task is not None:
            self._bar.update(self._task, advance=n, info=info[:60])

    def warn(self, message: str) -> None:
        self.console.print(f"[bold yellow]warning:[/] {message}")

    def finish(self) -> None:
        if self._task is not None:
            self._bar.stop()
            self._task = None

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.finish()
