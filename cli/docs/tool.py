"""kraftsman man [TOOL] [--install [DIR]]: read a tool's man page, or install every page where `man` finds it.

An editable install (`pip install -e .`, the README's set-up) installs no data files, so `man kafka-storage` finds
nothing; this command shows the pages wherever kraftsman is installed from.

Rules:
- A page is the generated `man/<tool>.1` of the checkout, else `<prefix>/share/man/man1/<tool>.1` (a wheel's
  data files), else rendered from the tool's definition (docs/man.py) when neither exists.
- On a terminal with `man` installed the page is shown by `man -l` (paged); otherwise its roff text is printed.
- `--install` copies every page into DIR (default $XDG_DATA_HOME/man/man1, ~/.local/share/man/man1: `man` looks
  there when ~/.local/bin is on PATH), atomically, and says where; a second run changes nothing.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..app import TOOLS, UMBRELLA
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.status import ExitStatus, ToolError
from ..common.typer_app import run_app

PROG = "kraftsman man"
NAMES = [UMBRELLA] + [t.script for t in TOOLS]
app = typer.Typer(name="man", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _names(ctx, incomplete: str) -> list[str]:
    return [n for n in NAMES if n.startswith(incomplete)]


@app.command(help="Show the man page of TOOL (default: kraftsman), or --install every page where man finds it.")
def man(ctx: typer.Context,
        tool: Annotated[Optional[str], typer.Argument(help="kraftsman or one of its tools (kafka-storage, ...).",
                                                      autocompletion=_names)] = None,
        install: Annotated[bool, typer.Option("--install", help="Install every man page instead.")] = False,
        directory: Annotated[Optional[str], typer.Option(
            "--directory", help="Where --install writes (default: $XDG_DATA_HOME/man/man1).")] = None) -> int:
    env: Environment = ctx.find_root().obj
    if install:
        return install_pages(env, Path(directory) if directory else default_directory(env.env))
    return show(env, tool or UMBRELLA)


def default_directory(environ) -> Path:
    """Return $XDG_DATA_HOME/man/man1 (default ~/.local/share/man/man1)."""
    base = environ.get("XDG_DATA_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"),
                                                        ".local", "share")
    return Path(base) / "man" / "man1"


def page(name: str) -> str:
    """Return the roff text of `name`'s man page (see Rules for where it comes from)."""
    if name not in NAMES:
        raise ToolError(f"no man page for {name!r} (pages: {', '.join(NAMES)})", ExitStatus.USAGE)
    for folder in (Path(__file__).resolve().parents[2] / "man", Path(sys.prefix) / "share" / "man" / "man1"):
        path = folder / f"{name}.1"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from .pages import generated_files

    return generated_files()[f"man/{name}.1"]


def show(env: Environment, name: str) -> int:
    """Page `name`'s man page through man(1) on a terminal; print its roff otherwise."""
    text = page(name)
    if env.stdout_isatty and shutil.which("man") and env.stdout is sys.stdout:
        env.stdout.flush()
        return subprocess.run(["man", "-l", "-"], input=text, text=True, check=False).returncode
    env.stdout.write(text)
    return ExitStatus.OK


def install_pages(env: Environment, directory: Path) -> int:
    """Write every page into `directory` (atomically; unchanged files are left alone); say where."""
    from kraftsman.storage.log.atomic import atomic_write_text

    directory.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        path, text = directory / f"{name}.1", page(name)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
    env.stdout.write(f"installed {len(NAMES)} man pages in {directory} (man kafka-storage, man kraftsman, ...)\n")
    return ExitStatus.OK


def run(argv: list[str], env: Environment) -> int:
    """Run `kraftsman man` with `argv`; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="man", usage_status=lambda argv: usage_exit(PROG, argv))
