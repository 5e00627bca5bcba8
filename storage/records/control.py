"""Control records (ControlRecordType): 4-byte key (int16 version=0, int16 type), value = message at v0.

Rules:
- Control values carry no frame: each message starts with its own int16 Version field.
- Raft control messages are always read and written at schema version 0.
- ABORT/COMMIT transaction markers (types 0 and 1) use EndTransactionMarker: int16 version, int32 coordinatorEpoch.
"""
from __future__ import annotations

import struct

from ..errors import StorageError
from ..protocol import codec

ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = range(7)
UNKNOWN = -1
NAMES = {ABORT: "ABORT", COMMIT: "COMMIT", LEADER_CHANGE: "LEADER_CHANGE", SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
         SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER", KRAFT_VERSION: "KRAFT_VERSION", KRAFT_VOTERS: "KRAFT_VOTERS"}
SCHEMAS = {LEADER_CHANGE: "LeaderChangeMessage", SNAPSHOT_HEADER: "SnapshotHeaderRecord",
           SNAPSHOT_FOOTER: "SnapshotFooterRecord", KRAFT_VERSION: "KRaftVersionRecord",
           KRAFT_VOTERS: "VotersRecord"}
_KEY = struct.Struct(">hh")
_TXN_MARKER = struct.Struct(">hi")


class ControlRecordError(StorageError, ValueError):
    """A control record key or value is malformed."""


def control_key(record_type: int) -> bytes:
    """Return the 4-byte key of a control record of `record_type`."""
    return _KEY.pack(0, record_type)


def parse_control_type(key: bytes | None) -> int:
    """Return the control type id from a key (UNKNOWN for ids outside the enum)."""
    if key is None or len(key) < 4:
        raise ControlRecordError("Invalid value size found for end control record key. Must have at least "
                                 f"4 bytes, but found only {0 if key is None else len(key)}")
    version, record_type = _KEY.unpack_from(key, 0)
    if version < 0:
        raise ControlRecordError(f"Invalid version found for control record: {version}. May indicate data "
                                 "corruption")
    return record_type if record_type in NAMES else UNKNOWN


def decode_control(record_type: int, value: bytes):
    """Decode a raft control record value (types 2-6) at version 0."""
    name = SCHEMAS.get(record_type)
    if name is None:
        raise ControlRecordError(f"Unknown control record type {record_type}")
    return codec.decode(name, 0, value)


def encode_control(record_type: int, message) -> tuple[bytes, bytes]:
    """Return (key, value) of a raft control record."""
    return control_key(record_type), codec.encode(SCHEMAS[record_type], 0, message)


def decode_txn_marker(value: bytes) -> tuple[int, int]:
    """Decode an EndTransactionMarker value into (version, coordinator_epoch)."""
    if value is None or len(value) < 6:
        raise ControlRecordError("Invalid EndTransactionMarker value")
    return _TXN_MARKER.unpack_from(value, 0)
