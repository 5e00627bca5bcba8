"""The RPC side of kafka-cluster: describe the cluster and unregister brokers through the blocking client.

Rules:
- Every operation runs under one absolute deadline (time.monotonic()); it tries the bootstrap
  addresses in order and returns the first good answer; when none answers, the last error is raised.
- cluster-id and list-endpoints: DescribeCluster (v1 with EndpointType 2 for controllers, else the
  highest both sides speak), falling back to Metadata for servers without DescribeCluster.
- unregister: UnregisterBroker v0 to any address; NOT_CONTROLLER (41) or a connection failure moves
  on to the next address, cycling with a backoff (doubling from 50 ms up to 1 s) until the deadline;
  when no address accepts a connection during a whole cycle, the last connection error is raised at once.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from kraftsman.controller.server import sync_client as sc

NOT_CONTROLLER, BROKER_ID_NOT_REGISTERED, UNSUPPORTED_VERSION = 41, 102, 35
BROKERS, CONTROLLERS = 1, 2


@dataclass
class Node:
    """One endpoint of the cluster as DescribeCluster or Metadata lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False


@dataclass
class ClusterInfo:
    """What a describe returns."""

    cluster_id: str | None
    controller_id: int
    nodes: list[Node] = field(default_factory=list)
    source: str = "DescribeCluster"


class ServerError(Exception):
    """The server answered with an error code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _each_connection(addresses, config: sc.ClientConfig, deadline: float, backoff: bool = False):
    """Yield open connections to the addresses in turn until the deadline; with `backoff`, cycle again
    (sleeping 50 ms doubling to 1 s) as long as some address accepted a connection in the last cycle."""
    last: sc.ClientError | None = None
    delay, index, connected = 0.05, 0, False
    while time.monotonic() < deadline:
        host, port = addresses[index % len(addresses)]
        try:
            with sc.SyncConnection.open(host, port, config, deadline) as conn:
                connected = True
                yield conn
        except (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed) as e:
            last = e
        index += 1
        if index % len(addresses):
            continue
        if not (backoff and connected):
            break
        connected = False
        time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
        delay = min(delay * 2, 1.0)
    if last is not None:
        raise last
    raise sc.RequestTimeout("no server answered in time")


def describe(addresses, config: sc.ClientConfig, deadline: float, endpoint_type: int) -> ClusterInfo:
    """Describe the cluster's brokers (1) or controllers (2) from the first address that answers."""
    for conn in _each_connection(addresses, config, deadline):
        return _describe_on(conn, deadline, endpoint_type)
    raise sc.RequestTimeout("no server answered in time")  # pragma: no cover (the generator raises)


def _describe_on(conn: sc.SyncConnection, deadline: float, endpoint_type: int) -> ClusterInfo:
    from kraftsman.storage.protocol import codec

    try:
        version = conn.pick_version("DescribeCluster")
    except sc.UnsupportedVersion:
        version = -1
    if version < (1 if endpoint_type == CONTROLLERS else 0):     # EndpointType needs v1 (KIP-919)
        return _metadata_on(conn, deadline)
    body = codec.message_class("DescribeClusterRequest")(endpoint_type=endpoint_type if version >= 1 else 1)
    response = conn.request("DescribeCluster", version, body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, response.error_message or f"error {response.error_code}")
    nodes = [Node(b.broker_id, b.host, b.port, b.rack) for b in response.brokers]
    return ClusterInfo(response.cluster_id, response.controller_id, nodes)


def _metadata_on(conn: sc.SyncConnection, deadline: float) -> ClusterInfo:
    """Ask Metadata for no topics (v1+; v0 cannot, and lists them all) for the cluster id and nodes."""
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    response = conn.request("Metadata", version, codec.message_class("MetadataRequest")(topics=[]), deadline)
    nodes = [Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
    cluster_id = getattr(response, "cluster_id", None)
    return ClusterInfo(cluster_id, getattr(response, "controller_id", -1), nodes, source="Metadata")


def unregister(addresses, config: sc.ClientConfig, deadline: float, broker_id: int) -> None:
    """Send UnregisterBroker until a server that is (or reaches) the active controller answers.

    Raises ServerError for an error code other than NOT_CONTROLLER, sc.UnsupportedVersion when the
    server lacks the API, and the last connection error (or RequestTimeout) when the deadline passes.
    """
    from kraftsman.storage.protocol import codec

    body = codec.message_class("UnregisterBrokerRequest")(broker_id=broker_id)
    for conn in _each_connection(addresses, config, deadline, backoff=True):
        version = conn.pick_version("UnregisterBroker")
        response = conn.request("UnregisterBroker", version, body, deadline)
        if response.error_code == NOT_CONTROLLER:
            continue
        if response.error_code == UNSUPPORTED_VERSION:
            raise sc.UnsupportedVersion(response.error_message or "UnregisterBroker is not supported")
        if response.error_code:
            raise ServerError(response.error_code, response.error_message or "")
        return
    raise sc.RequestTimeout("no active controller answered in time")  # pragma: no cover
