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

from .admin_tool import Context, Failure, ToolParser, fail, kraftsman_flags, parse_arguments
from .common import Environment

PROG = "kafka-cluster"
REFUSED = 4
SERVER_HELP = "A list of host/port pairs to use for establishing the connection to the Kafka cluster."
CONTROLLER_HELP = "A list of host/port pairs to use for establishing the connection to the KRaft controllers."
UNSUPPORTED_UNREGISTER = "The target cluster does not support the broker unregistration API."
ERROR_NAMES = {35: "UNSUPPORTED_VERSION", 41: "NOT_CONTROLLER", 42: "INVALID_REQUEST",
               102: "BROKER_ID_NOT_REGISTERED", 31: "CLUSTER_AUTHORIZATION_FAILED"}


def _connection_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--bootstrap-server", "-b", help=SERVER_HELP)
    group.add_argument("--bootstrap-controller", "-C", help=CONTROLLER_HELP)
    parser.add_argument("--config", "-c", help="A property file containing configurations for the Admin client.")
    kraftsman_flags(parser)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of kafka-cluster."""
    parser = ToolParser(prog=PROG, description="The Kafka cluster tool.")
    sub = parser.add_subparsers(dest="command", metavar="{cluster-id,unregister,list-endpoints}",
                                parser_class=ToolParser)
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


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-cluster with `argv`; print to env's streams; return the exit status."""
    args, status = parse_arguments(build_parser(), "cluster", argv, env)
    if args is None:
        return status
    from . import cluster_commands

    try:
        return cluster_commands.COMMANDS[args.command](args, Context(args, env))
    except Failure as e:
        return fail(args, env, str(e), e.status)


def main() -> None:
    """Console script entry point."""
    from .common import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.cluster_tool import main as _main  # the package's module: one Failure class, not __main__'s

    _main()
