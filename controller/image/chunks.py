"""Partition records left in their file: a topic loaded in bulk keeps where its records are, not the records.

Rules:
- A FileChunk names records [start, stop) of the batch at `position` of a file pinned open at load time
  (storage.log's PinnedFile: this layer opens no file), all PartitionRecords of one topic whose batch CRC was
  `crc` when loaded; reading it again checks that CRC, so a file changed since the load is an error
  (ChunkReadError), never a different image.
- Reading chunks gives {partition id: raw value} in record order (a later record of a partition wins), as
  TopicsDelta.replay_partition_raw would have built it.
- `recent` keeps the partitions of the last few topics read, so that a reader going partition by partition
  (tree, cat) reads a topic's file once, while the image itself stays as small as loaded.
"""
from __future__ import annotations

import struct
from collections import OrderedDict

from kraftsman.storage.log.metadata_files import PinnedFileError

from .errors import ImageReplayError

RECENT_TOPICS = 8
_PARTITION_ID = struct.Struct(">i").unpack_from


class ChunkReadError(ImageReplayError):
    """A file a lazily loaded topic points into no longer holds the batch it held when loaded."""


class FileChunk:
    """Records [start, stop) of the batch at `position` in a pinned file, whose CRC was `crc`."""

    __slots__ = ("file", "position", "crc", "start", "stop")

    def __init__(self, file, position: int, crc: int, start: int, stop: int):
        self.file, self.position, self.crc, self.start, self.stop = file, position, crc, start, stop

    @property
    def path(self):
        """Return the path of the file the chunk is in."""
        return self.file.path

    def batch(self):
        """Read the chunk's batch again, checking that it is the batch loaded (same CRC)."""
        try:
            batch = self.file.read_batch(self.position)
        except PinnedFileError as e:
            raise ChunkReadError(str(e)) from None
        if batch is None or batch.crc != self.crc or batch.compute_crc() != self.crc:
            raise ChunkReadError(f"{self.path}: the batch at position {self.position} changed since the file was "
                                 f"loaded; load it again")
        return batch

    def values_of(self, batch) -> list:
        """Return the chunk's raw record values from its batch (as batch() gave it)."""
        return [value for _, value in batch.raft_values()][self.start:self.stop]

    def values(self) -> list:
        """Read the batch again and return the chunk's raw record values."""
        return self.values_of(self.batch())


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
