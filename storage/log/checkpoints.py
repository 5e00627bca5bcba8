"""Small text files of a log directory: partition.metadata and Kafka's checkpoint files.

- `partition.metadata` (PartitionMetadataFile): exactly `version: 0\\ntopic_id: <uuid>`, no newline at
  the end. Readers split each line on `:\\s+`.
- `leader-epoch-checkpoint` (LeaderEpochCheckpointFile): `0`, the entry count, then `<epoch> <startOffset>`.
- Offset checkpoints in the log directory (OffsetCheckpointFile): `recovery-point-offset-checkpoint`,
  `replication-offset-checkpoint`, `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`:
  `0`, the entry count, then `<topic> <partition> <offset>`.

Rules:
- Checkpoint reading follows CheckpointFile.CheckpointReadBuffer: an empty file, or one with only
  the version line, holds no entries; entries are split on runs of whitespace (Java's `\\s+`, with
  its leading-empty / no-trailing-empty split rules); the count must match.
- Numbers parse like Integer.parseInt / Long.parseLong; a bad number is a malformed line (Kafka
  would leak a raw NumberFormatException there).
- Messages are Kafka's; `location` is the file's absolute path, as Kafka prints it.
- Every write goes to `<name>.tmp`, is fsynced, then renamed over the file (lines end with '\\n').
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, TypeVar

from ..errors import StorageError
from ..properties import parse_java_int
from ..protocol.uuids import ZERO_UUID, Uuid, UuidError
from ..records.epoch_cache import EpochEntry
from .atomic import DEFAULT_FS, FileSystem, atomic_write

PARTITION_METADATA_NAME = "partition.metadata"
LEADER_EPOCH_CHECKPOINT_NAME = "leader-epoch-checkpoint"
RECOVERY_POINT_OFFSET_CHECKPOINT_NAME = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_NAME = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_NAME = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT_NAME = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINT_NAMES = (RECOVERY_POINT_OFFSET_CHECKPOINT_NAME, REPLICATION_OFFSET_CHECKPOINT_NAME,
                           LOG_START_OFFSET_CHECKPOINT_NAME, CLEANER_OFFSET_CHECKPOINT_NAME)
CURRENT_VERSION = 0
TMP_SUFFIX = ".tmp"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
_KEY_SEPARATOR = re.compile(r":[ \t\n\x0b\f\r]+")
T = TypeVar("T")


class CheckpointError(StorageError, ValueError):
    """Report a partition.metadata or checkpoint file that cannot be read or written (one-line message)."""


@dataclass(frozen=True)
class PartitionMetadata:
    """Hold the contents of partition.metadata."""

    version: int
    topic_id: Uuid


@dataclass(frozen=True, order=True)
class TopicPartition:
    """Name one partition of one topic."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


# ---------------------------------------------------------------- shared text handling

def _lines(text: str) -> list[str]:
    """Split like repeated BufferedReader.readLine(): a final line break adds no empty line."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _java_split(pattern: re.Pattern, line: str) -> list[str]:
    """Split like Java's String.split(regex): a leading empty part is kept, trailing ones dropped."""
    if not pattern.search(line):
        return [line]
    parts = pattern.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _decode(data: bytes | str, location: str) -> str:
    """Decode file bytes as strict UTF-8, as Files.newBufferedReader does."""
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CheckpointError(f"Malformed input in checkpoint file [{location}]: "
                              f"not valid UTF-8 at byte {e.start}") from None


def _location(path) -> str:
    """Return the absolute path Kafka names in its messages."""
    return str(Path(path).absolute())


def _malformed(location: str, line: str | None) -> CheckpointError:
    """Build Kafka's malformed-line error; a missing line prints as Java's `null`."""
    shown = "null" if line is None else line
    return CheckpointError(f"Malformed line in checkpoint file [{location}]: {shown}")


def _write(path, text: str, fs: FileSystem) -> Path:
    """Write `text` crash-safely through `<name>.tmp`, replacing a stale temp file first."""
    path = Path(path)
    fs.remove(path.with_name(path.name + TMP_SUFFIX))
    atomic_write(path, text.encode("utf-8", "replace"), fs=fs, tmp_suffix=TMP_SUFFIX)
    return path


