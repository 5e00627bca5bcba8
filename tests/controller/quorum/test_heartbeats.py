"""BrokerHeartbeat and the fencing sweep: Kafka 3.9's state machine, record choice by metadata.version, real frames.

Hand-derived from Kafka's BrokerHeartbeatManager rules (restated in heartbeats.py), the record versions the
real logs show (unfence/fence: BrokerRegistrationChangeRecord v0 fenced -1/1; controlled shutdown: v1
inControlledShutdown 1) and the recorded heartbeats of broker 5 (epoch 32) with a Kafka 3.9 controller.
"""
from __future__ import annotations

import json

import pytest

from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.storage.protocol import codec

from .cluster_fixtures import broker_record, ctx, heartbeat, image_of, names, partition, replay, topic, wire


def control(**config) -> ClusterControl:
    return ClusterControl(QuorumConfig(**config))


def payload(record) -> dict:
    """Return a record as kafka-dump-log's payload object (type name in upper snake case)."""
    kind = "".join("_" + c if c.isupper() else c for c in record.name).lstrip("_").upper()
    return {"type": kind, "version": record.version,
            "data": json.loads(codec.to_json(record.name, record.version, record.message))}


# ---------------------------------------------------------------- the recorded story of broker 5


@pytest.mark.parametrize("req_file, resp_file", [
    ("msgs/000187_c3_req_BrokerHeartbeat_v1_c2.bin", "msgs/000188_c3_resp_BrokerHeartbeat_v1_c2.bin"),
    ("msgs/000195_c3_req_BrokerHeartbeat_v1_c4.bin", "msgs/000196_c3_resp_BrokerHeartbeat_v1_c4.bin"),
    ("msgs/000227_c3_req_BrokerHeartbeat_v1_c6.bin", "msgs/000235_c3_resp_BrokerHeartbeat_v1_c6.bin"),
])
def test_golden_heartbeats_of_a_fenced_broker(req_file, resp_file):
    # epoch 32 = offset of its RegisterBrokerRecord: offset 31 is not caught up, 32 is; WantFence keeps it
    # fenced; WantFence=false at offset 34 unfences it
    _, request = wire(req_file)
    _, expected = wire(resp_file)
    image = image_of(broker_record(4, 36, fenced=True), broker_record(5, 32, fenced=True))
    result = control().broker_heartbeat(ctx(image, version=1, offset=37), request)
    assert result.response == expected
    if expected.is_fenced:
        assert result.records == []
    else:
        assert [payload(r) for r in result.records] == [{"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 0,
                                                         "data": {"brokerId": 5, "brokerEpoch": 32, "fenced": -1}}]


def test_golden_heartbeat_of_an_unfenced_broker_changes_nothing():
    _, request = wire("msgs/004221_c1_req_BrokerHeartbeat_v1_c157.bin")
    _, expected = wire("msgs/004222_c1_resp_BrokerHeartbeat_v1_c157.bin")
    image = image_of(broker_record(4, 36), broker_record(5, 32))
    result = control().broker_heartbeat(ctx(image, version=1), request)
    assert (result.records, result.response) == ([], expected)


@pytest.mark.parametrize("broker_id, epoch", [(9, 32), (5, 31), (5, 33)])
def test_unknown_broker_or_other_epoch_is_stale(broker_id, epoch):
    image = image_of(broker_record(5, 32, fenced=True))
    result = control().broker_heartbeat(ctx(image), heartbeat(broker_id, epoch, 100))
    assert result.records == [] and result.response.error_code == 77
    assert (result.response.is_fenced, result.response.should_shut_down) == (True, False)  # schema defaults


# ---------------------------------------------------------------- the state machine, table-driven


LEADER_OF_P0 = topic(partition(0, [1, 2], leader=1))


@pytest.mark.parametrize("fenced, want_fence, want_shut_down, leads, offset, types, fenced_after, shut_down", [
    # FENCED
    (True, False, False, False, 9, [], True, False),                  # not caught up (epoch 10)
    (True, False, False, False, 10, ["BrokerRegistrationChangeRecord"], False, False),
    (True, True, False, False, 50, [], True, False),                  # WantFence keeps it fenced
    (True, False, True, False, 50, ["BrokerRegistrationChangeRecord"], True, True),   # SHUTDOWN_NOW
    # UNFENCED
    (False, False, False, True, 50, [], False, False),
    (False, True, False, True, 50, ["PartitionChangeRecord", "BrokerRegistrationChangeRecord"], True, False),
    (False, True, True, False, 50, ["BrokerRegistrationChangeRecord"], True, True),
    (False, False, True, True, 50, ["BrokerRegistrationChangeRecord", "PartitionChangeRecord"], False, False),
    (False, False, True, False, 50, ["BrokerRegistrationChangeRecord"], True, True),  # leads nothing
])
def test_state_machine(fenced, want_fence, want_shut_down, leads, offset, types, fenced_after, shut_down):
    partitions = LEADER_OF_P0 if leads else topic(partition(0, [2], leader=2))
    image = image_of(broker_record(1, 10, fenced=fenced), broker_record(2, 20), *partitions)
    result = control().broker_heartbeat(ctx(image), heartbeat(1, 10, offset, want_fence, want_shut_down))
    assert names(result.records) == types
    assert (result.response.is_fenced, result.response.should_shut_down) == (fenced_after, shut_down)
    assert result.response.is_caught_up == (offset >= 10)
    after = replay(image, result.records)
    assert after.cluster.brokers[1].record.fenced == fenced_after


