"""Run shell command lines: parse words into a command and its arguments, then run it.

Rules:
- Interactive and batch modes have every command; one-shot mode only the ones that are not shell-only
  (Kafka: cat, find, ls, tree; kraftsman adds diff).
- An empty line does nothing; a bad command or bad arguments print one argparse4j-style line.
- Every run returns an exit status: 0, FAILED (1) when a command reported a failure (a missing path),
  USAGE (64) for an unknown command or words that do not fit its arguments.
- Interactive and batch lines may end with `> FILE`: that one command's output goes to FILE (written
  atomically once the command has finished), its error lines stay on the terminal; the command knows its
  output is not a terminal (no ls columns, no colour).
"""
from __future__ import annotations

import os

from .commands import available
from .output import USAGE, Output, as_output
from .parsing import HELP_FLAGS, UsageError, help_text, parse, split_words


def _unknown(word: str, names: list[str]) -> str:
    close = [n for n in names if n.startswith(word)] if word else []
    if close:
        return f"invalid choice: '{word}': did you mean " + " or ".join(f"'{n}'" for n in close) + "?"
    return f"invalid choice: '{word}' (choose from {{{','.join(names)}}})"


def run_words(state, words: list[str], write, shell: bool, error=None) -> int:
    """Run one command given as words (trailing empty words are dropped); return its exit status."""
    out = as_output(write, error)
    while words and not words[-1]:
        words = words[:-1]
    if not words:
        return out.status
    commands = available(shell)
    command = commands.get(words[0])
    if command is None:
        out.fail(_unknown(words[0], sorted(commands)) + "\n", USAGE)
        return out.status
    if len(words) > 1 and words[1] in HELP_FLAGS:
        out(help_text(command.name, command.spec) + "\n")
        return out.status
    try:
        args = parse(command.spec, words[1:])
    except UsageError as e:
        out.fail(f"{e}\n", USAGE)
        return out.status
    command.run(state, args, out)
    return out.status


def run_line(state, line: str, write, shell: bool = True, error=None) -> int:
    """Run one typed command line (`cmd ... > FILE` sends its output to FILE); return its exit status."""
    command, target = split_redirect(line) if shell else (line, None)
    if target is None:
        return run_words(state, split_words(command), write, shell, error)
    return _run_redirected(state, command, target, write, shell, error)


def split_redirect(line: str) -> tuple[str, str | None]:
    """Split `cmd ... > FILE` at its first unquoted '>' into (cmd ..., FILE); (line, None) without one."""
    quote, escaped = None, False
    for i, c in enumerate(line):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == ">":
            target = split_words(line[i + 1:])
            return line[:i], (target[0] if len(target) == 1 else "")
    return line, None


def _run_redirected(state, command: str, target: str, write, shell: bool, error) -> int:
    """Run `command` with its output written to `target` (atomically, once it has finished); errors stay on
    the terminal."""
    from kraftsman.storage.log.atomic import atomic_write_text

    out = as_output(write, error)
    if not target:
        out.fail("redirection: give one file name after '>'\n", USAGE)
        return out.status
    pieces: list[str] = []
    into_file = Output(pieces.append, error or out.error, terminal=False)
    status = run_words(state, split_words(command), into_file, shell)
    try:
        atomic_write_text(os.path.expanduser(target), "".join(pieces))
    except OSError as e:
        out.fail(f"{target}: {e.strerror or e}\n")
        return out.status
    return status
