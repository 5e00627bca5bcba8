"""kafka-reassign-partitions --verify and --cancel (Kafka 3.9's verifyAssignment and cancelAssignment), and the
clearing of throttles both end with.

Rules:
- --verify prints each plan partition's state, then the (empty) log directory moves' line, and clears every
  throttle when no reassignment at all is under way in the cluster (Kafka's test: any ongoing reassignment, even
  one of another plan, keeps the throttles) unless --preserve-throttles.
- --cancel cancels the plan's partitions whose reassignment is under way and is not only adding replicas (Kafka's
  test: no adding replicas, or some removing ones), prints Kafka's lines (the moves' line without its newline),
  then clears the throttles unless --preserve-throttles.
- Clearing deletes the broker rates on the cluster's brokers and the plan's replicas, then the topic lists on the
  plan's topics, printing each line before its request.
"""
from __future__ import annotations

from kraftsman.controller.client.admin import ServerError

from ..common.jopt import server_error
from . import plan_files, texts, throttles
from .actions import DONE, FAILED, IN_PROGRESS, alter_configs, refuse_log_dir_moves

UNKNOWN_TOPIC_OR_PARTITION = 3


def clear_all_throttles(admin, targets: list, say) -> dict:
    """Delete the throttles of the plan's brokers and topics, and the cluster's brokers' (clearAllThrottles)."""
    cluster = [n.node_id for n in admin.describe_cluster().nodes]
    brokers, topics = texts.clearing_sets(cluster, targets)
    say(texts.clearing_brokers_text(brokers))
    alter_configs(admin, throttles.clear_broker_changes(brokers))
    say(texts.clearing_topics_text(topics))
    alter_configs(admin, throttles.clear_topic_changes(topics))
    return {"brokers": brokers, "topics": topics}


def _described(admin, targets: list, ongoing: dict) -> dict:
    """Describe the topics of the plan's partitions that have no reassignment under way; a missing topic stays
    missing (its partitions have no replicas), another error fails."""
    from .actions import execution_error

    names = {tp[0] for tp, _ in targets if tp not in ongoing}
    described = admin.describe_topics(sorted(names), each=True)
    for found in described.values():
        if isinstance(found, ServerError) and found.code != UNKNOWN_TOPIC_OR_PARTITION:
            raise execution_error(found)
    return described


def outcome(states: dict) -> str:
    """Return DONE, IN_PROGRESS or FAILED for the plan's partition states."""
    if any(not s.done for s in states.values()):
        return IN_PROGRESS
    if any(s.current != s.target for s in states.values()):
        return FAILED
    return DONE


def verify(admin, plan_text: str, preserve_throttles: bool, say) -> dict:
    """--verify (see Rules); return the states, the outcome and the throttles cleared."""
    plan = plan_files.parse_plan(plan_text)
    refuse_log_dir_moves(plan)
    ongoing = admin.list_partition_reassignments()
    states = texts.reassignment_states(plan.partitions, ongoing, _described(admin, plan.partitions, ongoing))
    say(texts.status_text(states))
    say("")                                          # the log directory moves: none
    fields = {"outcome": outcome(states), "partitions": _state_fields(states), "cleared": None}
    if not ongoing and not preserve_throttles:
        fields["cleared"] = clear_all_throttles(admin, plan.partitions, say)
    return fields


def _state_fields(states: dict) -> list[dict]:
    return [{"topic": t, "partition": p, "current_replicas": s.current, "target_replicas": s.target,
             "state": IN_PROGRESS if not s.done else DONE if s.current == s.target else FAILED}
            for (t, p), s in sorted(states.items(), key=lambda i: plan_files.partition_order(i[0]))]


def cancel(admin, plan_text: str, preserve_throttles: bool, say, say_raw) -> dict:
    """--cancel (see Rules); return the partitions cancelled and the throttles cleared."""
    plan = plan_files.parse_plan(plan_text)
    refuse_log_dir_moves(plan)
    wanted = list(dict.fromkeys(tp for tp, _ in plan.partitions))
    ongoing = admin.list_partition_reassignments(wanted)
    chosen = [tp for tp, r in ongoing.items() if not r.adding_replicas or r.removing_replicas]
    if chosen:
        errors = {tp: e for tp, e in admin.alter_partition_reassignments(dict.fromkeys(chosen)).items() if e}
        if errors:
            raise texts.cancel_failed({tp: server_error(e) for tp, e in errors.items()})
    say(texts.cancelled_text(chosen))
    say_raw(texts.NO_MOVES)
    fields = {"cancelled": [texts.partition_text(tp) for tp in sorted(chosen, key=plan_files.partition_order)],
              "cleared": None}
    if not preserve_throttles:
        fields["cleared"] = clear_all_throttles(admin, plan.partitions, say)
    return fields
