"""kraftsman completion bash|zsh|fish: print the completion of every tool for one shell, to source or to save.

Rules:
- The scripts are the ones `python -m kraftsman.cli.docs --write` checks in (completions/), made in memory from
  the same definitions, so an editable install (which installs no files under share/) completes too:
  `source <(kraftsman completion bash)`, or `kraftsman completion fish > ~/.config/fish/completions/kraftsman.fish`.
- zsh's files are autoloadable functions (#compdef); printed for sourcing, each becomes a function bound with
  compdef, so `source <(kraftsman completion zsh)` works after compinit.
- Dynamic candidates (metadata paths, broker and controller ids) come from `kraftsman-complete` on PATH.
"""
from __future__ import annotations

from typing import Annotated, Literal

import typer

from .common import Environment, ExitStatus, usage_exit
from .common.typer_app import run_app

PROG = "kraftsman completion"
app = typer.Typer(name="completion", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command(help="Print the completion script of every kraftsman tool for SHELL (source it, or save it where "
                  "your shell reads completions).")
def completion(ctx: typer.Context, shell: Annotated[Literal["bash", "zsh", "fish"], typer.Argument(
        help="The shell: bash, zsh or fish.")]) -> int:
    env: Environment = ctx.find_root().obj
    env.stdout.write(script(shell))
    return ExitStatus.OK


def script(shell: str) -> str:
    """Return every tool's completion for `shell`, ready to source."""
    from . import docs

    files = docs.generated_files()
    names = [command.name for command in docs.commands()]
    if shell == "zsh":
        return "".join(_sourceable_zsh(name, files[f"completions/_{name}"]) for name in names)
    suffix = ".bash" if shell == "bash" else ".fish"
    return "".join(files[f"completions/{name}{suffix}"] for name in names)


def _sourceable_zsh(name: str, text: str) -> str:
    """Wrap an autoloadable #compdef file as a function bound with compdef."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#compdef"))
    function = "_" + name.replace("-", "_") + "_completion"
    return f"{function}() {{\n{body}\n}}\ncompdef {function} {name}\n"


def run(argv: list[str], env: Environment) -> int:
    """Run `kraftsman completion` with `argv`; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="completion",
                   usage_status=lambda argv: usage_exit(PROG, argv))
