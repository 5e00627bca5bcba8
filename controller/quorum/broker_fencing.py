"""Records for a broker's fencing, unfencing, controlled shutdown and unregistration, with the partition hooks.

Rules:
- Record choice follows Kafka 3.9 by metadata.version (feature_levels): BrokerRegistrationChangeRecord
  v0 (fenced 1 / -1) from 3.3-IV2, else Fence/UnfenceBrokerRecord v0; InControlledShutdown=1 as a v1
  change record from 3.3-IV3 (nothing below). The real logs show exactly these versions.
- Order is Kafka's: fenced -> partition changes then the fence record (handleBrokerFenced); unfenced ->
  the unfence record then elections (handleBrokerUnfenced); controlled shutdown -> the change record then
  partition changes; unregistered -> partition changes then UnregisterBrokerRecord.
- Each hook sees an image where the broker's new state is already applied (staging.advance).
- Directories reported offline in a heartbeat (from 3.7-IV2): the partition changes, then a
  BrokerRegistrationChangeRecord v2 whose LogDirs are the registered dirs the heartbeat did not list (Kafka
  writes it even when that list is empty, which replay reads as "no change").
- The hooks live in replication_control.py (on_broker_fenced, on_broker_unfenced, on_controlled_shutdown,
  on_broker_unregistered, on_directories_offline).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from . import feature_levels as fc
from . import replication_control
from .context import ControllerContext
from .staging import advance

FENCE, UNFENCE, IN_CONTROLLED_SHUTDOWN = 1, -1, 1


def _change(broker_id: int, epoch: int, version: int, **fields) -> ApiMessageAndVersion:
    cls = codec.message_class("BrokerRegistrationChangeRecord")
    return ApiMessageAndVersion(cls(broker_id=broker_id, broker_epoch=epoch, **fields), version)


def fence_record(ctx: ControllerContext, broker_id: int, epoch: int) -> ApiMessageAndVersion:
    """Return the record that fences `broker_id` at `epoch`, as Kafka 3.9 writes it."""
    if fc.metadata_version(ctx.image) >= fc.BROKER_REGISTRATION_CHANGE_LEVEL:
        return _change(broker_id, epoch, 0, fenced=FENCE)
    return ApiMessageAndVersion(codec.message_class("FenceBrokerRecord")(id=broker_id, epoch=epoch), 0)


def unfence_record(ctx: ControllerContext, broker_id: int, epoch: int) -> ApiMessageAndVersion:
    """Return the record that unfences `broker_id` at `epoch`, as Kafka 3.9 writes it."""
    if fc.metadata_version(ctx.image) >= fc.BROKER_REGISTRATION_CHANGE_LEVEL:
        return _change(broker_id, epoch, 0, fenced=UNFENCE)
    return ApiMessageAndVersion(codec.message_class("UnfenceBrokerRecord")(id=broker_id, epoch=epoch), 0)


def _epoch(ctx: ControllerContext, broker_id: int) -> int:
    return ctx.image.cluster.brokers[broker_id].record.broker_epoch


def fence(ctx: ControllerContext, broker_id: int) -> list:
    """Return Kafka's handleBrokerFenced records: ISR/leader changes, then the fence record."""
    record = fence_record(ctx, broker_id, _epoch(ctx, broker_id))
    return list(replication_control.on_broker_fenced(advance(ctx, [record]), broker_id)) + [record]


def unfence(ctx: ControllerContext, broker_id: int) -> list:
    """Return Kafka's handleBrokerUnfenced records: the unfence record, then elections."""
    record = unfence_record(ctx, broker_id, _epoch(ctx, broker_id))
    return [record] + list(replication_control.on_broker_unfenced(advance(ctx, [record]), broker_id))


def controlled_shutdown(ctx: ControllerContext, broker_id: int) -> list:
    """Return Kafka's handleBrokerInControlledShutdown records: the state change, then moved leaderships."""
    registration = ctx.image.cluster.brokers[broker_id].record
    records = []
    if fc.metadata_version(ctx.image) >= fc.IN_CONTROLLED_SHUTDOWN_LEVEL and not registration.in_controlled_shutdown:
        records.append(_change(broker_id, registration.broker_epoch, 1, in_controlled_shutdown=IN_CONTROLLED_SHUTDOWN))
    return records + list(replication_control.on_controlled_shutdown(advance(ctx, records), broker_id))


def unregister(ctx: ControllerContext, broker_id: int) -> list:
    """Return Kafka's handleBrokerUnregistered records: the fencing partition changes, then the removal."""
    registration = ctx.image.cluster.brokers[broker_id].record
    staged = ctx if registration.fenced else advance(ctx, [fence_record(ctx, broker_id, registration.broker_epoch)])
    cls = codec.message_class("UnregisterBrokerRecord")
    removal = ApiMessageAndVersion(cls(broker_id=broker_id, broker_epoch=registration.broker_epoch), 0)
    return list(replication_control.on_broker_unregistered(staged, broker_id)) + [removal]


def directories_offline(ctx: ControllerContext, broker_id: int, offline_log_dirs) -> list:
    """Return Kafka's handleDirectoriesOffline records for a heartbeat's OfflineLogDirs (none when nothing new)."""
    registration = ctx.image.cluster.brokers[broker_id].record
    offline = replication_control.newly_offline(registration.log_dirs, offline_log_dirs)
    if not offline:
        return []
    online = [d for d in replication_control.sorted_dirs(registration.log_dirs) if d not in offline]
    record = _change(broker_id, registration.broker_epoch, 2, log_dirs=online)
    return list(replication_control.on_directories_offline(ctx, broker_id, offline)) + [record]


def has_leaderships(image, broker_id: int) -> bool:
    """Tell whether `broker_id` leads any partition (Kafka's brokersToIsrs.hasLeaderships), among the partitions the
    image's partition index says it leads."""
    by_id = image.topics.by_id
    for topic_id, entry in image.topics.index.entries.items():
        topic = by_id.get(topic_id)
        for partition_id in entry.leaders.get(broker_id, ()) if topic is not None else ():
            registration = topic.partition(partition_id)
            if registration is not None and registration.leader == broker_id:
                return True
    return False
