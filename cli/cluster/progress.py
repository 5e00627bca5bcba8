"""One progress line on a terminal's stderr, redrawn in place (kafka-cluster wait and health --exit-when-healthy).

Rules:
- Only when stderr is a terminal; a pipe or a file gets nothing, so scripts see stderr only when a command fails.
- clear() wipes the line before the command prints its result.
"""
from __future__ import annotations


class ProgressLine:
    """One progress line on a terminal (stderr), redrawn in place."""

    def __init__(self, env):
        self.env, self.shown = env, False

    def show(self, text: str) -> None:
        """Redraw the line with `text` (on a terminal only)."""
        if self.env.stderr_isatty:
            self.env.stderr.write("\r\x1b[K" + text)
            self.env.stderr.flush()
            self.shown = True

    def clear(self) -> None:
        """Wipe the line if it was drawn."""
        if self.shown:
            self.env.stderr.write("\r\x1b[K")
            self.env.stderr.flush()
            self.shown = False
