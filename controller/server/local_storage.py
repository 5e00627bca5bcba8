"""What a controller reads from and writes to its metadata log directory besides the log itself.

Rules:
- A controller starts only on a directory `kafka-storage format` prepared: meta.properties v1 with
  this node's id; otherwise it refuses with Kafka's message (`No readable meta.properties files found.`).
- quorum-state lives in `__cluster_metadata-0/quorum-state` and is converted between the raft core's
  QuorumStateData message and storage's QuorumState (data versions 0 and 1, as Kafka writes them).
- The bootstrap records come from `bootstrap.checkpoint`; without one, the release's latest production
  metadata.version (3.9-IV0 for 3.9), as Kafka's BootstrapDirectory falls back to.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from kraftsman.controller.quorum.activation import records_for_empty_log
from kraftsman.storage.features import FEATURE_SETS
from kraftsman.storage.log import meta_properties as mp
from kraftsman.storage.log import quorum_state as qs
from kraftsman.storage.log.snapshot import BOOTSTRAP_FILE, read_snapshot_records
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .config import ControllerConfig

log = logging.getLogger("kraftsman.server")

QuorumStateData = codec.message_class("QuorumStateData")


class StorageStartError(RuntimeError):
    """The metadata log directory cannot be used (not formatted, another node's, unreadable)."""


@dataclass(frozen=True)
class NodeIdentity:
    """Who this node is, from meta.properties."""

    cluster_id: str
    node_id: int
    directory_id: bytes


def read_identity(config: ControllerConfig) -> NodeIdentity:
    """Read and check meta.properties of the metadata log directory."""
    directory = Path(config.metadata_log_dir)
    try:
        meta = mp.read(directory)
    except FileNotFoundError:
        raise StorageStartError("No readable meta.properties files found.") from None
    except (OSError, mp.MetaPropertiesError, ValueError) as e:
        raise StorageStartError(f"Unable to read {directory / 'meta.properties'}: {e}") from None
    if meta.version != mp.MetaPropertiesVersion.V1 or meta.node_id is None:
        raise StorageStartError(f"{directory} holds a version 0 meta.properties: format it with kafka-storage "
                                "format for KRaft")
    if meta.node_id != config.node_id:
        raise StorageStartError(f"Stored node id {meta.node_id} doesn't match previous node id {config.node_id} "
                                f"in {directory / 'meta.properties'}. If you moved your data, make sure your "
                                "configured node id matches. If you intend to create a new node, you should remove "
                                "all data in your data directories.")
    directory_id = bytes(meta.directory_id) if meta.directory_id is not None else ZERO_UUID
    return NodeIdentity(meta.cluster_id, meta.node_id, directory_id)


def bootstrap_records(config: ControllerConfig) -> list[ApiMessageAndVersion]:
    """Return the records of bootstrap.checkpoint (or the release's default metadata.version's)."""
    path = Path(config.metadata_log_dir) / BOOTSTRAP_FILE
    if path.exists():
        return [r for r in read_snapshot_records(path)]
    level = FEATURE_SETS[config.kafka_version].metadata.latest_production.level
    cls = codec.message_class("FeatureLevelRecord")
    return [ApiMessageAndVersion(cls(name="metadata.version", feature_level=level), 0)]


def bootstrap_transaction(config: ControllerConfig) -> list[ApiMessageAndVersion]:
    """Return what the controller appends on an empty log: bootstrap_records() with the release's activation
    records (in Begin/EndTransactionRecord from metadata.version 3.6-IV1)."""
    return records_for_empty_log(bootstrap_records(config), config.kafka_version, config.min_insync_replicas)


def close_log(store, *, flush: bool, node_id: int) -> None:
    """Flush the log (unless told not to: after a failure the disk may be what failed) and close its files."""
    if store is None:
        return
    try:
        if flush:
            store.flush()
    except OSError as e:
        log.error("node %d: final flush failed: %s", node_id, e)
    close = getattr(store, "close", None)
    if close is not None:
        close()


def read_quorum_state(partition_dir: Path):
    """Return the saved QuorumStateData (None when there is no quorum-state file)."""
    try:
        saved = qs.read(partition_dir / qs.QUORUM_STATE_NAME)
    except (OSError, ValueError) as e:
        raise StorageStartError(f"Unable to read {partition_dir / qs.QUORUM_STATE_NAME}: {e}") from None
    if saved is None:
        return None
    return QuorumStateData(leader_id=saved.leader_id, leader_epoch=saved.leader_epoch, voted_id=saved.voted_id,
                           voted_directory_id=Uuid(bytes(saved.voted_directory_id)))


def write_quorum_state(partition_dir: Path, data, data_version: int) -> None:
    """Write quorum-state crash-safely from a QuorumStateData message."""
    voters = None if data.current_voters is None else tuple(v.voter_id for v in data.current_voters)
    state = qs.QuorumState(leader_id=data.leader_id, leader_epoch=data.leader_epoch, voted_id=data.voted_id,
                           voted_directory_id=Uuid(bytes(data.voted_directory_id or ZERO_UUID)),
                           applied_offset=data.applied_offset if data_version == 0 else 0,
                           current_voters=(voters or ()) if data_version == 0 else (),
                           cluster_id=(data.cluster_id or "") if data_version == 0 else "",
                           data_version=data_version)
    qs.write(partition_dir / qs.QUORUM_STATE_NAME, state)
