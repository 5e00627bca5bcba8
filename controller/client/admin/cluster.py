"""Kafka's cluster calls: describe_cluster (DescribeCluster, or Metadata where it is missing), unregister_broker
(UnregisterBroker v0), and the API versions of every node (kafka-broker-api-versions).

Rules:
- DescribeCluster: v1 with EndpointType 2 for controllers, else the highest both sides speak; Metadata (no
  topics) for servers without DescribeCluster. Brokers with the fenced ones (include_fenced): v2's
  IncludeFencedBrokers where the server speaks v2 (ClusterInfo.fenced_included tells), each broker's IsFenced,
  and kraftsman's tags (start time, broker epoch, incarnation, controlled shutdown) where a kraftsman controller
  sends them (a broker epoch of -1: none sent). Both go where active_controller routes them (the first address
  that answers with bootstrap servers; the active controller with bootstrap controllers), as before issue 30.
- api_versions_of_every_node: Metadata (every topic, as BrokerApiVersionsCommand asks) from a bootstrap address,
  then each node it lists is asked ApiVersions on a connection of its own (SyncConnection negotiates it); a node
  that cannot be asked gets its error instead, in the Metadata answer's order.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from ..active_controller import Refused
from .core import BROKERS, CONTROLLERS, ServerError
from .results import ClusterInfo, Node, NodeApiVersions


class ClusterCalls:
    """DescribeCluster, UnregisterBroker and ApiVersions of every node (a part of Admin)."""

    def describe_cluster(self, endpoint_type: int = BROKERS, include_fenced: bool = False) -> ClusterInfo:
        """Describe the cluster's brokers (BROKERS; the fenced ones too when asked and served) or controllers
        (CONTROLLERS)."""
        return self._on_active_controller(
            lambda conn: _describe_cluster_on(conn, self.deadline, endpoint_type, include_fenced), "DescribeCluster")

    def serves(self, api: str) -> bool:
        """Tell whether the server a request of `api` would go to advertises it in ApiVersions."""
        return self._on_active_controller(lambda conn: conn.supports(api, 0), api)

    def unregister_broker(self, broker_id: int) -> None:
        """Remove a broker's registration (UnregisterBroker)."""
        from kraftsman.storage.protocol import codec

        body = codec.message_class("UnregisterBrokerRequest")(broker_id=broker_id)

        def attempt(conn: sc.SyncConnection) -> None:
            response = conn.request("UnregisterBroker", conn.pick_version("UnregisterBroker"), body, self.deadline)
            if response.error_code == Errors.NOT_CONTROLLER:
                raise Refused(Errors.NOT_CONTROLLER.name)
            if response.error_code == Errors.UNSUPPORTED_VERSION:
                raise sc.UnsupportedVersion(response.error_message or "UnregisterBroker is not supported")
            if response.error_code:
                raise ServerError(response.error_code, response.error_message or "")

        self._on_active_controller(attempt, "UnregisterBroker")

    def api_versions_of_every_node(self) -> list[NodeApiVersions]:
        """Return each node's ApiVersions answer (or its error), the nodes as Metadata lists them."""
        nodes = self.any_node(lambda conn: _metadata_nodes_on(conn, self.deadline), "Metadata")
        found = []
        for node in nodes:
            try:
                conn = self.connection((node.host, node.port))
            except sc.ClientError as e:
                found.append(NodeApiVersions(node, error=e))
            else:
                found.append(NodeApiVersions(node, dict(conn.api_versions or {})))
        return found


# ---------------------------------------------------------------- DescribeCluster, Metadata


def _describe_cluster_on(conn: sc.SyncConnection, deadline: float, endpoint_type: int,
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



def _metadata_nodes_on(conn: sc.SyncConnection, deadline: float) -> list[Node]:
    """Ask Metadata for every topic (null topics; v0 an empty list) and return the nodes it lists."""
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    body = codec.message_class("MetadataRequest")(topics=[] if version == 0 else None)
    response = conn.request("Metadata", version, body, deadline)
    return [Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
