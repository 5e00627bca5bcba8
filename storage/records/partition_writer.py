"""A fast writer of the PartitionRecord values CreateTopics and CreatePartitions append in bulk.

Rules:
- Byte-identical to the generated encoder (codec) behind write_metadata_record: it covers only the
  shape new partitions have (no removing/adding replicas, leader recovery state RECOVERED, no
  eligible-leader fields, no unknown tagged fields, arrays of fewer than 64 entries) at versions 0-2,
  and answers None for anything else, which the generic encoder then writes (or refuses).
- One struct.Struct per (version, len(replicas), len(isr)): the fixed part of a value is one pack call.
"""
from __future__ import annotations

import struct

PARTITION_RECORD = 3  # the api key (metadata.RECORD_API_KEYS['PartitionRecord'])
_SHAPES: dict[tuple[int, int, int], tuple[struct.Struct, bytes]] = {}


def _shape(version: int, replicas: int, isr: int) -> tuple[struct.Struct, bytes]:
    """Return (the Struct of a value's fixed part, its frame header) for one shape."""
    key = (version, replicas, isr)
    shape = _SHAPES.get(key)
    if shape is None:
        # partition id, topic id, replicas, isr, empty removing/adding, leader, leader epoch, partition epoch
        fmt = f">i16sB{replicas}iB{isr}iBBiii"
        shape = _SHAPES[key] = (struct.Struct(fmt), bytes((1, PARTITION_RECORD, version)))
    return shape


def write_partition_record(message, version: int) -> bytes | None:
    """Return the frame value of a PartitionRecord of the new-partition shape, or None (see Rules)."""
    replicas, isr = message.replicas, message.isr
    if (version > 2 or replicas is None or isr is None or message.removing_replicas != []
            or message.adding_replicas != [] or message.leader_recovery_state
            or message.eligible_leader_replicas is not None or message.last_known_elr is not None
            or message._unknown_tagged_fields):
        return None
    nr, ni = len(replicas), len(isr)
    shape = _SHAPES.get((version, nr, ni)) or (nr < 64 and ni < 64 and _shape(version, nr, ni))
    if not shape:
        return None
    fixed, header = shape
    body = fixed.pack(message.partition_id, message.topic_id, nr + 1, *replicas, ni + 1, *isr,
                      1, 1, message.leader, message.leader_epoch, message.partition_epoch)
    if version == 0:
        return header + body + b"\x00"
    directories = message.directories
    if directories is None or len(directories) > 126:
        return None
    return b"".join((header, body, bytes((len(directories) + 1,)), *directories, b"\x00"))