# ---------------------------------------------------------------- partition.metadata

def parse_partition_metadata(data: bytes | str, location: str = PARTITION_METADATA_NAME) -> PartitionMetadata:
    """Parse partition.metadata (PartitionMetadataReadBuffer), with Kafka's messages."""
    lines = _lines(_decode(data, location)) + [None, None]
    version_line, topic_line = lines[0], lines[1]
    version = parse_java_int(_value_after_key(version_line, location))
    if version is None:
        raise _malformed(location, version_line)
    if version != CURRENT_VERSION:
        raise CheckpointError(f"Unrecognized version of partition metadata file + ({location}): {version}")
    try:
        topic_id = Uuid.from_string(_value_after_key(topic_line, location))
    except UuidError as e:
        raise CheckpointError(str(e)) from None
    if topic_id == ZERO_UUID:
        raise CheckpointError(f"Invalid topic ID in partition metadata file ({location})")
    return PartitionMetadata(version, topic_id)


def _value_after_key(line: str | None, location: str) -> str:
    """Return the value of a `key: value` line; anything else is a malformed line."""
    parts = _java_split(_KEY_SEPARATOR, line) if line is not None else []
    if len(parts) != 2:
        raise _malformed(location, line)
    return parts[1]


def serialize_partition_metadata(topic_id: Uuid) -> str:
    """Return partition.metadata text: `version: 0\\ntopic_id: <uuid>` (no trailing newline)."""
    return f"version: {CURRENT_VERSION}\ntopic_id: {topic_id}"


def read_partition_metadata(dir_or_path) -> PartitionMetadata:
    """Read `<dir>/partition.metadata` (or the given file)."""
    path = _resolve(dir_or_path, PARTITION_METADATA_NAME)
    return parse_partition_metadata(path.read_bytes(), _location(path))


def write_partition_metadata(dir_or_path, topic_id: Uuid, *, fs: FileSystem = DEFAULT_FS) -> Path:
    """Write partition.metadata crash-safely; refuse ZERO_UUID, which no reader accepts."""
    path = _resolve(dir_or_path, PARTITION_METADATA_NAME)
    if not isinstance(topic_id, Uuid) or topic_id == ZERO_UUID:
        raise CheckpointError(f"Invalid topic ID in partition metadata file ({_location(path)})")
    return _write(path, serialize_partition_metadata(topic_id), fs)


def _resolve(dir_or_path, name: str) -> Path:
    """Return `<dir>/<name>` for a directory, or the path itself for a file."""
    path = Path(dir_or_path)
    return path / name if path.is_dir() else path


# ---------------------------------------------------------------- generic checkpoint files

def parse_checkpoint(data: bytes | str, parse_entry: Callable[[list[str]], T | None],
                     location: str) -> list[T]:
    """Parse a version-0 checkpoint (CheckpointReadBuffer.read); `parse_entry` gets the split line."""
    lines = _lines(_decode(data, location))
    if not lines:
        return []
    version = _header_int(lines[0], location)
    if version != CURRENT_VERSION:
        raise CheckpointError(f"Unrecognised version:{version}, expected version: {CURRENT_VERSION} "
                              f"in checkpoint file at: {location}")
    if len(lines) == 1:
        return []
    expected = _header_int(lines[1], location)
    if expected < 0:
        raise _malformed(location, lines[1])
    entries = []
    for line in lines[2:]:
        entry = parse_entry(_java_split(_JAVA_WHITESPACE, line))
        if entry is None:
            raise _malformed(location, line)
        entries.append(entry)
    if len(entries) != expected:
        raise CheckpointError(f"Expected [{expected}] entries in checkpoint file [{location}], "
                              f"but found only [{len(entries)}]")
    return entries


def _header_int(line: str, location: str) -> int:
    """Parse the version or count line; anything but an int is a malformed line."""
    value = parse_java_int(line)
    if value is None:
        raise _malformed(location, line)
    return value


def serialize_checkpoint(lines: Iterable[str]) -> str:
    """Return checkpoint text: version, count, then one line per entry, each ending in '\\n'."""
    body = list(lines)
    return "".join(f"{line}\n" for line in [str(CURRENT_VERSION), str(len(body)), *body])


