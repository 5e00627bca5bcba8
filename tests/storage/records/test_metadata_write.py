"""write_metadata_records: the batch form of write_metadata_record, same bytes, frame header per type/version."""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import (
    ApiMessageAndVersion,
    read_metadata_record,
    write_metadata_record,
    write_metadata_records,
)


def test_write_metadata_records_equals_one_by_one_and_reads_back():
    topic_id = Uuid.from_longs(1, 2)
    partition = codec.message_class("PartitionRecord")
    records = [ApiMessageAndVersion(codec.message_class("TopicRecord")(name="t", topic_id=topic_id), 0)]
    records += [ApiMessageAndVersion(partition(partition_id=i, topic_id=topic_id, replicas=[1, 2], isr=[1],
                                               leader=1, leader_epoch=0, partition_epoch=0,
                                               directories=[topic_id] * 2 if version else []), version)
                for i, version in ((0, 0), (1, 1), (2, 2))]
    records.append(ApiMessageAndVersion(codec.message_class("ConfigRecord")(resource_type=2, resource_name="t",
                                                                            name="a", value=None), 0))
    values = write_metadata_records(records)
    assert values == [write_metadata_record(r) for r in records]
    assert all(type(v) is bytes for v in values)
    assert [read_metadata_record(v) for v in values] == records
    assert values[2][:3] == b"\x01\x03\x01"  # frame version 1, PartitionRecord, version 1
