"""What the pipeline shows while it runs: one phase at a time, with the tasks of Spark's stages.

On a terminal, each phase is a rich progress bar whose total and completed counts are the tasks of
every Spark stage seen during the phase (read from Spark's status tracker twice a second); elsewhere
(a pipe, a log file) each phase is one line when it ends. Either way the phase's wall time is kept
in `timings`, which the benchmark reads.

Rules:
- No pyspark here: the tracker is any object with Spark's StatusTracker methods
  (getActiveStageIds, getStageInfo), so this module is tested without a JVM.
- rich is imported only when a terminal is there to draw on.
"""
from __future__ import annotations

import threading
import time


class Progress:
    """Show the running phase and its stages' tasks done / total; keep each phase's wall time."""

    def __init__(self, stream, live: bool = False, tracker=None, color: bool = True):
        self.stream, self.live, self.tracker, self.color = stream, live and stream is not None, tracker, color
        self.timings: dict[str, float] = {}

    def phase(self, name: str):
        """Return a context manager that reports the phase while it runs."""
        return _Phase(self, name)

    def done(self, name: str, seconds: float) -> None:
        """Write the line that ends a phase."""
        if self.stream is not None:
            self.stream.write(f"pipeline: {name} done in {seconds:.1f} s\n")
            self.stream.flush()


class StageTasks:
    """Count the tasks of every stage seen since it was made (stages that end keep their counts)."""

    def __init__(self, tracker):
        self.tracker, self.seen = tracker, set()

    def poll(self) -> tuple[int, int]:
        """Return (tasks completed, tasks in all) over the stages seen so far."""
        if self.tracker is None:
            return 0, 0
        self.seen.update(self.tracker.getActiveStageIds())
        done = total = 0
        for stage in self.seen:
            info = self.tracker.getStageInfo(stage)
            if info is not None:
                done, total = done + info.numCompletedTasks, total + info.numTasks
        return done, total


class _Phase:
    def __init__(self, progress: Progress, name: str):
        self.progress, self.name = progress, name
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self):
        self.started = time.monotonic()
        if self.progress.live:
            self.thread = threading.Thread(target=self._draw, daemon=True)
            self.thread.start()
        return self

    def _draw(self) -> None:
        """Draw a rich bar until the phase ends (runs in a daemon thread)."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        counter = StageTasks(self.progress.tracker)
        console = Console(file=self.progress.stream, no_color=not self.progress.color)
        columns = (TextColumn("pipeline: {task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("tasks"), TimeElapsedColumn())
        with Bar(*columns, console=console, transient=True) as bar:
            task = bar.add_task(self.name, total=None)
            while not self.stop.wait(0.5):
                done, total = counter.poll()
                bar.update(task, completed=done, total=total or None)

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread is not None:     # the bar ends within one draw; the phase's line must come after it
            self.thread.join()
        elapsed = self.progress.timings[self.name] = time.monotonic() - self.started
        if exc[0] is None:
            self.progress.done(self.name, elapsed)
