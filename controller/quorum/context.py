"""The contract between the quorum controller logic (pure: request -> records + response) and its driver.

Rules:
- A handler is `handler(ctx: ControllerContext, request) -> ControllerResult`: no I/O, no clock, no
  randomness of its own (ctx.now_ms, ctx.rng); it reads ctx.image, which already holds every record
  proposed so far (committed or not), and never changes it.
- A handler never raises for bad input: it answers with Kafka's error codes in the response. An
  exception escaping a handler is a bug; the driver answers UNKNOWN_SERVER_ERROR and logs it.
- Records of one result are appended as one Raft batch: they commit together or not at all.
  The response is sent once the result's records are committed (at once for an empty result on a
  read-only API; after the current log end commits for an empty result on a write API).
- The response is an instance of the generated `<Api>Response` class; the driver encodes it at the
  request's version (ctx.api_version).
- Broker epochs are log offsets: the RegisterBrokerRecord of a result lands at ctx.next_offset plus
  its index in `records`.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from kraftsman.controller.image.image import EMPTY, MetadataImage


@dataclass(frozen=True)
class QuorumConfig:
    """Controller settings from the server .properties (Kafka's names in the comments)."""

    session_timeout_ms: int = 9000            # broker.session.timeout.ms
    heartbeat_interval_ms: int = 2000         # broker.heartbeat.interval.ms
    default_replication_factor: int = 1       # default.replication.factor
    num_partitions: int = 1                   # num.partitions
    min_insync_replicas: int = 1              # min.insync.replicas (cluster default)
    unclean_leader_election: bool = False     # unclean.leader.election.enable
    unclean_leader_election_interval_ms: int = 300_000  # unclean.leader.election.interval.ms
    auto_leader_rebalance: bool = True        # auto.leader.rebalance.enable
    leader_imbalance_check_interval_ms: int = 300_000  # leader.imbalance.check.interval.seconds
    max_partitions_per_request: int = 10_000  # Kafka's ReplicationControlManager limit
    delete_topic_enable: bool = True          # delete.topic.enable
    delegation_token_secret_key: str | None = None          # delegation.token.secret.key (None: tokens disabled)
    delegation_token_max_lifetime_ms: int = 604_800_000     # delegation.token.max.lifetime.ms
    delegation_token_expiry_time_ms: int = 86_400_000       # delegation.token.expiry.time.ms
    delegation_token_expiry_check_interval_ms: int = 3_600_000  # delegation.token.expiry.check.interval.ms
    kafka_version: str = "3.9"                # the Kafka release this controller speaks for (KRAFTSMAN_KAFKA_VERSION)
    unstable_feature_versions: bool = False   # unstable.feature.versions.enable
    # the file's keys, for DescribeConfigs
    server_properties: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class ControllerNode:
    """One controller (voter) as DescribeCluster and Metadata present it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class ControllerContext:
    """What a handler may know: the latest image, the clock, its request's version and the quorum."""

    image: MetadataImage = EMPTY
    now_ms: int = 0
    api_version: int = 0
    next_offset: int = 0
    cluster_id: str = ""
    node_id: int = -1
    leader_id: int = -1
    controllers: tuple[ControllerNode, ...] = ()
    config: QuorumConfig = field(default_factory=QuorumConfig)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    principal: str = "User:ANONYMOUS"
    listener: str = "CONTROLLER"
    kraft_version: int = 0  # the Raft layer's kraft.version (KRaftVersionRecord), not a FeatureLevelRecord
    # the Raft layer's kraft.version upgrade (level, validate_only) -> why not, or None; None: not offered
    kraft_upgrade: Callable[[int, bool], str | None] | None = None


class ControllerResult(NamedTuple):
    """Records to append (one atomic batch) and the response to send once they commit."""

    records: list
    response: object
