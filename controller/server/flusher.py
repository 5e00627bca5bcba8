"""Flusher: the thread that runs the log's fsync jobs for the event loop, one at a time, in order.

Rules:
- submit(job, done) queues `job` (a FileLog.begin_flush() job); the thread runs it, then hands the outcome to the
  loop with one call_soon_threadsafe: done() on success, on_error(what, error) when the job raised (a log that
  cannot be made durable must stop the node). No executor futures: a commit's fsync reaches the loop again in
  one hop.
- close() lets the thread finish the jobs queued before it and end.
"""
from __future__ import annotations

import queue
import threading


class Flusher:
    """One fsync thread feeding results back to `loop`."""

    def __init__(self, loop, on_error, name: str = "fsync"):
        self.loop, self.on_error = loop, on_error
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def submit(self, job, done, what: str = "fsync") -> None:
        """Run `job` on the thread, then done() (or on_error(what, error)) on the loop."""
        self.jobs.put((job, done, what))

    def close(self) -> None:
        """End the thread once the jobs queued so far ran."""
        self.jobs.put(None)

    def _run(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                return
            job, done, what = item
            try:
                job()
            except BaseException as e:  # handed to the loop, which stops the node
                self._call(self.on_error, what, e)
            else:
                self._call(done)

    def _call(self, fn, *args) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the process is ending
            pass
