"""Build metadata images from files: a snapshot (.checkpoint), a log segment (.log) or a log directory.

Rules:
- Files are read through storage.log (BatchReader); control batches are skipped, as Kafka's shell does.
- A directory loads its newest snapshot (at or before `offset`, when given), then replays the log
  segments after it; `offset` stops the replay after that offset (time travel). A freshly formatted
  directory (no snapshot, no segment) loads its bootstrap.checkpoint.
- Everything goes through ImageBuilder, so a live source can feed the same builder later.
- Every batch replayed has its CRC checked: a bad batch is reported to `on_corrupt(message)` in one line (file,
  position, stored and computed CRC) and skipped, or stops the load (CorruptBatchError) when `strict`.
- Bulk loads run with the garbage collector off and freeze what they built; memory stays
  proportional to the metadata (partitions stay raw until read), not to the log size.
- load_file() leaves runs of PartitionRecords of one topic in the file (chunks.py): the image keeps where they
  are and reads them when a path under the topic is read. Directories (whose segments a running
  controller may still truncate or delete) keep every record in memory.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kraftsman.storage.log.segment import BatchReader, parse_segment_offset
from kraftsman.storage.log.snapshot import BOOTSTRAP_FILE, SnapshotReader, list_snapshots, parse_snapshot_name

from .batch_loader import ImageBuilder
from .chunks import FileChunk
from .image import MetadataImage
from .producer_ids import Provenance

METADATA_PARTITION = "__cluster_metadata-0"
PROGRESS_EVERY = 256
PARTITION_RECORD_HEAD, TOPIC_ID_AT, TOPIC_ID_SIZE = b"\x01\x03", 7, 16


class LoadError(ValueError):
    """The input cannot give the requested image (missing files, offset out of range)."""


class CorruptBatchError(LoadError):
    """A batch's CRC does not match its bytes and the load was strict."""


@dataclass
class LoadResult:
    """An image and how it was obtained."""

    image: MetadataImage
    records: int = 0
    files: list = field(default_factory=list)
    faults: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    corrupt: list = field(default_factory=list)


@contextmanager
def bulk_loading():
    """Run a bulk load with the cyclic GC off, then freeze the survivors so later GCs skip them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def batch_values(batch):
    """Yield (offset, value) of a data batch's records (the raft fast path when storage has one)."""
    fast = getattr(batch, "raft_values", None)
    if fast is not None:
        return fast()
    return ((record.offset, record.value) for record in batch.records())


class _Feeder:
    """Feed the batches of files into an ImageBuilder, reporting progress."""

    def __init__(self, builder: ImageBuilder, stop_offset: int | None, progress, total_bytes: int,
                 checks: "CrcChecks | None" = None, in_file: bool = False):
        self.builder, self.stop_offset, self.progress, self.in_file = builder, stop_offset, progress, in_file
        self.total_bytes, self.done_bytes, self.warnings = total_bytes, 0, []
        self.checks = checks or CrcChecks()

    def feed_file(self, path: Path, start_offset: int = 0, strict: bool = False) -> bool:
        """Replay one file's data batches from `start_offset`; return False once past the stop offset."""
        reader = BatchReader(path, strict=strict, verify_crc=False)
        return self.feed_batches(reader, reader, start_offset)

    def feed_snapshot(self, path: Path, snapshot_id) -> None:
        """Replay a directory's snapshot, then date the image at the snapshot's end offset."""
        reader = SnapshotReader(path)
        reader.reader.verify_crc = False      # checked batch by batch below, so that a bad one is skipped
        self.builder.start_snapshot()
        self.feed_batches(reader.batches(), reader.reader, 0)
        header_time = getattr(reader.header, "last_contained_log_timestamp", -1)
        self.builder.last = Provenance(snapshot_id.end_offset - 1, snapshot_id.epoch, header_time)

    def feed_batches(self, batches, reader, start_offset: int) -> bool:
        """Replay data batches, skipping control batches and offsets before `start_offset`."""
        count, base = 0, self.done_bytes
        chunk_path = Path(reader.path).absolute() if self.in_file else None
        for batch in batches:
            count += 1
            if self.progress is not None and count % PROGRESS_EVERY == 0:
                self.progress(base + batch.position, self.total_bytes, self.builder.records)
            if batch.is_control or batch.last_offset < start_offset or not self.checks.accept(reader.path, batch):
                continue
            if self.in_file and batch.base_offset >= start_offset and self._feed_runs(chunk_path, batch):
                continue
            values = batch_values(batch)
            if batch.base_offset < start_offset:
                values = ((o, v) for o, v in values if o >= start_offset)
            if not self.builder.load_batch(values, batch.partition_leader_epoch, batch.max_timestamp,
                                           self.stop_offset):
                return False
        self.done_bytes = base + reader.file_size
        if reader.stop_reason:
            self.warnings.append(f"{reader.path}: stopped at byte {reader.valid_bytes}: {reader.stop_reason}")
        return True


    def _feed_runs(self, path, batch) -> bool:
        """Replay a whole batch leaving its PartitionRecord runs in the file; False when it cannot be (compressed,
        not shaped as the raft writes, past the stop offset)."""
        if self.stop_offset is not None and batch.last_offset > self.stop_offset:
            return False
        runs = batch.raft_value_runs(PARTITION_RECORD_HEAD, TOPIC_ID_AT, TOPIC_ID_SIZE)
        if runs is None:
            return False
        position, crc, base = batch.position, batch.crc, batch.base_offset

        def chunk_of(start: int, stop: int) -> FileChunk:
            return FileChunk(path, position, crc, start, stop)

        def values_of(start: int, stop: int):
            return list(batch_values(batch))[start:stop]

        self.builder.load_runs(runs, chunk_of, values_of, base, batch.partition_leader_epoch, batch.max_timestamp)
        return True


