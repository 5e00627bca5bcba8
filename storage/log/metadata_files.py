"""The files a metadata image is loaded from: one snapshot or segment file, or a log directory's newest snapshot and
the segments after it; and files pinned open so that a batch can be read again, by position, after the load.

Rules:
- A log directory is the folder holding `__cluster_metadata-0`, or that folder itself. It loads its newest
  snapshot at or before the requested offset, then the segments holding offsets after it; a directory with no
  snapshot and no segment (freshly formatted) loads its bootstrap.checkpoint.
- A PinnedFile keeps a read-only descriptor open for as long as something may read from it: a segment a running
  node deletes or replaces afterwards stays readable as it was. A file written over in place is not: the reader
  checks what it reads (the caller compares the batch's CRC with the one it saw at load time).
- pin() shares one PinnedFile per file among the loads alive at once (a shell comparing images at several
  offsets of one directory holds one descriptor per segment, not one per load).
- Errors a user can act on are MetadataFilesError (one line, naming the path).
"""
from __future__ import annotations

import os
import struct
import weakref
from dataclasses import dataclass
from pathlib import Path

from ..errors import StorageError
from ..records.batch import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, RecordBatch
from ..records.snapshot_id import SnapshotId
from .segment import parse_segment_offset
from .snapshot import BOOTSTRAP_FILE, list_snapshots

METADATA_PARTITION = "__cluster_metadata-0"
_BATCH_LENGTH = struct.Struct(">i").unpack_from


class MetadataFilesError(StorageError, ValueError):
    """The files cannot give what was asked (missing, not a directory, no snapshot or segment for the offset)."""


@dataclass
class DirectoryPlan:
    """What a directory load reads: the snapshot (or None), the segments to replay after it, the first offset."""

    partition_dir: Path
    snapshot: SnapshotId | None
    segments: list
    start: int

    @property
    def snapshot_path(self) -> Path | None:
        """Return the snapshot file's path, or None."""
        return None if self.snapshot is None else self.partition_dir / self.snapshot.file_name

    @property
    def files(self) -> list:
        """Return every file the load reads, the snapshot first."""
        return ([self.snapshot_path] if self.snapshot is not None else []) + list(self.segments)


def as_path(path) -> Path:
    """Return `path` (text or a path) as a Path."""
    return Path(path)


def is_directory(path) -> bool:
    """Tell whether `path` names a directory."""
    return Path(path).is_dir()


def is_checkpoint(path) -> bool:
    """Tell whether `path` names a snapshot file (`.checkpoint`), which is read strictly."""
    return Path(path).suffix == ".checkpoint"


def file_size(path) -> int:
    """Return the size of the file at `path`, 0 when it cannot be read."""
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def partition_directory(directory) -> Path:
    """Return the __cluster_metadata-0 folder of a log directory (or the folder itself)."""
    directory = Path(directory)
    if not directory.is_dir():
        problem = "not a directory" if directory.exists() else "No such file or directory"
        raise MetadataFilesError(f"{directory}: {problem}")
    inner = directory / METADATA_PARTITION
    return inner if inner.is_dir() else directory


def bootstrap_only(directory, pdir: Path) -> Path | None:
    """Return the bootstrap.checkpoint of a freshly formatted directory (no snapshot, no segment), or None."""
    if list_snapshots(pdir) or any(pdir.glob("*.log")):
        return None
    for folder in (Path(directory), pdir, pdir.parent):
        if (folder / BOOTSTRAP_FILE).is_file():
            return folder / BOOTSTRAP_FILE
    return None


def plan_directory(pdir: Path, offset: int | None) -> DirectoryPlan:
    """Return the newest snapshot at or before `offset` (any, when None) and the segments after it."""
    snapshots = [s for s in list_snapshots(pdir) if offset is None or s.end_offset <= offset + 1]
    snapshot = snapshots[-1] if snapshots else None
    segments = sorted(pdir.glob("*.log"), key=parse_segment_offset)
    start = snapshot.end_offset if snapshot else 0
    if snapshot is None and (not segments or parse_segment_offset(segments[0]) > 0):
        first = parse_segment_offset(segments[0]) if segments else None
        where = "no log segment" if first is None else f"the log starts at offset {first}"
        raise MetadataFilesError(f"{pdir}: no snapshot at or before offset {offset if offset is not None else 'end'} "
                                 f"and {where}")
    keep = [s for i, s in enumerate(segments)
            if i + 1 >= len(segments) or parse_segment_offset(segments[i + 1]) > start]
    return DirectoryPlan(pdir, snapshot, keep, start)


class PinnedFileError(StorageError):
    """A pinned file cannot be opened or read."""


class PinnedFile:
    """A file held open read-only, to read batches from it again by position; closed when dropped."""

    __slots__ = ("path", "fd", "__weakref__")

    def __init__(self, path):
        self.path = Path(path).absolute()
        self.fd = -1
        try:
            self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise PinnedFileError(f"{self.path}: cannot open it to read batches again: {e.strerror or e}") from None

    def read_batch(self, position: int) -> RecordBatch | None:
        """Return the batch at `position` (two reads of just its bytes), or None when no whole batch is there."""
        try:
            head = os.pread(self.fd, LOG_OVERHEAD, position)
            if len(head) < LOG_OVERHEAD:
                return None
            size = LOG_OVERHEAD + _BATCH_LENGTH(head, 8)[0]
            if size < RECORD_BATCH_OVERHEAD:
                return None
            buffer = head + os.pread(self.fd, size - LOG_OVERHEAD, position + LOG_OVERHEAD)
        except OSError as e:
            raise PinnedFileError(f"{self.path}: cannot read the batch at position {position} again: "
                                  f"{e.strerror or e}") from None
        return RecordBatch(buffer, position) if len(buffer) == size else None

    def close(self) -> None:
        """Close the descriptor (reads fail afterwards)."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __del__(self):
        self.close()


_PINNED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def pin(path) -> PinnedFile:
    """Return `path` pinned open, sharing the PinnedFile of a load still alive that pinned the same file."""
    pinned = PinnedFile(path)
    try:
        identity = os.fstat(pinned.fd)
    except OSError:
        return pinned
    key = (identity.st_dev, identity.st_ino)
    shared = _PINNED.get(key)
    if shared is not None and shared.fd >= 0:
        pinned.close()
        return shared
    _PINNED[key] = pinned
    return pinned
