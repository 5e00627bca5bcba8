"""AssignReplicasToDirs (KIP-858): Kafka 3.9's handleAssignReplicasToDirs, table by table."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.directories import (
    LOST,
    assign_replicas_to_dirs,
    is_online_dir,
)
from kraftsman.controller.quorum.error_responses import error_response
from kraftsman.controller.quorum.partitions import MIGRATING
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import (
    TOPIC_ID,
    M,
    S,
    broker_record,
    ctx,
    image_of,
    log_dir,
    partition,
    replay,
    topic,
)

NONE, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION = 0, 6, 3
UNSUPPORTED_VERSION, STALE_BROKER_EPOCH, UNKNOWN_TOPIC_ID = 35, 77, 100
SECOND = Uuid.from_longs(0x5555, 0x6666)   # broker 1's second log directory
UNKNOWN_DIR = Uuid.from_longs(0x9999, 0x9999)
OTHER_TOPIC = Uuid.from_longs(0x4444, 0x4444)
EPOCH = 10


def jbod_broker(broker_id: int, epoch: int, dirs) -> object:
    """Return a RegisterBrokerRecord v3 of an unfenced broker with the given log dirs."""
    record = broker_record(broker_id, epoch)
    record.message.log_dirs = list(dirs)
    return record


def cluster(mv: int = 21, *extra):
    """Return an image: broker 1 (two dirs, epoch 10), brokers 2 and 3, topic 't' with partitions 0-2.

    Partition 0 = [1, 2] led by 1, partition 1 = [2, 3] led by 2, partition 2 = [3, 1] led by 3.
    """
    return image_of(jbod_broker(1, EPOCH, [log_dir(1), SECOND]), broker_record(2, 11), broker_record(3, 12),
                    *topic(partition(0, [1, 2], 1), partition(1, [2, 3], 2), partition(2, [3, 1], 3)), *extra, mv=mv)


def request(directories, broker_id: int = 1, epoch: int = EPOCH):
    """Return an AssignReplicasToDirsRequest from {dir: {topic id: [partition, ...]}}."""
    def rs(struct, **fields):
        return S("AssignReplicasToDirsRequest", struct, **fields)
    dirs = [rs("DirectoryData", id=d, topics=[
        rs("TopicData", topic_id=t, partitions=[rs("PartitionData", partition_index=p) for p in parts])
        for t, parts in topics.items()]) for d, topics in directories.items()]
    return M("AssignReplicasToDirsRequest", broker_id=broker_id, broker_epoch=epoch, directories=dirs)


def codes(response) -> list:
    """Flatten a response to (dir, topic id, partition, error code) in response order."""
    return [(d.id, t.topic_id, p.partition_index, p.error_code)
            for d in response.directories for t in d.topics for p in t.partitions]


def run(image, req):
    """Run the handler; return (records, response) after checking the response encodes at v0."""
    result = assign_replicas_to_dirs(ctx(image), req)
    codec.encode("AssignReplicasToDirsResponse", 0, result.response)
    return result.records, result.response


# ------------------------------------------------------------ whole-request errors

@pytest.mark.parametrize("broker_id, epoch, mv, expected", [
    (1, EPOCH, 21, NONE),
    (1, EPOCH, 17, NONE),                    # 3.7-IV2: the first level with directory assignment
    (1, EPOCH, 16, UNSUPPORTED_VERSION),     # 3.7-IV1: "Directory assignment is not supported yet."
    (1, EPOCH + 1, 21, STALE_BROKER_EPOCH),  # registered with another epoch
    (1, -1, 21, STALE_BROKER_EPOCH),
    (9, EPOCH, 21, STALE_BROKER_EPOCH),      # not registered: checkBrokerEpoch answers before the lookup
])
def test_whole_request_errors_go_top_level_with_no_directories(broker_id, epoch, mv, expected):
    if mv < 17:  # a level-16 cluster registered its brokers without log dirs
        image = image_of(broker_record(1, EPOCH), *topic(partition(0, [1], 1)), mv=mv)
    else:
        image = cluster(mv)
    records, response = run(image, request({SECOND: {TOPIC_ID: [0]}}, broker_id, epoch))
    assert response.error_code == expected
    if expected == NONE:
        assert codes(response) == [(SECOND, TOPIC_ID, 0, NONE)] and len(records) == 1
    else:
        assert (response.directories, records) == ([], [])


# ------------------------------------------------------------ per-partition errors

def test_per_partition_errors_follow_request_order():
    records, response = run(cluster(), request({
        SECOND: {TOPIC_ID: [0, 7, 1, 2], OTHER_TOPIC: [0, 1]},
        log_dir(1): {TOPIC_ID: [1]},
    }))
    assert response.error_code == NONE
    assert codes(response) == [
        (SECOND, TOPIC_ID, 0, NONE),
        (SECOND, TOPIC_ID, 7, UNKNOWN_TOPIC_OR_PARTITION),
        (SECOND, TOPIC_ID, 1, NOT_LEADER_OR_FOLLOWER),  # partition 1 = [2, 3]: broker 1 is no replica
        (SECOND, TOPIC_ID, 2, NONE),
        (SECOND, OTHER_TOPIC, 0, UNKNOWN_TOPIC_ID),
        (SECOND, OTHER_TOPIC, 1, UNKNOWN_TOPIC_ID),
        (log_dir(1), TOPIC_ID, 1, NOT_LEADER_OR_FOLLOWER),
    ]
    assert [(r.message.partition_id, r.message.directories) for r in records] == [
        (0, [SECOND, log_dir(2)]), (2, [log_dir(3), SECOND])]


# ------------------------------------------------------------ records and replay

def test_assignment_writes_a_directories_only_change_record_that_replays():
    image = cluster()
    records, response = run(image, request({SECOND: {TOPIC_ID: [0]}}))
    assert codes(response) == [(SECOND, TOPIC_ID, 0, NONE)]
    (record,) = records
    assert (record.name, record.version) == ("PartitionChangeRecord", 1)  # v1 carries Directories
    message = record.message
    assert (message.topic_id, message.partition_id, message.directories) == (TOPIC_ID, 0, [SECOND, log_dir(2)])
    assert (message.leader, message.isr, message.replicas) == (-2, None, None)  # nothing else changes
    before = image.topics.by_id[TOPIC_ID].partition(0)
    after = replay(image, records).topics.by_id[TOPIC_ID].partition(0)
    assert after.directories == [SECOND, log_dir(2)]
    assert (after.leader, after.isr, after.leader_epoch) == (before.leader, before.isr, before.leader_epoch)
    assert after.partition_epoch == before.partition_epoch + 1


def test_no_record_when_the_replica_already_is_in_that_directory():
    records, response = run(cluster(), request({log_dir(1): {TOPIC_ID: [0, 2]}}))
    assert codes(response) == [(log_dir(1), TOPIC_ID, 0, NONE), (log_dir(1), TOPIC_ID, 2, NONE)]
    assert records == []


def test_reassigning_back_after_replay_writes_the_first_directory_again():
    image = replay(cluster(), run(cluster(), request({SECOND: {TOPIC_ID: [0]}}))[0])
    records, _ = run(image, request({log_dir(1): {TOPIC_ID: [0]}}))
    assert [r.message.directories for r in records] == [[log_dir(1), log_dir(2)]]
    assert run(image, request({SECOND: {TOPIC_ID: [0]}}))[0] == []


def test_a_partition_created_unassigned_gets_its_directory():
    image = image_of(jbod_broker(1, EPOCH, [log_dir(1), SECOND]), *topic(partition(0, [1], 1)))
    image = replay(image, [_unassigned(0)])
    assert image.topics.by_id[TOPIC_ID].partition(0).directories == [bytes(16)]
    records, _ = run(image, request({SECOND: {TOPIC_ID: [0]}}))
    assert [r.message.directories for r in records] == [[SECOND]]


def _unassigned(partition_id: int):
    """Return a PartitionChangeRecord v1 moving the single replica of a partition to UNASSIGNED."""
    return ApiMessageAndVersion(M("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=partition_id,
                                  directories=[bytes(16)]), 1)


# ------------------------------------------------------------ offline directories

@pytest.mark.parametrize("directory, online", [
    (bytes(16), True), (MIGRATING, True), (LOST, False), (SECOND, True), (log_dir(1), True), (UNKNOWN_DIR, False)])
def test_is_online_dir_is_kafkas_directory_id_is_online(directory, online):
    assert is_online_dir([log_dir(1), SECOND], directory) is online
    assert is_online_dir([], directory) is (directory != LOST)  # no dirs known: assume online (KAFKA-16162)


def test_assignment_to_an_offline_directory_takes_the_broker_out_of_isr_and_leadership():
    image = cluster()
    records, response = run(image, request({UNKNOWN_DIR: {TOPIC_ID: [0, 2]}}))
    assert codes(response) == [(UNKNOWN_DIR, TOPIC_ID, 0, NONE), (UNKNOWN_DIR, TOPIC_ID, 2, NONE)]
    assigned = [(r.message.partition_id, r.message.directories) for r in records[:2]]
    assert assigned == [(0, [UNKNOWN_DIR, log_dir(2)]), (2, [log_dir(3), UNKNOWN_DIR])]
    isr_updates = [(r.message.partition_id, r.message.leader, r.message.isr) for r in records[2:]]
    assert isr_updates == [(0, 2, [2]), (2, -2, [3])]  # partition 0 loses its leader 1 to 2
    after = replay(image, records).topics.by_id[TOPIC_ID]
    assert (after.partition(0).leader, after.partition(0).isr) == (2, [2])
    assert after.partition(0).directories == [UNKNOWN_DIR, log_dir(2)]
    assert (after.partition(2).leader, after.partition(2).isr) == (3, [3])


def test_a_lost_directory_is_offline_even_when_nothing_else_changes():
    image = cluster()
    records, _ = run(image, request({LOST: {TOPIC_ID: [2]}}))
    assert [(r.message.directories, r.message.isr) for r in records] == [([log_dir(3), LOST], None), (None, [3])]


# ------------------------------------------------------------ plumbing

def test_the_controller_serves_it_as_a_write():
    controller = QuorumController()
    assert not controller.is_read_only("AssignReplicasToDirs")
    result = controller.handle("AssignReplicasToDirs", ctx(cluster()), request({SECOND: {TOPIC_ID: [0]}}))
    assert len(result.records) == 1


@pytest.mark.parametrize("code", [Errors.NOT_CONTROLLER, 31])  # NOT_CONTROLLER, CLUSTER_AUTHORIZATION_FAILED
def test_error_response_sets_the_top_level_error_and_no_directories(code):
    body = error_response("AssignReplicasToDirs", request({SECOND: {TOPIC_ID: [0, 1]}}), code)
    assert (body.error_code, body.directories, body.throttle_time_ms) == (code, [], 0)
    data = codec.encode("AssignReplicasToDirsResponse", 0, body)
    assert data == bytes.fromhex("00000000") + code.to_bytes(2, "big") + bytes.fromhex("01 00")
