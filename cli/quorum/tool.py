"""kafka-metadata-quorum: `describe --status|--replication`, `add-controller`, `remove-controller` (Kafka 3.9's
MetadataQuorumCommand).

Kafka's flags, texts and exit codes, spoken through kraftsman's Admin client (controller.client.admin):
DescribeCluster for the cluster id, DescribeQuorum for the rest.
Connection flags come before the sub-command, as in Kafka:
    kafka-metadata-quorum --bootstrap-controller host:9093 describe --status

Exit codes (kraftsman additions marked *):
  0   done
  1   failed, as Kafka: bad arguments (usage and error on stderr, whatever --output asks), a missing or bad
      --command-config, the server answered an error, a timestamp in the future with --human-readable
  69* cannot reach the cluster: unknown host, closed port, timeout, a server that does not speak Kafka,
      TLS/SASL failures, no quorum leader before the deadline (Kafka exits 1 after its timeout)

`--output json` (or yaml) prints one object {"command", "status", ...} on stdout, errors included.
The command line is a typer app (help, man page, completion and KRAFTSMAN_QUORUM_* variables come from it):
the connection options sit on the root, kraftsman's --output, --timeout, --profile and -X on the root and on
every sub-command; a connection profile fills what they leave out (admin_options).
add-controller / remove-controller (KIP-853) are in voters.py.

Rules:
- The usage errors and the required --bootstrap-server | --bootstrap-controller group keep Kafka's words and 1
  (whatever --output asks); a missing --command-config file fails before anything connects.
- Each sub-command is one typer function calling its implementation (describe_command here, voters.py's
  add_controller and remove_controller) through admin_options.admin_command; each checks its arguments before
  it reads the connection settings.
- describe's texts and JSON are built here from the Admin client's QuorumInfo; endpoints and server errors are
  worded by texts.py, which voters.py shares (so neither imports the other).
"""
from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from ..common.admin import Context, Failure, admin_call
from ..common.admin_options import ClientProperty, Output, Profile, Timeout, admin_command
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.output import structured
from ..common.status import ExitStatus
from ..common.typer_app import run_app
from ..completion import completers
from . import voters
from .texts import check_command_config, endpoint_text, server_words

PROG = "kafka-metadata-quorum"
SERVER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the Kafka "
               "cluster.")
CONTROLLER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the "
                   "Kafka controllers.")
CONFIG_HELP = "Property file containing configs to be passed to Admin Client."
# --command-config as Kafka 4.0+ words it (MetadataQuorumCommand): common.release_help gives it to a 4.x run
CONFIG_HELP_4X = CONFIG_HELP + " For add-controller, the file is used to specify the controller properties as well."
STATUS_HELP = ("A short summary of the quorum status and the other provides detailed information about the "
               "status of replication.")
DRY_RUN_HELP = "True if we should print what would be done, but not do it."
HEADERS = ("NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status")
GROUP = ("--bootstrap-server", "--bootstrap-controller")      # as Kafka's usage errors name them

BootstrapServer = Annotated[Optional[str], typer.Option("--bootstrap-server", "-b", help=SERVER_HELP)]
BootstrapController = Annotated[Optional[str], typer.Option("--bootstrap-controller", "-C", help=CONTROLLER_HELP)]
CommandConfig = Annotated[Optional[str], typer.Option("--command-config", metavar="FILE", help=CONFIG_HELP)]
DryRun = Annotated[bool, typer.Option("--dry-run", help=DRY_RUN_HELP)]

app = typer.Typer(name=PROG, help="This tool describes kraft metadata quorum status.", add_completion=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})


@app.callback()
def connection(bootstrap_server: BootstrapServer = None, bootstrap_controller: BootstrapController = None,
               config: CommandConfig = None, output: Output = "text", timeout: Timeout = None,
               profile: Profile = None, client_property: ClientProperty = None) -> None:
    """Take the options given before the sub-command (admin_options.settings reads them)."""


@app.command("describe", help="Describe the metadata quorum info")
def describe(ctx: typer.Context,
             status: Annotated[bool, typer.Option("--status", help=STATUS_HELP)] = False,
             replication: Annotated[bool, typer.Option(
                 "--replication", help="Detailed information about the status of replication")] = False,
             human_readable: Annotated[bool, typer.Option("--human-readable", help="Human-readable output")] = False,
             output: Output = "text", timeout: Timeout = None, profile: Profile = None,
             client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), describe_command, group=GROUP, connect=False)


