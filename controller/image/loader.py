"""Build metadata images from files: a snapshot (.checkpoint), a log segment (.log) or a log directory.

Rules:
- Files are found, read and pinned by storage.log (metadata_files, BatchReader, SnapshotReader): this module
  opens no file itself. Control batches are skipped, as Kafka's shell does.
- A directory loads its newest snapshot (at or before `offset`, when given), then replays the log
  segments after it; `offset` stops the replay after that offset (time travel). A freshly formatted
  directory (no snapshot, no segment) loads its bootstrap.checkpoint.
- Everything goes through ImageBuilder, so a live source can feed the same builder later.
- Every batch replayed has its CRC checked: a bad batch is reported to `on_corrupt(message)` in one line (file,
  position, stored and computed CRC) and skipped, or stops the load (CorruptBatchError) when `strict`.
- Bulk loads run with the garbage collector off and freeze what they built; memory stays
  proportional to the metadata (partitions stay raw until read), not to the log size.
- Every load leaves runs of PartitionRecords of one topic in their file (chunks.py): the image keeps where they
  are and reads them when a path under the topic is read. The files stay pinned open (PinnedFile) while the
  image may read them, so a segment a running node deletes meanwhile is still read as it was loaded.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field

from kraftsman.storage.log import metadata_files as files
from kraftsman.storage.log.metadata_files import MetadataFilesError, PinnedFile, PinnedFileError
from kraftsman.storage.log.segment import BatchReader
from kraftsman.storage.log.snapshot import SnapshotReader, parse_snapshot_name

from .batch_loader import ImageBuilder
from .chunks import FileChunk
from .image import MetadataImage
from .producer_ids import Provenance

METADATA_PARTITION = files.METADATA_PARTITION
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
                 checks: "CrcChecks | None" = None):
        self.builder, self.stop_offset, self.progress = builder, stop_offset, progress
        self.total_bytes, self.done_bytes, self.warnings = total_bytes, 0, []
        self.checks = checks or CrcChecks()

    def feed_file(self, path, start_offset: int = 0, strict: bool = False) -> bool:
        """Replay one file's data batches from `start_offset`; return False once past the stop offset."""
        reader = BatchReader(path, strict=strict, verify_crc=False)
        return self.feed_batches(reader, reader, start_offset)

    def feed_snapshot(self, path, snapshot_id) -> None:
        """Replay a directory's snapshot, then date the image at the snapshot's end offset."""
        reader = SnapshotReader(path)
        reader.reader.verify_crc = False      # checked batch by batch below, so that a bad one is skipped
        self.builder.start_snapshot()
        self.feed_batches(reader.batches(), reader.reader, 0)
        header_time = getattr(reader.header, "last_contained_log_timestamp", -1)
        self.builder.last = Provenance(snapshot_id.end_offset - 1, snapshot_id.epoch, header_time)

    def feed_batches(self, batches, reader, start_offset: int) -> bool:
        """Replay data batches, skipping control batches and offsets before `start_offset`."""
        count, base, pinned = 0, self.done_bytes, None
        for batch in batches:
            count += 1
            if self.progress is not None and count % PROGRESS_EVERY == 0:
                self.progress(base + batch.position, self.total_bytes, self.builder.records)
            if batch.is_control or batch.last_offset < start_offset or not self.checks.accept(reader.path, batch):
                continue
            if batch.base_offset >= start_offset and not batch.compression:
                pinned = pinned or _pin(reader.path)
                if self._feed_runs(pinned, batch):
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

    def _feed_runs(self, pinned: PinnedFile, batch) -> bool:
        """Replay a whole batch leaving its PartitionRecord runs in the file; False when it cannot be (compressed,
        not shaped as the raft writes, past the stop offset)."""
        if self.stop_offset is not None and batch.last_offset > self.stop_offset:
            return False
        runs = batch.raft_value_runs(PARTITION_RECORD_HEAD, TOPIC_ID_AT, TOPIC_ID_SIZE)
        if runs is None:
            return False
        position, crc, base = batch.position, batch.crc, batch.base_offset

        def chunk_of(start: int, stop: int) -> FileChunk:
            return FileChunk(pinned, position, crc, start, stop)

        def values_of(start: int, stop: int):
            return list(batch_values(batch))[start:stop]

        self.builder.load_runs(runs, chunk_of, values_of, base, batch.partition_leader_epoch, batch.max_timestamp)
        return True


def _pin(path) -> PinnedFile:
    """Return `path` pinned open for the chunks read from it later."""
    try:
        return files.pin(path)
    except PinnedFileError as e:
        raise LoadError(str(e)) from None


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
    path = files.as_path(path)
    builder = ImageBuilder(on_fault=on_fault)
    feeder = _Feeder(builder, offset, progress, files.file_size(path), checks)
    with bulk_loading():
        feeder.feed_file(path, strict=files.is_checkpoint(path))
        image = builder.image()
    if feeder.warnings and not builder.records and feeder.total_bytes:
        raise LoadError(f"{path} holds no readable metadata: {feeder.warnings[0].removeprefix(f'{path}: ')}")
    return LoadResult(image, builder.records, [path], builder.faults, feeder.warnings, feeder.checks.corrupt)


def partition_directory(directory):
    """Return the __cluster_metadata-0 folder of a log directory (or the folder itself)."""
    try:
        return files.partition_directory(directory)
    except MetadataFilesError as e:
        raise LoadError(str(e)) from None


def load_directory(directory, *, offset: int | None = None, progress=None, on_fault=None, checks=None) -> LoadResult:
    """Load a metadata log directory: newest usable snapshot, then the log segments after it."""
    pdir = partition_directory(directory)
    bootstrap = files.bootstrap_only(directory, pdir)
    if bootstrap is not None:
        return load_file(bootstrap, offset=offset, progress=progress, on_fault=on_fault, checks=checks)
    try:
        plan = files.plan_directory(pdir, offset)
    except MetadataFilesError as e:
        raise LoadError(str(e)) from None
    builder = ImageBuilder(on_fault=on_fault)
    feeder = _Feeder(builder, offset, progress, sum(files.file_size(f) for f in plan.files), checks)
    with bulk_loading():
        going = True
        if plan.snapshot is not None:
            feeder.feed_snapshot(plan.snapshot_path, plan.snapshot)
        for segment in plan.segments:
            if not going:
                break
            going = feeder.feed_file(segment, start_offset=plan.start)
        image = builder.image()
    if offset is not None and image.provenance.offset < offset and going:
        feeder.warnings.append(f"offset {offset} is past the end of the log "
                               f"(last offset {image.provenance.offset})")
    return LoadResult(image, builder.records, plan.files, builder.faults, feeder.warnings, feeder.checks.corrupt)


def load(path=None, *, directory=None, offset: int | None = None, progress=None, on_fault=None,
         checks=None) -> LoadResult:
    """Load from a snapshot/log file (`path`) or a log directory (`directory`)."""
    options = dict(offset=offset, progress=progress, on_fault=on_fault, checks=checks)
    if directory is not None:
        return load_directory(directory, **options)
    if path is None:
        raise LoadError("nothing to load: give a snapshot file or a directory")
    if files.is_directory(path):
        return load_directory(path, **options)
    return load_file(path, **options)


__all__ = ["CorruptBatchError", "CrcChecks", "LoadError", "LoadResult", "load", "load_directory", "load_file",
           "parse_snapshot_name"]
