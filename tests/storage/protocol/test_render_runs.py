"""Layouts and run writers: a run of records of one value layout gives, line for line, the JSON of the codec
(Kafka's JsonConverter rules), on every real record and on tagged, null, unknown-tag and escaped values."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.storage.log.segment import read_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.layout import Layouts, trace
from kraftsman.storage.protocol.render_runs import json_run_writer
from kraftsman.storage.records.batch import RecordBatch, build_batch
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES, read_metadata_record
from kraftsman.storage.records.runs import FRAME_HEAD, metadata_runs

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
FILES = sorted(p for p in DATA.rglob("*") if p.suffix in (".log", ".checkpoint")) if DATA.is_dir() else []
TOPIC = bytes(range(16))


def _codec_json(value: bytes) -> str:
    amv = read_metadata_record(value)
    return codec.json_renderer(METADATA_RECORD_TYPES[amv.api_key], amv.version)(amv.message)


def _check_batch(batch, layouts) -> int:
    """Render every run of the batch and compare each line with the codec's JSON; return the records checked."""
    checked = 0
    for run in metadata_runs(batch, layouts):
        values = [batch.buffer[run.pos + k * run.size + run.head - FRAME_HEAD:run.pos + (k + 1) * run.size - 1]
                  for k in range(run.count)]
        if run.layout is None:
            continue
        lines = json_run_writer(run.layout, run.head)(batch.buffer, run.pos, run.stop, batch.base_offset + run.index,
                                                      "<", ">", "!")
        offsets = range(batch.base_offset + run.index, batch.base_offset + run.index + run.count)
        assert lines == [f"<{o}>{_codec_json(v)}!" for o, v in zip(offsets, values)]
        plain = json_run_writer(run.layout, run.head, False)(batch.buffer, run.pos, run.stop, 0, "", "", "")
        assert plain == [_codec_json(v) for v in values]
        checked += run.count
    return checked


@pytest.mark.parametrize("path", FILES or [None], ids=[str(p.relative_to(DATA)) for p in FILES] or ["none"])
def test_run_writers_match_the_codec_on_real_records(path):
    if path is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    layouts = Layouts()
    for batch in read_batches(path, strict=False):
        if not batch.is_control:
            _check_batch(batch, layouts)


def _partition(version: int, partition_id: int, **fields):
    cls = codec.message_class("PartitionRecord")
    message = cls(partition_id=partition_id, topic_id=TOPIC, replicas=[1, 2, 3], isr=[1, 2], removing_replicas=[],
                  adding_replicas=[], leader=1, leader_epoch=partition_id, partition_epoch=7,
                  directories=[bytes([9] * 16)] * 3 if version else [])
    for name, value in fields.items():
        setattr(message, name, value)
    return message


def _value(name: str, version: int, message) -> bytes:
    api_key = {v: k for k, v in METADATA_RECORD_TYPES.items()}[name]
    return bytes([1, api_key, version]) + codec.encode(name, version, message)


def _batch(values: list[bytes]) -> RecordBatch:
    return RecordBatch(build_batch([(None, v) for v in values], 500), 0)


def test_tagged_fields_are_shown_as_the_codec_shows_them():
    values = [_value("PartitionRecord", 0, _partition(0, p)) for p in range(70)]               # crosses index 64
    values += [_value("PartitionRecord", 0, _partition(0, p, leader_recovery_state=1)) for p in range(5)]
    values += [_value("PartitionRecord", 2, _partition(2, p, eligible_leader_replicas=[2], last_known_elr=[]))
               for p in range(4)]
    values += [_value("PartitionRecord", 2, _partition(2, p)) for p in range(4)]
    unknown = _partition(1, 1)
    unknown._unknown_tagged_fields = [(9, b"xyz")]
    values += [_value("PartitionRecord", 1, unknown)] * 3
    batch = _batch(values)
    runs = metadata_runs(batch, Layouts())
    assert [run.count for run in runs] == [64, 6, 5, 4, 4, 3]
    assert _check_batch(batch, Layouts()) == len(values)


def test_nullable_fields_strings_and_changes():
    change = codec.message_class("PartitionChangeRecord")
    topic = codec.message_class("TopicRecord")
    values = [_value("PartitionChangeRecord", 0, change(partition_id=p, topic_id=TOPIC, leader=p % 3, isr=None))
              for p in range(6)]
    values += [_value("PartitionChangeRecord", 2, change(partition_id=p, topic_id=TOPIC, isr=[1],
                                                         eligible_leader_replicas=[], last_known_elr=None))
               for p in range(3)]
    values += [_value("TopicRecord", 0, topic(name=name, topic_id=TOPIC)) for name in ("a\u00e9\u2603", "b\x01\"\\")]
    assert _check_batch(_batch(values), Layouts()) == len(values)


def test_a_layout_is_traced_once_per_shape_and_structs_have_none():
    layouts = Layouts()
    one = _value("PartitionRecord", 1, _partition(1, 1))
    other = _value("PartitionRecord", 1, _partition(1, 2, leader=7))
    first = layouts.of("PartitionRecord", 1, one, 3, len(one))
    assert layouts.of("PartitionRecord", 1, other, 3, len(other)) is first
    wider = _value("PartitionRecord", 1, _partition(1, 1, isr=[1, 2, 3]))
    assert layouts.of("PartitionRecord", 1, wider, 3, len(wider)) != first
    broker = codec.message_class("RegisterBrokerRecord")(broker_id=1, incarnation_id=TOPIC, broker_epoch=5)
    value = _value("RegisterBrokerRecord", 3, broker)
    assert trace("RegisterBrokerRecord", 3, value, 3, len(value)) is None        # endpoints are structs
    assert layouts.of("PartitionRecord", 1, one, 3, len(one) - 1) is None       # not a whole value
