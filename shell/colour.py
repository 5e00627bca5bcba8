"""Colour for the shell's own layouts (diff): ANSI styles by role, used only where a person reads them.

Rules:
- Colour only when the command's output reaches a terminal (output.writes_to_terminal): never into a pipe,
  a file or a `> FILE` redirection; never when NO_COLOR is set and not empty (the suite's --no-color sets it).
- Plain SGR sequences: the import contract keeps UI libraries such as rich in cli/, above this layer.
- Kafka's own layouts (ls, cat, tree, find) stay uncoloured.
"""
from __future__ import annotations

import os

from .output import writes_to_terminal

STYLES = {"header": "1", "added": "32", "removed": "31", "changed": "33", "old": "31", "new": "32", "field": "36"}


def colour_on(write, environ=None) -> bool:
    """Tell whether text written through `write` may be coloured."""
    environ = os.environ if environ is None else environ
    return not environ.get("NO_COLOR") and writes_to_terminal(write)


def painter(on: bool):
    """Return paint(text, role): `text` in the role's style when colour is on, else unchanged."""
    if not on:
        return lambda text, role: text
    return lambda text, role: f"\033[{STYLES[role]}m{text}\033[0m" if text else text
