"""suggest(): what Tab offers for a partly typed line; pure, so tests drive it with tables.

Rules:
- The first word completes to command names; later words go to the command's own completer, except options:
  a word starting with '-' completes to the flags of the command's Spec (the ones not given yet, -h/--help as
  the first word), and the word after an option with choices to those choices. The Spec is the one source.
- The result is (start, candidates): `start` is where the replaced word begins in the line and each
  candidate is (text, is_final); a final candidate is followed by a space when accepted.
"""
from __future__ import annotations

from .commands import available
from .parsing import HELP_FLAGS, option_named, split_words


def _current_word_start(line: str) -> int:
    i = len(line)
    while i > 0 and not line[i - 1].isspace():
        i -= 1
    return i


def suggest(line: str, state, shell: bool = True) -> tuple[int, list[tuple[str, bool]]]:
    """Return (start index of the word being completed, candidates) for the text before the cursor."""
    start = _current_word_start(line)
    words = split_words(line[:start])
    current = split_words(line[start:])
    word = current[0] if current else ""
    commands = available(shell)
    if not words:
        return start, [(name, True) for name in sorted(commands) if name.startswith(word)]
    command = commands.get(words[0])
    if command is None:
        return start, []
    options = option_candidates(command.spec, words[1:], word)
    if options is not None:
        return start, options
    if command.complete is None:
        return start, []
    return start, command.complete(state, words[1:] + [word])


def option_candidates(spec, typed: list[str], word: str) -> list[tuple[str, bool]] | None:
    """Return the option flags or option values completing `word` after `typed`, or None when `word` is neither
    (a value of an option without choices is left to the command's completer)."""
    pending, given = _options_typed(spec, typed)
    if pending is not None:
        return [(c, True) for c in pending.choices if c.startswith(word)] if pending.choices else None
    if not word.startswith("-"):
        return None
    flags = [f for option in spec.options if option not in given for f in option.flags]
    flags += list(HELP_FLAGS) if not typed else []
    return [(f, True) for f in flags if f.startswith(word)]


def _options_typed(spec, typed: list[str]):
    """Return (the option whose value comes next or None, the options already given) after `typed`."""
    given, i = [], 0
    while i < len(typed):
        option = option_named(spec, typed[i])
        if option is None:
            i += 1
            continue
        given.append(option)
        if i + 1 == len(typed):
            return option, given
        i += 2
    return None, given
