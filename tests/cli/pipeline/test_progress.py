"""The pipeline's progress display without Spark: stage task counts from a fake status tracker, one line
per phase off a terminal, a rich bar that counts the tasks on one."""
from __future__ import annotations

import io
import time
from types import SimpleNamespace

from kraftsman.cli.pipeline.progress import Progress, StageTasks


class FakeTracker:
    """Spark's StatusTracker as the progress display reads it: stages come and go from the active list."""

    def __init__(self):
        self.active: list[int] = []
        self.stages: dict[int, SimpleNamespace] = {}

    def run(self, stage: int, done: int, total: int) -> None:
        self.stages[stage] = SimpleNamespace(numCompletedTasks=done, numTasks=total)
        if stage not in self.active:
            self.active.append(stage)

    def finish(self, stage: int) -> None:
        self.stages[stage].numCompletedTasks = self.stages[stage].numTasks
        self.active.remove(stage)

    def getActiveStageIds(self):  # noqa: N802 (Spark's name)
        return list(self.active)

    def getStageInfo(self, stage):  # noqa: N802 (Spark's name)
        return self.stages.get(stage)


def test_stage_tasks_keep_the_stages_that_ended():
    tracker = FakeTracker()
    counter = StageTasks(tracker)
    tracker.run(1, 2, 6)
    assert counter.poll() == (2, 6)
    tracker.finish(1)
    tracker.run(2, 0, 4)
    assert counter.poll() == (6, 10)
    assert StageTasks(None).poll() == (0, 0)


def test_off_a_terminal_each_phase_is_one_line_and_its_time_is_kept():
    out = io.StringIO()
    progress = Progress(out, live=False, tracker=FakeTracker())
    with progress.phase("decoding"):
        pass
    assert out.getvalue().startswith("pipeline: decoding done in ") and out.getvalue().count("\n") == 1
    assert set(progress.timings) == {"decoding"}


def test_on_a_terminal_a_bar_counts_the_tasks():
    tracker, out = FakeTracker(), io.StringIO()
    out.isatty = lambda: True
    tracker.run(7, 3, 8)
    with Progress(out, live=True, tracker=tracker, color=False).phase("decoding"):
        deadline = time.monotonic() + 30        # the bar's thread draws twice a second; a loaded machine delays it
        while "3/8" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "pipeline: decoding" in out.getvalue() and "3/8" in out.getvalue()
    assert "pipeline: decoding done in " in out.getvalue().rstrip().splitlines()[-1]  # after the bar is cleared
