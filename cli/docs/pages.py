"""Generate man pages and bash/zsh/fish completions from the tools' click definitions.

Run: python -m kraftsman.cli.docs.pages --write   (regenerate man/ and completions/)
     python -m kraftsman.cli.docs.pages --check   (exit 1 and name the stale files if any differ)

Rules:
- One registry: every console script is the umbrella or one of its sub-commands (cli/app.py); each
  tool's typer app (its click command) and the umbrella's click group are read into a plain model
  (Node / Option) for the man pages; nothing here lists a tool's flags by hand.
- Completion scripts are click's, one per console script (common/shells.py): they ask the tool itself
  for candidates, so they hold no flags.
- Renderers are pure functions to text, so tests regenerate in memory and compare with the files.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from ..app import TOOLS, UMBRELLA, by_script
from .model import Command, Node

ROOT = Path(__file__).resolve().parent.parent.parent
SHELL_FILES = {"bash": "completions/{name}.bash", "zsh": "completions/_{name}", "fish": "completions/{name}.fish"}


def commands() -> list[Command]:
    """Return every registered command: the umbrella first, then each subcommand's console script."""
    from ..main import DESCRIPTION

    found = [Command(UMBRELLA, "kraftsman.cli.main", None, DESCRIPTION)]
    found += [Command(t.script, t.module, t.command, t.summary) for t in TOOLS]
    return found


def parse_example(command: Command, args: list[str]) -> None:
    """Parse `args` with the command's real definition (click for a typer app); raise on a bad command line."""
    ctx = click_of(command).make_context(command.name, list(args))
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
    """Return the Node tree of `command`; the umbrella's sub-commands carry their tools' trees if `nested`."""
    from . import click_model

    return click_model.node_of(click_of(command), command.name, (), nested=nested or command.subcommand is not None)


def click_of(command: Command):
    """Return the click command of a registered command: the umbrella's group, or the tool's app."""
    if command.subcommand is None:
        from ..main import umbrella_command

        return umbrella_command()
    from ..common.typer_app import click_command

    module = importlib.import_module(command.module)
    return click_command(module.app, by_script(command.name).env_name)


def generated_files() -> dict[str, str]:
    """Render every man page and completion script in memory: relative path -> text."""
    from ..common.shells import script
    from . import man as docs_man

    files = {}
    exit_codes = docs_man.exit_codes(ROOT / "README.md")
    for command in commands():
        files[f"man/{command.name}.1"] = docs_man.render(command, model(command, nested=False), exit_codes)
        for shell, pattern in SHELL_FILES.items():
            files[pattern.format(name=command.name)] = script(command.name, shell)
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
    parser = argparse.ArgumentParser(prog="python -m kraftsman.cli.docs.pages", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate man/ and completions/")
    mode.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path} (run: python -m kraftsman.cli.docs.pages --write)", file=sys.stderr)
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
