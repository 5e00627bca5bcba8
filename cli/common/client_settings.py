"""The client settings -X (--client-property) takes, in every tool: only the keys the admin client honours
(sync_client.CLIENT_PROPERTIES), and `-X list` / `-X help` to see them (as rpk's -X does).

Rules:
- A key the client does not honour (unknown or misspelt) is refused, naming it and the nearest known keys: a
  setting silently ignored is worse than an error. A --config / --command-config file is Kafka's and may hold
  any Admin client key: only -X is checked.
- `-X list` prints the keys, one a line; `-X help` each with what it does; both exit 0 before anything else
  is checked (no bootstrap needed).
"""
from __future__ import annotations

import difflib

from .key_values import BadPair, key_values

LIST_WORDS = ("list", "help")


class UnknownSetting(ValueError):
    """A -X key the client does not honour; the message names it and the nearest known keys."""


def known() -> dict[str, str]:
    """Return the keys -X accepts, with what each does."""
    from kraftsman.controller.client.sync_client import CLIENT_PROPERTIES

    return CLIENT_PROPERTIES


def overrides(pairs) -> dict[str, str]:
    """Return the -X pairs as a dict; raise BadPair for a word without '=', UnknownSetting for an unknown key."""
    found = key_values(pairs)
    keys = known()
    for key in found:
        if key not in keys:
            near = difflib.get_close_matches(key, keys, n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(near)}? " if near else ""
            raise UnknownSetting(f"unknown client setting {key!r} ({hint}-X list shows the {len(keys)} known ones)")
    return found


def listing(word: str) -> str:
    """Return what `-X list` (the keys) or `-X help` (the keys and what they do) prints."""
    keys = known()
    if word == "list":
        return "".join(f"{key}\n" for key in keys)
    width = max(map(len, keys))
    return "".join(f"{key:<{width}}  {text}\n" for key, text in keys.items())


def takes_settings(command) -> bool:
    """Tell whether a click command (or one of its sub-commands) takes -X."""
    if any("-X" in getattr(param, "opts", ()) for param in command.params):
        return True
    return any(takes_settings(sub) for sub in getattr(command, "commands", {}).values())


def asked_listing(argv: list[str]) -> str | None:
    """Return 'list' or 'help' when the command line asks `-X list` / `-X help` (any spelling), else None."""
    for i, word in enumerate(argv):
        if word in ("-X", "--client-property") and i + 1 < len(argv) and argv[i + 1] in LIST_WORDS:
            return argv[i + 1]
        for prefix in ("-X", "--client-property="):
            if word.startswith(prefix) and word[len(prefix):] in LIST_WORDS:
                return word[len(prefix):]
    return None


__all__ = ["BadPair", "UnknownSetting", "asked_listing", "known", "listing", "overrides", "takes_settings"]
