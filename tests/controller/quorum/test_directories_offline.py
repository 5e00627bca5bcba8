"""A heartbeat's OfflineLogDirs (KIP-858): Kafka 3.9's handleDirectoriesOffline, table by table.

Hand-derived from ReplicationControlManager.processBrokerHeartbeat / handleDirectoriesOffline and
BrokerRegistration.directoryIntersection / directoryDifference (restated in directories.py): the newly offline
directories are the registered ones the heartbeat lists; each partition with a replica in one loses the broker
from its ISR and leadership; then a BrokerRegistrationChangeRecord v2 keeps the registered dirs not listed.
"""
from __future__ import annotations

import json

import pytest

from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.metadata import metadata
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import (
    TOPIC_ID,
    M,
    broker_record,
    ctx,
    heartbeat,
    image_of,
    log_dir,
    names,
    partition,
    replay,
    topic,
)

SECOND = Uuid.from_longs(0x5555, 0x6666)   # broker 1's second log directory (sorts after log_dir(1))
UNKNOWN_DIR = Uuid.from_longs(0x9999, 0x9999)
EPOCH = 10


def jbod(broker_id: int, epoch: int, dirs, fenced: bool = False):
    """Return a RegisterBrokerRecord v3 of a broker with the given log dirs."""
    record = broker_record(broker_id, epoch, fenced=fenced)
    record.message.log_dirs = list(dirs)
    return record


def placed(partition_id: int, replicas: list[int], leader: int, directories):
    """Return a PartitionRecord of 't' whose replicas live in `directories`."""
    record = partition(partition_id, replicas, leader)
    record.message.directories = list(directories)
    return record


def cluster(mv: int = 21, fenced: bool = False):
    """Return an image: broker 1 with dirs log_dir(1) and SECOND, brokers 2 and 3; topic 't':

    p0 = [1, 2] led by 1, broker 1's replica in SECOND; p1 = [2, 3] led by 2; p2 = [3, 1] led by 3, broker 1's
    replica in SECOND; p3 = [1, 2] led by 1 in log_dir(1).
    """
    return image_of(jbod(1, EPOCH, [SECOND, log_dir(1)], fenced), broker_record(2, 11), broker_record(3, 12),
                    *topic(placed(0, [1, 2], 1, [SECOND, log_dir(2)]), partition(1, [2, 3], 2),
                           placed(2, [3, 1], 3, [log_dir(3), SECOND]), partition(3, [1, 2], 1)), mv=mv)


def beat(image, offline, *, offset: int = 100, **fields):
    """Run broker 1's heartbeat listing `offline`; return the result."""
    request = heartbeat(1, EPOCH, offset, **fields)
    request.offline_log_dirs = list(offline)
    control = ClusterControl(QuorumConfig())
    control.heartbeats.register(1, 0)
    return control.broker_heartbeat(ctx(image, version=1, offset=offset), request)


def payload(record) -> dict:
    """Return a record's data as kafka-dump-log prints it."""
    return json.loads(codec.to_json(record.name, record.version, record.message))


def test_an_offline_directory_moves_leadership_and_isr_off_it_then_records_the_online_dirs():
    image = cluster()
    result = beat(image, [SECOND])
    assert names(result.records) == ["PartitionChangeRecord", "PartitionChangeRecord", "BrokerRegistrationChangeRecord"]
    changes = [(r.message.partition_id, r.message.leader, r.message.isr) for r in result.records[:2]]
    assert changes == [(0, 2, [2]), (2, -2, [3])]   # p0: leader 1 -> 2; p2: 1 leaves the ISR; p3 untouched
    change = result.records[2]
    assert change.version == 2
    assert payload(change) == {"brokerId": 1, "brokerEpoch": EPOCH, "logDirs": [str(log_dir(1))]}
    assert (result.response.error_code, result.response.is_fenced) == (0, False)

    after = replay(image, result.records)
    assert list(map(bytes, after.cluster.brokers[1].record.log_dirs)) == [bytes(log_dir(1))]
    parts = after.topics.by_id[TOPIC_ID]
    assert [(parts.partition(p).leader, parts.partition(p).isr) for p in range(4)] == [
        (2, [2]), (2, [2, 3]), (3, [3]), (1, [1, 2])]


