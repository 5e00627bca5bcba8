"""The controller's metadata state machine: committed batches and snapshots in, images and snapshots out.

Rules:
- `committed` is the image of every committed data batch, in log order; control batches only move the
  offset. Images are built lazily: replays accumulate in one delta until someone reads the image.
- The active controller also keeps `pending`: the committed image plus every record it proposed that
  has not committed yet. Handlers read `pending`; it is reset to `committed` when leadership is lost
  and when the controller activates.
- On the active controller, a committed batch it proposed itself adopts the pending image noted
  when the batch was appended (images are immutable), so records are replayed once, not twice. Noting it
  applies nothing: the image is applied when read or settled, after the batch went out to the followers.
- Proposed partition records are replayed as their encoded values (kept lazily, as a follower keeps
  them), so the leader neither builds registrations it may never read nor holds more objects for the
  garbage collector to walk than a follower.
- A snapshot holds exactly the committed image at `offset` (image.write(release): the ZK migration state as the
  release writes it), in Kafka's .checkpoint layout (raft.snapshot.build_snapshot) so kafka-dump-log and the
  shell read it.
- `features_epoch` is the last offset of the committed batch (or loaded snapshot) that last replayed a
  feature record, as Kafka's FeaturesPublisher takes it for ApiVersions' FinalizedFeaturesEpoch; -1 before.
"""
from __future__ import annotations

import struct

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY, MetadataImage
from kraftsman.controller.image.producer_ids import Provenance
from kraftsman.controller.raft import snapshot as S
from kraftsman.storage.records.raft_values import Snapshot
from kraftsman.storage.records.snapshot_id import SnapshotId

_MAX_TIMESTAMP = struct.Struct(">q")  # a v2 batch's maxTimestamp sits at byte 35


class _Lazy:
    """An image plus a delta of records replayed on top of it, applied when the image is read. The image may
    itself be another _Lazy's, not applied yet (`on_top_of`)."""

    __slots__ = ("_image", "_delta", "_base", "provenance")

    def __init__(self, image: MetadataImage = EMPTY):
        self._image, self._delta, self._base, self.provenance = image, None, None, image.provenance

    @classmethod
    def on_top_of(cls, base: "_Lazy") -> "_Lazy":
        """Return a _Lazy that starts from `base`'s image, without applying base's delta until it is needed."""
        lazy = cls.__new__(cls)
        lazy._image, lazy._delta, lazy._base, lazy.provenance = None, None, base, base.provenance
        return lazy

    def _start_delta(self) -> MetadataDelta:
        if self._delta is None:
            self._delta = MetadataDelta(self._base_image())
        return self._delta

    def _base_image(self) -> MetadataImage:
        if self._base is not None:
            self._image, self._base = self._base.image, None
        return self._image

    def replay_values(self, values) -> None:
        self._start_delta().replay_values(values)

    def replay_records(self, records) -> None:
        replay = self._start_delta().replay
        for record in records:
            replay(record)

    def replay_encoded(self, records, values) -> None:
        replay = self._start_delta().replay_encoded
        for record, value in zip(records, values):
            replay(record, value)

    def feature_replays(self) -> int:
        """Return how many feature records the pending delta replayed."""
        return self._delta.feature_replays() if self._delta is not None else 0

    @property
    def image(self) -> MetadataImage:
        return self.settle()

    def settle(self) -> MetadataImage:
        """Apply what is pending (the base's delta, then this one's) and return the image."""
        if self._delta is not None:
            self._image, self._delta = self._delta.apply(self.provenance), None
        return self._base_image()


