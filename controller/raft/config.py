"""Raft configuration and the Ready batch the core hands to its driver.

Rules:
- Times are milliseconds; `tick()` advances the node's clock by `tick_ms`. Defaults are Kafka's
  (controller.quorum.election.timeout.ms=1000, fetch.timeout.ms=2000, election.backoff.max.ms=1000,
  request.timeout.ms=2000, fetch max wait 500 ms, max bytes 8 MiB, metadata.max.retention.bytes=100 MiB,
  metadata.max.retention.ms=7 days).
- A driver handles one Ready in this order: persist quorum_state, install/flush the log, send the
  messages, apply `load_snapshot` then `committed`, write a snapshot if asked, then `advance(ready)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraftsman.storage.protocol.uuids import ZERO_UUID


@dataclass(frozen=True)
class RaftConfig:
    node_id: int
    voters: tuple = ()
    cluster_id: str | None = "kraftsman-cluster"
    directory_id: bytes = ZERO_UUID
    kraft_version: int = 0
    endpoints: tuple = ()
    # controller.quorum.voters as ((voter id, ((listener, host, port),)), ...): what DescribeQuorum lists
    # for voters the voter set holds no endpoints of (a static quorum, kraft.version 0), as Kafka does
    static_endpoints: tuple = ()
    bootstrap_voters: tuple = ()
    tick_ms: int = 50
    election_timeout_ms: int = 1000
    election_backoff_max_ms: int = 1000
    retry_backoff_ms: int = 100
    fetch_timeout_ms: int = 2000
    request_timeout_ms: int = 2000
    fetch_max_wait_ms: int = 500
    # how long a fetch parked at the log end may wait for records once all it lacks is a newer high
    # watermark (0: answered at once, as Kafka does); the driver releases it sooner via release_high_watermark()
    high_watermark_linger_ms: int = 0
    max_fetch_bytes: int = 8 * 1024 * 1024
    snapshot_chunk_bytes: int = 1 << 20
    snapshot_every_records: int = 0
    # metadata.max.retention.bytes and metadata.max.retention.ms (retention.py; negative: no limit)
    retention_max_bytes: int = 100 * 1024 * 1024
    retention_millis: int = 7 * 24 * 60 * 60 * 1000
    pre_vote: bool = True
    check_quorum: bool = True


@dataclass
class SnapshotRequest:
    """Ask the state machine to write a snapshot of everything below `snapshot_id.end_offset`."""

    snapshot_id: tuple
    kraft_version: int
    voters: object


@dataclass
class Ready:
    """What the driver must persist, send and apply before calling advance()."""

    quorum_state: object = None
    data_version: int = 0
    flush: bool = False
    flush_end: int = 0
    messages: list = field(default_factory=list)
    committed: list = field(default_factory=list)
    high_watermark: int = 0
    applied_to: int = 0
    load_snapshot: object = None
    snapshot_request: SnapshotRequest | None = None
    persisted: tuple | None = None  # the state quorum_state was written from (what advance() records)

    def empty(self) -> bool:
        return not (self.quorum_state is not None or self.flush or self.messages or self.committed
                    or self.load_snapshot is not None or self.snapshot_request is not None)
