"""kafka-leader-election: Kafka 3.9's LeaderElectionCommand (preferred and unclean leader elections), its jopt-simple
flags, texts and exit codes, spoken through kraftsman's Admin client (one ElectLeaders request).

    kafka-leader-election --bootstrap-server host:9092 --election-type preferred --all-topic-partitions
    kafka-leader-election --bootstrap-server host:9092 --election-type unclean --topic orders --partition 3

Exit codes (kraftsman additions marked *):
  0   done: every partition elected, or its election was not needed
  1   failed, as Kafka: a bad command line (Kafka's message and stack trace on stderr), a bad JSON file, a
      partition that could not be elected (its line on stdout, "N replica(s) could not be elected" on stderr)
  64* a bad command line with --output json|yaml
  69* cannot reach the cluster (Kafka's Admin times out and exits 1)

kraftsman's additions: --bootstrap-controller (kraftsman's controllers serve ElectLeaders), --output json|yaml
(cli/schemas/leader-election.schema.json: the partitions elected, not needed and failed), --timeout, --profile,
-X; KRAFTSMAN_LEADER_ELECTION_<FLAG> variables. Kafka names the client properties file --admin.config.

Rules:
- One typer command: Kafka's options (Kafka's help, jopt-simple's argument displays) and the additions; the body
  hands them to commands.run through cli/common/jopt.py. Values are strings, converted where Kafka converts them.
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from ..completion import completers
from . import commands

PROG = "kafka-leader-election"
TOOL = jopt.Tool(PROG, "This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
                       "supported are preferred replicas and unclean replicas.", form=jopt.uncaught)

AdminConfig = jopt.valued("--admin.config", "Configuration properties files to pass to the admin client",
                          "String: config file")
AllPartitions = jopt.flag("--all-topic-partitions", "Perform election on all of the eligible topic partitions based on "
                          "the type of election (see the --election-type flag). Not allowed if --topic or "
                          "--path-to-json-file is specified.")
BootstrapServer = jopt.valued("--bootstrap-server", "A hostname and port for the broker to connect to, in the form "
                              "host:port. Multiple comma separated URLs can be given. REQUIRED.", "String: host:port")
ElectionType = jopt.valued(
    "--election-type", "Type of election to attempt. Possible values are \"preferred\" for preferred leader election "
    "or \"unclean\" for unclean leader election. If preferred election is selection, the election is only performed "
    "if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the "
    "election is only performed if there are no leader for the topic partition. REQUIRED.",
    "[PREFERRED,UNCLEAN]: election type", completer=lambda ctx, incomplete: [
        t for t in ("preferred", "unclean") if t.startswith(incomplete.lower())])
Partition = jopt.valued("--partition", "Partition id for which to perform an election. REQUIRED if --topic is "
                        "specified.", "Integer: partition id")
JsonFile = jopt.valued("--path-to-json-file", "The JSON file with the list  of partition for which leader elections "
                       "should be performed. This is an example format. \n{\"partitions\":\n\t[{\"topic\": \"foo\", "
                       "\"partition\": 1},\n\t {\"topic\": \"foobar\", \"partition\": 2}]\n}\nNot allowed if "
                       "--all-topic-partitions or --topic flags are specified.", "String: Path to JSON file")
Topic = jopt.valued("--topic", "Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
                    "--all-topic-partitions is specified.", "String: topic name", completer=completers.topic_names)

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def leader_election(ctx: typer.Context, command_config: AdminConfig = None, all_topic_partitions: AllPartitions = False,
                    bootstrap_server: BootstrapServer = None, election_type: ElectionType = None,
                    show_help: jopt.HelpFlag = False, partition: Partition = None, path_to_json_file: JsonFile = None,
                    topic: Topic = None, show_version: jopt.VersionFlag = False,
                    bootstrap_controller: jopt.AddedBootstrapController = None, output: jopt.Output = "text",
                    timeout: jopt.Timeout = None, profile: jopt.Profile = None,
                    client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), commands.run, TOOL)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-leader-election with `argv`; print to env's streams; return the exit status."""
    return jopt.run_tool(app, argv, env, TOOL, "leader_election")


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