@app.command("add-controller", help="Add a controller to the KRaft controller cluster")
def add_controller(ctx: typer.Context, dry_run: DryRun = False, output: Output = "text", timeout: Timeout = None,
                   profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), voters.add_controller, group=GROUP, connect=False)


@app.command("remove-controller", help="Remove a controller from the KRaft controller cluster")
def remove_controller(ctx: typer.Context,
                      controller_id: Annotated[int, typer.Option(
                          "--controller-id", "-i", help="The id of the controller to remove.",
                          autocompletion=completers.controller_ids)],
                      controller_directory_id: Annotated[str, typer.Option(
                          "--controller-directory-id", "-d", help="The directory ID of the controller to remove.")],
                      dry_run: DryRun = False, output: Output = "text", timeout: Timeout = None,
                      profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), voters.remove_controller, group=GROUP, connect=False)


def describe_command(args, env: Environment) -> int:
    """Print `describe --status` or `describe --replication`."""
    check_command_config(args)
    mode = _mode(args)
    ctx = Context(args, env)
    info, cluster_id = admin_call(_describe, ctx, mode, wording=server_words)
    if mode == "status":
        ctx.emit(format_status(cluster_id, info, ctx.release), **status_json(cluster_id, info))
    else:
        text = "" if structured(args.output) else format_replication(info, args.human_readable, now_ms())
        ctx.emit(text, replicas=replication_json(info))
    return ExitStatus.OK


# the releases whose `describe --status` leaves out a voter's or observer's unknown (zero) directory id
OMITS_NULL_DIRECTORY_ID = frozenset({"4.1", "4.2"})


def _usage_status(argv: list[str]) -> int:
    """Return the suite's status for a bad command line (common.boundary.usage_exit)."""
    return usage_exit(PROG, argv)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-metadata-quorum with `argv`; print to env's streams; return the exit status."""
    from ..common.kafka_release import DEFAULT_RELEASE, kafka_release

    texts = None if kafka_release(env) == DEFAULT_RELEASE else {(None, "config"): CONFIG_HELP_4X}
    return run_app(app, argv, env, prog=PROG, tool_env_name="quorum", usage_status=_usage_status, help_texts=texts)


def _mode(args) -> str:
    usage = usage_exit(PROG)           # Kafka's 1, whatever --output asks
    if args.status and args.replication:
        raise Failure("Only one of --status or --replication should be specified with describe sub-command", usage)
    if args.status and args.human_readable:
        raise Failure("The option --human-readable is only supported along with --replication", usage)
    if not (args.status or args.replication):
        raise Failure("One of --status or --replication must be specified with describe sub-command", usage)
    return "status" if args.status else "replication"


def _describe(ctx, mode: str):
    """Return (QuorumInfo, cluster id or None)."""
    from kraftsman.controller.client.admin import BROKERS, CONTROLLERS

    admin, cluster_id = ctx.admin(), None
    if mode == "status":
        cluster_id = admin.describe_cluster(CONTROLLERS if ctx.controllers else BROKERS).cluster_id
    return admin.describe_metadata_quorum(), cluster_id


def now_ms() -> int:
    """The wall clock in milliseconds (replaced in tests)."""
    return int(time.time() * 1000)


# ---------------------------------------------------------------- --status


def _leader(info):
    leader = next((v for v in info.voters if v.replica_id == info.leader_id), None)
    if leader is None:
        raise Failure(f"The quorum leader {info.leader_id} is not among the current voters "
                      f"{[v.replica_id for v in info.voters]}")
    return leader


def follower_lag(info) -> tuple[int, int]:
    """Return Kafka's (MaxFollowerLag, MaxFollowerLagTimeMs): against the voter with the lowest log end offset."""
    leader = _leader(info)
    laggard = min(info.voters, key=lambda v: v.log_end_offset)
    lag = leader.log_end_offset - laggard.log_end_offset
    if laggard is leader:
        return lag, 0
    if leader.last_caught_up_timestamp is not None and laggard.last_caught_up_timestamp is not None:
        return lag, leader.last_caught_up_timestamp - laggard.last_caught_up_timestamp
    return lag, -1


