"""KEY=VALUE words (-X, --override, --conf) read the same way by every tool.

Rules:
- Keys are stripped (values too unless told); later words win; a word without '=' or without a key is BadPair,
  or skipped when lenient (completion never complains).
"""
from __future__ import annotations


class BadPair(ValueError):
    """A KEY=VALUE word without '=' or without a key; `pair` is the word as given."""

    def __init__(self, pair: str):
        super().__init__(pair)
        self.pair = pair


def key_values(pairs, strip_values: bool = True, lenient: bool = False) -> dict[str, str]:
    """Return KEY=VALUE words (-X, --override, --conf) as a dict, keys stripped (values too unless told), later
    words winning; raise BadPair for the first bad word, or skip bad words when `lenient`."""
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            if lenient:
                continue
            raise BadPair(pair)
        found[key.strip()] = value.strip() if strip_values else value
    return found