def test_controlled_shutdown_moves_leadership_then_lets_the_broker_go():
    c = control()
    image = image_of(broker_record(1, 10), broker_record(2, 20), *LEADER_OF_P0)
    c.on_activate(ctx(image))
    c.broker_heartbeat(ctx(image, now=1), heartbeat(2, 20, 200))           # broker 2 is at offset 200
    first = c.broker_heartbeat(ctx(image, now=2, offset=100), heartbeat(1, 10, 99, want_shut_down=True))
    assert [payload(r) for r in first.records][:1] == [{"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 1,
                                                        "data": {"brokerId": 1, "brokerEpoch": 10,
                                                                 "inControlledShutdown": 1}}]
    image = replay(image, first.records)
    p = image.topics.by_name["t"].partition(0)
    assert (p.leader, list(p.isr)) == (2, [2])
    assert c.heartbeats.leases[1].controlled_shutdown_offset == 101        # the end of its batch
    # it leads nothing now, and broker 2 (the only active one) has read past offset 101
    second = c.broker_heartbeat(ctx(image, now=3, offset=102), heartbeat(1, 10, 102, want_shut_down=True))
    assert names(second.records) == ["BrokerRegistrationChangeRecord"]
    assert (second.response.is_fenced, second.response.should_shut_down) == (True, True)


def test_controlled_shutdown_waits_for_the_active_brokers_to_catch_up():
    c = control()
    image = image_of(broker_record(1, 10, shutdown=True), broker_record(2, 20))
    c.on_activate(ctx(image))
    c.broker_heartbeat(ctx(image), heartbeat(2, 20, 50))
    first = c.broker_heartbeat(ctx(image, offset=100), heartbeat(1, 10, 99, want_shut_down=True))
    assert first.records == [] and not first.response.should_shut_down
    assert c.heartbeats.leases[1].controlled_shutdown_offset == 99          # batch end of an empty result
    c.broker_heartbeat(ctx(image), heartbeat(2, 20, 99))
    assert c.broker_heartbeat(ctx(image, offset=100), heartbeat(1, 10, 99, want_shut_down=True)).response \
        .should_shut_down


@pytest.mark.parametrize("mv, types", [
    (5, ["UnfenceBrokerRecord"]),                        # before 3.3-IV2
    (6, ["BrokerRegistrationChangeRecord"]),
])
def test_unfence_record_type_by_metadata_version(mv, types):
    image = image_of(broker_record(1, 10, fenced=True), mv=mv)
    result = control().broker_heartbeat(ctx(image), heartbeat(1, 10, 10))
    assert names(result.records) == types
    assert not replay(image, result.records).cluster.brokers[1].record.fenced


def test_controlled_shutdown_before_3_3_iv3_writes_no_state_record_but_is_remembered():
    c = control()
    image = image_of(broker_record(1, 10), broker_record(2, 20), *LEADER_OF_P0, mv=6)
    c.on_activate(ctx(image))
    first = c.broker_heartbeat(ctx(image, offset=100), heartbeat(1, 10, 99, want_shut_down=True))
    assert names(first.records) == ["PartitionChangeRecord"]
    assert (first.response.is_fenced, first.response.should_shut_down) == (False, False)
    assert c.heartbeats.current_state(image.cluster.brokers[1]).name == "CONTROLLED_SHUTDOWN"


# ---------------------------------------------------------------- fencing sweep


def test_sweep_fences_after_the_session_timeout_only():
    c = control(session_timeout_ms=9000)
    image = image_of(broker_record(1, 10), broker_record(2, 20))
    c.on_activate(ctx(image, now=0))
    c.broker_heartbeat(ctx(image, now=5000), heartbeat(2, 20, 50))
    assert c.fence_stale_brokers(ctx(image, now=9000)) == []                # lastContact + timeout >= now: valid
    (result,) = c.fence_stale_brokers(ctx(image, now=9001))
    assert [payload(r) for r in result.records] == [{"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 0,
                                                     "data": {"brokerId": 1, "brokerEpoch": 10, "fenced": 1}}]
    assert c.fence_stale_brokers(ctx(replay(image, result.records), now=20_000))[0].records[0].message.broker_id == 2


def test_sweep_never_fences_fenced_brokers_and_results_chain():
    c = control()
    image = image_of(broker_record(1, 10), broker_record(2, 20), broker_record(3, 30),
                     broker_record(4, 40, fenced=True), *topic(partition(0, [1, 2, 3], leader=1)))
    c.on_activate(ctx(image, now=0))
    c.broker_heartbeat(ctx(image, now=8000), heartbeat(3, 30, 50))
    results = c.fence_stale_brokers(ctx(image, now=10_000))
    assert [names(r.records) for r in results] == [["PartitionChangeRecord", "BrokerRegistrationChangeRecord"]] * 2
    after = replay(image, [r for result in results for r in result.records])
    p = after.topics.by_name["t"].partition(0)
    assert (p.leader, list(p.isr)) == (3, [3])                              # 1 -> 2 -> 3: the second saw the first
    assert [b.id for b in after.cluster.brokers.values() if b.record.fenced] == [1, 2, 4]


def test_activation_starts_leases_fresh():
    c = control()
    image = image_of(broker_record(1, 10))
    c.on_activate(ctx(image, now=0))
    assert len(c.fence_stale_brokers(ctx(image, now=100_000))) == 1
    c.on_deactivate()
    c.on_activate(ctx(image, now=100_000))                                  # a failover: a new active controller
    assert c.fence_stale_brokers(ctx(image, now=105_000)) == []
