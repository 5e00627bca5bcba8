"""kraftsman's broker start time: tag 10000 of RegisterBrokerRecord, a tagged field Kafka does not define.

Rules:
- The value is kept among the record's unknown tagged fields, not in the spec: Kafka's readers, and kraftsman's
  Kafka-compatible renderers built from the specs (dump-log's text, the shell's text), skip it as Kafka skips any
  tag it does not know, while decoding and re-encoding keep it, so snapshots and every voter's replay carry it.
  Were it in the spec, the spec-driven renderers would print it and Kafka's text would change.
- The value: int64 milliseconds since the Unix epoch, big-endian, 8 bytes. Absent or malformed reads as -1
  (unknown: a broker registered by Kafka's own controller, or before kraftsman wrote the field).
- The tag sits far above Kafka's (RegisterBrokerRecord's highest is 0), as DescribeCluster's kraftsman field does.
"""
from __future__ import annotations

import struct

START_TIME_TAG = 10000
UNKNOWN = -1
_INT64 = struct.Struct(">q")


def start_time_ms(record) -> int:
    """Return the start time a RegisterBrokerRecord message carries, -1 when it carries none."""
    for tag, raw in record._unknown_tagged_fields or ():
        if tag == START_TIME_TAG and len(raw) == _INT64.size:
            return _INT64.unpack(bytes(raw))[0]
    return UNKNOWN


def with_start_time(record, time_ms: int):
    """Return a copy of a RegisterBrokerRecord message carrying `time_ms` (a negative time removes the field)."""
    others = [(tag, raw) for tag, raw in record._unknown_tagged_fields or () if tag != START_TIME_TAG]
    if time_ms >= 0:
        others.append((START_TIME_TAG, _INT64.pack(time_ms)))
    copy = record.replace()
    copy._unknown_tagged_fields = sorted(others, key=lambda pair: pair[0]) or None
    return copy
