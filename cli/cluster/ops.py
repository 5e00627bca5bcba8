"""The RPC side of kafka-cluster: describe the cluster and unregister brokers through the blocking client.

Rules:
- Every operation runs under one absolute deadline (time.monotonic()) and goes where
  controller.client.active_controller routes it: with --bootstrap-controller to the active controller
  (DescribeCluster's ControllerId), with --bootstrap-server to the first address that answers.
- cluster-id and list-endpoints: DescribeCluster (v1 with EndpointType 2 for controllers, else the
  highest both sides speak), falling back to Metadata for servers without DescribeCluster.
- Brokers with fenced ones (include_fenced): DescribeCluster v2's IncludeFencedBrokers where the server speaks v2
  (ClusterInfo.fenced_included tells); each broker's IsFenced, and kraftsman's tags (start time, broker epoch,
  incarnation, controlled shutdown) where a kraftsman controller sends them (a broker epoch of -1: none sent).
- unregister: UnregisterBroker v0; NOT_CONTROLLER (41) is a refusal: the active controller is looked for
  (the server's DescribeCluster, the next address, rounds with a backoff) until the deadline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.active_controller import Refused, on_active_controller
from kraftsman.storage.protocol.errors import Errors

BROKERS, CONTROLLERS = 1, 2


@dataclass
class Node:
    """One endpoint of the cluster as DescribeCluster or Metadata lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False
    start_time_ms: int = -1        # kraftsman's DescribeCluster tag; -1 when unknown (Kafka, Metadata, controllers)
    epoch: int | None = None       # kraftsman's tags: None when the server sends none (Kafka)
    incarnation_id: str | None = None
    in_controlled_shutdown: bool | None = None


@dataclass
class ClusterInfo:
    """What a describe returns."""

    cluster_id: str | None
    controller_id: int
    nodes: list[Node] = field(default_factory=list)
    source: str = "DescribeCluster"
    fenced_included: bool = False          # the answer lists fenced brokers too (DescribeCluster v2)


class ServerError(Exception):
    """The server answered with an error code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def describe(addresses, config: sc.ClientConfig, deadline: float, endpoint_type: int,
             include_fenced: bool = False) -> ClusterInfo:
    """Describe the cluster's brokers (1; fenced ones too when asked and served) or controllers (2): from the
    active controller with bootstrap controllers, else from the first address that answers."""
    return on_active_controller(addresses, config, deadline,
                                lambda conn: _describe_on(conn, deadline, endpoint_type, include_fenced),
                                api="DescribeCluster")


def _describe_on(conn: sc.SyncConnection, deadline: float, endpoint_type: int,
                 include_fenced: bool = False) -> ClusterInfo:
    from kraftsman.storage.protocol import codec

    try:
        version = conn.pick_version("DescribeCluster")
    except sc.UnsupportedVersion:
        version = -1
    if version < (1 if endpoint_type == CONTROLLERS else 0):     # EndpointType needs v1 (KIP-919)
        return _metadata_on(conn, deadline)
    fenced_included = include_fenced and version >= 2
    body = codec.message_class("DescribeClusterRequest")(endpoint_type=endpoint_type if version >= 1 else 1,
                                                         include_fenced_brokers=fenced_included)
    response = conn.request("DescribeCluster", version, body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, response.error_message or f"error {response.error_code}")
    return ClusterInfo(response.cluster_id, response.controller_id, [_node(b) for b in response.brokers],
                       fenced_included=fenced_included)


def _node(b) -> Node:
    """Return a DescribeCluster broker as a Node (kraftsman's tags only when its broker epoch says they came)."""
    from kraftsman.storage.protocol.uuids import uuid_str

    tagged = b.broker_epoch >= 0
    return Node(b.broker_id, b.host, b.port, b.rack, bool(b.is_fenced), b.start_time_ms,
                b.broker_epoch if tagged else None, uuid_str(b.incarnation_id) if tagged else None,
                bool(b.in_controlled_shutdown) if tagged else None)


def _metadata_on(conn: sc.SyncConnection, deadline: float) -> ClusterInfo:
    """Ask Metadata for no topics (v1+; v0 cannot, and lists them all) for the cluster id and nodes."""
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    response = conn.request("Metadata", version, codec.message_class("MetadataRequest")(topics=[]), deadline)
    nodes = [Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
    cluster_id = getattr(response, "cluster_id", None)
    return ClusterInfo(cluster_id, getattr(response, "controller_id", -1), nodes, source="Metadata")


def serves(addresses, config: sc.ClientConfig, deadline: float, api: str) -> bool:
    """Tell whether the server a request of `api` would go to (the active controller, or the first server that
    answers) advertises the API in ApiVersions."""
    return on_active_controller(addresses, config, deadline, lambda conn: conn.supports(api, 0), api=api)


def unregister(addresses, config: sc.ClientConfig, deadline: float, broker_id: int) -> None:
    """Send UnregisterBroker to the active controller (active_controller's rules; NOT_CONTROLLER refuses).

    Raises ServerError for another error code, sc.UnsupportedVersion when the server lacks the API, and the
    error active_controller explains a timeout with (sc.NoActiveController when every answer was a refusal).
    """
    from kraftsman.storage.protocol import codec

    body = codec.message_class("UnregisterBrokerRequest")(broker_id=broker_id)

    def attempt(conn: sc.SyncConnection) -> None:
        response = conn.request("UnregisterBroker", conn.pick_version("UnregisterBroker"), body, deadline)
        if response.error_code == Errors.NOT_CONTROLLER:
            raise Refused(Errors.NOT_CONTROLLER.name)
        if response.error_code == Errors.UNSUPPORTED_VERSION:
            raise sc.UnsupportedVersion(response.error_message or "UnregisterBroker is not supported")
        if response.error_code:
            raise ServerError(response.error_code, response.error_message or "")

    on_active_controller(addresses, config, deadline, attempt, api="UnregisterBroker")
