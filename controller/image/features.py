"""Features: metadata.version, the other finalized feature levels and the ZooKeeper migration state.

Rules:
- `metadata.version` is a FeatureLevelRecord like the others but kept apart, as Kafka's FeaturesImage does.
- A level of 0 removes a feature; an image with no metadata.version shows 3.0-IV1 (MINIMUM_KRAFT_VERSION).
- Levels Kafka 3.9 does not know are kept and shown (never refused): newer clusters must still load.
- write(release) writes what that release's FeaturesImage.write does: metadata.version first, the other features
  in its HashMap's order;
  Kafka 3.9 then the ZkMigrationStateRecord (NONE when never set) from metadata.version 3.4-IV0 on; Kafka 4.x
  none (ZK_STATE_WRITERS).
"""
from __future__ import annotations

from kraftsman.controller.quorum.java_hash_order import JavaHashMap
from kraftsman.storage import metadata_versions as mvs
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

METADATA_VERSION = "metadata.version"
MINIMUM_KRAFT_LEVEL = 1
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}
MIGRATION_LEVEL = 8                    # 3.4-IV0: snapshots carry the ZK state (MetadataVersion.isMigrationSupported)
ZK_STATE_WRITERS = frozenset({"3.9"})  # the releases whose snapshots carry the ZK migration state


def metadata_version_name(level: int) -> str:
    """Return the IBP string of a metadata.version level ('3.9-IV0'); unknown levels as 'level N'."""
    try:
        return mvs.level(level).version
    except KeyError:
        return f"level {level}"


def hash_map_order(finalized: dict) -> list[str]:
    """Return the feature names as the java.util.HashMap of Kafka's FeaturesImage iterates them: a map grown from
    empty (FeaturesDelta.apply), names put in the order of the delta's own default-sized HashMap of changes (the
    real 4.1 and 4.2 snapshots: group, eligible.leader.replicas, transaction; group, streams, transaction,
    eligible.leader.replicas, share)."""
    changes = JavaHashMap()
    for name in sorted(finalized):
        changes.put(name, None)
    order = JavaHashMap(0)
    for name in changes.keys():
        order.put(name, None)
    return order.keys()


class FeaturesImage:
    """Hold metadata.version, the finalized levels of other features and the ZK migration state."""

    __slots__ = ("metadata_version", "finalized", "zk_migration_state")

    def __init__(self, metadata_version: int | None = None, finalized: dict | None = None,
                 zk_migration_state: int | None = None):
        self.metadata_version = metadata_version
        self.finalized = finalized if finalized is not None else {}
        self.zk_migration_state = zk_migration_state

    @property
    def metadata_version_level(self) -> int:
        """Return the metadata.version level, 1 (3.0-IV1) when none was set."""
        return MINIMUM_KRAFT_LEVEL if self.metadata_version is None else self.metadata_version

    @property
    def metadata_version_name(self) -> str:
        """Return metadata.version as Kafka prints it."""
        return metadata_version_name(self.metadata_version_level)

    @property
    def zk_migration_state_name(self) -> str:
        """Return the ZkMigrationState enum name (NONE when never set)."""
        state = self.zk_migration_state or 0
        return ZK_MIGRATION_STATES.get(state, f"UNKNOWN({state})")

    def is_empty(self) -> bool:
        """Tell whether nothing was ever set."""
        return self.metadata_version is None and not self.finalized and self.zk_migration_state is None

    def write(self, release: str | None = None):
        """Yield the records that rebuild this image: metadata.version first, as Kafka writes them; with a
        `release`, the ZK migration state as that release's snapshots carry it (None: as replayed)."""
        cls = codec.message_class("FeatureLevelRecord")
        if self.metadata_version is not None:
            yield ApiMessageAndVersion(cls(name=METADATA_VERSION, feature_level=self.metadata_version), 0)
        for name in hash_map_order(self.finalized):
            yield ApiMessageAndVersion(cls(name=name, feature_level=self.finalized[name]), 0)
        state = self.zk_migration_state
        if release is not None:
            writes = release in ZK_STATE_WRITERS and self.metadata_version_level >= MIGRATION_LEVEL
            state = (state or 0) if writes else None
        if state is not None:
            zk = codec.message_class("ZkMigrationStateRecord")
            yield ApiMessageAndVersion(zk(zk_migration_state=state), 0)


class FeaturesDelta:
    """Collect feature changes on top of a FeaturesImage."""

    def __init__(self, image: FeaturesImage):
        self.image = image
        self.metadata_version = image.metadata_version
        self.finalized = None
        self.zk_migration_state = image.zk_migration_state
        self.replays = 0  # records replayed here: apply() returns the same image while 0

    def replay_feature_level(self, message) -> None:
        """Apply a FeatureLevelRecord (level 0 removes the feature)."""
        self.replays += 1
        if message.name == METADATA_VERSION:
            self.metadata_version = message.feature_level
            return
        if self.finalized is None:
            self.finalized = dict(self.image.finalized)
        if message.feature_level == 0:
            self.finalized.pop(message.name, None)
        else:
            self.finalized[message.name] = message.feature_level

    def replay_zk_migration_state(self, message) -> None:
        """Apply a ZkMigrationStateRecord."""
        self.replays += 1
        self.zk_migration_state = message.zk_migration_state

    def apply(self) -> FeaturesImage:
        """Return the resulting FeaturesImage (the same object when no record was replayed)."""
        if not self.replays:
            return self.image
        finalized = self.image.finalized if self.finalized is None else self.finalized
        return FeaturesImage(self.metadata_version, finalized, self.zk_migration_state)
