"""Every real .log, .checkpoint and bootstrap.checkpoint decodes; records and batches re-encode byte for byte."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.storage.log.segment import read_batches
from kraftsman.storage.log.snapshot import SnapshotReader, snapshot_bytes
from kraftsman.storage.protocol import codec
from kraftsman.storage.records import control, metadata
from kraftsman.storage.records.batch import rebuild_batch

KRAFT_REAL = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kraft-real" / "data"


def _files(pattern: str) -> list[Path]:
    return sorted(KRAFT_REAL.rglob(pattern)) if KRAFT_REAL.is_dir() else []


ALL = _files("*.log") + _files("*.checkpoint")


def _ids(paths):
    return [str(p.relative_to(KRAFT_REAL)) for p in paths]


@pytest.mark.parametrize("path", ALL, ids=_ids(ALL))
def test_file_decodes_and_reencodes_exactly(path, kraft_real):
    seen = 0
    for batch in read_batches(path):
        assert batch.is_valid()
        records = list(batch.records())
        assert rebuild_batch(batch, records) == batch.buffer
        for record in records:
            seen += 1
            if batch.is_control:
                _check_control(record)
            else:
                amv = metadata.read_metadata_record(record.value)
                assert amv.version in codec.message_class(amv.name).spec.valid_versions
                assert metadata.write_metadata_record(amv) == record.value
    assert seen > 0


def _check_control(record):
    kind = control.parse_control_type(record.key)
    assert kind in control.NAMES, kind
    if kind in control.SCHEMAS:
        message = control.decode_control(kind, record.value)
        assert control.encode_control(kind, message) == (record.key, record.value)


SNAPSHOTS = _files("*.checkpoint")


@pytest.mark.parametrize("path", SNAPSHOTS, ids=_ids(SNAPSHOTS))
def test_snapshot_writer_reproduces_real_file(path, kraft_real):
    reader = SnapshotReader(path)
    batches = list(reader.batches())
    records = [amv for _, _, amv in SnapshotReader(path).metadata_records()]
    rebuilt = snapshot_bytes(
        records, epoch=batches[0].partition_leader_epoch, append_time=batches[0].base_timestamp,
        last_contained_log_timestamp=reader.header.last_contained_log_timestamp,
        data_append_time=batches[1].base_timestamp if len(batches) > 2 else None,
        footer_append_time=batches[-1].base_timestamp)
    assert rebuilt == path.read_bytes()
    assert reader.footer is not None


def test_fixture_set_is_not_empty(kraft_real):
    assert len(ALL) >= 90
