"""Environment: the process surroundings a command uses (streams, working directory, variables), injected so
tests run commands in-process.

Rules:
- Colour only on terminals, never with NO_COLOR set or --no-color; KRAFTSMAN_DEBUG=1 (or --debug) asks for
  tracebacks.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Environment:
    """The process surroundings a command uses, injected so tests run commands in-process."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    cwd: str = field(default_factory=os.getcwd)
    env: dict = field(default_factory=lambda: dict(os.environ))

    @property
    def stdout_isatty(self) -> bool:
        """Tell whether stdout is a terminal."""
        return bool(getattr(self.stdout, "isatty", lambda: False)())

    @property
    def stderr_isatty(self) -> bool:
        """Tell whether stderr is a terminal."""
        return bool(getattr(self.stderr, "isatty", lambda: False)())

    @property
    def color(self) -> bool:
        """Tell whether colour may be used on stderr: a terminal, and neither NO_COLOR nor --no-color."""
        return self.stderr_isatty and not self.env.get("NO_COLOR")

    @property
    def debug(self) -> bool:
        """Tell whether tracebacks were asked for."""
        return self.env.get("KRAFTSMAN_DEBUG", "") not in ("", "0")