class CrcChecks:
    """Check each batch's CRC-32C; report a bad one and skip it, or raise CorruptBatchError when strict."""

    def __init__(self, on_corrupt=None, strict: bool = False):
        self.on_corrupt, self.strict, self.corrupt = on_corrupt, strict, []

    def accept(self, path, batch) -> bool:
        """Tell whether `batch` may be replayed (its CRC matches)."""
        stored = batch.crc
        computed = batch.compute_crc()
        if computed == stored:
            return True
        message = (f"{path}: batch at position {batch.position} (offsets {batch.base_offset}-{batch.last_offset}) "
                   f"is corrupt: stored crc {stored}, computed crc {computed}")
        self.corrupt.append(message)
        if self.strict:
            raise CorruptBatchError(message + "; stopped loading (--strict)")
        if self.on_corrupt is not None:
            self.on_corrupt(message + "; skipped")
        return False


def load_file(path, *, offset: int | None = None, progress=None, on_fault=None, checks=None) -> LoadResult:
    """Load the image held by one file of batches (a .checkpoint snapshot or a .log segment)."""
    path = Path(path)
    builder = ImageBuilder(on_fault=on_fault)
    feeder = _Feeder(builder, offset, progress, _size(path), checks, in_file=True)
    with bulk_loading():
        feeder.feed_file(path, strict=path.suffix == ".checkpoint")
        image = builder.image()
    if feeder.warnings and not builder.records and feeder.total_bytes:
        raise LoadError(f"{path} holds no readable metadata: {feeder.warnings[0].removeprefix(f'{path}: ')}")
    return LoadResult(image, builder.records, [path], builder.faults, feeder.warnings, feeder.checks.corrupt)


def partition_directory(directory) -> Path:
    """Return the __cluster_metadata-0 folder of a log directory (or the folder itself)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LoadError(f"{directory}: {'not a directory' if directory.exists() else 'No such file or directory'}")
    inner = directory / METADATA_PARTITION
    return inner if inner.is_dir() else directory


def _plan(pdir: Path, offset: int | None):
    snapshots = [s for s in list_snapshots(pdir) if offset is None or s.end_offset <= offset + 1]
    snapshot = snapshots[-1] if snapshots else None
    segments = sorted(pdir.glob("*.log"), key=parse_segment_offset)
    start = snapshot.end_offset if snapshot else 0
    if snapshot is None and (not segments or parse_segment_offset(segments[0]) > 0):
        first = parse_segment_offset(segments[0]) if segments else None
        where = "no log segment" if first is None else f"the log starts at offset {first}"
        raise LoadError(f"{pdir}: no snapshot at or before offset {offset if offset is not None else 'end'} "
                        f"and {where}")
    keep = [s for i, s in enumerate(segments)
            if i + 1 >= len(segments) or parse_segment_offset(segments[i + 1]) > start]
    return snapshot, keep, start


def _bootstrap_only(directory: Path, pdir: Path) -> Path | None:
    """Return the bootstrap.checkpoint of a freshly formatted directory (no snapshot, no segment), or None."""
    if list_snapshots(pdir) or any(pdir.glob("*.log")):
        return None
    for folder in (directory, pdir, pdir.parent):
        if (folder / BOOTSTRAP_FILE).is_file():
            return folder / BOOTSTRAP_FILE
    return None


def load_directory(directory, *, offset: int | None = None, progress=None, on_fault=None, checks=None) -> LoadResult:
    """Load a metadata log directory: newest usable snapshot, then the log segments after it."""
    pdir = partition_directory(directory)
    bootstrap = _bootstrap_only(Path(directory), pdir)
    if bootstrap is not None:
        return load_file(bootstrap, offset=offset, progress=progress, on_fault=on_fault, checks=checks)
    snapshot, segments, start = _plan(pdir, offset)
    files = ([pdir / snapshot.file_name] if snapshot else []) + segments
    builder = ImageBuilder(on_fault=on_fault)
    feeder = _Feeder(builder, offset, progress, sum(_size(f) for f in files), checks)
    with bulk_loading():
        going = True
        if snapshot is not None:
            feeder.feed_snapshot(files[0], snapshot)
        for segment in segments:
            if not going:
                break
            going = feeder.feed_file(segment, start_offset=start)
        image = builder.image()
    if offset is not None and image.provenance.offset < offset and going:
        feeder.warnings.append(f"offset {offset} is past the end of the log "
                               f"(last offset {image.provenance.offset})")
    return LoadResult(image, builder.records, files, builder.faults, feeder.warnings, feeder.checks.corrupt)


def load(path=None, *, directory=None, offset: int | None = None, progress=None, on_fault=None,
         checks=None) -> LoadResult:
    """Load from a snapshot/log file (`path`) or a log directory (`directory`)."""
    options = dict(offset=offset, progress=progress, on_fault=on_fault, checks=checks)
    if directory is not None:
        return load_directory(directory, **options)
    if path is None:
        raise LoadError("nothing to load: give a snapshot file or a directory")
    path = Path(path)
    if path.is_dir():
        return load_directory(path, **options)
    return load_file(path, **options)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


__all__ = ["CorruptBatchError", "CrcChecks", "LoadError", "LoadResult", "load", "load_directory", "load_file",
           "parse_snapshot_name"]
