"""Partition records left in their file: a topic loaded in bulk keeps where its records are, not the records.

Rules:
- A FileChunk names records [start, stop) of the batch at `position` of `path`, all PartitionRecords of one
  topic whose batch CRC was `crc` when loaded; reading it again checks that CRC, so a file changed since the
  load is an error (ChunkReadError), never a different image.
- Reading chunks gives {partition id: raw value} in record order (a later record of a partition wins), as
  TopicsDelta.replay_partition_raw would have built it.
- `recent` keeps the partitions of the last few topics read, so that a reader going partition by partition
  (tree, cat) reads a topic's file once, while the image itself stays as small as loaded.
"""
from __future__ import annotations

import os
import struct
from collections import OrderedDict

from kraftsman.storage.records.batch import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, RecordBatch

from .errors import ImageReplayError

RECENT_TOPICS = 8
_PARTITION_ID = struct.Struct(">i").unpack_from
_BATCH_LENGTH = struct.Struct(">i").unpack_from


class ChunkReadError(ImageReplayError):
    """A file a lazily loaded topic points into no longer holds the batch it held when loaded."""


class FileChunk:
    """Records [start, stop) of the batch at `position` in `path`, whose CRC was `crc`."""

    __slots__ = ("path", "position", "crc", "start", "stop")

    def __init__(self, path, position: int, crc: int, start: int, stop: int):
        self.path, self.position, self.crc, self.start, self.stop = path, position, crc, start, stop

    def values(self) -> list:
        """Read the batch again and return the chunk's raw record values."""
        batch = _read_batch(self.path, self.position)
        if batch is None or batch.crc != self.crc or batch.compute_crc() != self.crc:
            raise ChunkReadError(f"{self.path}: the batch at position {self.position} changed since the file was "
                                 f"loaded; load it again")
        return [value for _, value in batch.raft_values()][self.start:self.stop]


def _read_batch(path, position: int) -> RecordBatch | None:
    """Return the batch at `position` of `path` (two reads of just its bytes), or None when none is there."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise ChunkReadError(f"{path}: cannot read the batch at position {position} again: {e}") from None
    try:
        head = os.pread(fd, LOG_OVERHEAD, position)
        if len(head) < LOG_OVERHEAD:
            return None
        size = LOG_OVERHEAD + _BATCH_LENGTH(head, 8)[0]
        buffer = head + os.pread(fd, size - LOG_OVERHEAD, position + LOG_OVERHEAD) if size >= RECORD_BATCH_OVERHEAD \
            else b""
    finally:
        os.close(fd)
    return RecordBatch(buffer, position) if len(buffer) == size else None


def read_chunks(chunks) -> dict:
    """Return {partition id: raw PartitionRecord value} of the chunks, later records winning."""
    partitions = {}
    for chunk in chunks:
        for value in chunk.values():
            partitions[_PARTITION_ID(value, 3)[0]] = value
    return partitions


class RecentTopics:
    """The partitions of the last RECENT_TOPICS lazy topics read, keyed by the topic object."""

    def __init__(self, size: int = RECENT_TOPICS):
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.last = (None, None)

    def partitions(self, topic, chunks) -> dict:
        """Return the topic's partitions, reading its chunks unless read recently."""
        last_topic, found = self.last
        if last_topic is topic:
            return found
        entries = self.entries
        found = entries.get(topic)
        if found is not None:
            entries.move_to_end(topic)
        else:
            found = entries[topic] = read_chunks(chunks)
            if len(entries) > self.size:
                entries.popitem(last=False)
        self.last = (topic, found)
        return found

    def forget(self, topic) -> None:
        """Drop what was read of `topic` (its chunks changed)."""
        self.entries.pop(topic, None)
        if self.last[0] is topic:
            self.last = (None, None)


recent = RecentTopics()
