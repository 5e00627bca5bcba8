"""kraftsman: one umbrella command over the Kafka-compatible tools (`kraftsman storage ...` = `kafka-storage ...`).

Rules:
- The umbrella is a click group (`umbrella_command()`) whose sub-commands are the tools' own click commands,
  loaded only when named (fast start-up); the list is the registry's (app.py). Man page, completion and
  `--help` read that group (its --help is click's rendering, in the tools' style).
- Running a sub-command goes through the tool's own `run(argv, env)`, so `kraftsman cluster ...` and
  `kafka-cluster ...` share code, flags, texts and exit codes.
- `--install-completion [SHELL]` writes every tool's completion where SHELL reads it (completion/install.py);
  `--show-completion [SHELL]` prints it. SHELL defaults to the one in $SHELL.
"""
from __future__ import annotations

import importlib

import click

from .app import TOOLS, UMBRELLA, UMBRELLA_COMMANDS
from .common.boundary import exit_with, own_version, package_version
from .common.environment import Environment
from .common.status import ExitStatus

# subcommand -> (module, program name shown in errors, one-line help), from the registry
SUBCOMMANDS = {t.command: (t.module, t.script, t.summary) for t in TOOLS}
SUBCOMMANDS |= {c.command: (c.module, f"kraftsman {c.command}", c.summary) for c in UMBRELLA_COMMANDS}
ENV_NAMES = {t.command: t.env_name for t in TOOLS} | {c.command: c.command for c in UMBRELLA_COMMANDS}

DESCRIPTION = "One umbrella command over kraftsman's Kafka-compatible tools."
OPTIONS = (("-h, --help", "Show this help and exit."), ("--version", "Print the version and exit."),
           ("--debug", "Show a Python traceback instead of a one-line error."),
           ("--quiet", "Print nothing on stdout (the exit code tells); every tool takes it."),
           ("--verbose", "Trace each client request and its answer on stderr; every tool takes it."),
           ("--no-color", "Turn colour off (as NO_COLOR does); every tool takes it."),
           ("--install-completion [SHELL]", "Install the completion of every tool for SHELL (bash, zsh or fish; "
                                            "default: $SHELL's) and exit."),
           ("--show-completion [SHELL]", "Print the completion of every tool for SHELL and exit."))


class Umbrella(click.Group):
    """The `kraftsman` group: each sub-command is its tool's click command, imported when first named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return the sub-command names, in the registry's order."""
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """Return the click command of sub-command `name` (its tool's app), or None."""
        if name not in SUBCOMMANDS:
            return None
        from .common.typer_app import click_command

        module = importlib.import_module(SUBCOMMANDS[name][0])
        command = click_command(module.app, ENV_NAMES[name])
        if not command.short_help:
            command.short_help = SUBCOMMANDS[name][2]
        return command


def umbrella_command() -> Umbrella:
    """Return the umbrella as a click group (for completion, the man page and the docs' checks)."""
    group = Umbrella(UMBRELLA, help=DESCRIPTION, context_settings={"help_option_names": ["-h", "--help"]},
                     epilog="Run 'kraftsman <command> --help' for a command's flags.")
    group.params += [click.Option(["--version"], is_flag=True, help=OPTIONS[1][1])]
    group.params += [click.Option([flags], is_flag=True, help=help_) for flags, help_ in OPTIONS[2:6]]
    group.params += [click.Option([flags.split()[0]], metavar="SHELL", type=click.Choice(["bash", "zsh", "fish"]),
                                  help=help_) for flags, help_ in OPTIONS[6:]]
    return group


def usage() -> str:
    """Return the umbrella's --help, rendered by click as every tool's is (Usage, Options, Commands)."""
    group = umbrella_command()
    with group.make_context(UMBRELLA, [], resilient_parsing=True) as ctx:
        return group.get_help(ctx) + "\n"


def run(argv: list[str], env: Environment) -> int:
    """Answer a completing shell, or dispatch to a subcommand's run()."""
    from .common.shells import answer, asked

    instruction = asked(UMBRELLA, env.env)
    if instruction:
        return answer(umbrella_command(), UMBRELLA, instruction, env)
    if not argv or argv[0] in ("-h", "--help", "help"):
        (env.stdout if argv else env.stderr).write(usage())    # no command at all: a usage error, on stderr
        return ExitStatus.OK if argv else ExitStatus.USAGE
    if argv[0] == "--version":
        env.stdout.write(f"kraftsman {package_version()}\n")
        return ExitStatus.OK
    if argv[0] in ("--install-completion", "--show-completion"):
        from .completion import install

        return install.run(argv, env)
    entry = SUBCOMMANDS.get(argv[0])
    if entry is None:
        env.stderr.write(f"kraftsman: unknown command '{argv[0]}' (commands: {', '.join(SUBCOMMANDS)}; "
                         f"see 'kraftsman --help')\n")
        return ExitStatus.USAGE
    if argv[1:2] == ["--version"] and not own_version(entry[1]):
        env.stdout.write(f"{entry[1]} (kraftsman) {package_version()}\n")
        return ExitStatus.OK
    module = importlib.import_module(entry[0])
    return module.run(argv[1:], env)


def main() -> None:
    """Console entry point."""
    exit_with(run, "kraftsman")


if __name__ == "__main__":
    main()
