"""Follow a running quorum's metadata log as a read-only Raft observer (the live metadata shell's client).

Rules:
- Read-only by construction: `_request` sends only READ_ONLY_APIS (ApiVersions, DescribeQuorum, DescribeCluster,
  Fetch, FetchSnapshot; SaslHandshake/SaslAuthenticate come from sync_client when SASL is configured) and
  raises ObserverError for anything else, before a byte leaves.
- It leaves no trace on the quorum: it fetches as a non-replica, replica id -1 (ReplicaId below Fetch v15,
  ReplicaState.ReplicaId from v15, and FetchSnapshot's ReplicaId), which Kafka's leader (LeaderState.
  updateReplicaState, 3.9 and 4.x) and kraftsman's serve without keeping any state: no observer row in
  DescribeQuorum, no vote, no say in the high watermark. (A broker's metadata fetcher sends its own id instead,
  and is listed as an observer.)
- A non-replica's parked fetch is not owed a high watermark the leader moved before it arrived (the leader keeps
  nothing about it): while fetched records wait for the high watermark, a fetch waits at most PENDING_WAIT_MS.
- Only committed records reach the image: fetched batches wait in `pending` until the high watermark
  passes them (a diverging epoch truncates them); a SnapshotId in a Fetch answer (the log start moved)
  makes the observer download that snapshot with FetchSnapshot and start again from it.
- Committed batches feed `builder`: an ImageBuilder (the whole image) by default, or anything fed the same way
  (image.summary.SummaryBuilder: kafka-cluster's reads, no PartitionRegistration). An observer kept across
  catch_up calls fetches only what was committed since the last one.
- While catching up (committed records left to fetch), the next Fetch is sent before a fetched answer's records
  are replayed, so the leader reads while the observer replays; the next round takes its answer (one in flight).
- Snapshots are loaded batch by batch as their chunks arrive; a transfer that fails midway leaves the builder
  reset and the next fetch starting from offset 0.
- Blocking sockets (sync_client), no asyncio: one follower thread calls `poll()`; readers take
  `view`, an immutable View swapped in one assignment.
- Finding the leader, as a Kafka 3.9 observer does: Fetch from any controller; one that does not lead answers
  NOT_LEADER_OR_FOLLOWER with the leader's id and epoch and (v17) its endpoint on our listener, followed next.
  With bootstrap addresses, DescribeQuorum is asked first (a kraftsman standby names the leader and lists
  Nodes; Kafka 3.9's refusal leaves LeaderId and LeaderEpoch at the schema's 0 and lists no Nodes: a leader
  in epoch 0 is no leader). A leader named without an endpoint (Fetch before v17) is looked up in
  DescribeCluster v1 (EndpointType 2).
  A refusal naming no leader (-1: an election) sends the next poll to the next address after a backoff.
- Leader changes, timeouts and unreachable controllers end one poll with a one-line event (`on_event`),
  a short backoff and the next address; before any controller ever answered, a full round of failures
  raises ObserverUnavailable, and `catch_up` raises it at its deadline, saying so when every answer was a
  refusal that named no reachable leader.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from kraftsman.controller.image.batch_loader import ImageBuilder
from kraftsman.controller.image.image import EMPTY, MetadataImage
from kraftsman.controller.image.loader import bulk_loading
from kraftsman.controller.image.producer_ids import Provenance
from kraftsman.controller.raft.records import InvalidRecords, split_batches
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors, error_name
from kraftsman.storage.protocol.uuids import METADATA_TOPIC_ID
from kraftsman.storage.records.batch import RecordBatch

from . import sync_client as sc
from .snapshot_loader import SnapshotLoader

READ_ONLY_APIS = frozenset({"ApiVersions", "DescribeQuorum", "DescribeCluster", "Fetch", "FetchSnapshot",
                            "SaslHandshake", "SaslAuthenticate"})
TOPIC = "__cluster_metadata"
LEADER_ERRORS = (Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH)
MAX_BYTES = 8 << 20
NON_REPLICA = -1                # Kafka's replica id of a fetch from a non-replica (a consumer)
PENDING_WAIT_MS = 50
VERSIONS = {"Fetch": 17, "FetchSnapshot": 1, "DescribeQuorum": 2, "DescribeCluster": 1}
CONTROLLER_ENDPOINTS = 2


class ObserverError(Exception):
    """Signal that the observer cannot give what was asked; the message is one line."""


class ObserverUnavailable(ObserverError):
    """Signal that no controller answered in time."""


class _Retry(Exception):
    """Signal that this poll failed: try again (maybe elsewhere) after a backoff."""


@dataclass(frozen=True)
class View:
    """Describe where the observer stands: the newest committed image and the quorum as last seen."""

    image: MetadataImage = EMPTY
    leader_id: int = -1
    leader_epoch: int = 0
    high_watermark: int = -1
    applied: int = 0            # every committed batch below this offset is in `image`
    stopped: bool = False       # time travel: the stop offset is reached, the image no longer moves


def parse_controllers(text: str) -> dict[int, tuple[str, int]]:
    """Parse `id@host:port,...` (controller.quorum.voters syntax); raise ValueError (one line)."""
    out = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        node, sep, address = part.partition("@")
        try:
            if not sep or not node.strip().isdigit():
                raise ValueError
            out[int(node)] = sc.parse_address(address)
        except ValueError:
            raise ValueError(f"Invalid controller.quorum.voters entry '{part}': expected id@host:port") from None
    if not out:
        raise ValueError("No controller given: expected id@host:port,...")
    return out


class Observer:
    """Follow the metadata log of a quorum from its leader, read-only."""

    def __init__(self, config: sc.ClientConfig, *, voters: dict | None = None, bootstrap=None,
                 stop_offset: int | None = None, fetch_max_wait_ms: int = 500,
                 fetch_timeout_ms: int = 2000, backoff_ms: int = 100, on_event=None, on_fault=None, builder=None):
        self.config, self.stop_offset = config, stop_offset
        self.endpoints = dict(voters or {})              # node id -> (host, port)
        self.addresses = list(bootstrap or self.endpoints.values())
        self.learn_endpoints = not voters
        self.fetch_max_wait_ms, self.fetch_timeout_ms, self.backoff_ms = fetch_max_wait_ms, fetch_timeout_ms, backoff_ms
        self.on_event = on_event or (lambda message: None)
        self.builder = builder if builder is not None else ImageBuilder(on_fault=on_fault)
        self.pending: list = []
        self.fetch_offset = self.fetch_epoch = self.applied = self.applied_epoch = 0
        self.leader_id, self.epoch, self.high_watermark = -1, 0, -1
        self.view = View()
        self.conn: sc.SyncConnection | None = None
        self.contacted, self.failures, self.last_error = False, 0, ""
        self.fetched, self.refused_by = False, None     # a Fetch was served; the last leader-less refusal
        self.served = 0                                  # Fetch answers taken (catch_up's target is a fresh one)
        self.ahead = None                                # (fetch offset, sent) of a Fetch sent before its round
        self._next = 0

    # ------------------------------------------------------------ driving
    def catch_up(self, deadline: float) -> View:
        """Poll until every record committed at the first leader answer of this call is in the image (or time
        travel stopped); called again, it fetches only what was committed since."""
        target, started, served = None, time.monotonic(), self.served
        while not self.view.stopped:
            if target is None and self.served > served and self.leader_id >= 0 and self.high_watermark >= 0:
                target = self.high_watermark
            if target is not None and self.applied >= target:
                break
            if time.monotonic() >= deadline:
                raise ObserverUnavailable(self._late(deadline - started))
            self.poll(deadline, max_wait_ms=0 if target is None or self.fetch_offset < target else None)
        return self.view

    def _late(self, seconds: float) -> str:
        """Say why catch_up ran out of time."""
        if not self.fetched and self.refused_by is not None and self.leader_id < 0:
            return (f"every controller answered NOT_LEADER_OR_FOLLOWER and none named the leader within "
                    f"{seconds:.3g} s (last answer from {self.refused_by})")
        where = f": {self.last_error}" if self.last_error else ""
        return f"could not catch up with the quorum's metadata log in time{where}"

    def follow(self, stop: threading.Event) -> None:
        """Keep `view` current until `stop` is set or time travel stops (the follower thread's body)."""
        while not stop.is_set() and not self.view.stopped:
            try:
                self.poll(time.monotonic() + 3600, sleep=stop.wait)
            except Exception as e:  # noqa: BLE001 - the follower must outlive any one bad answer; say it once
                self.on_event(str(e) if isinstance(e, ObserverError) else f"unexpected {type(e).__name__}: {e}")
                self.close()
                stop.wait(1.0)
        self.close()

    def poll(self, deadline: float, *, max_wait_ms: int | None = None, sleep=time.sleep) -> None:
        """Run one fetch round; on failure report it, forget the connection and back off."""
        try:
            self._step(deadline, self.fetch_max_wait_ms if max_wait_ms is None else max_wait_ms)
            self.failures = 0
        except (_Retry, sc.ClientError, InvalidRecords) as e:
            self._failed(str(e), isinstance(e, _Retry) and self.conn is not None)
            sleep(max(0.0, min(self.backoff_ms / 1000, deadline - time.monotonic())))

    def _failed(self, message: str, keep: bool) -> None:
        self.last_error, self.failures = message, self.failures + 1
        if not keep:
            self.close()
            if self.leader_id >= 0:
                self.on_event(f"lost the leader (node {self.leader_id}): {message}; looking for the new one")
            self.leader_id = -1
            self._next += 1
            self._publish()
        if not self.contacted and self.failures >= len(self.addresses):
            raise ObserverUnavailable(f"cannot reach any controller: {message}")
        if self.failures == len(self.addresses) + 1:
            self.on_event(f"no controller answers: {message}; retrying")

    def close(self) -> None:
        """Close the connection (a fetch sent ahead on it is dropped with it)."""
        self.ahead = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # ------------------------------------------------------------ one round
    def _step(self, deadline: float, max_wait_ms: int) -> None:
        conn = self._connection(deadline)
        if self.learn_endpoints and (self.leader_id < 0 or self.leader_id not in self.endpoints):
            self._describe(conn, deadline)
            if self._target() != (conn.host, conn.port):
                return          # the leader is elsewhere: the next poll fetches from it
        if self.pending:
            max_wait_ms = min(max_wait_ms, PENDING_WAIT_MS)
        ahead, self.ahead = self.ahead, None
        if ahead is not None and ahead[0] == self.fetch_offset:
            response = conn.receive(ahead[1], self._fetch_deadline(0, deadline))
        else:
            if ahead is not None:           # sent for another offset: read it off the connection, unused
                conn.receive(ahead[1], self._fetch_deadline(0, deadline))
            response = self._request(conn, "Fetch", self._fetch_body, self._fetch_deadline(max_wait_ms, deadline),
                                     max_wait_ms)
        self.contacted = True
        self._on_fetch(conn, response, deadline)

    def _fetch_ahead(self, conn: sc.SyncConnection, high_watermark: int, deadline: float) -> None:
        """Send the next Fetch before applying this answer's records, while committed records remain to be fetched:
        the leader reads them while these are replayed (its answer is taken by the next round)."""
        if self.fetch_offset >= high_watermark or self.view.stopped or \
                (self.stop_offset is not None and self.fetch_offset > self.stop_offset):
            return
        self.ahead = (self.fetch_offset, self._send(conn, "Fetch", self._fetch_body, self._fetch_deadline(0, deadline),
                                                    0))

    def _fetch_deadline(self, max_wait_ms: int, deadline: float) -> float:
        return min(deadline, time.monotonic() + (max_wait_ms + self.fetch_timeout_ms) / 1000)

    def _target(self) -> tuple[str, int]:
        if self.leader_id >= 0 and self.leader_id in self.endpoints:
            return self.endpoints[self.leader_id]
        return self.addresses[self._next % len(self.addresses)]

    def _connection(self, deadline: float) -> sc.SyncConnection:
        target = self._target()
        if self.conn is not None and (self.conn.host, self.conn.port) == target:
            return self.conn
        self.close()
        connect_by = min(deadline, time.monotonic() + self.config.request_timeout_ms / 1000)
        self.conn = sc.SyncConnection.open(*target, self.config, connect_by)
        return self.conn

    def _request(self, conn: sc.SyncConnection, api: str, body, deadline: float, *args):
        """Send one read-only request at the highest version both sides speak; `body(version, *args)` builds it."""
        sent = self._send(conn, api, body, deadline, *args)
        return conn.receive(sent, deadline)

    def _send(self, conn: sc.SyncConnection, api: str, body, deadline: float, *args):
        """Send one read-only request (see _request) without waiting for its answer; return conn.send's handle."""
        if api not in READ_ONLY_APIS:
            raise ObserverError(f"the observer may not send {api}: it is read-only")
        version = conn.pick_version(api, VERSIONS.get(api))
        return conn.send(api, version, body(version, *args), deadline)

    # ------------------------------------------------------------ leader discovery
    def _learn(self, leader_id: int, epoch: int) -> bool:
        """Note a (leader, epoch) someone answered; return True when it is news."""
        if epoch < self.epoch or (epoch == self.epoch and (leader_id < 0 or leader_id == self.leader_id)):
            return False
        if leader_id >= 0 and leader_id != self.leader_id:
            self.on_event(f"following node {leader_id}, the leader in epoch {epoch}")
        self.leader_id, self.epoch = leader_id, epoch
        self._publish()
        return True

    def _describe(self, conn: sc.SyncConnection, deadline: float) -> None:
        response = self._request(conn, "DescribeQuorum", _describe_body,
                                 min(deadline, time.monotonic() + self.fetch_timeout_ms / 1000))
        self.contacted = True
        self._learn_nodes(conn, getattr(response, "nodes", None) or [])
        part = response.topics[0].partitions[0] if response.topics and response.topics[0].partitions else None
        if part is None or part.leader_id < 0:
            return
        leads = not response.error_code and not part.error_code
        if leads:  # this node leads: its address is the leader's
            self.endpoints[part.leader_id] = (conn.host, conn.port)
        if leads or part.leader_epoch > 0:      # no leader has epoch 0: Kafka 3.9's refusal leaves both at 0
            self._learn(part.leader_id, part.leader_epoch)

    def _learn_nodes(self, conn: sc.SyncConnection, nodes) -> None:
        names = {listener.name for node in nodes for listener in node.listeners
                 if (listener.host, listener.port) == (conn.host, conn.port)}
        for node in nodes:
            chosen = [lst for lst in node.listeners if lst.name in names] or list(node.listeners)
            if chosen:
                self.endpoints[node.node_id] = (chosen[0].host, chosen[0].port)

    # ------------------------------------------------------------ fetch
    def _fetch_body(self, version: int, max_wait_ms: int):
        cls = codec.message_class("FetchRequest")
        part = cls.FetchPartition(partition=0, current_leader_epoch=self.epoch, fetch_offset=self.fetch_offset,
                                  last_fetched_epoch=self.fetch_epoch, log_start_offset=-1,
                                  partition_max_bytes=MAX_BYTES)
        return cls(cluster_id=None, replica_id=NON_REPLICA, replica_state=cls.ReplicaState(replica_id=NON_REPLICA),
                   max_wait_ms=max_wait_ms, min_bytes=0, max_bytes=MAX_BYTES, isolation_level=0,
                   topics=[cls.FetchTopic(topic=TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[part])])

    def _on_fetch(self, conn: sc.SyncConnection, response, deadline: float) -> None:
        if response.error_code or not response.responses or not response.responses[0].partitions:
            raise _Retry(f"Fetch from {conn.name} failed with {_name(response.error_code)}")
        part = response.responses[0].partitions[0]
        leader = part.current_leader
        self._learn_leader_endpoints(getattr(response, "node_endpoints", None) or ())
        news = self._learn(leader.leader_id, leader.leader_epoch)
        if part.error_code in LEADER_ERRORS and self._refused(conn, leader, news, deadline):
            return  # the next poll fetches from the leader just learnt
        if part.error_code:
            self._next += part.error_code == Errors.NOT_LEADER_OR_FOLLOWER
            raise _Retry(f"Fetch from {conn.name} answered {_name(part.error_code)}")
        self.fetched, self.refused_by, self.served = True, None, self.served + 1
        self.high_watermark = max(self.high_watermark, part.high_watermark)
        if part.snapshot_id is not None and part.snapshot_id.end_offset >= 0:
            self._fetch_snapshot(conn, part.snapshot_id.end_offset, part.snapshot_id.epoch, deadline)
        elif part.diverging_epoch is not None and part.diverging_epoch.end_offset >= 0:
            self._truncate(part.diverging_epoch.epoch, part.diverging_epoch.end_offset)
        else:
            self._append(split_batches(part.records or b""))
            self._fetch_ahead(conn, part.high_watermark, deadline)
        self._commit()

    def _learn_leader_endpoints(self, node_endpoints) -> None:
        """Note the endpoints a Fetch answer gives (v17: the leader's, on our listener); given voters stay."""
        for node in node_endpoints:
            if self.learn_endpoints or node.node_id not in self.endpoints:
                self.endpoints[node.node_id] = (node.host, node.port)

    def _refused(self, conn: sc.SyncConnection, leader, news: bool, deadline: float) -> bool:
        """Tell whether a refusal leads to a leader the next poll can fetch from; raise _Retry when it names
        none (an election) or one whose endpoint no controller gives."""
        if leader.leader_id < 0:
            self.refused_by, self._next = conn.name, self._next + 1
            raise _Retry(f"{conn.name} knows no leader yet (election in epoch {leader.leader_epoch})")
        if leader.leader_id not in self.endpoints:
            self._describe_cluster(conn, deadline)
        if leader.leader_id not in self.endpoints:
            self.refused_by, self._next = conn.name, self._next + 1
            raise _Retry(f"{conn.name} names node {leader.leader_id} the leader, but not its endpoint")
        return news or self.endpoints[leader.leader_id] != (conn.host, conn.port)

    def _describe_cluster(self, conn: sc.SyncConnection, deadline: float) -> None:
        """Learn the controllers' endpoints on our listener from DescribeCluster v1 (EndpointType 2), if served."""
        if not conn.supports("DescribeCluster", 1):
            return
        response = self._request(conn, "DescribeCluster", _describe_cluster_body,
                                 min(deadline, time.monotonic() + self.fetch_timeout_ms / 1000))
        if not response.error_code:
            for node in response.brokers:
                if self.learn_endpoints or node.broker_id not in self.endpoints:
                    self.endpoints[node.broker_id] = (node.host, node.port)

    def _append(self, batches) -> None:
        for batch in batches:
            if batch.base_offset < self.fetch_offset:
                continue
            if batch.base_offset > self.fetch_offset:
                raise _Retry(f"the leader sent offset {batch.base_offset}, expected {self.fetch_offset}")
            self.pending.append(batch)
            self.fetch_offset, self.fetch_epoch = batch.next_offset, batch.epoch

    def _truncate(self, epoch: int, end_offset: int) -> None:
        if end_offset < self.applied:
            raise ObserverError(f"the leader's log diverges below committed offset {self.applied}")
        self.pending = [b for b in self.pending if b.next_offset <= end_offset and b.epoch <= epoch]
        last = self.pending[-1] if self.pending else None
        self.fetch_offset = last.next_offset if last else self.applied
        self.fetch_epoch = last.epoch if last else self.applied_epoch

    def _commit(self) -> None:
        done = 0
        for batch in self.pending:
            if batch.next_offset > self.high_watermark or self.view.stopped:
                break
            done += 1
            self._apply(batch)
        del self.pending[:done]
        if done or self.view.high_watermark != self.high_watermark:
            self._publish()

    def _apply(self, batch) -> None:
        if not batch.is_control:
            rb = RecordBatch(batch.data)
            self.builder.load_record_batch(rb, batch.epoch, self.stop_offset)
        self.applied, self.applied_epoch = batch.next_offset, batch.epoch
        if self.stop_offset is not None and self.applied > self.stop_offset:
            self.view = replace(self.view, stopped=True)

    def _publish(self) -> None:
        stopped = self.view.stopped or (self.stop_offset is not None and self.applied > self.stop_offset)
        self.view = View(self.builder.image(), self.leader_id, self.epoch, self.high_watermark, self.applied, stopped)

    # ------------------------------------------------------------ snapshots
    def _fetch_snapshot(self, conn: sc.SyncConnection, end_offset: int, epoch: int, deadline: float) -> None:
        if self.stop_offset is not None and self.stop_offset < end_offset - 1:
            raise ObserverError(f"offset {self.stop_offset} is no longer in the log: the leader's log starts at "
                                f"offset {end_offset}, after its newest snapshot")
        self.on_event(f"fetching snapshot {end_offset:020d}-{epoch:010d} from node {self.leader_id}")
        loader = SnapshotLoader(self.builder)
        try:
            with bulk_loading():
                self._snapshot_chunks(conn, (end_offset, epoch), deadline, loader)
        except BaseException:
            if loader.started:          # the builder holds part of a snapshot: read everything again from offset 0
                self._start_over()
            raise
        self.builder.last = Provenance(end_offset - 1, epoch, loader.header_time)
        self.pending.clear()
        self.fetch_offset = self.applied = end_offset
        self.fetch_epoch = self.applied_epoch = epoch
        self._publish()

    def _snapshot_chunks(self, conn: sc.SyncConnection, snapshot_id: tuple, deadline: float, loader) -> None:
        """Fetch the snapshot chunk by chunk into `loader` (its complete batches loaded as they arrive)."""
        position, size = 0, None
        while size is None or position < size:
            by = min(deadline, time.monotonic() + self.config.request_timeout_ms / 1000)
            response = self._request(conn, "FetchSnapshot", self._snapshot_body, by, snapshot_id, position)
            part = _snapshot_partition(response)
            if part is None or response.error_code or part.error_code:
                if part is not None:
                    self._learn(part.current_leader.leader_id, part.current_leader.leader_epoch)
                code = response.error_code or (part.error_code if part is not None else -1)
                raise _Retry(f"FetchSnapshot from {conn.name} answered {_name(code)}")
            chunk = part.unaligned_records or b""
            position, size = position + len(chunk), part.size
            if not chunk and position < size:
                raise _Retry(f"FetchSnapshot from {conn.name} sent an empty chunk at {position} of {size}")
            loader.feed(chunk)
        loader.finish()

    def _start_over(self) -> None:
        """Forget everything read: the next fetch starts from offset 0 (a snapshot again, or the log)."""
        self.builder.start_snapshot()
        self.pending.clear()
        self.fetch_offset = self.applied = self.fetch_epoch = self.applied_epoch = 0

    def _snapshot_body(self, version: int, snapshot_id: tuple, position: int):
        cls = codec.message_class("FetchSnapshotRequest")
        part = cls.PartitionSnapshot(partition=0, current_leader_epoch=self.epoch, position=position,
                                     snapshot_id=cls.SnapshotId(end_offset=snapshot_id[0], epoch=snapshot_id[1]))
        return cls(cluster_id=None, replica_id=NON_REPLICA, max_bytes=MAX_BYTES,
                   topics=[cls.TopicSnapshot(name=TOPIC, partitions=[part])])


def _describe_body(version: int):
    cls = codec.message_class("DescribeQuorumRequest")
    return cls(topics=[cls.TopicData(topic_name=TOPIC, partitions=[cls.PartitionData(partition_index=0)])])


def _describe_cluster_body(version: int):
    return codec.message_class("DescribeClusterRequest")(endpoint_type=CONTROLLER_ENDPOINTS)


def _snapshot_partition(response):
    for topic in response.topics or ():
        for part in topic.partitions:
            return part
    return None


def _name(code: int) -> str:
    return error_name(code, "error {code}")
