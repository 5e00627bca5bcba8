"""Segment files of a KRaft metadata log: create, append, read by position, truncate, recover.

Rules:
- Every file descriptor of a metadata log lives in a Segment; writes go straight to the file at
  its known end (os.pwrite), reads use os.pread at positions from the caller's in-memory index.
- Nothing here fsyncs on its own except recovery, which fsyncs the tail it cut.
- Recovery checks every batch as segment.BatchReader does (lengths, magic 2, CRC-32C) but reads
  only headers into memory, in big chunks: a bad batch in a segment before the last is a
  StorageError; in the last one it and all after it are a torn tail, cut and fsynced, unless a
  valid batch follows it (damage, not a crash): then recovery refuses, naming file and offset.
- Across the log, base offsets are contiguous and epochs never decrease; a batch breaking that
  counts as corrupt.
- No `.index`/`.timeindex` files are written (Kafka rebuilds them: it recovers the metadata log
  from offset 0 at every start); Kafka's are removed with their segment or when it is cut.
"""
from __future__ import annotations

import os
import struct
from array import array
from pathlib import Path

from ..errors import StorageError
from ..records.batch import ATTRIBUTES_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, CorruptRecordError
from ..records.crc import crc32c
from .segment import HEADER_SIZE_UP_TO_MAGIC, MIN_BATCH_LENGTH, parse_segment_offset, segment_name

LOG_SUFFIX = ".log"
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")  # written by Kafka; this package writes none
_HEAD = struct.Struct(">qiibI")  # base offset, batch length, partition leader epoch, magic, crc
_LENGTH = _LAST_DELTA = struct.Struct(">i")  # batch length at offset 8; last offset delta at 23
_CHUNK = 8 * 1024 * 1024


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
        done = os.pwrite(self.fd, data, self.size)
        if done < len(data):  # a short write: rare, but allowed by POSIX
            view = memoryview(data)
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
        """Cut the file at `position` (a batch boundary); drop index files that no longer match."""
        os.ftruncate(self.fd, position)
        self.size = position
        self.remove_indexes()

    def remove_indexes(self) -> None:
        """Remove this segment's `.index`/`.timeindex`/`.txnindex` files (Kafka rebuilds missing ones)."""
        for suffix in INDEX_SUFFIXES:
            try:
                os.unlink(self.path.with_suffix(suffix))
            except FileNotFoundError:
                pass

    def sync(self) -> None:
        """Make the file's content durable."""
        os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        """Close and remove the file and its index files."""
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.remove_indexes()


class ScannedBatches:
    """What recovery found, batch by batch, in compact arrays: base offset, epoch, position, size."""

    __slots__ = ("bases", "epochs", "positions", "sizes", "end_offset")

    def __init__(self):
        self.bases, self.positions = array("q"), array("q")
        self.epochs, self.sizes = array("i"), array("i")
        self.end_offset = 0  # the offset after the last batch

    def __len__(self) -> int:
        return len(self.bases)

    def add(self, base_offset: int, next_offset: int, epoch: int, position: int, size: int) -> None:
        self.bases.append(base_offset)
        self.epochs.append(epoch)
        self.positions.append(position)
        self.sizes.append(size)
        self.end_offset = next_offset


def segment_paths(directory: Path) -> list[Path]:
    """Return the `<20 digits>.log` files of `directory`, by base offset."""
    paths = [p for p in directory.iterdir()
             if p.name.endswith(LOG_SUFFIX) and len(p.name) == 24 and p.name[:20].isdigit()]
    return sorted(paths, key=parse_segment_offset)


def recover_segments(directory: Path) -> tuple[list[Segment], ScannedBatches]:
    """Open every segment, index its batches and cut a bad tail off the last one; the caller fsyncs what it keeps
    (FileLog.open syncs every segment, then the directory)."""
    segments: list[Segment] = []
    scanned = ScannedBatches()
    paths = segment_paths(directory)
    try:
        for i, path in enumerate(paths):
            segments.append(Segment.open(path))
            last = i == len(paths) - 1
            if not _scan(segments[-1], scanned, strict=not last) and not last:
                segments.pop().delete()  # an empty segment before the last holds nothing
    except BaseException:
        for segment in segments:
            segment.close()
        raise
    return segments, scanned


def _scan(segment: Segment, scanned: ScannedBatches, *, strict: bool) -> int:
    """Add the batches of `segment` to `scanned`; return how many it holds."""
    found, good_end = 0, 0
    try:
        for pos, base_offset, size, epoch, last_delta in _headers(segment):
            problem = _continuity_problem(base_offset, epoch, last_delta, scanned)
            if not found and base_offset != segment.base_offset:
                problem = f"first batch at offset {base_offset} in a segment named for offset {segment.base_offset}"
            if problem:
                raise CorruptRecordError(problem, pos, str(segment.path))
            scanned.add(base_offset, base_offset + last_delta + 1, epoch, pos, size)
            found, good_end = found + 1, pos + size
    except CorruptRecordError as e:
        if strict:
            raise StorageError(f"corrupt metadata log segment before the last one: {e}") from None
        _refuse_if_not_a_torn_tail(segment, e, scanned.end_offset if len(scanned) else segment.base_offset)
    if good_end < segment.size:
        segment.truncate(good_end)  # made durable with the rest by the caller (FileLog's _sync_recovered)
    return found