def test_the_registration_change_record_has_kafkas_bytes():
    change = beat(cluster(), [SECOND]).records[-1]
    data = codec.encode("BrokerRegistrationChangeRecord", 2, change.message)
    # BrokerId, BrokerEpoch, then one tagged field: tag 2, size 17, LogDirs as a compact array of one uuid
    assert data == (bytes.fromhex("00000001 000000000000000a 01 02 11 02") + bytes(log_dir(1)))


def test_a_directory_already_offline_writes_nothing_again():
    image = replay(cluster(), beat(cluster(), [SECOND]).records)
    assert beat(image, [SECOND]).records == []


@pytest.mark.parametrize("offline", [[], [UNKNOWN_DIR], [log_dir(2)]])   # log_dir(2) is broker 2's
def test_directories_the_broker_did_not_register_change_nothing(offline):
    assert beat(cluster(), offline).records == []


def test_before_3_7_iv2_offline_dirs_are_ignored():
    assert beat(cluster(mv=16), [SECOND]).records == []


def test_only_newly_offline_dirs_move_partitions_but_the_record_drops_every_listed_dir():
    image = replay(cluster(), beat(cluster(), [SECOND]).records)
    result = beat(image, [SECOND, log_dir(1)])   # the last online dir fails too
    assert [(r.message.partition_id, r.message.leader, r.message.isr) for r in result.records[:-1]] == [
        (3, 2, [2])]
    assert payload(result.records[-1]) == {"brokerId": 1, "brokerEpoch": EPOCH}   # LogDirs empty: not written
    # Kafka replays an empty LogDirs as "no change", so the same heartbeat writes the record again
    again = replay(image, result.records)
    assert list(map(bytes, again.cluster.brokers[1].record.log_dirs)) == [bytes(log_dir(1))]
    assert names(beat(again, [SECOND, log_dir(1)]).records) == ["BrokerRegistrationChangeRecord"]


def test_several_dirs_go_offline_in_sorted_order():
    image = cluster()
    result = beat(image, [log_dir(1), SECOND])
    # log_dir(1) (0x1001...) sorts before SECOND (0x5555...): p3 first, then p0 and p2
    assert [r.message.partition_id for r in result.records[:-1]] == [3, 0, 2]
    assert payload(result.records[-1]) == {"brokerId": 1, "brokerEpoch": EPOCH}


def test_a_heartbeat_that_unfences_and_reports_a_dir_unfences_first_and_never_leads_from_it():
    image = cluster(fenced=True)
    image = replay(image, [ApiMessageAndVersion(M("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=p,
                                                  leader=-1, isr=[1]), 1) for p in (0, 3)])
    result = beat(image, [SECOND])
    assert names(result.records)[0] == "BrokerRegistrationChangeRecord"   # the unfence
    after = replay(image, result.records)
    parts = after.topics.by_id[TOPIC_ID]
    assert (parts.partition(3).leader, parts.partition(0).leader) == (1, -1)   # p0 lives in the failed dir
    assert after.cluster.brokers[1].record.fenced is False
    assert list(map(bytes, after.cluster.brokers[1].record.log_dirs)) == [bytes(log_dir(1))]


def test_a_heartbeat_that_fences_and_reports_a_dir_removes_the_replica_once():
    result = beat(cluster(), [SECOND], want_fence=True)
    partition_changes = [r for r in result.records if r.name == "PartitionChangeRecord"]
    assert sorted(r.message.partition_id for r in partition_changes) == [0, 2, 3]   # each partition once
    assert names(result.records)[-2:] == ["BrokerRegistrationChangeRecord"] * 2   # the fence, then the dirs


def test_metadata_lists_a_replica_in_an_offline_dir_as_offline():
    image = replay(cluster(), beat(cluster(), [SECOND]).records)
    response = metadata(ctx(image, version=12), M("MetadataRequest", topics=None)).response
    offline = {p.partition_index: p.offline_replicas for p in response.topics[0].partitions}
    assert offline == {0: [1], 1: [], 2: [1], 3: []}
