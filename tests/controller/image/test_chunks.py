"""load_file() leaves runs of PartitionRecords in the file: the image reads them back identically, a change to the
topic takes them into memory, and a file changed since the load is an error, never another image."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.chunks import ChunkReadError
from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.loader import load_file
from kraftsman.controller.image.nodes import Leaf, root_node
from kraftsman.storage.log.segment import read_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record, write_metadata_record

TOPIC_A, TOPIC_B = bytes(range(1, 17)), bytes(range(17, 33))


def _topic(name: str, topic_id: bytes) -> bytes:
    return write_metadata_record(ApiMessageAndVersion(codec.message_class("TopicRecord")(name=name, topic_id=topic_id), 0))


def _partition(topic_id: bytes, partition_id: int, replicas: list, epoch: int = 0) -> bytes:
    message = codec.message_class("PartitionRecord")(
        partition_id=partition_id, topic_id=topic_id, replicas=replicas, isr=list(replicas), removing_replicas=[],
        adding_replicas=[], leader=replicas[0], leader_epoch=epoch, partition_epoch=epoch)
    return write_metadata_record(ApiMessageAndVersion(message, 0))


def _change(topic_id: bytes, partition_id: int, leader: int) -> bytes:
    message = codec.message_class("PartitionChangeRecord")(partition_id=partition_id, topic_id=topic_id, leader=leader)
    return write_metadata_record(ApiMessageAndVersion(message, 0))


def _write(path, batches) -> list:
    offset, data = 0, b""
    for values in batches:
        data += build_batch([(None, v) for v in values], offset)
        offset += len(values)
    path.write_bytes(data)
    return [v for values in batches for v in values]


def _leaves(node, path: str = "", out=None) -> dict:
    out = {} if out is None else out
    if isinstance(node, Leaf):
        out[path] = node.text
    else:
        for name in node.child_names():
            _leaves(node.child(name), f"{path}/{name}", out)
    return out


def _replayed(values):
    delta = MetadataDelta()
    for value in values:
        delta.replay(read_metadata_record(value))
    return delta.apply()


def _same_tree(image, values) -> None:
    expected = _leaves(root_node(_replayed(values)).child("image"))
    got = _leaves(root_node(image).child("image"))
    expected.pop("/provenance", None), got.pop("/provenance", None)
    assert got == expected


def test_runs_of_one_topic_stay_in_the_file_and_read_back_the_same(tmp_path):
    many = [_partition(TOPIC_A, p, [1 + p % 3, 2, 3], p % 4) for p in range(100)]   # crosses offset delta 64
    values = _write(tmp_path / "a.log", [
        [_topic("a", TOPIC_A)] + many,
        [_topic("b", TOPIC_B), _partition(TOPIC_B, 0, [1]), _partition(TOPIC_B, 1, [1, 2, 3, 4]),
         _partition(TOPIC_A, 100, [3, 2, 1]), _partition(TOPIC_B, 0, [2])],
    ])
    result = load_file(tmp_path / "a.log")
    topics = result.image.topics.by_id
    assert topics[TOPIC_A].chunks is not None and topics[TOPIC_B].chunks is not None
    assert result.records == len(values) and result.image.provenance.offset == len(values) - 1
    _same_tree(result.image, values)


def test_a_change_takes_the_topic_into_memory(tmp_path):
    values = _write(tmp_path / "a.log", [
        [_topic("a", TOPIC_A)] + [_partition(TOPIC_A, p, [1, 2, 3]) for p in range(10)],
        [_change(TOPIC_A, 3, 2)],
        [_partition(TOPIC_A, p, [3, 1]) for p in range(10, 20)],
    ])
    image = load_file(tmp_path / "a.log").image
    assert image.topics.by_id[TOPIC_A].chunks is None
    _same_tree(image, values)


def test_a_partition_of_an_unknown_topic_is_still_a_fault(tmp_path):
    _write(tmp_path / "a.log", [[_partition(TOPIC_B, p, [1]) for p in range(8)], [_topic("a", TOPIC_A)]])
    result = load_file(tmp_path / "a.log")
    assert [offset for offset, _ in result.faults] == list(range(8))
    assert "no topic with id" in result.faults[0][1]


def test_a_file_changed_after_the_load_is_an_error(tmp_path):
    path = tmp_path / "a.log"
    _write(path, [[_topic("a", TOPIC_A)] + [_partition(TOPIC_A, p, [1, 2, 3]) for p in range(10)]])
    image = load_file(path).image
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ChunkReadError, match="changed since the file was loaded"):
        image.topics.by_name["a"].partition(0)


def test_runs_match_the_records_one_by_one(tmp_path):
    values = _write(tmp_path / "a.log", [
        [_topic("a", TOPIC_A)] + [_partition(TOPIC_A, p, [1, 2, 3][:1 + p % 3]) for p in range(70)]
        + [_topic("b", TOPIC_B), _partition(TOPIC_B, 0, [1]), _partition(TOPIC_A, 70, [1])],
    ])
    batch = next(read_batches(tmp_path / "a.log"))
    runs = batch.raft_value_runs(b"\x01\x03", 7, 16)
    keys = [key for start, stop, key, _ in runs for _ in range(start, stop)]
    assert len(keys) == len(values)
    assert keys == [v[7:23] if v[1] == 3 else None for v in values]
    assert [stop for _, stop, _, _ in runs] == [1, 71, 72, 73, 74]
