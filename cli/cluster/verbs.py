"""kafka-cluster's kraftsman verbs as typer commands: describe-brokers, wait and health (their flags and help).

Rules:
- Each verb is one function with the shared connection options (admin_options) and its own, calling its
  implementation (commands.describe_brokers, wait.wait, health_run.health, imported when the verb runs: --help stays
  light) through admin_options.admin_command, as Kafka's verbs do; `add_to(app)` registers them on
  kafka-cluster's app after Kafka's.
- Combinations the flags alone cannot refuse are usage errors here, with argparse's words (exit 1, whatever
  --output asks), before anything is sent.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

import click
import typer

from ..common.admin_options import (
    BootstrapController,
    BootstrapServer,
    ClientConfig,
    ClientProperty,
    CommandConfig,
    Output,
    Profile,
    Timeout,
    admin_command,
)
from ..completion import completers

State = Annotated[Literal["registered", "unregistered", "fenced", "unfenced"], typer.Option(
    "--state", help="The state to wait for: registered, unregistered, fenced or unfenced (registered, not fenced "
                    "and not in controlled shutdown).")]
BrokerId = Annotated[int, typer.Option("--id", "-i", help="The ID of the broker to wait for.",
                                       autocompletion=completers.broker_ids)]
RestartedAfter = Annotated[Optional[str], typer.Option(
    "--restarted-after", metavar="TIME",
    help="Also require the broker to have restarted after TIME: its start time later than TIME, or, from a server "
         "that tells no start time, a restart seen by the wait. TIME is an ISO 8601 time (local time without an "
         "offset) or milliseconds since the Unix epoch.")]
IncarnationFrom = Annotated[Optional[str], typer.Option(
    "--incarnation-changed-from", metavar="ID",
    help="Also require the broker's incarnation id to differ from ID (needs --bootstrap-controller).")]
AllowFenced = Annotated[int, typer.Option(
    "--allow-fenced", metavar="N", min=0,
    help="Stay healthy with up to N brokers fenced or in controlled shutdown.")]
MaxLag = Annotated[int, typer.Option(
    "--max-voter-lag", metavar="RECORDS", min=0,
    help="A voter more than RECORDS behind the leader's log end is lagging.")]
MaxLagMs = Annotated[int, typer.Option(
    "--max-voter-lag-ms", metavar="MS", min=0,
    help="A voter not caught up with the leader for more than MS milliseconds is lagging.")]
Watch = Annotated[bool, typer.Option("--watch", "-w", help="Check again every --interval seconds, redrawing the "
                                                            "verdict with the time it was checked, until Ctrl-C (or "
                                                            "--timeout).")]
ExitWhenHealthy = Annotated[bool, typer.Option(
    "--exit-when-healthy", "-e", help="Check again every --interval seconds until the cluster is healthy, then exit "
                                      "0 (prints every check with --watch, the last one otherwise, with a progress "
                                      "line on a terminal meanwhile).")]
Interval = Annotated[float, typer.Option("--interval", metavar="SECONDS", min=0.1,
                                         help="Seconds between checks with --watch or --exit-when-healthy.")]


def add_to(app: typer.Typer) -> None:
    """Register describe-brokers, wait and health on `app`."""
    app.command("describe-brokers", help="kraftsman: describe every registered broker: endpoint, rack, fenced, "
                                         "controlled shutdown, epoch, incarnation, start time and age (a server "
                                         "without DescribeCluster v2 lists unfenced brokers only).")(describe_brokers)
    app.command("wait", help="kraftsman: wait until broker --id reaches --state (exit 0), polling with a backoff; "
                             "exit 75 when --timeout (default 300 s) passes first. A server without DescribeCluster "
                             "v2 can tell only --state unfenced.")(wait)
    app.command("health", help="kraftsman: tell whether the cluster is healthy (exit 0) or not (exit 5) and why: a "
                               "quorum leader, voters within the lag bounds, no fenced or shutting-down brokers, no "
                               "offline or under-replicated partitions. Needs --bootstrap-controller.")(health)


def describe_brokers(ctx: typer.Context, bootstrap_server: BootstrapServer = None,
                     bootstrap_controller: BootstrapController = None, config: ClientConfig = None,
                     command_config: CommandConfig = None,
                     output: Output = "text", timeout: Timeout = None, profile: Profile = None,
                     client_property: ClientProperty = None) -> int:
    """Run describe-brokers."""
    values = dict(locals())
    from .commands import describe_brokers as implementation

    return admin_command(ctx, values, implementation)


def wait(ctx: typer.Context, id: BrokerId, state: State, restarted_after: RestartedAfter = None,
         incarnation_changed_from: IncarnationFrom = None, bootstrap_server: BootstrapServer = None,
         bootstrap_controller: BootstrapController = None, config: ClientConfig = None,
         command_config: CommandConfig = None,
         output: Output = "text", timeout: Timeout = None, profile: Profile = None,
         client_property: ClientProperty = None) -> int:
    """Run wait."""
    values = dict(locals())
    from .wait import parse_time
    from .wait import wait as implementation

    if restarted_after is not None and incarnation_changed_from is not None:
        raise click.UsageError("argument --incarnation-changed-from: not allowed with argument --restarted-after",
                               ctx)
    if state == "unregistered" and (restarted_after or incarnation_changed_from) is not None:
        raise click.UsageError("argument --state: unregistered takes neither --restarted-after nor "
                               "--incarnation-changed-from", ctx)
    try:
        restarted_after is None or parse_time(restarted_after)
    except ValueError as e:
        raise click.UsageError(f"argument --restarted-after: {e}", ctx) from None
    return admin_command(ctx, values, implementation)


def health(ctx: typer.Context, bootstrap_server: BootstrapServer = None,
           bootstrap_controller: BootstrapController = None, config: ClientConfig = None,
           command_config: CommandConfig = None,
           allow_fenced: AllowFenced = 0, max_voter_lag: MaxLag = 1000, max_voter_lag_ms: MaxLagMs = 5000,
           watch: Watch = False, exit_when_healthy: ExitWhenHealthy = False, interval: Interval = 2.0,
           output: Output = "text", timeout: Timeout = None, profile: Profile = None,
           client_property: ClientProperty = None) -> int:
    """Run health."""
    values = dict(locals())
    from .health_run import health as implementation

    return admin_command(ctx, values, implementation)
