"""Metadata (v0-v12) as a controller answers admin clients (KIP-919): the controllers are the brokers.

Rules:
- brokers = ctx.controllers, controller_id = ctx.leader_id, cluster_id = ctx.cluster_id: clients keep
  talking to the controllers.
- Topics: null (v1+) or empty at v0 = every topic, sorted by name; an empty list (v1+) = none. A missing
  name answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name), a missing id
  UNKNOWN_TOPIC_ID; topics are never auto-created.
- Partitions carry leader, leader_epoch, replicas, isr and offline replicas (registered-nowhere or fenced
  brokers, or a replica in a directory its broker no longer lists as online: KRaftMetadataCache's
  isReplicaInOfflineDir); a leaderless partition answers LEADER_NOT_AVAILABLE.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import ZERO_UUID

from .context import ControllerContext, ControllerResult
from .directories import is_online_dir
from .partitions import NO_LEADER
from .topics_names import INTERNAL_TOPICS, TopicNameError, validate_topic_name

_M = codec.message_class("MetadataResponse")


def _offline(ctx: ControllerContext, partition) -> list[int]:
    brokers = ctx.image.cluster.brokers
    return [r for r, directory in zip(partition.replicas, partition.directories) if r not in brokers
            or brokers[r].record.fenced or not is_online_dir(brokers[r].record.log_dirs, directory)]


def _topic(ctx: ControllerContext, topic):
    partitions = []
    for partition_id in sorted(topic.partitions):
        p = topic.partition(partition_id)
        partitions.append(_M.MetadataResponsePartition(
            error_code=E.LEADER_NOT_AVAILABLE if p.leader == NO_LEADER else 0, partition_index=partition_id,
            leader_id=p.leader, leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
            offline_replicas=_offline(ctx, p)))
    return _M.MetadataResponseTopic(error_code=0, name=topic.name, topic_id=topic.topic_id,
                                    is_internal=topic.name in INTERNAL_TOPICS, partitions=partitions)


def _missing_name(name: str):
    try:
        validate_topic_name(name)
        code = E.UNKNOWN_TOPIC_OR_PARTITION
    except TopicNameError:
        code = E.INVALID_TOPIC_EXCEPTION
    return _M.MetadataResponseTopic(error_code=code, name=name, topic_id=ZERO_UUID, partitions=[])


def _requested(ctx: ControllerContext, wanted) -> list:
    topics = ctx.image.topics
    out = []
    for item in wanted:
        name = item.name
        topic_id = getattr(item, "topic_id", ZERO_UUID) if ctx.api_version >= 10 else ZERO_UUID
        if name is None and topic_id != ZERO_UUID:
            topic = topics.by_id.get(bytes(topic_id))
            out.append(_topic(ctx, topic) if topic is not None else _M.MetadataResponseTopic(
                error_code=E.UNKNOWN_TOPIC_ID, name=None, topic_id=topic_id, partitions=[]))
        elif name is None:
            out.append(_M.MetadataResponseTopic(error_code=E.INVALID_REQUEST, name=None, partitions=[]))
        else:
            topic = topics.by_name.get(name)
            out.append(_topic(ctx, topic) if topic is not None else _missing_name(name))
    return out


def metadata(ctx: ControllerContext, request) -> ControllerResult:
    """Handle Metadata (v0-v12): controllers as brokers, all or the requested topics."""
    wanted = request.topics
    if wanted is None or (ctx.api_version == 0 and not wanted):
        by_name = ctx.image.topics.by_name
        topics = [_topic(ctx, by_name[name]) for name in sorted(by_name)]
    else:
        topics = _requested(ctx, wanted)
    brokers = [_M.MetadataResponseBroker(node_id=c.node_id, host=c.host, port=c.port, rack=c.rack)
               for c in ctx.controllers]
    response = _M(throttle_time_ms=0, brokers=brokers, cluster_id=ctx.cluster_id or None,
                  controller_id=ctx.leader_id, topics=topics)
    return ControllerResult([], response)