class MetadataState:
    """Committed and pending metadata images of one controller."""

    def __init__(self, release: str = "3.9"):
        self.release = release      # the Kafka release whose snapshots this state writes
        self._committed = _Lazy()
        self._pending: _Lazy | None = None
        self._marks: list[tuple[int, MetadataImage]] = []  # (batch end offset, pending image there)
        self.offset = 0             # every batch below this offset is applied
        self.last_epoch = 0
        self.last_timestamp = -1
        self.bytes_since_snapshot = 0
        self.features_epoch = -1    # last offset of the batch or snapshot that last changed the features

    # ------------------------------------------------------------ committed side
    @property
    def committed(self) -> MetadataImage:
        """Return the image of every committed record."""
        return self._committed.image

    def apply_batch(self, batch) -> None:
        """Apply one committed batch (a raft_values.Batch); adopt the pending image when it is ours."""
        if not batch.is_control:
            marks = self._marks
            while marks and marks[0][0] < batch.next_offset:
                marks.pop(0)
            if marks and marks[0][0] == batch.next_offset:
                adopted = marks.pop(0)[1].image
                if adopted.features is not self._committed.image.features:
                    self.features_epoch = batch.last_offset
                self._committed = _Lazy(adopted)
            else:
                before = self._committed.feature_replays()
                self._committed.replay_values(batch.values())
                if self._committed.feature_replays() != before:
                    self.features_epoch = batch.last_offset
        self.offset, self.last_epoch = batch.next_offset, batch.epoch
        self.bytes_since_snapshot += len(batch.data)
        self.last_timestamp = _MAX_TIMESTAMP.unpack_from(batch.data, 35)[0]
        self._committed.provenance = Provenance(batch.last_offset, batch.epoch, self.last_timestamp)

    def load_snapshot(self, snapshot) -> None:
        """Replace the state by a snapshot's records."""
        lazy = _Lazy()
        lazy.replay_values(S.read_values(snapshot.data))
        sid = snapshot.snapshot_id
        lazy.provenance = Provenance(sid.end_offset - 1, sid.epoch, -1)
        self._committed = lazy
        self.offset, self.last_epoch = sid.end_offset, sid.epoch
        self.features_epoch = sid.end_offset - 1
        self.bytes_since_snapshot = 0
        self._marks.clear()
        if self._pending is not None:
            self.reset_pending()

    def build_snapshot(self, snapshot_id: SnapshotId, voters, kraft_version: int, timestamp: int) -> Snapshot:
        """Write the committed image as a snapshot whose id must match what is applied."""
        return self.snapshot_job(snapshot_id, voters, kraft_version, timestamp)()

    def snapshot_job(self, snapshot_id: SnapshotId, voters, kraft_version: int, timestamp: int):
        """Capture the committed image now (its id must match what is applied); return a function that
        encodes it into a Snapshot and may run in another thread (images are immutable)."""
        if snapshot_id.end_offset != self.offset:
            raise ValueError(f"snapshot at {snapshot_id.end_offset} but applied up to {self.offset}")
        image = self.committed
        self.bytes_since_snapshot = 0

        def build() -> Snapshot:
            values = list(image.write_values(self.release))
            return S.build_snapshot(snapshot_id, values, voters, kraft_version, timestamp)
        return build

    # ------------------------------------------------------------ pending side (active controller)
    @property
    def pending(self) -> MetadataImage:
        """Return the committed image plus every proposed record (the committed one when not active)."""
        return self._pending.image if self._pending is not None else self.committed

    def reset_pending(self) -> None:
        """Start the pending image again from the committed one (activation)."""
        self._pending = _Lazy(self.committed)

    def drop_pending(self) -> None:
        """Forget proposed records (leadership lost)."""
        self._pending = None
        self._marks.clear()

    def mark_proposed(self, end_offset: int) -> None:
        """Note that the pending image holds exactly the log below `end_offset` (a batch just appended),
        so that committing that batch adopts the image instead of replaying its records again. The image
        is applied later (settle(), or when read), so that the batch can go out to the followers first."""
        if self._pending is not None:
            sealed = self._pending
            self._pending = _Lazy.on_top_of(sealed)
            self._marks.append((end_offset, sealed))

    def settle(self) -> None:
        """Apply the pending image now (the work mark_proposed() left for after the sends)."""
        if self._pending is not None:
            self._pending.settle()

    def propose(self, records, values=None) -> None:
        """Record proposed records on the pending image (values: their write_metadata_record() values)."""
        if self._pending is None:
            self.reset_pending()
        if values is None:
            self._pending.replay_records(records)
        else:
            self._pending.replay_encoded(records, values)
