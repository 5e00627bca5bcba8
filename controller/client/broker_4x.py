"""What a simulated broker does as a Kafka 4.x broker (SimulatedBroker(kafka_version="4.0".."4.2")).

Rules:
- It asks the controller's ApiVersions (v4) first and speaks the highest version both sides know of
  BrokerRegistration (<= 4), BrokerHeartbeat (<= 1) and Fetch (4.0: <= 17; 4.1+: <= 18); a controller that offers
  none of a version range a 4.x broker needs (Fetch 4+, BrokerRegistration, BrokerHeartbeat) is refused with
  UnsupportedController, as a 4.x broker cannot start against it.
- It registers the features its release supports (metadata.version 7..latest production, every production
  feature above 0), in the Java HashMap order Kafka's BrokerRegistrationRequest carries them.
- It reads what it fetches as a 4.x broker's metadata loader does: every FeatureLevelRecord of metadata.version,
  from log batches and from the snapshots it downloads (FetchSnapshot) when the log start moved past it; a level
  its release does not know (below 3.3-IV3, or past its latest) is fatal with Kafka's loader text.
- Pure helpers and one async snapshot download; the broker loop stays in broker_sim.
"""
from __future__ import annotations

from kraftsman.controller.raft.records import split_batches
from kraftsman.storage.features import FEATURE_SETS, FeatureError
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import METADATA_TOPIC_ID
from kraftsman.storage.records.metadata import read_metadata_record

WANTED = {"BrokerRegistration": (0, 4), "BrokerHeartbeat": (0, 1), "Fetch": (4, 18), "FetchSnapshot": (0, 1)}
FETCH_MAX = {"4.0": 17, "4.1": 18, "4.2": 18}
UNSUPPORTED_METADATA_VERSION = (
    "Unsupported metadata version - if you are currently upgrading your cluster, please ensure the metadata version "
    "is set to {floor} (or higher) before updating the software version. The metadata version can be updated via "
    "the `kafka-features` command-line tool.")


class UnsupportedController(Exception):
    """The controller does not speak a version range a Kafka 4.x broker needs."""


class FatalMetadata(Exception):
    """What makes a 4.x broker's metadata loader fail: the message is Kafka's."""


def registration_features(release: str) -> list[tuple[str, int, int]]:
    """Return (name, min, max) of every feature a `release` broker registers, in Kafka's HashMap order."""
    from kraftsman.controller.quorum.java_hash_order import JavaHashMap

    ranges = FEATURE_SETS[release].supported_ranges()
    order = JavaHashMap()
    for name in ["metadata.version", *sorted(n for n in ranges if n != "metadata.version")]:
        order.put(name, ranges[name])
    return [(name, lo, hi) for name, (lo, hi) in order.items()]


def negotiate(release: str, response) -> dict[str, int]:
    """Return the version of each API the broker will use, from the controller's ApiVersionsResponse."""
    offered = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    keys = {"BrokerRegistration": 62, "BrokerHeartbeat": 63, "Fetch": 1, "FetchSnapshot": 59}
    chosen = {}
    for name, (lo, hi) in WANTED.items():
        hi = min(hi, FETCH_MAX[release]) if name == "Fetch" else hi
        theirs = offered.get(keys[name])
        if theirs is None or theirs[1] < lo or theirs[0] > hi:
            raise UnsupportedController(f"the controller offers {name} {theirs or 'not at all'}; a Kafka {release} "
                                        f"broker speaks {lo}-{hi}")
        chosen[name] = min(hi, theirs[1])
    return chosen


class MetadataWatch:
    """The metadata.version a 4.x broker's loader has replayed, checked as it replays it."""

    def __init__(self, release: str):
        self.table = FEATURE_SETS[release].metadata
        self.metadata_version: int | None = None

    def replay_values(self, values) -> None:
        """Replay encoded metadata records; raise FatalMetadata for a metadata.version the release cannot load."""
        for value in values:
            record = read_metadata_record(value)
            message = record.message
            if message.api_key == 12 and message.name == "metadata.version":
                self._set(message.feature_level)

    def replay_batches(self, data: bytes) -> None:
        """Replay the data batches of fetched bytes or of a snapshot (control batches carry no metadata)."""
        for batch in split_batches(data):
            if not batch.is_control:
                self.replay_values(batch.values())

    def _set(self, level: int) -> None:
        try:
            self.table.by_level(level)
        except FeatureError as e:
            floor = self.table.minimum
            raise FatalMetadata(f"{UNSUPPORTED_METADATA_VERSION.format(floor=floor)} Caused by: {e}") from None
        self.metadata_version = level


async def download_snapshot(conn, cluster_id: str, snapshot_id, version: int, broker_id: int, epoch: int) -> bytes:
    """Return a snapshot's bytes, fetched with FetchSnapshot from the leader `conn` reaches."""
    cls = codec.message_class("FetchSnapshotRequest")
    data, position = bytearray(), 0
    while True:
        part = cls.PartitionSnapshot(partition=0, current_leader_epoch=epoch, position=position,
                                     snapshot_id=cls.SnapshotId(end_offset=snapshot_id.end_offset,
                                                                epoch=snapshot_id.epoch))
        body = cls(cluster_id=cluster_id, replica_id=broker_id, max_bytes=1 << 20,
                   topics=[cls.TopicSnapshot(name="__cluster_metadata", partitions=[part])])
        response = await conn.request("FetchSnapshot", version, body, timeout_ms=5000)
        answer = response.topics[0].partitions[0] if response.topics else None
        if answer is None or response.error_code or answer.error_code:
            raise ConnectionError(f"FetchSnapshot refused ({response.error_code or getattr(answer, 'error_code', -1)})")
        chunk = answer.unaligned_records or b""
        data += chunk
        position = len(data)
        if position >= answer.size:
            return bytes(data)
        if not chunk:
            raise ConnectionError(f"FetchSnapshot sent an empty chunk at {position} of {answer.size}")


__all__ = ["METADATA_TOPIC_ID", "FatalMetadata", "MetadataWatch", "UnsupportedController", "download_snapshot",
           "negotiate", "registration_features"]