def format_status(cluster_id: str | None, info, release: str = "3.9") -> str:
    """Return Kafka's `describe --status` text (the release's Node.toString: OMITS_NULL_DIRECTORY_ID)."""
    lag, lag_ms = follower_lag(info)
    omit = release in OMITS_NULL_DIRECTORY_ID
    rows = (("ClusterId", "null" if cluster_id is None else cluster_id), ("LeaderId", info.leader_id),
            ("LeaderEpoch", info.leader_epoch), ("HighWatermark", info.high_watermark), ("MaxFollowerLag", lag),
            ("MaxFollowerLagTimeMs", lag_ms), ("CurrentVoters", _replica_list(info, info.voters, omit)),
            ("CurrentObservers", _replica_list(info, info.observers, omit)))
    return "".join(f"{key + ':':<24}{value}\n" for key, value in rows)


def _replica_list(info, replicas, omit_null: bool = False) -> str:
    return "[" + ", ".join(_node_text(r, info.nodes.get(r.replica_id, []), omit_null) for r in replicas) + "]"


def _node_text(replica, endpoints, omit_null: bool = False) -> str:
    # {"id": 1, "directoryId": "<uuid>" or null, "endpoints": ["CONTROLLER://host:port"]} (endpoints when known);
    # from Kafka 4.1 a null directoryId is left out: {"id": 1, "endpoints": [...]}
    from kraftsman.storage.protocol.uuids import ZERO_UUID

    directory = "null" if replica.directory_id == ZERO_UUID else f'"{replica.directory_id}"'
    text = f'{{"id": {replica.replica_id}'
    if not (omit_null and directory == "null"):
        text += f', "directoryId": {directory}'
    if endpoints:
        text += ', "endpoints": [' + ", ".join(f'"{endpoint_text(*e)}"' for e in endpoints) + "]"
    return text + "}"


def status_json(cluster_id, info) -> dict:
    """Return `describe --status` as JSON fields."""
    lag, lag_ms = follower_lag(info)

    def nodes(replicas):
        return [{"id": r.replica_id, "directory_id": _directory(r),
                 "endpoints": [endpoint_text(*e) for e in info.nodes.get(r.replica_id, [])]} for r in replicas]
    return {"cluster_id": cluster_id, "leader_id": info.leader_id, "leader_epoch": info.leader_epoch,
            "high_watermark": info.high_watermark, "max_follower_lag": lag, "max_follower_lag_time_ms": lag_ms,
            "current_voters": nodes(info.voters), "current_observers": nodes(info.observers)}


def _directory(replica) -> str | None:
    from kraftsman.storage.protocol.uuids import ZERO_UUID

    return None if replica.directory_id == ZERO_UUID else str(replica.directory_id)


# ---------------------------------------------------------------- --replication


def _rows(info):
    """Yield (replica, Status) in Kafka's order: the leader, the other voters, the observers."""
    leader = _leader(info)
    yield leader, "Leader"
    yield from ((v, "Follower") for v in info.voters if v.replica_id != info.leader_id)
    yield from ((o, "Observer") for o in info.observers)


def format_replication(info, human_readable: bool, now: int) -> str:
    """Return Kafka 3.9's `describe --replication` table (ToolsUtils.prettyPrintTable: cells padded, each
    followed by a tab)."""
    leader = _leader(info)
    lead = leader.log_end_offset
    rows = [[str(r.replica_id), str(r.directory_id), str(r.log_end_offset), str(lead - r.log_end_offset),
             _timestamp(r.last_fetch_timestamp, human_readable, now, "last fetch"),
             _timestamp(r.last_caught_up_timestamp, human_readable, now, "last caught up"), status]
            for r, status in _rows(info)]
    widths = [max(len(cell) for cell in column) for column in zip(HEADERS, *rows)]
    return "".join("".join(f"{cell:<{w}}\t" for cell, w in zip(row, widths)) + "\n" for row in [list(HEADERS), *rows])


def _timestamp(value: int | None, human_readable: bool, now: int, what: str) -> str:
    if value is None:
        return "-1"
    if not human_readable:
        return str(value)
    if not 0 < value <= now:       # Kafka's relativeTimeMs
        raise Failure(f"Error while computing relative time, possible drift in system clock. "
                      f"Current timestamp is {now}, {what} timestamp is {value}")
    return f"{now - value} ms ago"


def replication_json(info) -> list[dict]:
    """Return `describe --replication`'s rows as JSON objects."""
    leader = _leader(info)
    return [{"node_id": r.replica_id, "directory_id": _directory(r), "log_end_offset": r.log_end_offset,
             "lag": leader.log_end_offset - r.log_end_offset, "last_fetch_timestamp": r.last_fetch_timestamp,
             "last_caught_up_timestamp": r.last_caught_up_timestamp, "status": status} for r, status in _rows(info)]


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.quorum.tool import main as _main  # the package's module: one Failure class

    _main()
