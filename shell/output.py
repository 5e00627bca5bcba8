"""Where a shell command writes: its text, and its failures, which set the command's exit status.

Rules:
- A command writes text with `out(text)` and reports a failure with `out.fail(text)`; the first
  failure's status stays (FAILED for a missing path or a refused operation, USAGE for bad words).
- The caller chooses the streams: interactively both go to the terminal (as Kafka's shell), in
  batch mode failures go to stderr so that stdout holds only the commands' output.
- The codes are the suite's (cli.common.status.ExitStatus), restated here because shell sits below cli.
- `terminal` says whether the text reaches a screen: True or False when the caller knows (a `> FILE` is False),
  None when it does not, and writes_to_terminal() then asks the stream behind `write`.
"""
from __future__ import annotations

OK, FAILED, CORRUPT, USAGE = 0, 1, 2, 64


class Output:
    """A command's output: callable for text, `fail()` for an error line, `status` for the outcome."""

    __slots__ = ("write", "error", "status", "terminal")

    def __init__(self, write, error=None, terminal: bool | None = None):
        self.write = write
        self.error = error or write
        self.status = OK
        self.terminal = terminal

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


def writes_to_terminal(write) -> bool:
    """Tell whether `write` (a bound write method, an Output or a pager) ends on a terminal."""
    if isinstance(write, Output):
        return write.terminal if write.terminal is not None else writes_to_terminal(write.write)
    isatty = getattr(getattr(write, "__self__", None), "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):       # a closed stream
        return False
