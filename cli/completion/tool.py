"""kraftsman completion bash|zsh|fish: print the completion of every tool for one shell, to source or to save.

Rules:
- The scripts are click's, one per console script of the registry (common/shells.py): each asks its tool
  for candidates as you type, so sub-commands, flags, choices, files and the run-time completers
  (metadata paths, node ids, release versions, feature and profile names) come from the tools' own
  definitions. The same text is checked in under completions/ (docs/pages.py) and installed by
  `kraftsman --install-completion`.
- `source <(kraftsman completion bash)` (or zsh, after compinit) and
  `kraftsman completion fish > ~/.config/fish/completions/kraftsman.fish` both work.
"""
from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..app import console_scripts
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.shells import SHELLS
from ..common.shells import script as tool_script
from ..common.status import ExitStatus
from ..common.typer_app import run_app

PROG = "kraftsman completion"
app = typer.Typer(name="completion", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command(help="Print the completion script of every kraftsman tool for SHELL (source it, or save it where "
                  "your shell reads completions; 'kraftsman --install-completion SHELL' does that for you).")
def completion(ctx: typer.Context, shell: Annotated[Literal["bash", "zsh", "fish"], typer.Argument(
        help="The shell: bash, zsh or fish.")]) -> int:
    env: Environment = ctx.find_root().obj
    env.stdout.write(script(shell))
    return ExitStatus.OK


def tools() -> list[str]:
    """Return the console scripts that complete: the umbrella first, then each tool's."""
    return list(console_scripts())


def scripts_by_tool(shell: str) -> dict[str, str]:
    """Return each console script's completion script for `shell`."""
    return {prog: tool_script(prog, shell) for prog in tools()}


def script(shell: str) -> str:
    """Return every tool's completion for `shell`, ready to source."""
    return "".join(text if text.endswith("\n") else text + "\n" for text in scripts_by_tool(shell).values())


__all__ = ["SHELLS", "app", "run", "script", "scripts_by_tool", "tools"]


def run(argv: list[str], env: Environment) -> int:
    """Run `kraftsman completion` with `argv`; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="completion",
                   usage_status=lambda argv: usage_exit(PROG, argv))
