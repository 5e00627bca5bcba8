"""Batch mode: run command lines read from a script or a pipe, with no prompt and no echo.

Rules:
- Every command is available (cd, pwd and exit make sense in scripts); blank lines and lines starting
  with '#' are skipped; `exit` (or `quit`) ends the batch.
- Output goes to `write`, error lines to `error`: stdout carries only the commands' output.
- The batch stops at the first failing line unless `keep_going`; its status is the first failure's.
"""
from __future__ import annotations

from .output import OK
from .runner import run_line


def run_batch(state, lines, write, error, keep_going: bool = False) -> int:
    """Run each line of `lines` (an iterable of strings); return the first failure's status, or 0."""
    first = OK
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        status = run_line(state, text, write, shell=True, error=error)
        first = first or status
        if (status and not keep_going) or state.exit_requested:
            break
    return first
