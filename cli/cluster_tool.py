"""kafka-cluster: cluster-id, unregister and list-endpoints (Kafka 3.9/4.0's ClusterTool), safe to script.

Kafka's flags, texts and exit codes, spoken through kraftsman's blocking client (controller.server.
sync_client), also for `cluster-id -b`: it starts in a fraction of confluent-kafka's import time, gives
the same one-line errors and the same bounded timeout against brokers and controllers.

Exit codes (kraftsman additions marked *):
  0   done; also `unregister` against a cluster without the API (Kafka prints its message and exits 0),
      and `unregister --missing-ok` of a broker that is not registered (nothing to do)*
  1   failed, as Kafka: the server answered an error (e.g. BROKER_ID_NOT_REGISTERED), bad arguments
      (usage and error on stderr), a bad --config file
  4*  refused: `unregister --require-fenced` of a broker that is still active (unfenced)
  64* bad arguments when `--output json` is given (1 otherwise, as Kafka)
  69* cannot reach the cluster: unknown host, closed port, connect or request timeout, a server that
      does not speak Kafka, TLS/SASL failures (Kafka exits 1 after its timeout)

`--output json` prints one object {"command", "status", ...} on stdout, errors included ("error").
"""
from __future__ import annotations

import argparse
import json
import time

from .common import Environment, ExitStatus
from .env_overrides import with_environment

PROG = "kafka-cluster"
REFUSED = 4
SERVER_HELP = "A list of host/port pairs to use for establishing the connection to the Kafka cluster."
CONTROLLER_HELP = "A list of host/port pairs to use for establishing the connection to the KRaft controllers."
UNSUPPORTED_UNREGISTER = "The target cluster does not support the broker unregistration API."
ERROR_NAMES = {35: "UNSUPPORTED_VERSION", 41: "NOT_CONTROLLER", 42: "INVALID_REQUEST",
               102: "BROKER_ID_NOT_REGISTERED", 31: "CLUSTER_AUTHORIZATION_FAILED"}


class Failure(Exception):
    """A failure printed as one line on stderr with an exit status."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR, code: int | None = None):
        super().__init__(message)
        self.status, self.code = int(status), code


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


def _connection_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--bootstrap-server", "-b", help=SERVER_HELP)
    group.add_argument("--bootstrap-controller", "-C", help=CONTROLLER_HELP)
    parser.add_argument("--config", "-c", help="A property file containing configurations for the Admin client.")
    parser.add_argument("--output", choices=("text", "json"), default="text",
                        help="kraftsman: print text (Kafka's) or one JSON object.")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="kraftsman: give up after this many seconds in total (default: request.timeout.ms).")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of kafka-cluster."""
    parser = _Parser(prog=PROG, description="The Kafka cluster tool.")
    sub = parser.add_subparsers(dest="command", metavar="{cluster-id,unregister,list-endpoints}",
                                parser_class=_Parser)
    sub.required = True
    cluster_id = sub.add_parser("cluster-id", help="Get information about the ID of a cluster.")
    _connection_flags(cluster_id)
    unregister = sub.add_parser("unregister", help="Unregister a broker.")
    _connection_flags(unregister)
    unregister.add_argument("--id", "-i", type=int, required=True, help="The ID of the broker to unregister.")
    unregister.add_argument("--missing-ok", action="store_true",
                            help="kraftsman: succeed (exit 0) when the broker is not registered.")
    unregister.add_argument("--require-fenced", action="store_true",
                            help="kraftsman: refuse (exit 4) to unregister a broker that is still active.")
    unregister.add_argument("--dry-run", action="store_true",
                            help="kraftsman: only tell whether the broker is active; change nothing.")
    endpoints = sub.add_parser("list-endpoints", help="List endpoints")
    _connection_flags(endpoints)
    endpoints.add_argument("--include-fenced-brokers", action="store_true",
                           help="Whether to include fenced brokers when listing broker endpoints")
    return parser


def parse_arguments(parser: argparse.ArgumentParser, tool: str, argv: list[str], env: Environment):
    """Parse `argv` as Kafka's argparse4j tools do; return (namespace, None), or (None, exit status) after
    printing a usage error (1, or 64 with --output json) or the help (-h)."""
    import contextlib

    try:
        with contextlib.redirect_stdout(env.stdout):
            return with_environment(parser, tool, argv, env.env).parse_args(argv), None
    except _UsageError as e:
        env.stderr.write(f"{e}\n")
        return None, ExitStatus.USAGE if _wants_json(argv) else ExitStatus.ERROR
    except SystemExit as e:        # -h / --help
        return None, int(e.code or 0)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-cluster with `argv`; print to env's streams; return the exit status."""
    args, status = parse_arguments(build_parser(), "cluster", argv, env)
    if args is None:
        return status
    from . import cluster_commands

    try:
        return cluster_commands.COMMANDS[args.command](args, _Context(args, env))
    except Failure as e:
        return _fail(args, env, str(e), e.status)


def _wants_json(argv: list[str]) -> bool:
    pairs = zip(argv, argv[1:] + [""])
    return "--output=json" in argv or any(a == "--output" and b == "json" for a, b in pairs)


def _fail(args, env: Environment, message: str, status: int) -> int:
    line = " ".join(message.split())
    if args.output == "json":
        env.stdout.write(json.dumps({"command": args.command, "status": status, "error": line}) + "\n")
    else:
        env.stderr.write(line + "\n")
    return status


class _Context:
    """The parsed connection settings of one run: addresses, client config and deadline."""

    def __init__(self, args, env: Environment):
        from kraftsman.controller.server import sync_client as sc

        self.env, self.args = env, args
        props = _load_config(args.config) if args.config else {}
        try:
            self.config = sc.ClientConfig.from_properties(props)
            self.addresses = sc.parse_addresses(args.bootstrap_server or args.bootstrap_controller)
        except ValueError as e:
            raise Failure(str(e)) from None
        seconds = args.timeout if args.timeout is not None else self.config.request_timeout_ms / 1000
        if seconds <= 0:
            raise Failure(f"--timeout must be positive, got {args.timeout:g}")
        self.config.request_timeout_ms = int(seconds * 1000)
        self.deadline = time.monotonic() + seconds
        self.controllers = args.bootstrap_controller is not None

    def emit(self, text: str, **fields) -> None:
        """Print Kafka's text, or the JSON object (with status 0 unless given)."""
        if self.args.output == "json":
            obj = {"command": self.args.command, "status": 0} | fields
            self.env.stdout.write(json.dumps(obj) + "\n")
        elif text:
            self.env.stdout.write(text + ("" if text.endswith("\n") else "\n"))


def _load_config(path: str) -> dict[str, str]:
    from kraftsman.storage import properties

    try:
        return properties.load(path)
    except FileNotFoundError:
        raise Failure(f"{path} (No such file or directory)") from None
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None


def main() -> None:
    """Console script entry point."""
    from .common import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.cluster_tool import main as _main  # the package's module: one Failure class, not __main__'s

    _main()
