"""Where kafka-cluster's reads (describe-brokers, wait, health, unregister's checks) find brokers and partitions,
leaving no trace on the cluster they read.

Rules:
- Brokers come from DescribeCluster (EndpointType 1): the active controller's with --bootstrap-controller, the
  first server's that answers with --bootstrap-server, at the highest version both speak; from v2 with
  IncludeFencedBrokers, so fenced brokers are listed too (kraftsman's controller, Kafka 4.x brokers). kraftsman's
  tags give each broker's epoch, incarnation, controlled shutdown and start time; a Kafka server gives none (None
  in JSON, "-" in text, start time -1).
- A controller that lists no brokers (Kafka's answers MISMATCHED_ENDPOINT_TYPE; INVALID_REQUEST at v0) or only the
  unfenced ones (no v2) is read from the metadata log instead: a LogReader whose SummaryBuilder skips partition
  records unread. With --bootstrap-server, DescribeCluster is all there is: below v2 it lists unfenced brokers only
  (Brokers.complete is False).
- Partitions (health) always come from the log: a LogReader that counts them (image.summary), never building a
  PartitionRegistration. A LogReader kept across reads fetches only what was committed since the last one.
- Nothing here writes, registers or joins: DescribeCluster, DescribeQuorum, and Fetch and FetchSnapshot as a
  non-replica (replica id -1), leave no observer row, session or record on a Kafka or kraftsman server.
- Failures: nothing reachable, or no leader found before the deadline -> 69; anything else -> 1.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.storage.protocol.errors import Errors

from ..common.admin import Failure, Unsupported
from ..common.status import ExitStatus
from .brokers import Broker, from_registration

NOT_LISTED = (Errors.MISMATCHED_ENDPOINT_TYPE, Errors.INVALID_REQUEST)


@dataclass
class Brokers:
    """The registered brokers by id, whether fenced ones are among them, and where they were read."""

    by_id: dict[int, Broker]
    complete: bool
    source: str


def from_node(node) -> Broker:
    """Return a Broker from a DescribeCluster node (ops.Node)."""
    return Broker(node.node_id, node.host, node.port, node.rack, node.fenced, node.in_controlled_shutdown,
                  node.epoch, node.incarnation_id, node.start_time_ms)


def described(ctx, deadline: float) -> Brokers | None:
    """Return the brokers DescribeCluster lists, or None when a controller must be read from the log instead."""
    from .texts import describe_cluster

    try:
        info = describe_cluster(ctx, False, deadline, include_fenced=True)
    except Unsupported:
        if ctx.controllers:
            return None
        raise
    except Failure as e:
        if ctx.controllers and e.code in NOT_LISTED:
            return None
        raise
    if ctx.controllers and (info.source != "DescribeCluster" or not info.fenced_included):
        return None
    brokers = {n.node_id: from_node(n) for n in sorted(info.nodes, key=lambda n: n.node_id)}
    return Brokers(brokers, info.fenced_included, info.source)


def image_brokers(image) -> Brokers:
    """Return every broker a metadata image registers."""
    return Brokers({i: from_registration(r) for i, r in sorted(image.cluster.brokers.items())}, True, "metadata")


def registered(ctx, deadline: float | None = None) -> Brokers:
    """Return the registered brokers (DescribeCluster, else the log of a controller that lists none)."""
    deadline = ctx.deadline if deadline is None else deadline
    found = described(ctx, deadline)
    if found is not None:
        return found
    reader = LogReader(ctx, partitions=False)
    try:
        return image_brokers(reader.read(deadline).image)
    finally:
        reader.close()


class LogReader:
    """The quorum's committed metadata as a non-replica reads it: an image without partitions, and (partitions=True)
    the partition counts."""

    def __init__(self, ctx, partitions: bool, fetch_max_wait_ms: int = 0):
        from kraftsman.controller.client.observer import Observer
        from kraftsman.controller.image.summary import SummaryBuilder

        self.builder = SummaryBuilder(partitions)
        self.observer = Observer(ctx.config, bootstrap=ctx.addresses, fetch_max_wait_ms=fetch_max_wait_ms,
                                 builder=self.builder)

    @property
    def counts(self):
        """Return the partition counts (image.summary.PartitionCounts) of what was read so far."""
        return self.builder.counts

    @property
    def contacted(self) -> bool:
        """Tell whether some controller ever answered."""
        return self.observer.contacted

    def read(self, deadline: float):
        """Catch up with what is committed now; return the observer's View (its image has no partitions)."""
        return self._guarded(lambda: self.observer.catch_up(deadline))

    def poll(self, deadline: float):
        """Wait (one long poll) for what commits next; return the View."""
        return self._guarded(lambda: (self.observer.poll(deadline), self.observer.view)[1])

    def _guarded(self, step):
        from kraftsman.controller.client import sync_client as sc
        from kraftsman.controller.client.observer import ObserverError, ObserverUnavailable

        try:
            return step()
        except ObserverUnavailable as e:
            raise Failure(f"cannot read the metadata log: {e}", ExitStatus.UNAVAILABLE) from None
        except (ObserverError, sc.ClientError) as e:
            raise Failure(f"cannot read the metadata log: {e}") from None

    def close(self) -> None:
        """Close the connection."""
        self.observer.close()
