"""KRaft snapshot files (`<endOffset %020d>-<epoch %010d>.checkpoint`) and `bootstrap.checkpoint`.

Layout: a control batch holding SnapshotHeader (plus KRaftVersion and Voters when kraft.version >= 1),
then data batches of metadata records (at most 8 MiB each), then a control batch holding SnapshotFooter.
Offsets start at 0; every batch's partitionLeaderEpoch is the snapshot epoch.

Rules:
- Readers validate the header and footer with Kafka's messages; records stream batch by batch.
- Writers build the whole file in memory and write it atomically (temp, fsync, rename, dir fsync).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..protocol import codec
from ..records import control
from ..records.batch import CorruptRecordError, build_batch
from ..records.metadata import ApiMessageAndVersion, read_metadata_record, write_metadata_record
from ..records.snapshot_id import SnapshotId
from .atomic import DEFAULT_FS, FileSystem, atomic_write
from .segment import BatchReader

PARTIAL_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
BOOTSTRAP_FILE = "bootstrap.checkpoint"
MAX_BATCH_BYTES = 8 * 1024 * 1024
_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


BOOTSTRAP_SNAPSHOT_ID = SnapshotId(0, 0)


def parse_snapshot_name(path) -> SnapshotId | None:
    """Return the SnapshotId of a `.checkpoint` file name, or None if the name is not one."""
    match = _NAME.match(Path(path).name)
    return SnapshotId(int(match.group(1)), int(match.group(2))) if match else None


def list_snapshots(directory) -> list[SnapshotId]:
    """List the complete snapshots in a partition directory, oldest first."""
    ids = (parse_snapshot_name(p) for p in Path(directory).iterdir())
    return sorted(i for i in ids if i is not None)


class SnapshotReader:
    """Stream a snapshot's batches, checking the header and footer as Kafka's reader does."""

    def __init__(self, path, *, strict: bool = True):
        self.path = Path(path)
        self.reader = BatchReader(self.path, strict=strict)
        self.header = None
        self.footer = None
        self.kraft_version = 0
        self.voters = None

    def _fail(self, message: str, position: int):
        raise CorruptRecordError(message, position, str(self.path))

    def batches(self):
        """Yield every batch; the first must be the header batch."""
        first = True
        for batch in self.reader:
            if first:
                self._read_header(batch)
                first = False
            elif batch.is_control:
                self._read_control(batch)
            yield batch
        if first:
            self._fail("First batch is not a control batch with at least one record", 0)

    def _read_header(self, batch) -> None:
        records = list(batch.records()) if batch.is_control else []
        if not records:
            self._fail("First batch is not a control batch with at least one record", batch.position)
        kind = control.parse_control_type(records[0].key)
        if kind != control.SNAPSHOT_HEADER:
            name = control.NAMES.get(kind, "UNKNOWN")
            self._fail(f"First control record is not a snapshot header ({name})", batch.position)
        self._read_control(batch)

    def _read_control(self, batch) -> None:
        for record in batch.records():
            kind = control.parse_control_type(record.key)
            if kind in control.SCHEMAS:
                message = control.decode_control(kind, record.value)
                if kind == control.SNAPSHOT_HEADER:
                    self.header = message
                elif kind == control.SNAPSHOT_FOOTER:
                    self.footer = message
                elif kind == control.KRAFT_VERSION:
                    self.kraft_version = message.kraft_version
                elif kind == control.KRAFT_VOTERS:
                    self.voters = message

    def metadata_records(self):
        """Yield (batch, record, ApiMessageAndVersion) for every data record."""
        for batch in self.batches():
            if batch.is_control:
                continue
            for record in batch.records():
                yield batch, record, read_metadata_record(record.value)


def read_snapshot_records(path) -> list[ApiMessageAndVersion]:
    """Return every metadata record of a snapshot or bootstrap file, in order."""
    return [amv for _, _, amv in SnapshotReader(path).metadata_records()]


def last_contained_log_timestamp(path) -> int | None:
    """Return the LastContainedLogTimestamp of a snapshot file's header, reading its first batch only (None
    when the file is missing or does not open with a SnapshotHeader)."""
    reader = SnapshotReader(path)
    batches = reader.batches()
    try:
        next(batches, None)
    except (OSError, CorruptRecordError):
        return None
    finally:
        batches.close()
    return None if reader.header is None else reader.header.last_contained_log_timestamp


def _header_batch(epoch: int, append_time: int, last_contained_log_timestamp: int, kraft_version: int,
                  voters) -> tuple[bytes, int]:
    header_cls = codec.message_class("SnapshotHeaderRecord")
    header = header_cls(version=0, last_contained_log_timestamp=last_contained_log_timestamp)
    records = [control.encode_control(control.SNAPSHOT_HEADER, header)]
    if kraft_version >= 1:
        version_cls = codec.message_class("KRaftVersionRecord")
        records.append(control.encode_control(control.KRAFT_VERSION,
                                              version_cls(version=0, kraft_version=kraft_version)))
        if voters is not None:
            records.append(control.encode_control(control.KRAFT_VOTERS, voters))
    batch = build_batch(records, 0, timestamp=append_time, partition_leader_epoch=epoch, control=True)
    return batch, len(records)


def _data_batches(records, base_offset: int, epoch: int, append_time: int):
    values = [(None, write_metadata_record(r)) for r in records]
    start = 0
    while start < len(values):
        size, stop = 0, start
        while stop < len(values) and (stop == start or size + len(values[stop][1]) + 16 <= MAX_BATCH_BYTES):
            size += len(values[stop][1]) + 16
            stop += 1
        yield build_batch(values[start:stop], base_offset + start, timestamp=append_time,
                          partition_leader_epoch=epoch)
        start = stop


def snapshot_bytes(records, *, epoch: int = 0, append_time: int = 0, last_contained_log_timestamp: int = 0,
                   kraft_version: int = 0, voters=None, data_append_time: int | None = None,
                   footer_append_time: int | None = None) -> bytes:
    """Build the bytes of a snapshot holding `records` (ApiMessageAndVersion) in Kafka's layout."""
    header, offset = _header_batch(epoch, append_time, last_contained_log_timestamp, kraft_version, voters)
    parts = [header]
    records = list(records)
    parts.extend(_data_batches(records, offset, epoch,
                               append_time if data_append_time is None else data_append_time))
    footer_cls = codec.message_class("SnapshotFooterRecord")
    footer = [control.encode_control(control.SNAPSHOT_FOOTER, footer_cls(version=0))]
    parts.append(build_batch(footer, offset + len(records), partition_leader_epoch=epoch, control=True,
                             timestamp=append_time if footer_append_time is None else footer_append_time))
    return b"".join(parts)


def write_snapshot(path, records, *, fs: FileSystem = DEFAULT_FS, **layout) -> Path:
    """Write a snapshot file atomically (see snapshot_bytes for the layout options)."""
    path = Path(path)
    atomic_write(path, snapshot_bytes(records, **layout), fs=fs, tmp_suffix=".tmp")
    return path
