"""Kafka's Admin calls (the client side of the admin APIs), their result types and errors, over the blocking client.

Rules:
- One Admin per run (or per check): the addresses, client settings (sync_client.ClientConfig) and one absolute
  deadline (time.monotonic()) every call runs under. Each call goes where controller.client.active_controller
  routes it: with bootstrap controllers to the active controller, with bootstrap servers to the first address
  that answers; a refusal (NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER) sends it on to the active one.
- A call is one method named after Kafka's Admin method (describe_cluster for describeCluster, ...) returning
  one result type (a dataclass named after Kafka's: ClusterInfo, QuorumInfo, FeatureMetadata) or None. A new
  call is one method plus its result type.
- Errors: a server error code is ServerError (code, the server's message or ""); an API or version the server
  lacks is sync_client.UnsupportedVersion; connection failures are sync_client's (Unreachable, RequestTimeout,
  NotKafka, AuthenticationFailed). Nothing here prints or chooses words or exit codes: the tools do
  (cli/common/admin.py's admin_call).
- DescribeCluster: v1 with EndpointType 2 for controllers, else the highest both sides speak; Metadata (no
  topics) for servers without DescribeCluster. UnregisterBroker v0. DescribeQuorum for `__cluster_metadata`-0:
  a controller that does not lead answers NOT_LEADER_OR_FOLLOWER, and the leader its Nodes (v2) name is asked
  next (kraftsman lists them, Kafka 3.9 does not); -1 timestamps become None (Kafka's OptionalLong.empty()).
- ApiVersions (describe_features) at the highest version both sides speak; features come from v3 (tagged fields).
  UpdateFeatures v1 carries UpgradeType and ValidateOnly, v0 only AllowDowngrade, so a v0-only server gets safe
  downgrades and plain upgrades, and validate-only or unsafe requests fail as unsupported. Its answer maps every
  requested feature to None (done) or its error message, as Kafka's Admin client does: a top-level error fails
  every feature, a feature missing from the results fails, and a null message becomes the Kafka exception's
  default text for the error code.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from kraftsman.storage.protocol.errors import Errors, default_message, error_name

from . import sync_client as sc
from .active_controller import Refused, on_active_controller

BROKERS, CONTROLLERS = 1, 2                                     # DescribeCluster's EndpointType
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3             # UpdateFeatures' UpgradeType
METADATA_TOPIC = "__cluster_metadata"


class ServerError(Exception):
    """The server answered with an error code (Kafka's ApiException): `code`, and its message ("" when none)."""

    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code, self.message = code, message

    @property
    def name(self) -> str:
        """Return the error's name in Kafka's Errors table (UNKNOWN_SERVER_ERROR for -1)."""
        return error_name(self.code)


# ---------------------------------------------------------------- result types


@dataclass
class Node:
    """One endpoint of the cluster as DescribeCluster or Metadata lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False
    start_time_ms: int = -1        # kraftsman's DescribeCluster tag; -1 when unknown (Kafka, Metadata, controllers)


@dataclass
class ClusterInfo:
    """What describe_cluster returns (Kafka's DescribeClusterResult)."""

    cluster_id: str | None
    controller_id: int
    nodes: list[Node] = field(default_factory=list)
    source: str = "DescribeCluster"


@dataclass
class ReplicaState:
    """One voter or observer as the quorum leader reports it."""

    replica_id: int
    directory_id: object          # storage.protocol.uuids.Uuid (ZERO_UUID when unknown)
    log_end_offset: int
    last_fetch_timestamp: int | None = None
    last_caught_up_timestamp: int | None = None


@dataclass
class QuorumInfo:
    """What describe_metadata_quorum returns for `__cluster_metadata`-0 (Kafka's QuorumInfo)."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[ReplicaState] = field(default_factory=list)
    observers: list[ReplicaState] = field(default_factory=list)
    nodes: dict[int, list[tuple[str, str, int]]] = field(default_factory=dict)   # id -> (listener, host, port)


@dataclass
class FeatureMetadata:
    """What describe_features returns (Kafka's FeatureMetadata)."""

    supported: dict[str, tuple[int, int]] = field(default_factory=dict)   # name -> (min, max)
    finalized: dict[str, int] = field(default_factory=dict)               # name -> max version level
    epoch: int | None = None                                              # None: FinalizedFeaturesEpoch -1


# ---------------------------------------------------------------- the calls


class Admin:
    """Kafka's Admin calls to the servers at `addresses`, each before `deadline` (see Rules)."""

    def __init__(self, addresses, config: sc.ClientConfig, deadline: float):
        self.addresses, self.config, self.deadline = list(addresses), config, deadline

    def _on_active_controller(self, attempt, api: str):
        return on_active_controller(self.addresses, self.config, self.deadline, attempt, api=api)

    def describe_cluster(self, endpoint_type: int = BROKERS) -> ClusterInfo:
        """Describe the cluster's brokers (BROKERS) or controllers (CONTROLLERS)."""
        return self._on_active_controller(lambda conn: _describe_cluster_on(conn, self.deadline, endpoint_type),
                                          "DescribeCluster")

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

    def describe_metadata_quorum(self) -> QuorumInfo:
        """Return the quorum as its leader describes it (DescribeQuorum)."""
        return self._on_active_controller(lambda conn: _describe_quorum_on(conn, self.deadline), "DescribeQuorum")

    def add_raft_voter(self, voter_id: int, voter_directory_id, listeners: list[tuple[str, str, int]]) -> None:
        """Add a voter with its (listener, host, port) endpoints to the quorum (AddRaftVoter, KIP-853)."""
        self._change_voters("AddRaftVoter", voter_id=voter_id, voter_directory_id=voter_directory_id,
                            listeners=listeners)

    def remove_raft_voter(self, voter_id: int, voter_directory_id) -> None:
        """Remove a voter from the quorum (RemoveRaftVoter, KIP-853)."""
        self._change_voters("RemoveRaftVoter", voter_id=voter_id, voter_directory_id=voter_directory_id)

    def _change_voters(self, api: str, **fields) -> None:
        """Send AddRaftVoter or RemoveRaftVoter until the quorum leader answers. A controller that answers
        NOT_LEADER_OR_FOLLOWER is asked where the leader is (DescribeQuorum's Nodes) and the leader is asked next:
        it need not be among the bootstrap addresses (an added controller may lead)."""
        from kraftsman.storage.protocol import codec

        cls = codec.message_class(api + "Request")
        if "listeners" in fields:
            fields["listeners"] = [cls.Listener(name=n, host=h, port=p) for n, h, p in fields["listeners"]]

        def attempt(conn: sc.SyncConnection) -> None:
            if not _change_voters_on(conn, api, cls, fields, self.deadline):
                raise Refused(Errors.NOT_LEADER_OR_FOLLOWER.name, _leader_address(conn, self.deadline))

        self._on_active_controller(attempt, api)

    def describe_features(self, node_id: int | None = None) -> FeatureMetadata:
        """Return the supported and finalized features of the server reached (ApiVersions), or of node `node_id`
        (Kafka 4.2's DescribeFeaturesOptions.nodeId): a controller with bootstrap controllers, else a broker, found
        in DescribeCluster's list. A node the cluster does not list times out, as Kafka's Admin waits for it."""
        if node_id is None:
            return self._on_active_controller(lambda conn: _describe_features_on(conn, self.deadline), "ApiVersions")
        kind = CONTROLLERS if self.config.bootstrap_controllers else BROKERS
        node = next((n for n in self.describe_cluster(kind).nodes if n.node_id == node_id), None)
        if node is None:
            raise sc.RequestTimeout("Timed out waiting for a node assignment. Call: describeFeatures")
        with sc.SyncConnection.open(node.host, node.port, self.config, self.deadline) as conn:
            return _describe_features_on(conn, self.deadline)

    def update_features(self, updates: dict[str, tuple[int, int]], validate_only: bool) -> dict[str, str | None]:
        """Send UpdateFeatures ({name: (level, upgrade type)}); return {name: None or its error message}."""
        def attempt(conn: sc.SyncConnection) -> dict[str, str | None]:
            response = _update_features_on(conn, updates, validate_only, self.deadline)
            if response.error_code == Errors.NOT_CONTROLLER:
                raise Refused(Errors.NOT_CONTROLLER.name)
            return feature_outcomes(updates, response, conn.pick_version("UpdateFeatures"))

        return self._on_active_controller(attempt, "UpdateFeatures")


# ---------------------------------------------------------------- DescribeCluster, Metadata


def _describe_cluster_on(conn: sc.SyncConnection, deadline: float, endpoint_type: int) -> ClusterInfo:
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
    nodes = [Node(b.broker_id, b.host, b.port, b.rack, start_time_ms=b.start_time_ms) for b in response.brokers]
    return ClusterInfo(response.cluster_id, response.controller_id, nodes)


def _metadata_on(conn: sc.SyncConnection, deadline: float) -> ClusterInfo:
    """Ask Metadata for no topics (v1+; v0 cannot, and lists them all) for the cluster id and nodes."""
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("Metadata")
    response = conn.request("Metadata", version, codec.message_class("MetadataRequest")(topics=[]), deadline)
    nodes = [Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
    cluster_id = getattr(response, "cluster_id", None)
    return ClusterInfo(cluster_id, getattr(response, "controller_id", -1), nodes, source="Metadata")


# ---------------------------------------------------------------- DescribeQuorum, AddRaftVoter, RemoveRaftVoter


def _describe_quorum_on(conn: sc.SyncConnection, deadline: float) -> QuorumInfo:
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("DescribeQuorum")
    cls = codec.message_class("DescribeQuorumRequest")
    body = cls(topics=[cls.TopicData(topic_name=METADATA_TOPIC, partitions=[cls.PartitionData(partition_index=0)])])
    response = conn.request("DescribeQuorum", version, body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, getattr(response, "error_message", None) or "")
    if len(response.topics) != 1 or len(response.topics[0].partitions) != 1:
        count = len(response.topics)
        raise ServerError(-1, f"DescribeMetadataQuorum received {count} topics when 1 was expected")
    part = response.topics[0].partitions[0]
    nodes = {n.node_id: [(x.name, x.host, x.port) for x in n.listeners] for n in getattr(response, "nodes", [])}
    if part.error_code == Errors.NOT_LEADER_OR_FOLLOWER:
        leader = leader_endpoint(nodes, part.leader_id, (conn.host, conn.port))
        raise Refused(Errors.NOT_LEADER_OR_FOLLOWER.name, leader)
    if part.error_code:
        raise ServerError(part.error_code, getattr(part, "error_message", None) or "")
    return QuorumInfo(part.leader_id, part.leader_epoch, part.high_watermark,
                      [_replica(r) for r in part.current_voters], [_replica(r) for r in part.observers], nodes)


def leader_endpoint(nodes: dict, leader_id: int, connected: tuple[str, int]) -> tuple[str, int] | None:
    """Return the leader's (host, port) on the listener this client came in through (the listener of some
    node that serves `connected`), or None when it cannot tell: a controller with a PLAINTEXT and a
    SASL_SSL listener must be reached on the one the client's security settings are for. Kafka 3.9's
    refusal lists no Nodes (and LeaderId 0, the schema's default): it names nobody."""
    leader = nodes.get(leader_id) or []
    names = {name for listeners in nodes.values() for name, host, port in listeners if (host, port) == connected}
    if not names:
        names = {name for listeners in nodes.values() for name, _, port in listeners if port == connected[1]}
    for name, host, port in leader:
        if name in names:
            return host, port
    return None


def _replica(r) -> ReplicaState:
    from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

    directory = getattr(r, "replica_directory_id", None)
    fetch, caught_up = getattr(r, "last_fetch_timestamp", -1), getattr(r, "last_caught_up_timestamp", -1)
    return ReplicaState(r.replica_id, ZERO_UUID if directory is None else Uuid(bytes(directory)), r.log_end_offset,
                        None if fetch == -1 else fetch, None if caught_up == -1 else caught_up)


def _change_voters_on(conn: sc.SyncConnection, api: str, cls, fields: dict, deadline: float) -> bool:
    """Send the voter change on `conn`: True when done, False on NOT_LEADER_OR_FOLLOWER, else ServerError."""
    version = conn.pick_version(api)
    if api == "AddRaftVoter":
        fields["timeout_ms"] = max(1, int((deadline - time.monotonic()) * 1000))
    response = conn.request(api, version, cls(cluster_id=None, **fields), deadline)
    if response.error_code == Errors.NOT_LEADER_OR_FOLLOWER:
        return False
    if response.error_code:
        raise ServerError(response.error_code, response.error_message or "")
    return True


def _leader_address(conn: sc.SyncConnection, deadline: float) -> tuple[str, int] | None:
    """Return the leader's endpoint as the controller on `conn` knows it (DescribeQuorum v2 Nodes), or None."""
    try:
        _describe_quorum_on(conn, deadline)
    except Refused as e:
        return e.leader
    except (ServerError, sc.UnsupportedVersion):
        return None
    return None


# ---------------------------------------------------------------- ApiVersions (features), UpdateFeatures


def error_message(code: int, message: str | None) -> str:
    """Return the message Kafka's exception for `code` carries: the server's, else the default one."""
    if message is not None:
        return message
    return default_message(code) or f"error code {code}"


def _describe_features_on(conn: sc.SyncConnection, deadline: float) -> FeatureMetadata:
    from kraftsman.storage.protocol import codec

    body = codec.message_class("ApiVersionsRequest")(client_software_name=sc.SOFTWARE_NAME,
                                                     client_software_version=sc.SOFTWARE_VERSION)
    response = conn.request("ApiVersions", conn.pick_version("ApiVersions"), body, deadline)
    if response.error_code:
        raise ServerError(response.error_code, error_message(response.error_code, None))
    epoch = getattr(response, "finalized_features_epoch", -1)                   # the features are v3+
    supported = {f.name: (f.min_version, f.max_version) for f in getattr(response, "supported_features", [])}
    finalized = {f.name: f.max_version_level for f in getattr(response, "finalized_features", [])}
    return FeatureMetadata(supported, finalized, None if epoch < 0 else epoch)


def _update_features_on(conn: sc.SyncConnection, updates: dict[str, tuple[int, int]], validate_only: bool,
                        deadline: float):
    from kraftsman.storage.protocol import codec

    version = conn.pick_version("UpdateFeatures")
    cls = codec.message_class("UpdateFeaturesRequest")
    if version == 0 and (validate_only or any(kind == UNSAFE_DOWNGRADE for _, kind in updates.values())):
        raise sc.UnsupportedVersion(f"{conn.name} speaks UpdateFeatures v0 only, which has no "
                                    f"{'validate-only mode' if validate_only else 'unsafe downgrade'}")
    timeout_ms = max(1, int((deadline - time.monotonic()) * 1000))
    if version == 0:
        keys = [cls.FeatureUpdateKey(feature=name, max_version_level=level, allow_downgrade=kind != UPGRADE)
                for name, (level, kind) in sorted(updates.items())]
        body = cls(timeout_ms=timeout_ms, feature_updates=keys)
    else:
        keys = [cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)
                for name, (level, kind) in sorted(updates.items())]
        body = cls(timeout_ms=timeout_ms, feature_updates=keys, validate_only=validate_only)
    return conn.request("UpdateFeatures", version, body, deadline)


def feature_outcomes(updates: dict[str, tuple[int, int]], response, version: int = 1) -> dict[str, str | None]:
    """Map each requested feature to None or its error message, as KafkaAdminClient.updateFeatures does (v2 answers
    carry no per-feature results: no top-level error means every feature passed)."""
    if response.error_code:
        message = error_message(response.error_code, response.error_message)
        return {name: message for name in updates}
    if version >= 2:
        return {name: None for name in updates}
    results = {r.feature: r for r in response.results if r.feature in updates}
    found = {}
    for name in updates:
        result = results.get(name)
        if result is None:
            found[name] = f"The controller response did not contain a result for feature {name}"
        else:
            found[name] = error_message(result.error_code, result.error_message) if result.error_code else None
    return found
