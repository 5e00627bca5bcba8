"""load_directory() leaves partition records in the segments and the snapshot as load_file() does: the image reads
them back identically, a segment deleted after the load is still read as it was (the files are pinned open), and a
segment written over in place is an error, never another image."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.chunks import ChunkReadError
from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.loader import load_directory
from kraftsman.controller.image.nodes import Leaf, root_node
from kraftsman.storage.log.snapshot import write_snapshot
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record, write_metadata_record

TOPICS = [bytes([n] * 16) for n in range(1, 5)]


def _topic(n: int) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(codec.message_class("TopicRecord")(name=f"t{n}", topic_id=TOPICS[n]), 0)


def _partition(n: int, partition_id: int, leader: int = 1) -> ApiMessageAndVersion:
    message = codec.message_class("PartitionRecord")(
        partition_id=partition_id, topic_id=TOPICS[n], replicas=[1, 2, 3], isr=[1, 2, 3], removing_replicas=[],
        adding_replicas=[], leader=leader, leader_epoch=partition_id % 5, partition_epoch=0)
    return ApiMessageAndVersion(message, 0)


def _segment(path, batches, offset: int = 0) -> list:
    data = b""
    for records in batches:
        data += build_batch([(None, write_metadata_record(r)) for r in records], offset)
        offset += len(records)
    path.write_bytes(data)
    return [r for records in batches for r in records]


def _directory(tmp_path):
    """A log directory: a snapshot of topics 0-1 (offsets 0-99), then two segments with topics 2 and 3."""
    pdir = tmp_path / "__cluster_metadata-0"
    pdir.mkdir()
    snapshot = [_topic(0)] + [_partition(0, p) for p in range(60)] + [_topic(1)] + [_partition(1, p) for p in range(38)]
    write_snapshot(pdir / f"{100:020d}-{1:010d}.checkpoint", snapshot, epoch=1)
    first = _segment(pdir / f"{100:020d}.log", [[_topic(2)] + [_partition(2, p) for p in range(70)]], 100)
    second = _segment(pdir / f"{171:020d}.log", [[_topic(3)] + [_partition(3, p) for p in range(10)]], 171)
    return pdir, snapshot + first + second


def _leaves(node, path: str = "", out=None) -> dict:
    out = {} if out is None else out
    if isinstance(node, Leaf):
        out[path] = node.text
    else:
        for name in node.child_names():
            _leaves(node.child(name), f"{path}/{name}", out)
    return out


def _tree(image) -> dict:
    found = _leaves(root_node(image).child("image"))
    found.pop("/provenance", None)
    return found


def _replayed(records):
    delta = MetadataDelta()
    for record in records:
        delta.replay(read_metadata_record(write_metadata_record(record)))
    return delta.apply()


def test_a_directory_keeps_every_topic_in_its_file_and_reads_it_back_the_same(tmp_path):
    pdir, records = _directory(tmp_path)
    result = load_directory(tmp_path)
    topics = result.image.topics.by_id
    assert all(topics[t].chunks is not None for t in TOPICS)
    assert result.records == len(records) and result.image.provenance.offset == 181
    assert _tree(result.image) == _tree(_replayed(records))


def test_a_segment_deleted_after_the_load_is_still_read_as_loaded(tmp_path):
    pdir, records = _directory(tmp_path)
    image = load_directory(tmp_path).image
    expected = _tree(_replayed(records))
    for segment in pdir.glob("*.log"):
        segment.unlink()
    (pdir / f"{100:020d}-{1:010d}.checkpoint").unlink()
    assert _tree(image) == expected


def test_a_segment_written_over_after_the_load_is_an_error(tmp_path):
    pdir, _ = _directory(tmp_path)
    image = load_directory(tmp_path).image
    segment = pdir / f"{100:020d}.log"
    data = bytearray(segment.read_bytes())
    data[-10] ^= 0xFF
    segment.write_bytes(bytes(data))
    with pytest.raises(ChunkReadError, match="changed since the file was loaded"):
        image.topics.by_name["t2"].partition(0)
    assert image.topics.by_name["t3"].partition(0).leader == 1   # the other segment is untouched


def test_time_travel_into_a_segment_replays_up_to_the_offset(tmp_path):
    _, records = _directory(tmp_path)
    image = load_directory(tmp_path, offset=130).image
    assert image.provenance.offset == 130
    assert _tree(image) == _tree(_replayed(records[:131]))
