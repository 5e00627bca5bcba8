"""Generate man pages and bash/zsh/fish completions from the commands' argparse parsers.

Run: python -m kraftsman.cli.docs --write   (regenerate man/ and completions/)
     python -m kraftsman.cli.docs --check   (exit 1 and name the stale files if any differ)

Rules:
- One registry: every console script is a subcommand of `kraftsman` (the registry in cli/app.py) whose
  module exposes `build_parser()`; nothing here lists a tool's flags by hand.
- The parsers are read into a plain model (Node / Option) that the renderers share; renderers are
  pure functions from the model to text, so tests regenerate in memory and compare with the files.
- Flag arguments complete as files (--config, --files, --snapshot), folders (--directory) or their
  choices; DYNAMIC is the hook for run-time candidates (node ids, topics, metadata paths): a kind
  named there is completed by running `kraftsman-complete <kind> <word>` (with the command line typed so
  far, from which cli/complete.py finds the source) when that program exists.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

from .app import HELPER_SCRIPTS, TOOLS, UMBRELLA_COMMANDS
from .app import UMBRELLA as APP_UMBRELLA
from .docs_model import Command, Node, Option

ROOT = Path(__file__).resolve().parent.parent
UMBRELLA = APP_UMBRELLA
# console script -> module holding build_parser() when it is not the tool's run() module
PARSER_MODULES: dict[str, str] = {}
FILE_FLAGS = frozenset({"--config", "--files", "--snapshot"})
DIR_FLAGS = frozenset({"--directory"})
# (console script, flag or positional dest) -> dynamic completion kind (cli/complete.py KINDS)
DYNAMIC: dict[tuple[str, str], str] = {
    ("kafka-metadata-shell", "command"): "metadata-path",
    ("kafka-cluster", "--id"): "broker-id",
    ("kafka-metadata-quorum", "--controller-id"): "controller-id",
}
# console scripts that are helpers of the generated completions, not tools: no man page or completion
HELPERS = frozenset(HELPER_SCRIPTS)


def commands() -> list[Command]:
    """Return every registered command: the umbrella first, then each subcommand's console script."""
    from .main import DESCRIPTION

    found = [Command(UMBRELLA, "kraftsman.cli.main", None, DESCRIPTION)]
    found += [Command(t.script, t.module, t.command, t.summary) for t in TOOLS]
    return found


def build_parser_of(command: Command) -> argparse.ArgumentParser:
    """Import the command's module and return its build_parser()."""
    module = importlib.import_module(PARSER_MODULES.get(command.name, command.module))
    if not hasattr(module, "build_parser"):
        raise SystemExit(f"{module.__name__} has no build_parser(): every registered command needs one (cli/docs.py)")
    return module.build_parser()


def parse_example(command: Command, args: list[str]) -> None:
    """Parse `args` with the command's real definition (click for a typer app); raise on a bad command line."""
    module = importlib.import_module(command.module)
    app = getattr(module, "app", None)
    if app is None:
        build_parser_of(command).parse_args(args)
        return
    from .app import by_script
    from .common.typer_app import click_command

    click_cmd = click_command(app, by_script(command.name).env_name)
    ctx = click_cmd.make_context(command.name, list(args))
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    while hasattr(ctx.command, "resolve_command") and rest:
        name, sub, rest = ctx.command.resolve_command(ctx, rest)
        ctx = sub.make_context(name, list(rest), parent=ctx)
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]


def command_paths(command: Command) -> list[tuple[str, ...]]:
    """Return the sub-command paths of `command` ((), ("format",), ...), the umbrella's own only."""
    node = model(command, nested=False)
    return [n.path for n in node.walk()]


def model(command: Command, nested: bool = True) -> Node:
    """Return the Node tree of `command`; the umbrella's subcommands carry their tools' trees if `nested`."""
    root = tool_node(command, ())
    if command.subcommand is None and nested:
        for other in commands()[1:]:
            if other.subcommand in root.subcommands:
                help_, _ = root.subcommands[other.subcommand]
                root.subcommands[other.subcommand] = (help_, tool_node(other, (other.subcommand,)))
        for extra in UMBRELLA_COMMANDS:
            help_, _ = root.subcommands[extra.command]
            root.subcommands[extra.command] = (help_, app_node(importlib.import_module(extra.module).app,
                                                               extra.command, f"{UMBRELLA} {extra.command}",
                                                               (extra.command,)))
    return root


def tool_node(command: Command, path: tuple[str, ...]) -> Node:
    """Read a command's definition: its typer app (`app`) when it has one, else its argparse build_parser()."""
    module = importlib.import_module(command.module)
    app = getattr(module, "app", None)
    if app is None:
        return node_of(build_parser_of(command), command.name, path)
    from .app import by_script

    return app_node(app, by_script(command.name).env_name, command.name, path)


