"""The docs model: commands, options and sub-commands as plain data, whatever parser they were read from.

Rules:
- The reader (click_model.node_of, for the tools' click commands and the umbrella group) fills it; the man
  page renderer (man.py) reads it; click does not leak past the reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Command:
    """One console script: its name, its module, and its `kraftsman` subcommand (None for the umbrella)."""

    name: str
    module: str
    subcommand: str | None
    summary: str


@dataclass
class Option:
    """One flag (or a positional when `flags` is empty)."""

    flags: tuple[str, ...]
    dest: str
    metavar: str | None        # None: the flag takes no value
    help: str
    choices: tuple[str, ...] = ()
    required: bool = False
    repeat: bool = False       # may be given more than once


@dataclass
class Node:
    """A command or sub-command: its usage, options, positionals and children."""

    prog: str
    path: tuple[str, ...]
    description: str
    usage: str
    options: list[Option] = field(default_factory=list)
    positionals: list[Option] = field(default_factory=list)
    subcommands: dict[str, tuple[str, "Node"]] = field(default_factory=dict)

    def walk(self):
        """Yield this node and every descendant, depth first."""
        yield self
        for _, child in self.subcommands.values():
            yield from child.walk()
