"""The KRaft metadata log on disk: segment files plus snapshots, behind the raft core's RaftLog methods.

Layout (Kafka's `__cluster_metadata-0` directory): segments `<base offset %020d>.log`, rolled
when the next batch would take the active one past `segment_bytes`; snapshots
`<end offset %020d>-<epoch %010d>.checkpoint`, written to `<name>.part` then renamed;
`leader-epoch-checkpoint` rewritten on flush when the epochs changed.

Rules:
- Semantics are those of controller.raft.log.MemoryLog, observable for observable; this module
  never imports the controller. Batches and snapshots are raft_values' Batch and Snapshot, the raft
  core's own; `batch_type(data)` and `snapshot_type(end_offset, epoch, data)` build them (a caller may
  pass others of the same shape).
- Memory holds an index (base offset, file position, size per batch) and the epoch cache; batch
  bytes are read from the files with os.pread when asked, except the batches appended last (up to
  RECENT_BATCHES, RECENT_BYTES) while they still end the log: read() hands those back as appended (a leader's
  fetch answers and commits read them, and so does a follower's commit of the batch before its newest one).
- append() writes to the file at once (no user-space buffer); only flush() makes appends durable
  (fsync of the written segments, then of the directory after a roll or delete). Truncation,
  snapshot writes and snapshot installation are durable when they return, as in MemoryLog;
  delete_before's file deletions at the next flush (a lost deletion only leaves more log).
- open() makes the log it recovered durable (fsync of every segment, then of the directory) before anything
  reads it: a process that stopped uncleanly may have left bytes written and never synced (its fsync failed,
  or it was killed first); they survive in the page cache, so this process would read them, count them in
  its log end and acknowledge them, and a power cut later could still take them, leaving a gap between
  segments. Kafka likewise flushes every segment past its recovery point before it counts it as flushed.
- The log below `start_offset` may survive in a partly deleted segment; it is never read.
- prepare_snapshot() may run in another thread while the log serves: it writes and fsyncs only that
  snapshot's own `<name>.prepared.tmp` file (as Kafka's snapshot writer does off the raft thread), and
  store_snapshot() of the same snapshot then only renames it; discard_prepared_snapshot() removes it.
  The name differs from store_snapshot()'s own `.part`, so the two never write one file; a crash leaves
  it as a stray, deleted on open.
- Snapshots stay until delete_before_snapshot() (Kafka's deleteBeforeSnapshot, driven by the raft core's
  retention) moves the log start up to a newer one: then the segments wholly below the new start and the
  older snapshots are deleted; segments are never deleted for their own age or size (Kafka sets
  retention.ms and retention.bytes to -1 on the metadata log).
- Restart rule (Kafka's): `start_offset` is the first batch's base offset, i.e. the first segment's, so a
  start that was inside a partly deleted segment comes back down to it; snapshots ending below it are
  deleted, the others kept (the raft core loads the newest and applies the log after it). When the newest
  snapshot is past the log's end (a crash while installing it), the log is emptied and starts at that
  snapshot, as Kafka's KafkaMetadataLog does.
"""
from __future__ import annotations

import bisect
import errno
from array import array
from pathlib import Path

from ..errors import StorageError
from ..records.epoch_cache import EpochCache
from ..records.raft_values import Batch, Snapshot
from .atomic import DEFAULT_FS, FileSystem, atomic_write, write_temp
from .checkpoints import LEADER_EPOCH_CHECKPOINT_NAME, write_leader_epoch_checkpoint
from .segment_files import ScannedBatches, Segment, recover_segments
from .snapshot import PARTIAL_SUFFIX, SnapshotId, last_contained_log_timestamp, list_snapshots

DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024  # metadata.log.segment.bytes
_STRAY_SUFFIXES = (PARTIAL_SUFFIX, ".checkpoint.deleted")
_READ_CHUNK = 4 * 1024 * 1024
RECENT_BATCHES = 8  # batches read() serves from memory while they end the log (see Rules)
RECENT_BYTES = 1 << 20  # ... and their bytes at most, the newest batch always kept