def app_node(app, env_name: str, prog: str, path: tuple[str, ...]) -> Node:
    """Read a typer app into a Node (its options read KRAFTSMAN_<env_name>_<FLAG>)."""
    from . import docs_click
    from .common.typer_app import click_command

    return docs_click.node_of(click_command(app, env_name), prog, path,
                              lambda option, takes_value: _completion_kind(option, prog, takes_value))


def node_of(parser: argparse.ArgumentParser, command: str, path: tuple[str, ...]) -> Node:
    """Read an argparse parser into a Node."""
    usage = " ".join(parser.format_usage().split())
    node = Node(parser.prog, path, _expand(parser.description or "", parser), usage.removeprefix("usage: "))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                node.subcommands[name] = (helps.get(name, ""), node_of(sub, command, path + (name,)))
        elif action.help != argparse.SUPPRESS:
            option = _option(action, parser, command)
            (node.options if option.flags else node.positionals).append(option)
    return node


def _option(action: argparse.Action, parser, command: str) -> Option:
    flags = tuple(sorted(action.option_strings, key=lambda f: (f.startswith("--"), f)))
    takes_value = action.nargs != 0
    metavar = action.metavar if isinstance(action.metavar, str) else None
    choices = tuple(str(c) for c in action.choices or ())
    listed = re.fullmatch(r"(?:\w+: )?([\w-]+(?:\|[\w-]+)+)", metavar or "")  # jopt-simple's "String: a|b"
    if not choices and listed:
        choices = tuple(listed[1].split("|"))
    if takes_value and not metavar:
        metavar = "{" + ",".join(choices) + "}" if choices else (action.dest.upper() if flags else action.dest)
    option = Option(flags, action.dest, metavar if takes_value else None, _expand(action.help or "", parser, action),
                    choices, required=bool(getattr(action, "required", False)),
                    repeat=isinstance(action, (argparse._AppendAction, argparse._CountAction)))
    option.complete = _completion_kind(option, command, takes_value)
    return option


def _completion_kind(option: Option, command: str, takes_value: bool) -> str:
    keys = [(command, f) for f in option.flags] + [(command, option.dest)]
    dynamic = next((DYNAMIC[k] for k in keys if k in DYNAMIC), None)
    if dynamic:
        return f"dynamic:{dynamic}"
    if not takes_value:
        return "none"
    if option.choices:
        return "choices"
    if set(option.flags) & FILE_FLAGS or option.metavar == "FILE":
        return "file"
    return "dir" if set(option.flags) & DIR_FLAGS else "value"


def _expand(text: str, parser, action=None) -> str:
    if "%(" not in text:
        return text
    values = dict(vars(action)) if action is not None else {}
    values["prog"] = parser.prog
    try:
        return text % values
    except (KeyError, TypeError, ValueError):
        return text


def generated_files() -> dict[str, str]:
    """Render every man page and completion script in memory: relative path -> text."""
    from . import docs_completions, docs_man

    files = {}
    exit_codes = docs_man.exit_codes(ROOT / "README.md")
    for command in commands():
        node = model(command)
        files[f"man/{command.name}.1"] = docs_man.render(command, model(command, nested=False), exit_codes)
        files[f"completions/{command.name}.bash"] = docs_completions.bash(command.name, node)
        files[f"completions/_{command.name}"] = docs_completions.zsh(command.name, node)
        files[f"completions/{command.name}.fish"] = docs_completions.fish(command.name, node)
    return files


def stale_files(root: Path = ROOT) -> list[str]:
    """Return the generated paths whose checked-in text differs (or that are missing or left over)."""
    files = generated_files()
    stale = [p for p, text in files.items() if not (root / p).is_file() or (root / p).read_text() != text]
    for folder in ("man", "completions"):
        for path in sorted((root / folder).glob("*")):
            if f"{folder}/{path.name}" not in files and path.is_file():
                stale.append(f"{folder}/{path.name} (no longer generated)")
    return stale


def main(argv: list[str] | None = None) -> int:
    """Write or check the generated files; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m kraftsman.cli.docs", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate man/ and completions/")
    mode.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path} (run: python -m kraftsman.cli.docs --write)", file=sys.stderr)
        return 1 if stale else 0
    files = generated_files()
    for folder in ("man", "completions"):
        for path in (ROOT / folder).glob("*"):
            if f"{folder}/{path.name}" not in files and path.is_file():
                path.unlink()
    for rel, text in files.items():
        (ROOT / rel).parent.mkdir(exist_ok=True)
        (ROOT / rel).write_text(text)
    print(f"wrote {len(files)} files under {ROOT}/man and {ROOT}/completions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
