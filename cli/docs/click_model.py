"""Read a click command (a typer tool's, or the umbrella group) into the docs model.

Rules:
- The model is model.py's (Node / Option), which the man page renderer reads.
- Flags are listed short first; click's own --help/-h is an option too.
- Sub-commands are nested; a group's lazily loaded commands are loaded here.
"""
from __future__ import annotations

import click

from .model import Node, Option


def node_of(command: click.Command, prog: str, path: tuple[str, ...], parent=None, nested: bool = True) -> Node:
    """Return the Node tree of `command` shown as `prog` (sub-commands nested; settings such as the help
    option's names are inherited from `parent`, as at run time); sub-commands are empty nodes unless `nested`."""
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
        option = _option(param)
        (node.options if option.flags else node.positionals).append(option)
    subs = _subcommands(command, ctx)
    node.usage = usage(prog, node.options + node.positionals, list(subs))
    for name, sub in subs.items():
        if not getattr(sub, "hidden", False):
            child = node_of(sub, f"{prog} {name}", path + (name,), ctx) if nested else \
                Node(f"{prog} {name}", path + (name,), sub.help or "", "")
            node.subcommands[name] = (sub.short_help or sub.help or "", child)
    return node


def _subcommands(command: click.Command, ctx: click.Context) -> dict[str, click.Command]:
    """Return a group's sub-commands by name (loading lazy ones), {} for a plain command."""
    if not isinstance(command, click.Group):
        return {}
    return {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}


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


def _option(param: click.Parameter) -> Option:
    is_option = isinstance(param, click.Option)
    flags = tuple(sorted(param.opts + param.secondary_opts, key=lambda f: (f.startswith("--"), f))) if is_option \
        else ()
    takes_value = not (is_option and (param.is_flag or param.count))
    choices = tuple(str(c) for c in param.type.choices) if isinstance(param.type, click.Choice) else ()
    metavar = None
    if takes_value:
        metavar = param.metavar or ("{" + ",".join(choices) + "}" if choices else
                                    (param.name.upper() if flags else param.name))
    return Option(flags, param.name, metavar, getattr(param, "help", None) or "", choices,
                  required=param.required, repeat=bool(param.multiple or getattr(param, "count", False)))
