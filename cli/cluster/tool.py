"""kafka-cluster: cluster-id, unregister and list-endpoints (Kafka 3.9/4.0's ClusterTool), safe to script, and
kraftsman's describe-brokers, wait and health (verbs.py) for playbooks such as a rolling restart.

Kafka's flags, texts and exit codes, spoken through kraftsman's blocking client (controller.client.
sync_client), also for `cluster-id -b`: it starts in a fraction of confluent-kafka's import time, gives
the same one-line errors and the same bounded timeout against brokers and controllers.

Exit codes (kraftsman additions marked *):
  0   done; also `unregister` against a cluster without the API (Kafka prints its message and exits 0),
      and `unregister --missing-ok` of a broker that is not registered (nothing to do)*
  1   failed, as Kafka: the server answered an error (e.g. BROKER_ID_NOT_REGISTERED), bad arguments
      (usage and error on stderr), a bad --command-config (or --config) file
  4*  refused: `unregister --require-fenced` of a broker that is still active (unfenced)
  5*  `health`: the cluster is not healthy (the reasons are printed)
  64* bad arguments when `--output json` is given (1 otherwise, as Kafka)
  69* cannot reach the cluster: unknown host, closed port, connect or request timeout, a server that
      does not speak Kafka, TLS/SASL failures (Kafka exits 1 after its timeout)
  75* `wait`: the broker did not reach the state before --timeout

`--output json` (or yaml) prints one object {"command", "status", ...} on stdout, errors included ("error").
The command line is a typer app (one definition: help, man page, completion and KRAFTSMAN_CLUSTER_* variables
come from it); connection profiles fill what the flags leave out (admin_options). Each sub-command is one typer
function (flags and help) calling its implementation through admin_options.admin_command: Kafka's verbs here
(commands.py), kraftsman's in verbs.py (commands.py, wait.py, health_run.py).
"""
from __future__ import annotations

from typing import Annotated

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
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.typer_app import run_app
from ..completion import completers
from . import commands
from . import verbs as cluster_verbs

PROG = "kafka-cluster"

app = typer.Typer(name=PROG, help="The Kafka cluster tool.", add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command("cluster-id", help="Get information about the ID of a cluster.")
def cluster_id(ctx: typer.Context, bootstrap_server: BootstrapServer = None,
               bootstrap_controller: BootstrapController = None, config: ClientConfig = None,
               command_config: CommandConfig = None,
               output: Output = "text", timeout: Timeout = None, profile: Profile = None,
               client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.cluster_id)


@app.command("unregister", help="Unregister a broker.")
def unregister(ctx: typer.Context,
               id: Annotated[int, typer.Option(
                   "--id", "-i", help="The ID of the broker to unregister.", autocompletion=completers.broker_ids)],
               bootstrap_server: BootstrapServer = None, bootstrap_controller: BootstrapController = None,
               config: ClientConfig = None, command_config: CommandConfig = None,
               missing_ok: Annotated[bool, typer.Option(
                   "--missing-ok", help="kraftsman: succeed (exit 0) when the broker is not registered.")] = False,
               require_fenced: Annotated[bool, typer.Option(
                   "--require-fenced", help="kraftsman: refuse (exit 4) to unregister a broker that is still "
                                            "active.")] = False,
               dry_run: Annotated[bool, typer.Option(
                   "--dry-run", help="kraftsman: tell what the run would do under --require-fenced and --missing-ok "
                              "and exit with the code it would exit with; change nothing.")] = False,
               output: Output = "text", timeout: Timeout = None, profile: Profile = None,
               client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.unregister)


@app.command("list-endpoints", help="List endpoints")
def list_endpoints(ctx: typer.Context, bootstrap_server: BootstrapServer = None,
                   bootstrap_controller: BootstrapController = None, config: ClientConfig = None,
                   command_config: CommandConfig = None,
                   include_fenced_brokers: Annotated[bool, typer.Option(
                       "--include-fenced-brokers",
                       help="Whether to include fenced brokers when listing broker endpoints")] = False,
                   output: Output = "text", timeout: Timeout = None, profile: Profile = None,
                   client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.list_endpoints)


cluster_verbs.add_to(app)   # describe-brokers, wait, health


def _usage_status(argv: list[str]) -> int:
    """Return the suite's status for a bad command line (common.boundary.usage_exit)."""
    return usage_exit(PROG, argv)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-cluster with `argv`; print to env's streams; return the exit status."""
    from ..common.admin_options import CONFIG_HELP_4_2
    from ..common.kafka_release import kafka_release

    def texts(command) -> dict:  # --config of every sub-command that takes it
        return {(name, "config"): CONFIG_HELP_4_2 for name, sub in command.commands.items()
                if any(p.name == "config" for p in getattr(sub, "params", ()))}
    return run_app(app, argv, env, prog=PROG, tool_env_name="cluster", usage_status=_usage_status,
                   help_texts=texts if kafka_release(env) == "4.2" else None)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.cluster.tool import main as _main  # the package's module: one Failure class, not __main__'s

    _main()
