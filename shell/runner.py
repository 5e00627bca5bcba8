"""Run shell command lines: parse words into a command and its arguments, then run it.

Rules:
- Interactive mode has every command; non-interactive mode only the ones that are not shell-only
  (Kafka: cat, find, ls, tree; kraftsman adds diff).
- An empty line does nothing; a bad command or bad arguments print one argparse4j-style line.
"""
from __future__ import annotations

from .commands import available
from .parsing import UsageError, parse, split_words


def _unknown(word: str, names: list[str]) -> str:
    close = [n for n in names if n.startswith(word)] if word else []
    if close:
        return f"invalid choice: '{word}': did you mean " + " or ".join(f"'{n}'" for n in close) + "?"
    return f"invalid choice: '{word}' (choose from {{{','.join(names)}}})"


def run_words(state, words: list[str], write, shell: bool) -> None:
    """Run one command given as words (trailing empty words are dropped)."""
    while words and not words[-1]:
        words = words[:-1]
    if not words:
        return
    commands = available(shell)
    command = commands.get(words[0])
    if command is None:
        write(_unknown(words[0], sorted(commands)) + "\n")
        return
    if len(words) > 1 and words[1] in ("-h", "--help"):
        from .parsing import help_text
        write(help_text(command.name, command.spec) + "\n")
        return
    try:
        args = parse(command.spec, words[1:])
    except UsageError as e:
        write(f"{e}\n")
        return
    command.run(state, args, write)


def run_line(state, line: str, write, shell: bool = True) -> None:
    """Run one typed command line."""
    run_words(state, split_words(line), write, shell)
