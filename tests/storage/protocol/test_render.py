"""render's fast JSON writers agree with the codec's JSON (Kafka's JsonConverter rules) on every real record."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.storage.log.segment import read_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.render import fused_json_writer, json_writer
from kraftsman.storage.records import control
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES, read_metadata_record

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
FILES = sorted(p for p in DATA.rglob("*") if p.suffix in (".log", ".checkpoint")) if DATA.is_dir() else []


def _messages(path: Path):
    for batch in read_batches(path, strict=False):
        for record in batch.records():
            if batch.is_control:
                kind = control.parse_control_type(record.key)
                if kind in control.SCHEMAS:
                    name = control.SCHEMAS[kind]
                    yield name, 0, record.value, 0, control.decode_control(kind, record.value)
            else:
                amv = read_metadata_record(record.value)
                yield METADATA_RECORD_TYPES[amv.api_key], amv.version, record.value, 3, amv.message


@pytest.mark.parametrize("path", FILES or [None], ids=[str(p.relative_to(DATA)) for p in FILES] or ["none"])
def test_json_writer_and_fused_writer_match_the_codec(path):
    if path is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    for name, version, value, start, message in _messages(path):
        expected = codec.json_renderer(name, version)(message)
        assert json_writer(name, version)(message) == expected
        assert fused_json_writer(name, version)(value, start, len(value)) == (expected, len(value))


def test_fused_writer_handles_tagged_fields_nulls_and_unknown_tags():
    cls = codec.message_class("PartitionChangeRecord")
    base = cls(partition_id=1, topic_id=b"\x01" * 16, isr=[1, 2], leader=3, directories=None)
    for version in (0, 1, 2):
        message = base.replace(eligible_leader_replicas=[4], last_known_elr=[]) if version == 2 else base
        raw = codec.encode("PartitionChangeRecord", version, message)
        expected = codec.to_json("PartitionChangeRecord", version, codec.decode("PartitionChangeRecord", version, raw))
        assert fused_json_writer("PartitionChangeRecord", version)(raw, 0, len(raw)) == (expected, len(raw))