def _refuse_if_not_a_torn_tail(segment: Segment, error: CorruptRecordError, expected_offset: int) -> None:
    """Raise StorageError when a valid batch follows the bad one: that is damage, not a torn write.

    A crash tears only what was being appended, so nothing valid can follow it; a valid batch further on
    means bytes that may have been committed were damaged, and cutting there would drop them silently."""
    after = _next_valid_batch(segment, error.position + 1, expected_offset)
    if after is not None:
        position, base_offset = after
        raise StorageError(
            f"{segment.path}: corrupt batch at position {error.position} (offset {expected_offset}: "
            f"{error.message}) is followed by a valid batch at position {position} (offset {base_offset}); "
            "refusing to truncate what may be committed data: move this directory aside and let the node "
            "fetch the log from the leader")


def _next_valid_batch(segment: Segment, start: int, min_offset: int) -> tuple[int, int] | None:
    """Return (position, base offset) of the first CRC-valid v2 batch at or after `start`, or None."""
    data = os.pread(segment.fd, segment.size - start, start) if start < segment.size else b""
    view = memoryview(data)
    at = data.find(b"\x02", 16)
    while at != -1 and at - 16 + RECORD_BATCH_OVERHEAD <= len(data):
        pos = at - 16
        base_offset, length, _, magic, crc = _HEAD.unpack_from(data, pos)
        total = length + LOG_OVERHEAD
        if (MIN_BATCH_LENGTH <= length and pos + total <= len(data) and base_offset >= min_offset
                and crc32c(view[pos + ATTRIBUTES_OFFSET:pos + total]) == crc):
            return start + pos, base_offset
        at = data.find(b"\x02", at + 1)
    return None


def _headers(segment: Segment):
    """Yield (position, base offset, size, epoch, last offset delta) of each CRC-checked v2 batch.

    Checks, in BatchReader's order and words: header room, minimum length, room for the batch,
    magic 2, CRC-32C from the attributes on. Reads the file in chunks of _CHUNK bytes.
    """
    fd, size, pos = segment.fd, segment.size, 0
    buf, view, buf_pos = b"", memoryview(b""), 0
    while pos < size:
        remaining = size - pos
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            raise CorruptRecordError(f"truncated batch header: {remaining} bytes left", pos, str(segment.path))
        if pos + min(remaining, RECORD_BATCH_OVERHEAD) > buf_pos + len(buf):
            buf, buf_pos = os.pread(fd, _CHUNK, pos), pos
            view = memoryview(buf)
        off = pos - buf_pos
        _check_length(_LENGTH.unpack_from(buf, off + 8)[0], remaining, pos, segment)
        base_offset, length, epoch, magic, crc = _HEAD.unpack_from(buf, off)
        total = length + LOG_OVERHEAD
        if off + total > len(buf):
            buf, buf_pos, off = os.pread(fd, max(_CHUNK, total), pos), pos, 0
            view = memoryview(buf)
        if magic != 2:
            raise CorruptRecordError(f"unsupported record batch magic {magic} (only v2 batches are read)", pos,
                                     str(segment.path))
        computed = crc32c(view[off + ATTRIBUTES_OFFSET:off + total])
        if computed != crc:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {crc}, computed crc = {computed})", pos,
                                     str(segment.path))
        yield pos, base_offset, total, epoch, _LAST_DELTA.unpack_from(buf, off + 23)[0]
        pos += total


def _check_length(length: int, remaining: int, pos: int, segment: Segment) -> None:
    if length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"Found record size {length} smaller than minimum record overhead "
                                 f"({MIN_BATCH_LENGTH})", pos, str(segment.path))
    if length + LOG_OVERHEAD > remaining:
        raise CorruptRecordError(f"truncated batch: it claims {length + LOG_OVERHEAD} bytes but only "
                                 f"{remaining} remain", pos, str(segment.path))


def _continuity_problem(base_offset: int, epoch: int, last_delta: int, scanned: ScannedBatches) -> str | None:
    """Say why a batch cannot follow the batches scanned so far, or return None."""
    if last_delta < 0:
        return f"batch at offset {base_offset} has a negative last offset delta"
    if not len(scanned):
        return None
    if base_offset != scanned.end_offset:
        return f"batch at offset {base_offset} does not follow offset {scanned.end_offset - 1}"
    if epoch < scanned.epochs[-1]:
        return f"batch at offset {base_offset} has epoch {epoch} after {scanned.epochs[-1]}"
    return None
