"""kafka-topics: Kafka 3.9's TopicCommand (create, list, describe, alter partitions, delete), its jopt-simple flags,
texts and exit codes, spoken through kraftsman's Admin client (controller.client.admin).

    kafka-topics --bootstrap-server host:9092 --create --topic orders --partitions 6 --replication-factor 3
    kafka-topics --bootstrap-server host:9092 --describe --under-replicated-partitions

Exit codes (kraftsman additions marked *):
  0   done (also --if-not-exists on a topic that exists, --if-exists on one that does not, in text mode)
  1   failed, as Kafka: a bad command line (Kafka's message and option table on stderr), a bad value, a topic
      that does not exist, a server refusal ("Error while executing topic command : ..." on stdout, the log
      line on stderr)
  6*  --output json|yaml: --if-not-exists / --if-exists found it already so (nothing changed)
  69* cannot reach the cluster (Kafka's Admin times out and exits 1)

kraftsman's additions: --bootstrap-controller (requests go to the controllers; describe then reads Metadata,
as a KRaft controller serves no DescribeTopicPartitions), --output json|yaml (cli/schemas/topics.schema.json),
--timeout, --profile, -X; KRAFTSMAN_TOPICS_<FLAG> variables.

Rules:
- One typer command: Kafka's options (their help is Kafka's, argument displays as jopt-simple shows them) and the
  additions (help starting "kraftsman:"); the body hands them to commands.run through cli/common/jopt.py.
- Values are taken as strings and converted where Kafka converts them (commands.py), so a bad number fails with
  Kafka's message at the same point.
"""
from __future__ import annotations

import typer

from ..common import jopt
from ..common.environment import Environment
from ..completion import completers
from . import commands

PROG = "kafka-topics"
TOOL = jopt.Tool(PROG, "This tool helps to create, delete, describe, or change a topic.",
                 form=jopt.logged("Error while executing topic command : ", "org.apache.kafka.tools.TopicCommand"),
                 no_args="Create, delete, describe, or change a topic.", connect_form=jopt.uncaught)
TO_KAFKA_CONFIGS = " (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)"


def _config_help() -> str:
    from kraftsman.controller.quorum.topic_configs_schema import TOPIC_CONFIGS

    names = "\n".join("\t" + name for name in sorted(TOPIC_CONFIGS))
    return ("A topic configuration override for the topic being created. The following is a list of valid "
            f"configurations: \n{names}\nSee the Kafka documentation for full details on the topic configs. It is "
            "supported only in combination with --create if --bootstrap-server option is used" + TO_KAFKA_CONFIGS
            + ".")


Alter = jopt.flag("--alter", "Alter the number of partitions and replica assignment. Update the configuration of "
                             "an existing topic via --alter is no longer supported here" + TO_KAFKA_CONFIGS + ".")
AtMinIsr = jopt.flag("--at-min-isr-partitions", "if set when describing topics, only show partitions whose isr "
                                                "count is equal to the configured minimum.")
BootstrapServer = jopt.valued("--bootstrap-server", "REQUIRED: The Kafka server to connect to.",
                              "String: server to connect to")
CommandConfig = jopt.valued("--command-config", "Property file containing configs to be passed to Admin Client. "
                            "This is used only with --bootstrap-server option for describing and altering broker "
                            "configs.", "String: command config property file")
TopicConfig = jopt.valued("--config", _config_help(), "String: name=value", multiple=True,
                          completer=completers.topic_config_pairs)
Create = jopt.flag("--create", "Create a new topic.")
Delete = jopt.flag("--delete", "Delete a topic")
DeleteConfig = jopt.valued("--delete-config", "A topic configuration override to be removed for an existing topic "
                           "(see the list of configurations under the --config option). Not supported with the "
                           "--bootstrap-server option.", "String: name", multiple=True)
Describe = jopt.flag("--describe", "List details for the given topics.")
ExcludeInternal = jopt.flag("--exclude-internal", "exclude internal topics when running list or describe command. "
                                                  "The internal topics will be listed by default")
IfExists = jopt.flag("--if-exists", "if set when altering or deleting or describing topics, the action will only "
                                    "execute if the topic exists.")
IfNotExists = jopt.flag("--if-not-exists", "if set when creating topics, the action will only execute if the topic "
                                           "does not already exist.")
List = jopt.flag("--list", "List all available topics.")
PartitionLimit = jopt.valued("--partition-size-limit-per-response", "the maximum partition size to be included in "
                             "one DescribeTopicPartitions response.",
                             "Integer: maximum number of partitions in one response.")
Partitions = jopt.valued("--partitions", "The number of partitions for the topic being created or altered "
                         "(WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                         "ordering of the messages will be affected). If not supplied for create, defaults to the "
                         "cluster default.", "Integer: # of partitions")
ReplicaAssignment = jopt.valued("--replica-assignment", "A list of manual partition-to-broker assignments for the "
                                "topic being created or altered.",
                                "String: broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , "
                                "broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...")
ReplicationFactor = jopt.valued("--replication-factor", "The replication factor for each partition in the topic "
                                "being created. If not supplied, defaults to the cluster default.",
                                "Integer: replication factor")
Topic = jopt.valued("--topic", "The topic to create, alter, describe or delete. It also accepts a regular "
                    "expression, except for --create option. Put topic name in double quotes and use the '\\' "
                    "prefix to escape regular expression symbols; e.g. \"test\\.topic\".", "String: topic",
                    completer=completers.topic_names)
TopicId = jopt.valued("--topic-id", "The topic-id to describe.This is used only with --bootstrap-server option for "
                      "describing topics.", "String: topic-id")
WithOverrides = jopt.flag("--topics-with-overrides", "if set when describing topics, only show topics that have "
                                                     "overridden configs")
Unavailable = jopt.flag("--unavailable-partitions", "if set when describing topics, only show partitions whose "
                                                    "leader is not available")
UnderMinIsr = jopt.flag("--under-min-isr-partitions", "if set when describing topics, only show partitions whose "
                                                      "isr count is less than the configured minimum.")
UnderReplicated = jopt.flag("--under-replicated-partitions", "if set when describing topics, only show under "
                                                             "replicated partitions")

app = jopt.app(PROG)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def topics(ctx: typer.Context, alter: Alter = False, at_min_isr_partitions: AtMinIsr = False,
           bootstrap_server: BootstrapServer = None, command_config: CommandConfig = None,
           config: TopicConfig = None, create: Create = False, delete: Delete = False,
           delete_config: DeleteConfig = None, describe: Describe = False, exclude_internal: ExcludeInternal = False,
           show_help: jopt.HelpFlag = False, if_exists: IfExists = False, if_not_exists: IfNotExists = False,
           list_: List = False, partition_size_limit_per_response: PartitionLimit = None,
           partitions: Partitions = None, replica_assignment: ReplicaAssignment = None,
           replication_factor: ReplicationFactor = None, topic: Topic = None, topic_id: TopicId = None,
           topics_with_overrides: WithOverrides = False, unavailable_partitions: Unavailable = False,
           under_min_isr_partitions: UnderMinIsr = False, under_replicated_partitions: UnderReplicated = False,
           show_version: jopt.VersionFlag = False, bootstrap_controller: jopt.AddedBootstrapController = None,
           output: jopt.Output = "text", timeout: jopt.Timeout = None, profile: jopt.Profile = None,
           client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), commands.run, TOOL)


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-topics with `argv`; print to env's streams; return the exit status."""
    return jopt.run_tool(app, argv, env, TOOL, "topics")


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)
