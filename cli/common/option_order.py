"""Global flags before or after the sub-command, in every tool: `kafka-cluster -C h:9093 cluster-id` and
`kafka-metadata-quorum describe --status -C h:9093` mean what their Kafka spelling means.

Rules:
- Pure: a click group and a command line in, the command line with options moved out.
- The sub-command is the first word that is not an option nor an option's value (arities from every
  option of the group and its sub-commands). Before it, an option the group does not take but the
  sub-command does moves right after it; after it, an option the sub-command does not take but the group
  does moves before it. Each moves with its value (`--opt value` or `--opt=value`), in order.
- Anything else stays where it is (an unknown option is still refused where it was written); `--` ends
  the scan.
"""
from __future__ import annotations

import click


def _arities(command: click.Command) -> dict[str, bool]:
    """Return option name -> whether it takes a value, for the options of `command`."""
    out: dict[str, bool] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for name in param.opts + param.secondary_opts:
                out[name] = not (param.is_flag or param.count)
    return out


def _sub_command(group: click.Group, argv: list[str], arity: dict[str, bool]) -> int | None:
    """Return the index of the sub-command's name in `argv`, or None."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return None
        if not word.startswith("-"):
            return i if word in group.commands else None
        i += 2 if arity.get(word.split("=", 1)[0]) and "=" not in word else 1
    return None


def _moved(words: list[str], arity: dict[str, bool], wanted) -> tuple[list[str], list[str]]:
    """Return (kept, moved): the options of `words` that `wanted(name)` picks move, with their values."""
    kept, moved, i = [], [], 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return kept + words[i:], moved
        if not word.startswith("-"):
            kept.append(word)
            i += 1
            continue
        name = word.split("=", 1)[0]
        end = i + 2 if arity.get(name) and "=" not in word else i + 1
        (moved if wanted(name) else kept).extend(words[i:end])
        i = end
    return kept, moved


def hoist(command: click.Command, argv: list[str]) -> list[str]:
    """Return `argv` with each global option moved to the side of the sub-command that takes it (see Rules)."""
    if not isinstance(command, click.Group) or not command.commands:
        return list(argv)
    arity = dict(_arities(command))
    for sub in command.commands.values():
        for name, takes in _arities(sub).items():
            arity.setdefault(name, takes)
    at = _sub_command(command, argv, arity)
    if at is None:
        return list(argv)
    root, sub = _arities(command), _arities(command.commands[argv[at]])
    before, down = _moved(argv[:at], arity, lambda n: n not in root and n in sub)
    after, up = _moved(argv[at + 1:], arity, lambda n: n not in sub and n in root)
    return before + up + [argv[at]] + down + after
