"""Regenerate tests/fuzz/corpus/ from kraftsman's own writers (run by hand: python tests/fuzz/make_corpus.py).

Every seed is small and made here: filled messages (every field present at the version set to a
non-default value, two elements per array) for every spec and version, the record batches, segments,
snapshots, request and response frames built from them, and the text files of a log directory.
Nothing is copied from ../shared. File names carry what a target needs to parse the seed
(`<Message>-v<N>.bin`, `<apiKey>-<Api>-v<N>.bin`, `<kind>-...bin`).
"""
from __future__ import annotations

import shutil
import struct
import sys
from datetime import datetime, timezone
from pathlib import Path

from kraftsman.storage import properties
from kraftsman.storage.log import checkpoints, meta_properties, quorum_state
from kraftsman.storage.log.snapshot import snapshot_bytes
from kraftsman.storage.protocol import codec, framing, schema
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.crc import crc32c
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES, ApiMessageAndVersion, write_metadata_record

CORPUS = Path(__file__).resolve().parent / "corpus"
UUID = Uuid(bytes(range(1, 17)))
MOMENT = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
VALUES = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint16": 5, "uint32": 6, "float64": 1.5,
          "bool": True, "string": "ab", "bytes": b"\x01\x02", "records": b"\x03", "uuid": UUID}


def filled(name: str, version: int):
    """Return message `name` with every field present at `version` set to a non-default value."""
    spec = schema.load(name)
    top = codec.message_class(name)
    return _fill(spec, top, top, spec.fields, version, depth=0)


def _fill(spec, top, cls, fields, version: int, depth: int):
    values = {}
    for f in fields:
        if version not in f.versions:
            continue
        et = f.element_type
        if et in schema.PRIMITIVES:
            one = VALUES[et]
            values[schema.snake_name(f.name)] = [one, one] if f.is_array else one
            continue
        sub = top if et == spec.name else getattr(top, et)
        make = lambda: _fill(spec, top, sub, spec.struct(et).fields, version, depth + 1)  # noqa: E731
        values[schema.snake_name(f.name)] = ([make(), make()] if depth < 3 else []) if f.is_array else make()
    return cls(**values)


def _write(target: str, name: str, data: bytes) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def codec_seeds() -> None:
    """Write one filled message per spec and version."""
    for name in schema.names():
        for version in schema.load(name).versions:
            _write("codec", f"{name}-v{version}.bin", codec.encode(name, version, filled(name, version)))


def metadata_values() -> list[bytes]:
    """Return framed metadata record values: every record type at its lowest and highest version."""
    out = []
    for name in METADATA_RECORD_TYPES.values():
        spec = schema.load(name)
        for version in sorted({spec.valid_versions.lo, spec.valid_versions.hi}):
            out.append(write_metadata_record(ApiMessageAndVersion(filled(name, version), version)))
    return out


def frame_seeds() -> None:
    """Write a request and a response frame (sized) per API at its lowest and highest version."""
    for key, info in framing.api_registry().items():
        for version in sorted({info.valid_versions.lo, info.valid_versions.hi}):
            request = framing.encode_request(key, version, 7, "fuzz", filled(info.request, version))
            _write("request", f"{key}-{info.name}-v{version}.bin", request)
            response = framing.encode_response(key, version, 7, filled(info.response, version))
            _write("response", f"{key}-{info.name}-v{version}.bin", response)


def control_values() -> list[tuple[bytes, bytes]]:
    """Return (key, value) of every raft control record type, filled."""
    return [control.encode_control(kind, filled(name, 0)) for kind, name in control.SCHEMAS.items()]


def batch_seeds(values: list[bytes]) -> list[bytes]:
    """Write raft-shaped, general-shaped, control, transactional and compressed batches."""
    raft = build_batch([(None, v) for v in values[:6]], 10, timestamp=1000, partition_leader_epoch=3)
    general = build_batch([(b"k", b"v", (("h", b"x"), ("n", None)), 1005), (None, None), (b"", b"\x00" * 70)],
                          300, timestamp=1000, producer_id=5, producer_epoch=1, base_sequence=9)
    ctrl = build_batch(control_values(), 20, timestamp=1000, control=True)
    txn = build_batch([(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 4))], 40, control=True, transactional=True)
    compressed = [build_batch([(None, v) for v in values[:4]], 50, compression=c) for c in (1, 2, 3, 4)]
    for i, batch in enumerate([raft, general, ctrl, txn]):
        _write("batch", f"{i}-{('raft', 'general', 'control', 'txn')[i]}.bin", batch)
    for codec_id, batch in zip((1, 2, 3, 4), compressed):
        _write("compression", f"{codec_id}-batch.bin", batch)
    return [raft, general, ctrl, txn, *compressed]


