"""kafka-reassign-partitions' five actions over Kafka's Admin calls (controller.client.admin), in Kafka
3.9's order of checks, requests and texts.

Rules:
- Each action takes the Admin, its options and `say` (prints one text line; the caller makes it silent for
  --output json|yaml), and returns the fields of its JSON object. Kafka's failures are raised as KafkaError
  (printed "Error: <message>" and the stack trace) or TerseException (the message alone); connection failures
  propagate to the tool's admin_call boundary.
- A server error that Kafka reads from a future is an ExecutionException around the error's exception, except
  where Kafka words its own ("Topic X not found.", "Unable to find partition: ...", per-partition lists).
- --execute checks everything it can before changing anything: the plan's shape, no reassignment under way
  (unless --additional), every broker known, every partition existing. Then it sets the throttles (each printed),
  then starts the reassignments; partitions the controller refused are Kafka's terse error, and kraftsman adds
  the line naming those that did start, so the output says exactly what was applied.
- Replica moves between log directories (a plan's log_dirs other than "any") are refused before anything is sent:
  kraftsman does not speak AlterReplicaLogDirs.
- --verify's outcome: "done" (every partition completed), "in progress" (some still moving) or "failed" (a
  partition with no reassignment under way whose replicas are not the plan's).
"""
from __future__ import annotations

from kraftsman.controller.client.admin import ServerError
from kraftsman.controller.quorum.java_hash_order import hash_set_order, int_hash, string_hash, topic_partition_hash

from ..common.jopt import KafkaError, server_error, wrapped
from . import plan_files, proposal, texts

EXECUTION = "java.util.concurrent.ExecutionException"
ADMIN_COMMAND_FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
UNKNOWN_TOPIC = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"
UNKNOWN_TOPIC_OR_PARTITION = 3
DONE, IN_PROGRESS, FAILED = "done", "in progress", "failed"


def execution_error(error) -> KafkaError:
    """Return the ExecutionException Kafka's future.get() throws for a ServerError."""
    return wrapped(EXECUTION, server_error(error))


def alter_configs(admin, changes: dict) -> None:
    """Apply config changes ({resource: [(key, value, operation)]}), one resource after the other, as Kafka's
    incrementalAlterConfigs(...).all().get(): the first failure is thrown."""
    from kraftsman.controller.client.admin.configs import AlterConfigOp

    for resource, ops in changes.items():
        try:
            admin.incremental_alter_configs(resource, [AlterConfigOp(key, op, value) for key, value, op in ops])
        except ServerError as error:
            raise execution_error(error) from None


def refuse_log_dir_moves(plan: plan_files.Plan) -> None:
    if plan.log_dirs:
        (topic, index, broker), directory = sorted(plan.log_dirs.items())[0]
        raise KafkaError("kraftsman does not move replicas between log directories (log_dirs other than \"any\"): "
                         f"{topic}-{index} on broker {broker} to {directory}", ADMIN_COMMAND_FAILED)


def describe_for_plan(admin, topics) -> dict:
    """Describe `topics` as ReassignPartitionsCommand.describeTopics: a missing topic fails the call with "Topic X
    not found." (the first in Java's HashSet order), another error with its exception."""
    described = admin.describe_topics(sorted(topics), each=True)
    for name in hash_set_order(list(topics), string_hash):
        found = described.get(name)
        if isinstance(found, ServerError):
            if found.code == UNKNOWN_TOPIC_OR_PARTITION:
                raise wrapped(EXECUTION, KafkaError(f"Topic {name} not found.", UNKNOWN_TOPIC, traced=False))
            raise execution_error(found)
    return described


def current_replicas(admin, partitions) -> dict:
    """Return {(topic, partition): replicas} of `partitions` (getReplicaAssignmentForPartitions)."""
    described = describe_for_plan(admin, {t for t, _ in partitions})
    found = {(t, p.partition): p.replicas for t, d in described.items() for p in d.partitions
             if (t, p.partition) in partitions}
    missing = [tp for tp in partitions if tp not in found]
    if missing:
        names = ", ".join(texts.partition_text(tp) for tp in hash_set_order(missing, topic_partition_hash))
        raise wrapped(EXECUTION, KafkaError(f"Unable to find partition: {names}", UNKNOWN_TOPIC, traced=False))
    return found


def verify_broker_ids(admin, brokers: set[int]) -> None:
    """Refuse a plan naming a broker the cluster does not list ("Unknown broker id 9")."""
    known = {n.node_id for n in admin.describe_cluster().nodes}
    unknown = [b for b in hash_set_order(list(brokers), int_hash) if b not in known]
    if unknown:
        raise KafkaError(f"Unknown broker id {unknown[0]}", ADMIN_COMMAND_FAILED)


def list_reassignments(admin, say) -> dict:
    """--list: print the ongoing reassignments."""
    ongoing = admin.list_partition_reassignments()
    say(texts.list_text(ongoing))
    ordered = sorted(ongoing, key=plan_files.partition_order)
    return {"reassignments": [_ongoing_fields(tp, ongoing[tp]) for tp in ordered]}


def _ongoing_fields(tp, r) -> dict:
    return {"topic": tp[0], "partition": tp[1], "replicas": r.replicas, "adding_replicas": r.adding_replicas,
            "removing_replicas": r.removing_replicas}


def generate(admin, topics_text: str, broker_list: str, rack_aware: bool, rng, say) -> dict:
    """--generate: print the current assignment of the topics and a proposal over the listed brokers."""
    brokers = plan_files.parse_broker_list(broker_list)
    plan_files.check_brokers(brokers)
    topics = plan_files.parse_topics(topics_text)
    plan_files.check_topics(topics)
    described = describe_for_plan(admin, topics)
    current = {(t, p.partition): p.replicas for t in hash_set_order(topics, string_hash)
               for p in described[t].partitions}
    metadata = proposal.broker_metadata(admin.describe_cluster().nodes, brokers, rack_aware)
    proposed = proposal.propose(current, metadata, rng)
    say(texts.generate_text(current, proposed))
    return {"current": plan_files.plan_fields(current), "proposed": plan_files.plan_fields(proposed)}
