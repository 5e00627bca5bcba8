"""kafka-broker-api-versions: Kafka 3.9's BrokerApiVersionsCommand (the API versions every broker speaks, and which
of them Kafka 3.9's client would use), its jopt-simple flags, texts and exit codes, spoken through kraftsman's
Admin client (controller.client.admin).

    kafka-broker-api-versions --bootstrap-server host:9092
    kafka-broker-api-versions --bootstrap-controller host:9093 --output json

Exit codes (kraftsman additions marked *):
  0   every node listed (a node that could not be asked is an `ERROR:` line, as Kafka's)
  1   failed, as Kafka: a bad command line (Kafka's message and option table on stderr, or jopt-simple's exception),
      a bad --command-config, a bad bootstrap list
  69* cannot reach the cluster (Kafka prints the same text and exits 1)

kraftsman's additions: --bootstrap-controller (the controllers' own API lists, from DescribeCluster), --output
json|yaml (cli/schemas/broker-api-versions.schema.json), --timeout, --profile, -X; KRAFTSMAN_BROKER_API_VERSIONS_<FLAG>
variables.

Rules:
- One typer command: Kafka's options (their help is Kafka's, argument displays as jopt-simple shows them) and the
  additions (help starting "kraftsman:"); the body hands them to commands.run through cli/common/jopt.py.
- BrokerApiVersionsCommand parses its options outside any catch, so jopt-simple's exceptions (an unknown option,
  a missing argument) reach the JVM: `Exception in thread "main"` and the trace, exit 1 (parse_error).
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from . import commands

PROG = commands.PROG
TOOL = jopt.Tool(PROG, "This tool helps to retrieve broker version information.", form=jopt.thread,
                 connect_form=jopt.thread)

BootstrapServer = jopt.valued("--bootstrap-server", "REQUIRED: The server to connect to.",
                              "String: server(s) to use for bootstrapping")
BootstrapController = jopt.valued("--bootstrap-controller", "kraftsman: the KRaft controllers to connect to instead "
                                  "of --bootstrap-server: list every controller's own API versions.",
                                  "String: controllers")
CommandConfig = jopt.valued("--command-config", "A property file containing configs to be passed to Admin Client.",
                            "String: command config property file")

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def broker_api_versions(ctx: typer.Context, bootstrap_server: BootstrapServer = None,
                        command_config: CommandConfig = None, show_help: jopt.HelpFlag = False,
                        show_version: jopt.VersionFlag = False,
                        bootstrap_controller: BootstrapController = None, output: jopt.Output = "text",
                        timeout: jopt.Timeout = None, profile: jopt.Profile = None,
                        client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), commands.run, TOOL)


def parse_error(error, prog: str) -> str:
    """Return jopt-simple's exception as the JVM prints it uncaught: `Exception in thread "main"`, its trace."""
    _message, trace = jopt.usage_error(error, prog).split("\n", 1)
    return 'Exception in thread "main" ' + trace.removesuffix("\n")


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-broker-api-versions with `argv`; print to env's streams; return the exit status."""
    from ..common.typer_app import run_app

    return run_app(app, argv, env, prog=PROG, tool_env_name="broker_api_versions", usage_error=parse_error)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
