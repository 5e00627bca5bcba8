"""partition_writer gives the generated encoder's bytes for new partitions and declines everything else."""
from __future__ import annotations

import random

import pytest

from kraftsman.storage.protocol import codec
from kraftsman.storage.records import partition_writer
from kraftsman.storage.records.metadata import (
    ApiMessageAndVersion,
    read_metadata_record,
    write_metadata_record,
    write_metadata_records,
)

Partition = codec.message_class("PartitionRecord")


def _generic(message, version: int) -> bytes:
    return bytes(codec.encoder("PartitionRecord", version)(message, bytearray(bytes((1, 3, version)))))


def _new_partition(rng: random.Random, version: int, rf: int) -> Partition:
    replicas = rng.sample(range(-5, 1 << 31), rf) if rng.random() < 0.2 else rng.sample(range(100), rf)
    isr = replicas[:rng.randint(0, rf)]
    return Partition(partition_id=rng.randint(0, (1 << 31) - 1), topic_id=rng.randbytes(16), replicas=replicas,
                     isr=isr, removing_replicas=[], adding_replicas=[], leader=isr[0] if isr else -1,
                     leader_epoch=rng.randint(0, 1 << 20), partition_epoch=rng.randint(0, 1 << 20),
                     directories=[rng.randbytes(16) for _ in replicas] if version else [])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_new_partitions_are_written_byte_for_byte_as_the_generated_encoder_does(version):
    rng = random.Random(version)
    for rf in [0, 1, 2, 3, 5, 63] + [rng.randint(1, 63) for _ in range(200)]:
        message = _new_partition(rng, version, rf)
        fast = partition_writer.write_partition_record(message, version)
        assert fast == _generic(message, version)
        assert read_metadata_record(fast).message == message


@pytest.mark.parametrize("change", [
    {"removing_replicas": [1]}, {"adding_replicas": [2]}, {"leader_recovery_state": 1},
    {"eligible_leader_replicas": [1]}, {"last_known_elr": []}, {"replicas": list(range(64))},
    {"isr": list(range(64))}, {"directories": [bytes(16)] * 127}])
def test_other_shapes_are_left_to_the_generated_encoder(change):
    message = _new_partition(random.Random(1), 2, 3)
    for name, value in change.items():
        setattr(message, name, value)
    assert partition_writer.write_partition_record(message, 2) is None
    assert write_metadata_records([ApiMessageAndVersion(message, 2)]) == [write_metadata_record(
        ApiMessageAndVersion(message, 2))]


def test_unknown_tagged_fields_and_newer_versions_are_left_to_the_generated_encoder():
    message = _new_partition(random.Random(2), 1, 3)
    message._unknown_tagged_fields = [(9, b"x")]
    assert partition_writer.write_partition_record(message, 1) is None
    assert partition_writer.write_partition_record(_new_partition(random.Random(3), 1, 3), 3) is None


def test_a_null_array_still_fails_as_the_generated_encoder_fails():
    message = _new_partition(random.Random(4), 1, 3)
    message.removing_replicas = None
    with pytest.raises(codec.CodecError):
        write_metadata_records([ApiMessageAndVersion(message, 1)])
