"""kraftsman: one umbrella command over the Kafka-compatible tools (`kraftsman storage ...` = `kafka-storage ...`).

Rules:
- Each subcommand is a module with `run(argv, env) -> int`, imported only when chosen (fast start-up); the
  list is the registry's (app.py).
- The Kafka-named console scripts and these subcommands share the same code and flags.
"""
from __future__ import annotations

import importlib

from .app import TOOLS, UMBRELLA_COMMANDS
from .common import OWN_VERSION, Environment, ExitStatus, exit_with, package_version

# subcommand -> (module, program name shown in errors, one-line help), from the registry
SUBCOMMANDS = {t.command: (t.module, t.script, t.summary) for t in TOOLS}
SUBCOMMANDS |= {c.command: (c.module, f"kraftsman {c.command}", c.summary) for c in UMBRELLA_COMMANDS}


DESCRIPTION = "One umbrella command over kraftsman's Kafka-compatible tools."
OPTIONS = (("-h, --help", "Show this help and exit."), ("--version", "Print the version and exit."),
           ("--debug", "Show a Python traceback instead of a one-line error."),
           ("--quiet", "Print nothing on stdout (the exit code tells); every tool takes it."),
           ("--verbose", "Trace each client request and its answer on stderr; every tool takes it."),
           ("--no-color", "Turn colour off (as NO_COLOR does); every tool takes it."))


def usage() -> str:
    """Return the umbrella usage text."""
    lines = ["usage: kraftsman <command> [args...]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, _, help_) in SUBCOMMANDS.items()]
    lines += ["", "options:"] + [f"  {flags:<11} {help_}" for flags, help_ in OPTIONS]
    lines += ["", "Run 'kraftsman <command> --help' for a command's flags."]
    return "\n".join(lines) + "\n"


def build_parser():
    """Return an argparse description of the umbrella (for man pages and completions; run() dispatches)."""
    import argparse

    parser = argparse.ArgumentParser(prog="kraftsman", description=DESCRIPTION)
    parser.add_argument("--version", action="store_true", help=OPTIONS[1][1])
    for flags, help_ in OPTIONS[2:]:
        parser.add_argument(flags, action="store_true", help=help_)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, _, help_) in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_, add_help=False)
    return parser


def run(argv: list[str], env: Environment) -> int:
    """Dispatch to a subcommand's run()."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        env.stdout.write(usage())
        return ExitStatus.OK if argv else ExitStatus.USAGE
    if argv[0] == "--version":
        from importlib.metadata import version

        env.stdout.write(f"kraftsman {version('kraftsman')}\n")
        return ExitStatus.OK
    entry = SUBCOMMANDS.get(argv[0])
    if entry is None:
        env.stderr.write(f"kraftsman: unknown command '{argv[0]}' (commands: {', '.join(SUBCOMMANDS)}; "
                         f"see 'kraftsman --help')\n")
        return ExitStatus.USAGE
    if argv[1:2] == ["--version"] and entry[1] not in OWN_VERSION:
        env.stdout.write(f"{entry[1]} (kraftsman) {package_version()}\n")
        return ExitStatus.OK
    module = importlib.import_module(entry[0])
    return module.run(argv[1:], env)


def main() -> None:
    """Console entry point."""
    exit_with(run, "kraftsman")


if __name__ == "__main__":
    main()
