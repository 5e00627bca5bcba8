"""Stream a command's output to the terminal, through a pager once it is longer than the screen.

Rules:
- As `less -FRX`: output shorter than the screen is printed as it is; the first line past the screen starts
  the pager ($PAGER, else `less -FRX`) and everything, buffered and later, streams into it while the
  command keeps walking; -X leaves the text on screen after `q`.
- Quitting the pager early (a closed pipe) stops the command (PagerClosed), as Ctrl-C does.
- No pager when stdout is not a terminal (the caller then writes straight through); isatty() tells commands that
  the text reaches a screen (directly, or through the pager) when the direct writer does.
"""
from __future__ import annotations

import os
import shlex
import subprocess

DEFAULT_PAGER = "less -FRX"


class PagerClosed(Exception):
    """The user left the pager before the command finished."""


class PagedOutput:
    """A write() target: buffers up to `rows` lines, then pipes everything into a pager process."""

    def __init__(self, write, rows: int, env: dict | None = None):
        self.direct, self.rows, self.env = write, max(rows - 1, 1), env if env is not None else os.environ
        self.buffer: list[str] = []
        self.lines = 0
        self.process = None

    def write(self, text: str) -> None:
        """Take some output."""
        if self.process is not None:
            self._pipe(text)
            return
        self.buffer.append(text)
        self.lines += text.count("\n")
        if self.lines > self.rows:
            self._start()

    def isatty(self) -> bool:
        """Tell whether the text reaches a terminal: the direct writer's answer (the pager runs on the same one)."""
        from .output import writes_to_terminal

        return writes_to_terminal(self.direct)

    def _start(self) -> None:
        command = shlex.split(self.env.get("PAGER") or DEFAULT_PAGER) or shlex.split(DEFAULT_PAGER)
        env = dict(self.env)
        env.setdefault("LESS", "FRX")
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, env=env, text=True,
                                            encoding="utf-8", errors="replace")
        except OSError:
            return          # no pager: keep buffering, printed at the end
        text, self.buffer = "".join(self.buffer), []
        self._pipe(text)

    def _pipe(self, text: str) -> None:
        try:
            self.process.stdin.write(text)
        except (BrokenPipeError, OSError, ValueError):
            raise PagerClosed() from None

    def close(self) -> None:
        """Flush what is buffered, or end the pager's input and wait for the user to leave it."""
        if self.process is None:
            if self.buffer:
                self.direct("".join(self.buffer))
                self.buffer = []
            return
        try:
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        while True:
            try:
                self.process.wait()
                return
            except KeyboardInterrupt:   # Ctrl-C inside the pager: let the pager handle it
                continue
