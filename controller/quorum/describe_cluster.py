"""DescribeCluster (v0-v2) as a controller answers it (Kafka's computeDescribeClusterResponse), read-only.

Rules:
- cluster_control registers it (DescribeCluster reads the cluster's registrations).
- Kafka 3.9 checks metadata.version first: below 3.7-IV0 -> UNSUPPORTED_VERSION with its message.
- EndpointType 2 (controllers): the quorum's voters (ctx.controllers); ControllerId is the active
  controller (ctx.leader_id), or -1 when it is not in the list (Kafka's rule).
- EndpointType 1 (brokers, kraftsman's addition: Kafka's controller answers MISMATCHED_ENDPOINT_TYPE):
  the unfenced brokers, as a Kafka broker lists them, at the endpoint named like the request's listener
  (else their first endpoint); ControllerId is a random unfenced broker (ctx.rng), as a broker answers.
  v2 (Kafka 4.0, KIP-1073): IncludeFencedBrokers lists the fenced brokers too, and IsFenced tells them apart, as
  a Kafka 4.x broker answers; controllers are never fenced. IsFenced is not sent below v2 (not ignorable).
- Other types: UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST at v0) with Kafka's message.
- kraftsman's tagged StartTimeMs (tag 10000) carries a broker's start time from the metadata (the
  registration's kraftsman tag, image/start_time.py), -1 when unknown; controllers get -1. Tags 10001-10003
  carry the rest of the registration a reader needs without the log (kafka-cluster describe-brokers, wait,
  health): BrokerEpoch, IncarnationId and InControlledShutdown; a broker epoch of -1 (the default, a Kafka server)
  means none of them was sent. Real frames decode unchanged.
- ClusterAuthorizedOperations stays -2147483648 unless asked; without an authorizer every cluster
  operation is allowed: CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
  ALTER, DESCRIBE (AclOperation codes 5, 7, 10, 11, 12, 4, 8).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E

from . import feature_levels as fc
from .context import ControllerContext, ControllerResult

BROKER, CONTROLLER = 1, 2
_TYPE_NAMES = {BROKER: "BROKER", CONTROLLER: "CONTROLLER"}
CLUSTER_OPERATIONS = (4, 5, 7, 8, 10, 11, 12)
NOT_REQUESTED = -2147483648


def authorized_operations() -> int:
    """Return the 32-bit field of the cluster operations allowed without an authorizer."""
    return sum(1 << op for op in CLUSTER_OPERATIONS)


def _endpoint(registration, listener: str):
    endpoints = registration.record.end_points
    return next((e for e in endpoints if e.name == listener), endpoints[0] if endpoints else None)


def _broker_nodes(ctx: ControllerContext, cls, include_fenced: bool) -> list:
    nodes = []
    for broker_id in sorted(ctx.image.cluster.brokers):
        registration = ctx.image.cluster.brokers[broker_id]
        record, endpoint = registration.record, _endpoint(registration, ctx.listener)
        if (include_fenced or not record.fenced) and endpoint is not None:
            node = cls.DescribeClusterBroker(broker_id=broker_id, host=endpoint.host, port=endpoint.port,
                                             rack=record.rack, start_time_ms=registration.start_time_ms,
                                             broker_epoch=record.broker_epoch, incarnation_id=record.incarnation_id,
                                             in_controlled_shutdown=bool(record.in_controlled_shutdown))
            if ctx.api_version >= 2:
                node.is_fenced = bool(record.fenced)
            nodes.append(node)
    return nodes


def _controller_nodes(ctx: ControllerContext, cls) -> list:
    return [cls.DescribeClusterBroker(broker_id=c.node_id, host=c.host, port=c.port, rack=c.rack)
            for c in sorted(ctx.controllers, key=lambda c: c.node_id)]


def _error(cls, code: int, message: str) -> ControllerResult:
    return ControllerResult([], cls(throttle_time_ms=0, error_code=code, error_message=message))


def describe_cluster(ctx: ControllerContext, request) -> ControllerResult:
    """Handle DescribeCluster (v0-v2)."""
    cls = codec.message_class("DescribeClusterResponse")
    if fc.metadata_version(ctx.image) < fc.CONTROLLER_REGISTRATION_LEVEL:
        return _error(cls, E.UNSUPPORTED_VERSION, "Direct-to-controller communication is not supported with the "
                                                  "current MetadataVersion.")
    wanted = request.endpoint_type if ctx.api_version >= 1 else BROKER
    if wanted not in _TYPE_NAMES:
        code = E.INVALID_REQUEST if ctx.api_version == 0 else E.UNSUPPORTED_ENDPOINT_TYPE
        return _error(cls, code, f"Unsupported endpoint type {wanted}")
    if wanted == CONTROLLER:
        nodes = _controller_nodes(ctx, cls)
        controller_id = ctx.leader_id
    else:
        nodes = _broker_nodes(ctx, cls, ctx.api_version >= 2 and request.include_fenced_brokers)
        alive = [n.broker_id for n in nodes if not n.is_fenced]
        controller_id = ctx.rng.choice(alive) if alive else -1
    if controller_id not in {n.broker_id for n in nodes}:
        controller_id = -1
    operations = authorized_operations() if request.include_cluster_authorized_operations else NOT_REQUESTED
    return ControllerResult([], cls(throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=wanted,
                                    cluster_id=ctx.cluster_id, controller_id=controller_id, brokers=nodes,
                                    cluster_authorized_operations=operations))

