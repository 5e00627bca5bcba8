"""kafka-topics' checks and actions: TopicCommand's, in Kafka's order and words.

Rules:
- run(r) checks the command line as TopicCommandOptions.checkArgs does after --help and --version (exactly one
  action, the required options, the forbidden pairs; jopt.UsageExit), then runs the one action, as TopicService:
  create, alter, list, describe (describe.py), delete.
- Values are converted where Kafka converts them (CommandTopicPartition: partitions, replication factor,
  replica assignment, configs), after the checks: a bad one is a KafkaError in the tool's form ("Error while
  executing topic command : ..."), with Kafka's message and Java class.
- The topics an action works on are select.py's (--topic as Kafka's regular expression).
- kraftsman's additions: --bootstrap-controller stands for --bootstrap-server in every check; a multi-topic alter
  is validated first (CreatePartitions validate-only) and applied only if every topic passes; a multi-topic
  delete that fails for some topic says which were deleted (stderr, and `deleted` / `failed` in json/yaml);
  --output json|yaml prints one object per run and exits jopt.EXIT_UNCHANGED when --if-exists or
  --if-not-exists found nothing to do.
"""
from __future__ import annotations

import re

from ..common import jopt
from ..common.status import ExitStatus
from .select import REPORTS, ensure_exists, matching_topics, say, unchanged

ACTIONS = ["alter", "create", "describe", "list_", "delete"]
ONE_ACTION = "Command must include exactly one action: --list, --describe, --create, --alter or --delete"
BOOTSTRAPS = ["bootstrap_server", "bootstrap_controller"]
TO_KAFKA_CONFIGS = " (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)"
MAX_REPLICATION_FACTOR = 32767
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
# Kafka 3.9 prints this Java string without interpolating it (sic).
FORMAT_WARNING = ("WARNING: The configuration ${TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG}=${props.getProperty("
                  "TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG)} is specified. This configuration will be ignored if "
                  "the version is newer than the inter.broker.protocol.version specified in the broker or if the "
                  "inter.broker.protocol.version is 3.0 or newer. This configuration is deprecated and it will be "
                  "removed in Apache Kafka 4.0.")
# option -> (the actions it goes with, the other options it cannot go with), in checkInvalidArgs' order
INVALID = [
    ("config", ("alter", "create"), ()), ("delete_config", ("alter",), tuple(BOOTSTRAPS)),
    ("partitions", ("alter", "create"), ()), ("replication_factor", ("create",), ()),
    ("replica_assignment", ("alter", "create"), ()),
]


def run(r: jopt.Run) -> int:
    """Check the command line, then run its action; return the exit status."""
    check(r)
    r.args.command = option(next(a for a in ACTIONS if r.has(a)))       # json/yaml's "command"
    if r.has("create"):
        return create(r)
    if r.has("alter"):
        return alter(r)
    if r.has("list_"):
        return list_topics(r)
    if r.has("describe"):
        from .describe import describe

        return describe(r)
    return delete(r)


# ---------------------------------------------------------------- checks


def option(name: str) -> str:
    """Return the jopt option name of parameter `name` (list_ -> list, if_exists -> if-exists)."""
    return name.rstrip("_").replace("_", "-")


def check(r: jopt.Run) -> None:
    """Raise UsageExit (or Kafka's uncaught error) as TopicCommandOptions.checkArgs does."""
    jopt.exactly_one(r, ACTIONS, ONE_ACTION)
    _check_required(r)
    for name, actions, others in INVALID:
        _forbid(r, name, [a for a in ACTIONS if a not in actions] + list(others))
    if r.has("create"):
        _forbid(r, "replica_assignment", ["partitions", "replication_factor"])
    for name in REPORTS:
        _forbid(r, name, [a for a in ACTIONS if a != "describe"] + ["topics_with_overrides"])
    _forbid(r, "topics_with_overrides", [a for a in ACTIONS if a != "describe"] + REPORTS)
    _forbid(r, "if_exists", ["create", "list_"])
    _forbid(r, "if_not_exists", [a for a in ACTIONS if a != "create"])
    _forbid(r, "exclude_internal", ["alter", "create", "delete"])