def segment_seeds(values: list[bytes], batches: list[bytes]) -> None:
    """Write small segment files and snapshot files."""
    leader = build_batch([control_values()[0]], 0, control=True)
    data = build_batch([(None, v) for v in values[6:12]], 1, partition_leader_epoch=1)
    _write("segment", "0-raft.log.bin", leader + data + batches[4])
    _write("segment", "1-mixed.log.bin", batches[0] + batches[1] + batches[3] + batches[6])
    records = [ApiMessageAndVersion(filled("FeatureLevelRecord", 0), 0),
               ApiMessageAndVersion(filled("TopicRecord", 0), 0)]
    _write("snapshot", "0-kraft0.checkpoint.bin", snapshot_bytes(records, epoch=2, append_time=9))
    voters = filled("VotersRecord", 0)
    _write("snapshot", "1-kraft1.checkpoint.bin", snapshot_bytes(records, epoch=2, kraft_version=1, voters=voters))


def record_seeds(values: list[bytes]) -> None:
    """Write metadata record values and control record values."""
    for value in values:
        _write("metadata_record", f"{value[1]:02d}-v{value[2]}.bin", value)
    for kind, (_key, value) in zip(control.SCHEMAS, control_values()):
        _write("control", f"{kind}-{control.NAMES[kind]}.bin", value)
    _write("control", "0-ABORT.bin", struct.pack(">hi", 0, 4))


def text_seeds() -> None:
    """Write properties, meta.properties, quorum-state and checkpoint files."""
    props = properties.dumps({"a key": "v=1", "unicode": "\u00e9\u4e2d", "tab\t": "x\ny", "empty": ""},
                             comment="seed", date_line="Sun Nov 22 08:00:00 UTC 2026")
    _write("properties", "0-dumps.bin", props.encode("iso-8859-1", "replace"))
    _write("properties", "1-java.bin", b"! comment\n  k1 = v1 \\\n   continued\nk2:\\u0041\\t\n"
                                       b"k3 v3\r\n#x\n\\ k4\\=\\:=\\\\\n")
    for version, meta in enumerate([meta_properties.MetaProperties(0, "abc", 1),
                                    meta_properties.MetaProperties(1, "Xq3mZ8tnT3ahbQ6c2Rj1Vw", 3, UUID)]):
        _write("meta_properties", f"v{version}.bin", meta_properties.serialize(meta, MOMENT).encode("utf-8"))
    _write("quorum_state", "v0.bin", quorum_state.serialize(quorum_state.QuorumState(1, 5, 2, applied_offset=7,
                                                                                    current_voters=(1, 2, 3))))
    _write("quorum_state", "v1.bin", quorum_state.serialize(quorum_state.QuorumState(1, 5, 2, UUID, data_version=1)))
    epochs = [checkpoints.EpochEntry(0, 0), checkpoints.EpochEntry(3, 120)]
    _write("checkpoints", "leader-epoch.bin", checkpoints.serialize_leader_epoch_checkpoint(epochs).encode())
    offsets = {checkpoints.TopicPartition("__cluster_metadata", 0): 42, checkpoints.TopicPartition("t", 7): 1}
    _write("checkpoints", "offset.bin", checkpoints.serialize_offset_checkpoint(offsets).encode())
    _write("checkpoints", "partition-metadata.bin", checkpoints.serialize_partition_metadata(UUID).encode())


def index_seeds() -> None:
    """Write .index, .timeindex, .txnindex and producer .snapshot files."""
    _write("index", "offset.index.bin", struct.pack(">iiii", 1, 0, 5, 4096))
    _write("index", "time.timeindex.bin", struct.pack(">qiqi", 1000, 1, 2000, 5))
    _write("index", "txn.txnindex.bin", struct.pack(">hqqqq", 0, 5, 10, 20, 15) * 2)
    producer = struct.pack(">qhiqiqiq", 5, 1, 9, 40, 2, 1000, -1, -1)
    body = struct.pack(">i", 1) + producer
    _write("index", "producer.snapshot.bin", struct.pack(">hI", 1, crc32c(body)) + body)


def main() -> int:
    """Rebuild the whole corpus folder."""
    shutil.rmtree(CORPUS, ignore_errors=True)
    values = metadata_values()
    codec_seeds()
    frame_seeds()
    batches = batch_seeds(values)
    segment_seeds(values, batches)
    record_seeds(values)
    text_seeds()
    index_seeds()
    count = sum(1 for p in CORPUS.rglob("*.bin"))
    size = sum(p.stat().st_size for p in CORPUS.rglob("*.bin"))
    print(f"wrote {count} seeds ({size} bytes) under {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
