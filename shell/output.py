"""Where a shell command writes: its text, and its failures, which set the command's exit status.

Rules:
- A command writes text with `out(text)` and reports a failure with `out.fail(text)`; the first
  failure's status stays (FAILED for a missing path or a refused operation, USAGE for bad words).
- The caller chooses the streams: interactively both go to the terminal (as Kafka's shell), in
  batch mode failures go to stderr so that stdout holds only the commands' output.
- The codes are the suite's (cli.common.ExitStatus), restated here because shell sits below cli.
"""
from __future__ import annotations

OK, FAILED, CORRUPT, USAGE = 0, 1, 2, 64


class Output:
    """A command's output: callable for text, `fail()` for an error line, `status` for the outcome."""

    __slots__ = ("write", "error", "status")

    def __init__(self, write, error=None):
        self.write = write
        self.error = error or write
        self.status = OK

    def __call__(self, text: str) -> None:
        self.write(text)

    def fail(self, text: str, status: int = FAILED) -> None:
        """Write an error line and remember the first failure's status."""
        self.error(text)
        if not self.status:
            self.status = status


def as_output(write, error=None) -> Output:
    """Return `write` when it is an Output already, else an Output over it."""
    return write if isinstance(write, Output) else Output(write, error)
