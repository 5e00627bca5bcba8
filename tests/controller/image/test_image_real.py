"""The image against real Kafka files: write() round trips, --directory equals a full log replay, time travel."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.loader import load_directory, load_file, partition_directory
from kraftsman.controller.image.nodes import root_node
from kraftsman.storage.log.segment import parse_segment_offset
from kraftsman.storage.log.snapshot import read_snapshot_records
from kraftsman.storage.records.metadata import write_metadata_record

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
SNAPSHOTS = sorted(p for p in DATA.rglob("*.checkpoint") if p.name != "bootstrap.checkpoint") if DATA.is_dir() else []
PARTITIONS = sorted(p for p in DATA.rglob("__cluster_metadata-0") if p.is_dir()) if DATA.is_dir() else []
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"real Kafka fixtures not found at {DATA}")


def _ids(paths):
    return [str(p.relative_to(DATA)) for p in paths]


def _record_set(records) -> list[bytes]:
    return sorted(write_metadata_record(r) for r in records)


def _flatten(node, path: str, out: dict) -> dict:
    """Collect path -> leaf text for every leaf under `node`."""
    if not node.is_directory:
        out[path] = node.text
        return out
    for name in node.child_names():
        child = node.child(name)
        if child is not None:
            _flatten(child, path + "/" + name, out)
    return out


def _leaves(image) -> dict:
    out = _flatten(root_node(image).child("image"), "/image", {})
    out.pop("/image/provenance")
    return out


@needs_data
@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=_ids(SNAPSHOTS))
def test_replay_then_write_gives_the_same_records(snapshot: Path):
    records = read_snapshot_records(snapshot)
    delta = MetadataDelta()
    for record in records:
        delta.replay(record)
    assert _record_set(delta.apply().write()) == _record_set(records)


@needs_data
@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=_ids(SNAPSHOTS))
def test_lazy_and_decoded_replay_agree(snapshot: Path):
    lazy = load_file(snapshot).image
    decoded = MetadataDelta()
    for record in read_snapshot_records(snapshot):
        decoded.replay(record)
    assert _leaves(lazy) == _leaves(decoded.apply())


@needs_data
@pytest.mark.parametrize("pdir", PARTITIONS, ids=_ids(PARTITIONS))
def test_directory_equals_full_log_replay(pdir: Path):
    segments = sorted(pdir.glob("*.log"), key=parse_segment_offset)
    if not segments or parse_segment_offset(segments[0]) != 0:
        pytest.skip("no log from offset 0 to replay in full")
    result = load_directory(pdir.parent)
    full = load_file(segments[0]) if len(segments) == 1 else None
    if full is None:
        pytest.skip("several segments: covered by the snapshot-based load only")
    assert not result.faults and not full.faults
    if result.image.provenance.offset != full.image.provenance.offset:
        pytest.skip("the log ends before the newest snapshot")
    assert _leaves(result.image) == _leaves(full.image)


@needs_data
@pytest.mark.parametrize("pdir", PARTITIONS, ids=_ids(PARTITIONS))
def test_offset_is_the_state_at_that_offset(pdir: Path):
    segments = sorted(pdir.glob("*.log"), key=parse_segment_offset)
    snapshots = [p for p in pdir.glob("*.checkpoint")]
    if not segments or not snapshots or parse_segment_offset(segments[0]) != 0:
        pytest.skip("needs a log from offset 0 and a snapshot")
    from kraftsman.storage.log.snapshot import parse_snapshot_name
    snapshot_id = max(parse_snapshot_name(p) for p in snapshots)
    at = load_directory(pdir, offset=snapshot_id.end_offset - 1).image
    if at.provenance.offset != snapshot_id.end_offset - 1:
        pytest.skip("log ends before the snapshot")
    from_log = load_file(segments[0], offset=snapshot_id.end_offset - 1).image
    snapshot_image = load_file(pdir / snapshot_id.file_name).image
    assert _leaves(from_log) == _leaves(snapshot_image)
    assert at.provenance.offset == snapshot_id.end_offset - 1


@needs_data
def test_partition_directory_accepts_both_levels():
    pdir = PARTITIONS[0]
    assert partition_directory(pdir) == pdir
    assert partition_directory(pdir.parent) == pdir
