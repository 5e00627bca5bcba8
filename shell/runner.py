"""Run shell command lines: parse words into a command and its arguments, then run it.

Rules:
- Interactive and batch modes have every command; one-shot mode only the ones that are not shell-only
  (Kafka: cat, find, ls, tree; kraftsman adds diff).
- An empty line does nothing; a bad command or bad arguments print one argparse4j-style line.
- Every run returns an exit status: 0, FAILED (1) when a command reported a failure (a missing path),
  USAGE (64) for an unknown command or words that do not fit its arguments.
"""
from __future__ import annotations

from .commands import available
from .output import USAGE, as_output
from .parsing import UsageError, help_text, parse, split_words


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
    if len(words) > 1 and words[1] in ("-h", "--help"):
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
    """Run one typed command line; return its exit status."""
    return run_words(state, split_words(line), write, shell, error)
