"""Command-line parsing for shell commands: word splitting and argparse4j-like argument specs.

Rules:
- Words split like JLine's default parser: whitespace separates, quotes group, '\\' escapes the next
  character; trailing empty words are dropped.
- Each command declares positional Args (nargs '1', '?', '*', '+') and Options; errors are one line
  in argparse4j's wording.
"""
from __future__ import annotations

from dataclasses import dataclass, field

HELP_FLAGS = ("-h", "--help")


class UsageError(ValueError):
    """A command line does not fit the command's arguments."""


@dataclass(frozen=True)
class Arg:
    """A positional argument."""

    name: str
    nargs: str = "1"
    help: str = ""
    type: type = str
    default: object = None


@dataclass(frozen=True)
class Option:
    """An option taking one value."""

    flags: tuple
    dest: str
    help: str = ""
    choices: tuple = ()
    default: object = None


@dataclass(frozen=True)
class Spec:
    """A command's arguments."""

    args: tuple = ()
    options: tuple = field(default=())


def split_words(line: str) -> list[str]:
    """Split a command line into words (quotes group, backslash escapes)."""
    words, current, quote, escaped, started = [], [], None, False, False
    for c in line:
        if escaped:
            current.append(c)
            escaped, started = False, True
        elif c == "\\":
            escaped, started = True, True
        elif quote:
            if c == quote:
                quote = None
            else:
                current.append(c)
        elif c in "'\"":
            quote, started = c, True
        elif c.isspace():
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(c)
            started = True
    if started or escaped:
        words.append("".join(current) + ("\\" if escaped else ""))
    return words


def parse(spec: Spec, words: list[str]) -> dict:
    """Return {dest: value} for `words`, or raise UsageError."""
    values = {o.dest: o.default for o in spec.options}
    positionals = []
    i = 0
    while i < len(words):
        word = words[i]
        option = option_named(spec, word)
        if option is not None:
            if i + 1 >= len(words):
                raise UsageError(f"argument {'/'.join(option.flags)}: expected one argument")
            value = words[i + 1]
            if option.choices and value not in option.choices:
                raise UsageError(f"argument {'/'.join(option.flags)}: invalid choice: '{value}' "
                                 f"(choose from {{{','.join(option.choices)}}})")
            values[option.dest] = value
            i += 2
            continue
        if word.startswith("-") and len(word) > 1 and not word[1:].isdigit():
            raise UsageError(f"unrecognized arguments: '{word}'")
        positionals.append(word)
        i += 1
    values.update(_assign(spec.args, positionals))
    return values


def option_named(spec: Spec, word: str | None):
    """Return the option of `spec` that `word` is a flag of, or None."""
    for option in spec.options:
        if word in option.flags:
            return option
    return None


def _assign(args: tuple, words: list[str]) -> dict:
    out, rest = {}, list(words)
    for arg in args:
        if arg.nargs == "1":
            if not rest:
                raise UsageError("too few arguments")
            out[arg.name] = _convert(arg, rest.pop(0))
        elif arg.nargs == "?":
            out[arg.name] = _convert(arg, rest.pop(0)) if rest else arg.default
        else:
            if arg.nargs == "+" and not rest:
                raise UsageError("too few arguments")
            out[arg.name] = [_convert(arg, w) for w in rest] if rest else arg.default
            rest = []
    if rest:
        raise UsageError("unrecognized arguments: '" + " ".join(rest) + "'")
    return out


def _convert(arg: Arg, word: str):
    if arg.type is int:
        try:
            return int(word)
        except ValueError:
            raise UsageError(f"argument {arg.name}: could not convert '{word}' to Integer "
                             f"(For input string: \"{word}\")") from None
    return word


def usage(name: str, spec: Spec) -> str:
    """Return the usage line of a command, argparse4j style."""
    parts = [name]
    for option in spec.options:
        parts.append(f"[{option.flags[0]} {option.dest.upper()}]")
    for arg in spec.args:
        parts.append({"1": arg.name, "?": f"[{arg.name}]", "*": f"[{arg.name} [{arg.name} ...]]",
                      "+": f"{arg.name} [{arg.name} ...]"}[arg.nargs])
    return "usage: " + " ".join(parts)


def help_text(name: str, spec: Spec) -> str:
    """Return a command's help screen (usage, positional arguments, options)."""
    lines = [usage(name, spec)]
    if spec.args:
        lines += ["", "positional arguments:"]
        lines += [f"  {arg.name:<22} {arg.help}".rstrip() for arg in spec.args]
    if spec.options:
        lines += ["", "named arguments:"]
        for option in spec.options:
            flags = ", ".join(f"{f} {option.dest.upper()}" for f in option.flags)
            lines.append(f"  {flags:<22} {option.help}".rstrip())
    return "\n".join(lines)