def _check_required(r: jopt.Run) -> None:
    if not any(r.has(b) for b in BOOTSTRAPS):
        raise jopt.KafkaError("--bootstrap-server must be specified", form=jopt.uncaught)
    if all(r.has(b) for b in BOOTSTRAPS):
        raise jopt.KafkaError("Only one of --bootstrap-server or --bootstrap-controller can be specified",
                              form=jopt.uncaught)
    if r.has("describe") and r.has("if_exists"):
        if not (r.has("topic") or r.has("topic_id")):
            raise jopt.UsageExit("--topic or --topic-id is required to describe a topic")
        if r.has("topic") and r.has("topic_id"):
            say(r, "Only topic id will be used when both --topic and --topic-id are specified and topicId is not "
                   "Uuid.ZERO_UUID")
    if not (r.has("list_") or r.has("describe")) and not r.has("topic"):
        raise jopt.missing_argument("topic")
    if r.has("alter"):
        if r.has("config"):
            raise jopt.UsageExit('Option combination "[[bootstrap-server], [config]]" can\'t be used with option '
                                 f'"[alter]"{TO_KAFKA_CONFIGS}')
        if not r.has("partitions"):
            raise jopt.missing_argument("partitions")


def _forbid(r: jopt.Run, name: str, others: list[str]) -> None:
    if r.has(name):
        for other in others:
            if r.has(other):
                raise jopt.cannot_combine(option(name), option(other))


# ---------------------------------------------------------------- values, as CommandTopicPartition reads them


def command_topic(r: jopt.Run) -> dict:
    """Return the topic the command line describes (name, partitions, replication factor, assignment, configs),
    converting each value where Kafka does; a bad one raises KafkaError."""
    a = r.args
    partitions = None if a.partitions is None else jopt.java_int(a.partitions, "partitions")
    factor = None if a.replication_factor is None else jopt.java_int(a.replication_factor, "replication-factor")
    assignment = replica_assignment(a.replica_assignment) if a.replica_assignment else {}
    return {"name": a.topic, "partitions": partitions, "replication_factor": factor, "assignment": assignment,
            "configs": topic_configs(r, a.config or [])}


def replica_assignment(text: str) -> dict[int, list[int]]:
    """Parse `4:5,5:4` as TopicCommand.parseReplicaAssignment does (Kafka's errors and words)."""
    found: dict[int, list[int]] = {}
    for index, part in enumerate(jopt.java_split(text)):
        brokers = [_java_parse_int(word.strip()) for word in jopt.java_split(part, ":")]
        twice = sorted({b for b in brokers if brokers.count(b) > 1})
        if twice:
            raise jopt.KafkaError("Partition replica lists may not contain duplicate entries: " +
                                  ",".join(map(str, twice)), jopt.COMMAND_FAILED)
        found[index] = brokers
        if len(brokers) != len(found[0]):
            raise jopt.KafkaError(f"Partition {index} has different replication factor: "
                                  f"[{', '.join(map(str, brokers))}]",
                                  "org.apache.kafka.server.common.AdminOperationException")
    return found


def _java_parse_int(text: str) -> int:
    if re.fullmatch(r"[-+]?\d+", text) and -2 ** 31 <= int(text) < 2 ** 31:
        return int(text)
    raise jopt.KafkaError(f'For input string: "{text}"', "java.lang.NumberFormatException")


def topic_configs(r: jopt.Run, pairs: list[str]) -> dict[str, str]:
    """Parse --config name=value pairs and validate them as LogConfig.validate does."""
    from kraftsman.controller.quorum.topic_configs_schema import ConfigError, validate_topic_configs

    split = [re.split(r"\s*=\s*", pair) for pair in pairs]
    split = [_without_trailing_empties(parts) for parts in split]
    if not all(len(parts) == 2 for parts in split):
        raise jopt.KafkaError('requirement failed: Invalid topic config: all configs to be added must be in the '
                              'format "key=val".')
    configs = {key.strip(): value.strip() for key, value in split}
    try:
        validate_topic_configs(configs)
    except ConfigError as e:
        unknown = str(e).startswith("Unknown topic config name")
        raise jopt.KafkaError(str(e), "org.apache.kafka.common.errors.InvalidConfigurationException" if unknown
                              else "org.apache.kafka.common.config.ConfigException") from None
    if "message.format.version" in configs:
        say(r, FORMAT_WARNING)
    return configs