def _is_stray(name: str) -> bool:
    """Say whether `name` is a temp file this log writes (a crash left it behind)."""
    if name.endswith(_STRAY_SUFFIXES):
        return True
    return name.endswith(".tmp") and (name.startswith(LEADER_EPOCH_CHECKPOINT_NAME) or ".checkpoint." in name)


class FileLog:
    """A RaftLog kept in Kafka's on-disk layout.

    The controller server opens it, e.g. `FileLog.open(metadata_log_dir / "__cluster_metadata-0",
    segment_bytes=metadata_log_segment_bytes)`, and close()s it on shutdown.
    """

    def __init__(self, directory: Path, *, batch_type, snapshot_type, segment_bytes: int, fs: FileSystem):
        self.directory = directory
        self.batch_type, self.snapshot_type = batch_type, snapshot_type
        self.segment_bytes, self.fs = segment_bytes, fs
        self.segments: list[Segment] = []
        self._seg_bases: list[int] = []
        self._bases, self._positions, self._sizes = array("q"), array("q"), array("i")
        self._recent: list = []  # the batches appended last, contiguous up to end_offset (see read())
        self._recent_bytes = 0
        self.epochs = EpochCache()
        self._snapshot_ids: list[tuple[int, int]] = []
        self._latest = None  # cached Snapshot object of the newest snapshot
        self._prepared: set[tuple[int, int]] = set()  # snapshots whose file prepare_snapshot() wrote
        self._timestamps: dict[tuple[int, int], int | None] = {}  # LastContainedLogTimestamp, read once
        self.start_offset = self.end_offset = 0
        self._dirty: dict[int, Segment] = {}
        self._inflight: list[Segment] = []  # segments a background flush job is syncing
        self._dir_dirty = False
        self._checkpointed = -1

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, directory, *, batch_type=Batch, snapshot_type=Snapshot.of,
             segment_bytes: int = DEFAULT_SEGMENT_BYTES, fs: FileSystem = DEFAULT_FS) -> FileLog:
        """Open (creating if need be) the log in `directory`, recovering from a crash."""
        if segment_bytes < 1:
            raise StorageError(f"segment size must be positive, not {segment_bytes}")
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot create the metadata log directory {directory}: {e.strerror}") from None
        log = cls(directory, batch_type=batch_type, snapshot_type=snapshot_type, segment_bytes=segment_bytes, fs=fs)
        log._recover()
        return log

    def _recover(self) -> None:
        self._remove_strays()
        self._snapshot_ids = [(s.end_offset, s.epoch) for s in list_snapshots(self.directory)]
        segments, scanned = recover_segments(self.directory)
        self.segments, self._seg_bases = segments, [s.base_offset for s in segments]
        log_end = scanned.end_offset if len(scanned) else (segments[0].base_offset if segments else 0)
        last_epoch = scanned.epochs[-1] if len(scanned) else 0
        latest = self._snapshot_ids[-1] if self._snapshot_ids else None
        start = scanned.bases[0] if len(scanned) else log_end
        if latest and (latest[1] > last_epoch or latest[0] > log_end):
            self._reset_to(latest)  # a crash while installing a snapshot
            self.fs.fsync_dir(self.directory)
            return
        self._load_index(scanned, start)
        self._drop_snapshots(lambda sid: sid[0] < self.start_offset)
        self._checkpointed = self.epochs.version
        self._sync_recovered()

    def _sync_recovered(self) -> None:
        """Fsync every segment, then the directory: what recovery found becomes durable (see Rules)."""
        if not self.segments:
            return
        for seg in self.segments:
            seg.sync()
        self.fs.fsync_dir(self.directory)

    def _remove_strays(self) -> None:
        strays = [p for p in self.directory.iterdir() if _is_stray(p.name)]
        for path in strays:
            self.fs.remove(path)
        if strays:
            self.fs.fsync_dir(self.directory)

    def _load_index(self, scanned: ScannedBatches, start: int) -> None:
        """Index the batches at or after `start`; the floor epoch comes from those below it."""
        n, hidden = len(scanned), bisect.bisect_left(scanned.bases, start)
        below_end = (scanned.bases[hidden] if hidden < n else scanned.end_offset) if hidden else None
        if below_end is not None and below_end >= start:
            floor = scanned.epochs[hidden - 1]
        else:
            floor = next((e for o, e in self._snapshot_ids if o == start), 0)
        self.epochs = EpochCache(floor)
        self._bases, self._positions = scanned.bases[hidden:], scanned.positions[hidden:]
        self._sizes = scanned.sizes[hidden:]
        for base_offset, epoch in zip(self._bases, scanned.epochs[hidden:]):
            self.epochs.assign(epoch, base_offset)
        self.start_offset = start
        self.end_offset = scanned.end_offset if n > hidden else start

    def _index(self, base_offset: int, epoch: int, position: int, size: int) -> None:
        self._bases.append(base_offset)
        self._positions.append(position)
        self._sizes.append(size)
        self.epochs.assign(epoch, base_offset)

    def close(self) -> None:
        """Close every file (without flushing)."""
        for segment in self.segments:
            segment.close()

    def __enter__(self) -> FileLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ reading
    def last_epoch(self) -> int:
        return self.epochs.last_epoch()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Return (largest known epoch <= `epoch`, the offset where that epoch ends)."""
        return self.epochs.end_offset_for_epoch(epoch, self.start_offset, self.end_offset)

    def epoch_at(self, offset: int) -> int:
        """Return the epoch of the batch holding `offset` (the floor epoch below the log)."""
        return self.epochs.epoch_at(offset, self.start_offset)

    def read(self, offset: int, max_bytes: int) -> list:
        """Return whole batches from the one holding `offset`, at least one, about max_bytes in all."""
        n = len(self._bases)
        if not n:
            return []
        recent = self._recent
        if recent and recent[0].base_offset <= offset < self.end_offset:
            return self._read_recent(offset, max_bytes)
        i = max(bisect.bisect_right(self._bases, offset) - 1, 0)
        sizes, j, size = self._sizes, i + 1, self._sizes[i]
        while j < n and size + sizes[j] <= max_bytes:
            size += sizes[j]
            j += 1
        out: list = []
        while i < j:
            i = self._read_run(i, j, out)
        return out

    def _read_recent(self, offset: int, max_bytes: int) -> list:
        """Serve read() from the batches appended last (the same batches, and as many, as the files give)."""
        recent = self._recent
        k = len(recent) - 1
        while recent[k].base_offset > offset:
            k -= 1
        out, size = [recent[k]], len(recent[k].data)
        for batch in recent[k + 1:]:
            size += len(batch.data)
            if size > max_bytes:
                break
            out.append(batch)
        return out

    def _forget_recent(self) -> None:
        self._recent, self._recent_bytes = [], 0

    def _read_run(self, i: int, j: int, out: list) -> int:
        """Read batches i.. (before j) lying in one segment, in one pread; return the next index."""
        k = bisect.bisect_right(self._seg_bases, self._bases[i]) - 1
        if k + 1 < len(self.segments):
            j = min(j, bisect.bisect_left(self._bases, self._seg_bases[k + 1], i, j))
        sizes = self._sizes[i:j].tolist()
        end, total = i, 0
        for n in sizes:
            if total and total + n > _READ_CHUNK:
                break
            total += n
            end += 1
        data = self.segments[k].read(self._positions[i], total)
        make, pos = self.batch_type, 0
        for n in sizes[:end - i]:
            out.append(make(data[pos:pos + n]))
            pos += n
        return end

    # ------------------------------------------------------------ appending and truncating
    def append(self, batch) -> None:
        """Write `batch` at the end of the active segment (durable after flush())."""
        base_offset, epoch, data = batch.base_offset, batch.epoch, batch.data
        if base_offset != self.end_offset:
            raise ValueError(f"append at {base_offset} but the log ends at {self.end_offset}")
        if epoch < self.epochs.last_epoch():
            raise ValueError(f"append of epoch {epoch} after epoch {self.epochs.last_epoch()}")
        seg = self.segments[-1] if self.segments else None
        if seg is None or (seg.size and seg.size + len(data) > self.segment_bytes):
            seg = self._roll(base_offset)
        position = seg.size
        seg.write(data)
        self._dirty[seg.fd] = seg
        self._index(base_offset, epoch, position, len(data))
        self.end_offset = batch.next_offset
        self._remember(batch)

    def _remember(self, batch) -> None:
        """Keep `batch` for read() (see Rules); a batch of another type than batch_type is not kept, and ends
        what was kept, since read() must hand back batch_type."""
        if type(batch) is not self.batch_type:
            self._forget_recent()
            return
        recent = self._recent
        recent.append(batch)
        self._recent_bytes += len(batch.data)
        while len(recent) > 1 and (len(recent) > RECENT_BATCHES or self._recent_bytes > RECENT_BYTES):
            self._recent_bytes -= len(recent.pop(0).data)

    def _roll(self, base_offset: int) -> Segment:
        """Start a segment at `base_offset`, after making the current one durable: once a later directory
        fsync makes the new file durable, every segment before the last must be whole (recovery's rule)."""
        last = self.segments[-1] if self.segments else None
        if last is not None and (last.fd in self._dirty or last in self._inflight):
            last.sync()
            self._dirty.pop(last.fd, None)
        seg = Segment.create(self.directory, base_offset)
        self.segments.append(seg)
        self._seg_bases.append(base_offset)
        self._dir_dirty = True
        return seg

    def truncate_to(self, offset: int) -> int:
        """Remove every batch holding an offset >= `offset`; return the new end offset."""
        if offset >= self.end_offset or not self._bases:
            self.epochs.truncate(self.end_offset)  # an epoch may start at the end of an empty log
            return self.end_offset
        i = max(bisect.bisect_right(self._bases, offset) - 1, 0)
        k = bisect.bisect_right(self._seg_bases, self._bases[i]) - 1
        new_end = self._bases[i] if i else self.start_offset
        self._delete_segments(k + 1, len(self.segments))
        self._sync_dir()  # the later segments are gone for good before the cut one shrinks
        seg = self.segments[k]
        seg.truncate(self._positions[i])
        seg.sync()
        self._dirty.pop(seg.fd, None)
        del self._bases[i:], self._positions[i:], self._sizes[i:]
        self._forget_recent()
        self.end_offset = new_end
        self.epochs.truncate(new_end)
        return new_end

    def _delete_segments(self, lo: int, hi: int) -> None:
        if lo >= hi:
            return
        for seg in self.segments[lo:hi]:
            self._dirty.pop(seg.fd, None)
            seg.delete()
        del self.segments[lo:hi], self._seg_bases[lo:hi]
        self._dir_dirty = True

    def _sync_dir(self) -> None:
        if self._dir_dirty:
            self.fs.fsync_dir(self.directory)
            self._dir_dirty = False

    # ------------------------------------------------------------ snapshots
    def latest_snapshot(self):
        if not self._snapshot_ids:
            return None
        if self._latest is None:
            self._latest = self._load_snapshot(self._snapshot_ids[-1])
        return self._latest

    def earliest_snapshot_id(self):
        if not self._snapshot_ids:
            return None
        end_offset, epoch = self._snapshot_ids[0]
        return SnapshotId(end_offset, epoch)

    def snapshot_ids(self) -> list:
        """Return the ids of the snapshots kept, oldest first."""
        return [SnapshotId(end, epoch) for end, epoch in self._snapshot_ids]

    def _has_snapshot(self, sid: tuple[int, int]) -> bool:
        i = bisect.bisect_left(self._snapshot_ids, sid)
        return i < len(self._snapshot_ids) and self._snapshot_ids[i] == sid

    def snapshot_size(self, snapshot_id) -> int | None:
        """Return the size of a kept snapshot's file (None when it is not kept)."""
        sid = tuple(snapshot_id)
        if not self._has_snapshot(sid):
            return None
        try:
            return (self.directory / SnapshotId(*sid).file_name).stat().st_size
        except OSError:
            return None

    def snapshot_timestamp(self, snapshot_id) -> int | None:
        """Return a kept snapshot's LastContainedLogTimestamp, read from its header batch once (None when it
        is not kept or cannot be read: time retention then keeps it and every newer one)."""
        sid = tuple(snapshot_id)
        if not self._has_snapshot(sid):
            return None
        if sid not in self._timestamps:
            self._timestamps[sid] = last_contained_log_timestamp(self.directory / SnapshotId(*sid).file_name)
        return self._timestamps[sid]

    def size_in_bytes(self) -> int:
        """Return the bytes of every segment file, the parts below the log start included (Kafka's log.size)."""
        return sum(seg.size for seg in self.segments)

    def read_snapshot(self, snapshot_id):
        sid = tuple(snapshot_id)
        if self._snapshot_ids and sid == self._snapshot_ids[-1]:
            return self.latest_snapshot()
        i = bisect.bisect_left(self._snapshot_ids, sid)
        if i == len(self._snapshot_ids) or self._snapshot_ids[i] != sid:
            return None
        return self._load_snapshot(sid)

    def _load_snapshot(self, sid: tuple[int, int]):
        path = self.directory / SnapshotId(*sid).file_name
        try:
            data = path.read_bytes()
        except OSError as e:
            raise StorageError(f"cannot read snapshot {path}: {e.strerror}") from None
        return self.snapshot_type(sid[0], sid[1], data)

    def prepare_snapshot(self, snapshot) -> None:
        """Write a snapshot's `.prepared.tmp` file and fsync it, nothing else (safe in another thread)."""
        sid = (snapshot.snapshot_id.end_offset, snapshot.snapshot_id.epoch)
        write_temp(self._prepared_path(sid), snapshot.data, fs=self.fs)
        self._prepared.add(sid)

    def discard_prepared_snapshot(self, snapshot_id) -> None:
        """Remove the file prepare_snapshot() wrote for a snapshot that will not be stored."""
        sid = (snapshot_id.end_offset, snapshot_id.epoch)
        if sid in self._prepared:
            self._prepared.discard(sid)
            self.fs.remove(self._prepared_path(sid))

    def _prepared_path(self, sid: tuple[int, int]) -> Path:
        return self.directory / (SnapshotId(*sid).file_name + ".prepared.tmp")

    def store_snapshot(self, snapshot) -> None:
        """Write a snapshot file atomically (`.checkpoint.part`, fsync, rename, directory fsync); a prepared
        one is only renamed."""
        sid = (snapshot.snapshot_id.end_offset, snapshot.snapshot_id.epoch)
        path = self.directory / SnapshotId(*sid).file_name
        if sid in self._prepared:
            self._prepared.discard(sid)
            self._rename_prepared(self._prepared_path(sid), path)
        else:
            atomic_write(path, snapshot.data, fs=self.fs, tmp_suffix=".part")
        i = bisect.bisect_left(self._snapshot_ids, sid)
        if i == len(self._snapshot_ids) or self._snapshot_ids[i] != sid:
            self._snapshot_ids.insert(i, sid)
        if sid == self._snapshot_ids[-1]:
            self._latest = snapshot

    def _rename_prepared(self, part: Path, path: Path) -> None:
        try:
            self.fs.rename(part, path)
        except BaseException:
            self.fs.remove(part)
            raise
        self.fs.fsync_dir(self.directory)

    def install_snapshot(self, snapshot) -> None:
        """Replace the whole log by a snapshot fetched from the leader."""
        self.store_snapshot(snapshot)
        self._reset_to((snapshot.snapshot_id.end_offset, snapshot.snapshot_id.epoch))
        self._sync_dir()

    def _reset_to(self, sid: tuple[int, int]) -> None:
        self._delete_segments(0, len(self.segments))
        del self._bases[:], self._positions[:], self._sizes[:]
        self._forget_recent()
        self.epochs.reset(sid[1])
        self.start_offset = self.end_offset = sid[0]
        self._drop_snapshots(lambda old: old < sid)
        self._dir_dirty = True

    def delete_before(self, offset: int) -> None:
        """Forget batches below `offset` (a snapshot boundary), delete whole segments and older snapshots."""
        floor = self.epoch_at(offset - 1) if offset > self.start_offset else self.epochs.floor_epoch
        i = bisect.bisect_left(self._bases, offset)
        del self._bases[:i], self._positions[:i], self._sizes[:i]
        self._forget_recent()
        self.start_offset = offset
        self.epochs.delete_before(offset, floor)
        k = bisect.bisect_right(self._seg_bases, offset) - 1  # segments before k end at or below offset
        self._delete_segments(0, min(k, len(self.segments) - 1))
        self._drop_snapshots(lambda sid: sid[0] < offset)

    def delete_before_snapshot(self, snapshot_id) -> bool:
        """Kafka's deleteBeforeSnapshot: move the log start up to a kept snapshot no newer than the newest,
        deleting the segments wholly below it and the older snapshots; return whether anything was deleted."""
        sid = tuple(snapshot_id)
        if not self._has_snapshot(sid) or not self.start_offset < sid[0] <= self._snapshot_ids[-1][0]:
            return False
        segments, snapshots = len(self.segments), len(self._snapshot_ids)
        self.delete_before(sid[0])
        self._drop_snapshots(lambda old: old < sid)
        return len(self.segments) < segments or len(self._snapshot_ids) < snapshots

    def _drop_snapshots(self, doomed) -> None:
        for sid in [s for s in self._snapshot_ids if doomed(s)]:
            self.fs.remove(self.directory / SnapshotId(*sid).file_name)
            self._snapshot_ids.remove(sid)
            self._timestamps.pop(sid, None)
            self._dir_dirty = True
        if self._latest is not None and (not self._snapshot_ids or
                                         tuple(self._latest.snapshot_id) != self._snapshot_ids[-1]):
            self._latest = None

    # ------------------------------------------------------------ durability
    def begin_flush(self):
        """Return a job that makes everything appended so far durable and may run in another thread
        while appends go on (pwrite, then fsync there); pass it to end_flush() once it ran. A plain
        flush() meanwhile also syncs what the job holds, so it never acknowledges less."""
        dirty = list(self._dirty.values())
        self._dirty.clear()
        self._inflight.extend(dirty)
        self._sync_dir()
        self._write_epoch_checkpoint()

        def sync() -> None:
            for seg in dirty:
                try:
                    seg.sync()
                except OSError as e:  # a segment deleted meanwhile (closed fd) needs no sync
                    if e.errno != errno.EBADF:
                        raise
        sync.segments = dirty
        return sync

    def end_flush(self, job) -> None:
        """Forget the segments of a finished begin_flush() job."""
        for seg in job.segments:
            if seg in self._inflight:
                self._inflight.remove(seg)

    def _write_epoch_checkpoint(self) -> None:
        if self.epochs.version != self._checkpointed:
            write_leader_epoch_checkpoint(self.directory / LEADER_EPOCH_CHECKPOINT_NAME, self.epochs.entries(),
                                          fs=self.fs)
            self._checkpointed = self.epochs.version

    def flush(self) -> None:
        """Make everything appended so far durable."""
        for seg in {id(s): s for s in [*self._dirty.values(), *self._inflight] if s.fd >= 0}.values():
            seg.sync()
        self._dirty.clear()
        self._inflight.clear()
        self._sync_dir()
        self._write_epoch_checkpoint()
