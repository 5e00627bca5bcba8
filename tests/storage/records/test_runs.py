"""metadata_runs: the leading raft-shaped records of a batch split into runs of one value layout."""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.layout import Layouts
from kraftsman.storage.records.batch import RecordBatch, build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record
from kraftsman.storage.records.runs import metadata_runs

TOPIC = bytes(range(16))


def _partition(partition_id: int, replicas=(1, 2, 3)) -> bytes:
    message = codec.message_class("PartitionRecord")(
        partition_id=partition_id, topic_id=TOPIC, replicas=list(replicas), isr=list(replicas), removing_replicas=[],
        adding_replicas=[], leader=replicas[0], leader_epoch=0, partition_epoch=0)
    return write_metadata_record(ApiMessageAndVersion(message, 0))


def _runs(records, **options):
    batch = RecordBatch(build_batch(records, 10, **options), 0)
    return [(run.index, run.count, run.layout is not None) for run in metadata_runs(batch, Layouts())]


def test_runs_break_where_the_layout_or_the_offset_delta_width_changes():
    records = [(None, _partition(p)) for p in range(70)] + [(None, _partition(70, (1, 2)))]
    records += [(None, _partition(p)) for p in range(71, 75)]
    assert _runs(records) == [(0, 64, True), (64, 6, True), (70, 1, True), (71, 4, True)]


def test_a_value_that_is_no_metadata_record_is_a_run_of_one_without_layout():
    records = [(None, _partition(0)), (None, b"\x01\x7f\x00junk"), (None, _partition(1)), (None, _partition(2))]
    assert _runs(records) == [(0, 1, True), (1, 1, False), (2, 2, True)]


def test_runs_stop_at_the_first_record_not_shaped_as_the_raft_writes():
    records = [(None, _partition(p)) for p in range(3)] + [(b"key", _partition(3)), (None, _partition(4))]
    assert _runs(records) == [(0, 3, True)]


def test_no_runs_in_a_compressed_batch_nor_past_the_last_record():
    records = [(None, _partition(p)) for p in range(4)]
    assert _runs(records, compression=1) == []
    data = bytearray(build_batch(records, 10))
    data += b"\x00"                                 # a byte after the last record: records() reports it
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    assert [(r.index, r.count) for r in metadata_runs(RecordBatch(bytes(data), 0), Layouts())] == [(0, 3)]
