"""What the Admin calls return: one dataclass per Kafka result type, named after Kafka's.

Rules:
- Plain data, no I/O, no printing: the calls (one module per area) build them, the tools render them.
- Names and fields follow Kafka's admin classes (Node, ClusterInfo, TopicDescription, TopicPartitionInfo, Config,
  ConfigEntry, PartitionReassignment, ...) in snake_case; -1 and null become None where Kafka's accessors
  return Optional or null. An area may keep result types of its own in its module; the shared ones live here.
"""
from __future__ import annotations

from dataclasses import dataclass, field


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

    def __str__(self) -> str:
        """Return Kafka's Node.toString: `host:port (id: N rack: R)`."""
        return f"{self.host}:{self.port} (id: {self.node_id} rack: {self.rack if self.rack is not None else 'null'})"


@dataclass
class ClusterInfo:
    """What describe_cluster returns (Kafka's DescribeClusterResult)."""

    cluster_id: str | None
    controller_id: int
    nodes: list[Node] = field(default_factory=list)
    source: str = "DescribeCluster"
    fenced_included: bool = False          # the answer lists fenced brokers too (DescribeCluster v2)


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


# ---------------------------------------------------------------- topics


@dataclass
class TopicListing:
    """One topic as list_topics returns it (Kafka's TopicListing)."""

    name: str
    topic_id: object               # storage.protocol.uuids.Uuid
    internal: bool = False


@dataclass
class TopicPartitionInfo:
    """One partition of a described topic (Kafka's TopicPartitionInfo): node ids; leader None when it has none;
    elr / last_known_elr None when the answer had none (Metadata, which Kafka prints as N/A)."""

    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]
    elr: list[int] | None = None
    last_known_elr: list[int] | None = None


@dataclass
class TopicDescription:
    """What describe_topics returns per topic (Kafka's TopicDescription); partitions in the answer's order."""

    name: str
    topic_id: object
    internal: bool
    partitions: list[TopicPartitionInfo] = field(default_factory=list)


@dataclass
class NewTopic:
    """A topic to create (Kafka's NewTopic): a count and factor (-1: the broker's default) or an assignment
    (partition -> replica ids, in partition order), and config overrides."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: dict[int, list[int]] | None = None
    configs: dict[str, str] = field(default_factory=dict)


@dataclass
class CreatedTopic:
    """One topic's outcome of create_topics: error None when created (or validated), with what the server says
    it made (CreateTopics v5+: id, partition count, replication factor; None before v5)."""

    name: str
    error: Exception | None = None            # a core.ServerError
    topic_id: object = None
    num_partitions: int | None = None
    replication_factor: int | None = None


@dataclass
class PartitionReassignment:
    """An ongoing reassignment of one partition (Kafka's PartitionReassignment)."""

    replicas: list[int]
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)


# ---------------------------------------------------------------- configs


@dataclass
class ConfigSynonym:
    """One synonym of a config entry (Kafka's ConfigEntry.ConfigSynonym), most specific first."""

    name: str
    value: str | None
    source: int


@dataclass
class ConfigEntry:
    """One config of a resource (Kafka's ConfigEntry). `source` is DescribeConfigs' ConfigSource (1 dynamic
    topic, 2 dynamic broker, 3 dynamic default broker, 4 static broker, 5 default, 6 dynamic broker logger,
    7 client metrics, 0 unknown); `type` the ConfigType (0 unknown); documentation None unless asked."""

    name: str
    value: str | None
    source: int = 0
    read_only: bool = False
    sensitive: bool = False
    synonyms: list[ConfigSynonym] = field(default_factory=list)
    type: int = 0
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        """Tell whether the value is the default (Kafka's ConfigEntry.isDefault: source DEFAULT_CONFIG)."""
        return self.source == 5


@dataclass
class Config:
    """A resource's configs as describe_configs returns them (Kafka's Config), or the error it got instead.
    `entries` are in the order Kafka's Config iterates them: a java.util.HashMap of the names, filled in the
    answer's order (kafka-topics' `Configs:` and kafka-configs print that order)."""

    resource_type: int
    resource_name: str
    entries: list[ConfigEntry] = field(default_factory=list)
    error: Exception | None = None            # a core.ServerError

    def get(self, name: str) -> ConfigEntry | None:
        """Return the entry named `name`, or None."""
        return next((e for e in self.entries if e.name == name), None)


# ---------------------------------------------------------------- api versions


@dataclass
class NodeApiVersions:
    """The API versions one node answered (api key -> (min, max)), or the error asking it gave."""

    node: Node
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    error: Exception | None = None