def _without_trailing_empties(parts: list[str]) -> list[str]:
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# ---------------------------------------------------------------- create, list, alter, delete


def create(r: jopt.Run) -> int:
    """Create the topic (TopicService.createTopic); --if-not-exists makes an existing topic no error."""
    from kraftsman.controller.client.admin import NewTopic
    from kraftsman.storage.protocol.errors import Errors

    topic = command_topic(r)
    if "_" in topic["name"] or "." in topic["name"]:
        say(r, COLLISION_WARNING)
    factor, partitions = topic["replication_factor"], topic["partitions"]
    if factor is not None and not 1 <= factor <= MAX_REPLICATION_FACTOR:
        raise jopt.KafkaError(f"The replication factor must be between 1 and {MAX_REPLICATION_FACTOR} inclusive")
    if partitions is not None and partitions < 1:
        raise jopt.KafkaError("The partitions must be greater than 0")
    new = NewTopic(topic["name"], -1 if partitions is None else partitions, -1 if factor is None else factor,
                   topic["assignment"] or None, topic["configs"])
    admin = r.admin()
    outcome = r.call(admin.create_topics, [new])[new.name]
    if outcome.error is not None:
        if outcome.error.code == Errors.TOPIC_ALREADY_EXISTS and r.has("if_not_exists"):
            return unchanged(r, topic=new.name)
        raise jopt.server_error(outcome.error)
    r.emit(f"Created topic {new.name}.", changed=True, topic=new.name, topic_id=str(outcome.topic_id),
           partitions=outcome.num_partitions, replication_factor=outcome.replication_factor)
    return ExitStatus.OK


def list_topics(r: jopt.Run) -> int:
    """Print the matching topics, one a line (an empty line when there is none, as Kafka prints)."""
    names = matching_topics(r)
    if r.structured:
        r.emit("", topics=names)
    else:
        r.env.stdout.write("\n".join(names) + "\n")
    return ExitStatus.OK


def alter(r: jopt.Run) -> int:
    """Grow the matching topics to --partitions (TopicService.alterTopic), validated first when several."""
    topic = command_topic(r)
    names = matching_topics(r)
    if not _existing(r, names):
        return unchanged(r, topics=[])
    admin = r.admin()
    described = r.call(admin.describe_topics, names)
    increases = {name: (topic["partitions"], _new_replicas(topic["assignment"], described[name]))
                 for name in names}
    if len(names) > 1:
        _raise_first(r.call(admin.create_partitions, increases, True))
    _raise_first(r.call(admin.create_partitions, increases))
    r.emit("", changed=True, topics=names, partitions=topic["partitions"])
    return ExitStatus.OK


def _existing(r: jopt.Run, names: list[str]) -> bool:
    """Tell whether --topic matched any topic (Kafka's 'does not exist as expected' unless --if-exists)."""
    ensure_exists(r, names)
    return bool(names)


def _new_replicas(assignment: dict[int, list[int]], described) -> list[list[int]] | None:
    """Return the replicas of the partitions to add: the assignment's entries past the current count."""
    if not assignment:
        return None
    return [replicas for index, replicas in sorted(assignment.items()) if index >= len(described.partitions)]


def _raise_first(outcome: dict) -> None:
    failed = next((e for e in outcome.values() if e is not None), None)
    if failed is not None:
        raise jopt.server_error(failed)


def delete(r: jopt.Run) -> int:
    """Delete the matching topics (TopicService.deleteTopic)."""
    names = matching_topics(r)
    if not _existing(r, names):
        return unchanged(r, topics=[])
    admin = r.admin()
    outcome = r.call(admin.delete_topics, names)
    failed = {name: e for name, e in outcome.items() if e is not None}
    if failed:
        deleted = [n for n in names if n not in failed]
        error = jopt.server_error(next(iter(failed.values())))
        error.fields = {"deleted": deleted, "failed": {n: e.message for n, e in failed.items()}}
        if len(names) > 1 and not r.structured:
            r.env.stderr.write(f"kafka-topics: deleted {len(deleted)} of {len(names)} topics"
                               f"{': ' + ', '.join(deleted) if deleted else ''}; not deleted: "
                               f"{', '.join(failed)}\n")
        raise error
    r.emit("", changed=True, topics=names)
    return ExitStatus.OK
