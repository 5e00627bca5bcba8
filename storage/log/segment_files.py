"""Segment files of a KRaft metadata log: create, append, read by position, truncate, recover.

Rules:
- Every file descriptor of a metadata log lives in a Segment; writes go straight to the file at
  its known end (os.pwrite), reads use os.pread at positions from the caller's in-memory index.
- Nothing here fsyncs on its own except recovery, which fsyncs the tail it cut.
- Recovery reads every segment but the last strictly (a bad batch there is a StorageError) and
  the last leniently with CRC checks: its torn or corrupt tail is cut at the last good batch.
- Across the log, base offsets are contiguous and epochs never decrease; a batch breaking that
  counts as corrupt.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ..errors import StorageError
from ..records.batch import CorruptRecordError
from .segment import BatchReader, parse_segment_offset, segment_name

LOG_SUFFIX = ".log"


class Segment:
    """One `<base offset>.log` file, open for reading and writing."""

    __slots__ = ("base_offset", "path", "fd", "size")

    def __init__(self, base_offset: int, path: Path, fd: int, size: int):
        self.base_offset, self.path, self.fd, self.size = base_offset, path, fd, size

    @classmethod
    def create(cls, directory: Path, base_offset: int) -> Segment:
        """Create the empty segment starting at `base_offset` (it must not exist)."""
        path = directory / segment_name(base_offset, LOG_SUFFIX)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise StorageError(f"cannot roll the log: segment {path} already exists") from None
        return cls(base_offset, path, fd, 0)

    @classmethod
    def open(cls, path: Path) -> Segment:
        """Open an existing segment file."""
        fd = os.open(path, os.O_RDWR)
        return cls(parse_segment_offset(path), path, fd, os.fstat(fd).st_size)

    def write(self, data: bytes) -> None:
        """Append `data` at the end of the file."""
        view, done = memoryview(data), 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], self.size + done)
        self.size += done

    def read(self, position: int, size: int) -> bytes:
        """Return `size` bytes from `position`."""
        data = os.pread(self.fd, size, position)
        if len(data) != size:
            raise StorageError(f"{self.path}: short read of {size} bytes at position {position}")
        return data

    def truncate(self, position: int) -> None:
        """Cut the file at `position` (a batch boundary)."""
        os.ftruncate(self.fd, position)
        self.size = position

    def sync(self) -> None:
        """Make the file's content durable."""
        os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        """Close and remove the file."""
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class ScannedBatch(NamedTuple):
    """Where one batch sits: its offsets, epoch, and byte range in its segment."""

    base_offset: int
    next_offset: int
    epoch: int
    position: int
    size: int


def segment_paths(directory: Path) -> list[Path]:
    """Return the `<20 digits>.log` files of `directory`, by base offset."""
    paths = [p for p in directory.iterdir()
             if p.name.endswith(LOG_SUFFIX) and len(p.name) == 24 and p.name[:20].isdigit()]
    return sorted(paths, key=parse_segment_offset)


def recover_segments(directory: Path) -> tuple[list[Segment], list[ScannedBatch]]:
    """Open every segment, index its batches and cut a bad tail off the last one."""
    segments: list[Segment] = []
    batches: list[ScannedBatch] = []
    paths = segment_paths(directory)
    try:
        for i, path in enumerate(paths):
            segment = Segment.open(path)
            last = i == len(paths) - 1
            found = _scan(segment, batches, strict=not last)
            if not found and not last:
                segment.delete()  # an empty segment before the last holds nothing
                continue
            segments.append(segment)
    except BaseException:
        for segment in segments:
            segment.close()
        raise
    return segments, batches


def _scan(segment: Segment, batches: list[ScannedBatch], *, strict: bool) -> int:
    """Append the batches of `segment` to `batches`; return how many it holds."""
    reader = BatchReader(segment.path, strict=strict, verify_crc=True)
    found, good_end = 0, 0
    try:
        for rb in reader:
            problem = _continuity_problem(rb, batches)
            if problem:
                if strict:
                    raise CorruptRecordError(problem, rb.position, str(segment.path))
                break
            batches.append(ScannedBatch(rb.base_offset, rb.next_offset, rb.partition_leader_epoch,
                                        rb.position, rb.size_in_bytes))
            found, good_end = found + 1, rb.position + rb.size_in_bytes
    except CorruptRecordError as e:
        raise StorageError(f"corrupt metadata log segment before the last one: {e}") from None
    if good_end < segment.size:
        segment.truncate(good_end)
        segment.sync()
    return found


def _continuity_problem(rb, batches: list[ScannedBatch]) -> str | None:
    """Say why batch `rb` cannot follow `batches`, or return None."""
    if rb.last_offset_delta < 0:
        return f"batch at offset {rb.base_offset} has a negative last offset delta"
    if not batches:
        return None
    prev = batches[-1]
    if rb.base_offset != prev.next_offset:
        return f"batch at offset {rb.base_offset} does not follow offset {prev.next_offset - 1}"
    if rb.partition_leader_epoch < prev.epoch:
        return f"batch at offset {rb.base_offset} has epoch {rb.partition_leader_epoch} after {prev.epoch}"
    return None
