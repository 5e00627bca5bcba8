"""suggest(): what Tab offers for a partly typed line; pure, so tests drive it with tables.

Rules:
- The first word completes to command names; later words go to the command's own completer.
- The result is (start, candidates): `start` is where the replaced word begins in the line and each
  candidate is (text, is_final); a final candidate is followed by a space when accepted.
"""
from __future__ import annotations

from .commands import available
from .parsing import split_words


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
    if command is None or command.complete is None:
        return start, []
    return start, command.complete(state, words[1:] + [word])
