"""Read a click command (a typer tool's) into the docs model, as docs.node_of reads an argparse parser.

Rules:
- The model is docs_model's (Node / Option): the same renderers write man pages and completions for either kind.
- Flags are listed short first, as the argparse reader lists them; click's own --help/-h is an option too.
- How a value completes is decided by the caller's `kind_of(option, takes_value)` (docs._completion_kind).
"""
from __future__ import annotations

import click

from .docs_model import Node, Option


def node_of(command: click.Command, prog: str, path: tuple[str, ...], kind_of, parent=None) -> Node:
    """Return the Node tree of `command` shown as `prog` (sub-commands nested; settings such as the help
    option's names are inherited from `parent`, as at run time)."""
    ctx = click.Context(command, parent=parent, info_name=prog.rsplit(" ", 1)[-1],
                        **(command.context_settings or {}))
    params = list(command.params)
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        params.insert(0, help_option)
    node = Node(prog, path, command.help or "", "")
    for param in params:
        if getattr(param, "hidden", False):
            continue
        option = _option(param, kind_of)
        (node.options if option.flags else node.positionals).append(option)
    names = list(getattr(command, "commands", {}))
    node.usage = usage(prog, node.options + node.positionals, names)
    for name, sub in getattr(command, "commands", {}).items():
        if not getattr(sub, "hidden", False):
            child = node_of(sub, f"{prog} {name}", path + (name,), kind_of, ctx)
            node.subcommands[name] = (sub.help or "", child)
    return node


def usage(prog: str, options: list[Option], subcommands: list[str]) -> str:
    """Return an argparse-style usage line: required options bare, the others in brackets."""
    words = [prog]
    for option in options:
        flag = option.flags[0] if option.flags else option.metavar or option.dest
        word = f"{flag} {option.metavar}" if option.flags and option.metavar else flag
        words.append(word if option.required else f"[{word}]")
    if subcommands:
        words.append("{" + ",".join(subcommands) + "} ...")
    return " ".join(words)


def _option(param: click.Parameter, kind_of) -> Option:
    is_option = isinstance(param, click.Option)
    flags = tuple(sorted(param.opts + param.secondary_opts, key=lambda f: (f.startswith("--"), f))) if is_option \
        else ()
    takes_value = not (is_option and (param.is_flag or param.count))
    choices = tuple(str(c) for c in param.type.choices) if isinstance(param.type, click.Choice) else ()
    metavar = None
    if takes_value:
        metavar = param.metavar or ("{" + ",".join(choices) + "}" if choices else
                                    (param.name.upper() if flags else param.name))
    option = Option(flags, param.name, metavar, getattr(param, "help", None) or "", choices,
                    required=param.required, repeat=bool(param.multiple or getattr(param, "count", False)))
    option.complete = kind_of(option, takes_value)
    return option
