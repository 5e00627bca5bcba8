"""kafka-reassign-partitions --execute: check the plan, print the rollback plan, set throttles, start the
reassignments (Kafka 3.9's executeAssignment; the order of checks and texts is in actions' Rules).

Rules:
- Nothing is changed before every check has passed; what is changed afterwards is printed as it is changed
  (throttles, then the reassignments started), so a failure half-way says what was applied.
"""
from __future__ import annotations

from ..common.jopt import server_error
from . import plan_files, texts, throttles
from .actions import alter_configs, current_replicas, refuse_log_dir_moves, verify_broker_ids


def execute(admin, plan_text: str, additional: bool, throttle: int, log_dir_throttle: int, say) -> dict:
    """--execute (see Rules); return the rollback plan, the throttles set and the partitions started."""
    plan = plan_files.parse_plan(plan_text)
    plan_files.check_execute(plan)
    refuse_log_dir_moves(plan)
    targets = plan.targets()
    ongoing = admin.list_partition_reassignments()
    if ongoing and not additional:
        raise texts.TerseException(texts.EXISTING_REASSIGNMENT)
    verify_broker_ids(admin, {b for replicas in targets.values() for b in replicas})
    current = current_replicas(admin, set(targets))
    say(texts.current_assignment_text(targets, current))
    fields = {"current": plan_files.plan_fields(current), "throttle": None, "log_dir_throttle": None, "started": []}
    if throttle >= 0 or log_dir_throttle >= 0:
        say(texts.VERIFY_WARNING)
    if throttle >= 0:
        fields["throttle"] = _set_throttles(admin, throttles.proposed_moves(ongoing, targets, current), throttle, say)
    if log_dir_throttle >= 0:           # no plan of kraftsman's moves a log directory: no broker to set it on
        say(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s")
        fields["log_dir_throttle"] = log_dir_throttle
    errors = {tp: e for tp, e in admin.alter_partition_reassignments(targets).items() if e is not None}
    started = [tp for tp in targets if tp not in errors]
    fields["started"] = [texts.partition_text(tp) for tp in sorted(started, key=plan_files.partition_order)]
    if errors:
        if started:
            say(f"kraftsman: these reassignments did start: {', '.join(fields['started'])}")
        failure = texts.reassign_failed({tp: server_error(e) for tp, e in errors.items()})
        failure.fields = fields
        raise failure
    say(texts.started_text(targets))
    return fields


def _set_throttles(admin, moves: dict, rate: int, say) -> dict:
    """Set the topic replica lists and the brokers' rates (modifyReassignmentThrottle); print the rate."""
    alter_configs(admin, throttles.topic_throttle_changes(moves))
    brokers = throttles.reassigning_brokers(moves)
    alter_configs(admin, throttles.broker_rate_changes(brokers, rate))
    say(f"The inter-broker throttle limit was set to {rate} B/s")
    return {"rate": rate, "brokers": brokers, "leader_replicas": throttles.leader_throttles(moves),
            "follower_replicas": throttles.follower_throttles(moves)}