# ---------------------------------------------------------------- leader-epoch-checkpoint

def _epoch_entry(parts: list[str]) -> EpochEntry | None:
    """Parse `<epoch> <startOffset>`, or return None for a malformed line."""
    if len(parts) != 2:
        return None
    epoch, start_offset = parse_java_int(parts[0]), parse_java_int(parts[1], bits=64)
    return None if epoch is None or start_offset is None else EpochEntry(epoch, start_offset)


def parse_leader_epoch_checkpoint(data: bytes | str,
                                  location: str = LEADER_EPOCH_CHECKPOINT_NAME) -> list[EpochEntry]:
    """Parse leader-epoch-checkpoint text into its entries, in file order."""
    return parse_checkpoint(data, _epoch_entry, location)


def serialize_leader_epoch_checkpoint(entries: Iterable[EpochEntry]) -> str:
    """Return leader-epoch-checkpoint text for `entries`."""
    entries = list(entries)
    for e in entries:
        if not (_fits(e.epoch, 32) and _fits(e.start_offset, 64)):
            raise CheckpointError(f"Invalid leader epoch entry {e.epoch} {e.start_offset}")
    return serialize_checkpoint(f"{e.epoch} {e.start_offset}" for e in entries)


def read_leader_epoch_checkpoint(dir_or_path) -> list[EpochEntry]:
    """Read `<dir>/leader-epoch-checkpoint` (or the given file)."""
    path = _resolve(dir_or_path, LEADER_EPOCH_CHECKPOINT_NAME)
    return parse_leader_epoch_checkpoint(path.read_bytes(), _location(path))


def write_leader_epoch_checkpoint(dir_or_path, entries: Iterable[EpochEntry], *,
                                  fs: FileSystem = DEFAULT_FS) -> Path:
    """Write leader-epoch-checkpoint crash-safely."""
    text = serialize_leader_epoch_checkpoint(entries)
    return _write(_resolve(dir_or_path, LEADER_EPOCH_CHECKPOINT_NAME), text, fs)


def _fits(value, bits: int) -> bool:
    """Tell whether `value` is an int that fits a signed integer of `bits` bits."""
    limit = 1 << (bits - 1)
    return isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit


# ---------------------------------------------------------------- offset checkpoints

def _offset_entry(parts: list[str]) -> tuple[TopicPartition, int] | None:
    """Parse `<topic> <partition> <offset>`, or return None for a malformed line."""
    if len(parts) != 3:
        return None
    partition, offset = parse_java_int(parts[1]), parse_java_int(parts[2], bits=64)
    return None if partition is None or offset is None else (TopicPartition(parts[0], partition), offset)


def parse_offset_checkpoint(data: bytes | str, location: str = "offset-checkpoint") -> dict[TopicPartition, int]:
    """Parse an offset checkpoint into {TopicPartition: offset}, in file order (last duplicate wins)."""
    return dict(parse_checkpoint(data, _offset_entry, location))


def serialize_offset_checkpoint(offsets: Mapping[TopicPartition, int]) -> str:
    """Return offset checkpoint text for `offsets`, in the mapping's order."""
    lines = []
    for tp, offset in offsets.items():
        if not tp.topic or _JAVA_WHITESPACE.search(tp.topic) or not _fits(tp.partition, 32):
            raise CheckpointError(f"Invalid topic partition for an offset checkpoint: {tp}")
        if not _fits(offset, 64):
            raise CheckpointError(f"Invalid offset {offset} for {tp}")
        lines.append(f"{tp.topic} {tp.partition} {offset}")
    return serialize_checkpoint(lines)


def read_offset_checkpoint(path) -> dict[TopicPartition, int]:
    """Read one offset checkpoint file (see OFFSET_CHECKPOINT_NAMES)."""
    return parse_offset_checkpoint(Path(path).read_bytes(), _location(path))


def write_offset_checkpoint(path, offsets: Mapping[TopicPartition, int], *,
                            fs: FileSystem = DEFAULT_FS) -> Path:
    """Write one offset checkpoint file crash-safely."""
    return _write(path, serialize_offset_checkpoint(offsets), fs)
