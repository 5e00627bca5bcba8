"""The error boundary every kraftsman command runs behind, and the global flags it reads (--version, --debug,
--no-color, --quiet, --verbose).

Rules:
- Only the cli layer prints; library errors reach users as one line on stderr, never a traceback
  (set KRAFTSMAN_DEBUG=1 or pass --debug to see it); a ToolError's hint adds one `<prog>: hint:` line
  saying what to do where Kafka's own text does not.
- Colour only on terminals, never with NO_COLOR set or --no-color (a global flag, like --debug);
  --quiet prints nothing on stdout, --verbose traces each client request on stderr (global too).
- A bad command line exits 1 in the drop-ins of Kafka's scripts (Kafka's code), 64 (EX_USAGE) in kraftsman's own
  commands, whatever --output asks (usage_exit).
- Heavy modules are imported inside commands, never at module import.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

from .environment import Environment
from .status import ExitStatus, ToolError


def usage_exit(prog: str, argv: list[str] = ()) -> int:
    """Return the exit status of a bad command line, the one rule of every tool, whatever --output asks: Kafka's 1
    for the drop-ins of Kafka's scripts (the registry's `kafka` tools), 64 (EX_USAGE) for kraftsman's own
    commands (kraftsman, kafka-controller, kafka-metadata-export, kraftsman-demo)."""
    from ..app import by_script

    tool = by_script(prog)
    if tool is None or not tool.kafka:
        return ExitStatus.USAGE
    return ExitStatus.ERROR


def _expected_errors() -> tuple[type, ...]:
    from kraftsman.storage.errors import known_errors

    return (ToolError,) + known_errors()


def own_version(prog: str) -> bool:
    """Tell whether `prog` answers --version itself: the umbrella, and the Kafka admin tools, which print Kafka's
    version as Kafka's do (the registry's `kafka_version`; kafka-dump-log prints kraftsman's, issue 31)."""
    from ..app import by_script

    tool = by_script(prog)
    return prog == "kraftsman" or (tool is not None and tool.kafka_version)


def run_command(fn: Callable[[list[str], Environment], int], argv: list[str] | None = None,
                env: Environment | None = None, prog: str = "kraftsman") -> int:
    """Run `fn(argv, env)` behind the error boundary and return its exit status.

    `--version` as the first argument prints `<prog> (kraftsman) <version>` for every tool (but own_version's);
    an argparse parser's own exit status 2 for bad flags becomes ExitStatus.USAGE (64)."""
    env = env or Environment()
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--debug" in argv:
        argv.remove("--debug")
        env.env["KRAFTSMAN_DEBUG"] = "1"
    if "--no-color" in argv:       # as NO_COLOR (no-color.org), which rich and prompt-toolkit honour
        argv.remove("--no-color")
        env.env["NO_COLOR"] = os.environ["NO_COLOR"] = "1"
    _apply_output_levels(argv, env, prog)
    if argv[:1] == ["--version"] and not own_version(prog):
        env.stdout.write(f"{prog} (kraftsman) {package_version()}\n")
        return ExitStatus.OK
    try:
        return int(fn(argv, env) or 0)
    except SystemExit as e:
        if e.code == 2:            # argparse's error(): usage and one error line are on stderr already
            return ExitStatus.USAGE
        raise
    except KeyboardInterrupt:
        env.stderr.write("Interrupted.\n")
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.OK
    except Exception as e:  # the boundary: everything becomes one line
        if env.debug:
            raise
        status = e.status if isinstance(e, ToolError) else ExitStatus.ERROR
        known = isinstance(e, _expected_errors())
        text = str(e) if known else f"unexpected {type(e).__name__}: {e} (run with --debug for details)"
        env.stderr.write(f"{prog}: {_one_line(text)}\n")
        if getattr(e, "hint", None):
            env.stderr.write(f"{prog}: hint: {_one_line(e.hint)}\n")
        return status


class _Discard:
    """A text stream that drops what is written (stdout under --quiet)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _apply_output_levels(argv: list[str], env: Environment, prog: str) -> None:
    """Handle the global --quiet (nothing on stdout: the exit code tells) and --verbose (each request a
    client sends, and its answer, traced on stderr)."""
    if "--quiet" in argv:
        argv.remove("--quiet")
        env.stdout = _Discard()
    if "--verbose" in argv and prog != "kafka-metadata-export":  # the pipeline has its own --verbose
        argv.remove("--verbose")
        from kraftsman.controller.client import sync_client

        sync_client.TRACE = lambda line: env.stderr.write(f"{prog}: {line}\n")


def package_version() -> str:
    """Return kraftsman's installed version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kraftsman")
    except PackageNotFoundError:
        return "unknown"


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "failed"


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def exit_with(fn: Callable[[list[str], Environment], int], prog: str) -> None:
    """Run a console script entry point and exit with its status."""
    sys.exit(run_command(fn, prog=prog))
