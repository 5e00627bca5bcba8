"""What every kraftsman command shares: exit codes, the injected environment and the error boundary.

Rules:
- Only the cli layer prints; library errors reach users as one line on stderr, never a traceback
  (set KRAFTSMAN_DEBUG=1 or pass --debug to see it).
- Colour only on terminals, never with NO_COLOR set or --no-color (a global flag, like --debug);
  --quiet prints nothing on stdout, --verbose traces each client request on stderr (global too).
- Exit codes are an IntEnum documented in the README; Kafka-compatible tools keep Kafka's codes.
- Heavy modules are imported inside commands, never at module import.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, TextIO


class ExitStatus(IntEnum):
    """Process exit codes shared by all tools."""

    OK = 0
    ERROR = 1             # Kafka's generic failure code (bad input, failed operation)
    CORRUPT = 2           # dump-log: some bytes could not be decoded; the rest was printed
    FOREIGN = 3           # kafka-storage: a directory is formatted for another node/cluster (README)
    REFUSED = 4           # kafka-cluster unregister --require-fenced: the broker is still active
    UNHEALTHY = 5         # kafka-cluster health: the cluster is not healthy
    USAGE = 64            # bad flags or arguments (BSD sysexits EX_USAGE)
    UNAVAILABLE = 69      # cannot reach the cluster (EX_UNAVAILABLE)
    TIMED_OUT = 75        # kafka-cluster wait: the state was not reached in time (EX_TEMPFAIL)
    INTERRUPTED = 130     # Ctrl-C


class ToolError(Exception):
    """An error a tool reports as one line with a given exit status."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR):
        super().__init__(message)
        self.message = message
        self.status = int(status)


@dataclass
class Environment:
    """The process surroundings a command uses, injected so tests run commands in-process."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    cwd: str = field(default_factory=os.getcwd)
    env: dict = field(default_factory=lambda: dict(os.environ))

    @property
    def stdout_isatty(self) -> bool:
        """Tell whether stdout is a terminal."""
        return bool(getattr(self.stdout, "isatty", lambda: False)())

    @property
    def stderr_isatty(self) -> bool:
        """Tell whether stderr is a terminal."""
        return bool(getattr(self.stderr, "isatty", lambda: False)())

    @property
    def color(self) -> bool:
        """Tell whether colour may be used on stderr: a terminal, and neither NO_COLOR nor --no-color."""
        return self.stderr_isatty and not self.env.get("NO_COLOR")

    @property
    def debug(self) -> bool:
        """Tell whether tracebacks were asked for."""
        return self.env.get("KRAFTSMAN_DEBUG", "") not in ("", "0")


class BadPair(ValueError):
    """A KEY=VALUE word without '=' or without a key; `pair` is the word as given."""

    def __init__(self, pair: str):
        super().__init__(pair)
        self.pair = pair


def key_values(pairs, strip_values: bool = True, lenient: bool = False) -> dict[str, str]:
    """Return KEY=VALUE words (-X, --override, --conf) as a dict, keys stripped (values too unless told), later
    words winning; raise BadPair for the first bad word, or skip bad words when `lenient`."""
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            if lenient:
                continue
            raise BadPair(pair)
        found[key.strip()] = value.strip() if strip_values else value
    return found


def asks_structured(argv: list[str]) -> bool:
    """Tell whether a command line asks for structured output (--output json|yaml|jsonl, -o too) before parsing."""
    formats = ("json", "yaml", "jsonl")
    pairs = zip(argv, argv[1:] + [""])
    return any(f"{flag}={f}" in argv for flag in ("--output", "-o") for f in formats) or any(
        a in ("--output", "-o") and b in formats for a, b in pairs)


def usage_exit(prog: str, argv: list[str]) -> int:
    """Return the exit status of a bad command line, the one rule of every tool: Kafka's 1 for the drop-ins of
    Kafka's scripts (the registry's `kafka` tools), 64 (EX_USAGE) for kraftsman's own commands (kraftsman,
    kafka-controller, kafka-metadata-export, kraftsman-demo), and 64 in any tool asked for structured output."""
    from ..app import by_script

    tool = by_script(prog)
    if asks_structured(argv) or tool is None or not tool.kafka:
        return ExitStatus.USAGE
    return ExitStatus.ERROR


def _expected_errors() -> tuple[type, ...]:
    from kraftsman.storage.errors import known_errors

    return (ToolError,) + known_errors()


# Tools whose own --version prints something else (kafka-dump-log: Kafka's version, as Kafka's tool does).
OWN_VERSION = frozenset({"kraftsman", "kafka-dump-log"})


def run_command(fn: Callable[[list[str], Environment], int], argv: list[str] | None = None,
                env: Environment | None = None, prog: str = "kraftsman") -> int:
    """Run `fn(argv, env)` behind the error boundary and return its exit status.

    `--version` as the first argument prints `<prog> (kraftsman) <version>, Kafka <release>` for every tool (but
    OWN_VERSION's), the release being the one KRAFTSMAN_KAFKA_VERSION names;
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
    if argv[:1] == ["--version"] and prog not in OWN_VERSION:
        return _print_version(prog, env)
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


KAFKA_RELEASE_VARIABLE = "KRAFTSMAN_KAFKA_VERSION"


def kafka_release(env: Environment, profile=None) -> str:
    """Return the Kafka release a command speaks for where 3.9 and 4.x differ: KRAFTSMAN_KAFKA_VERSION (3.9, 4.0,
    4.1, 4.2), else `profile`'s kafka_version (a Profile, or the settings a profile filled), else 3.9. A value that
    names no release is a usage error naming where it came from (exit 64). There is no flag: the release is the
    cluster's, set once for a whole run; every tool reads it here and hands the name down."""
    from kraftsman.storage.releases import DEFAULT_RELEASE, UnknownRelease, check

    text = env.env.get(KAFKA_RELEASE_VARIABLE, "").strip()
    source = KAFKA_RELEASE_VARIABLE
    if not text and profile is not None and getattr(profile, "kafka_version", None):
        text, source = str(profile.kafka_version), "the profile's kafka-version"
    if not text:
        return DEFAULT_RELEASE
    try:
        return check(text)
    except UnknownRelease as e:
        raise ToolError(f"{source}: {e}", ExitStatus.USAGE) from None


def version_line(prog: str, release: str) -> str:
    """Return `--version`'s line: the tool, kraftsman's version and the Kafka release it speaks for."""
    return f"{prog} (kraftsman) {package_version()}, Kafka {release}\n"


def _print_version(prog: str, env: Environment) -> int:
    """Print `--version`'s line; a bad KRAFTSMAN_KAFKA_VERSION is a usage error."""
    try:
        env.stdout.write(version_line(prog, kafka_release(env)))
    except ToolError as e:
        env.stderr.write(f"{prog}: {e.message}\n")
        return e.status
    return ExitStatus.OK


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
