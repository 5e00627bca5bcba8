"""Raft messages: Kafka's generated request/response classes in a small routing envelope, and builders.

Rules:
- Bodies are the generated Kafka message classes at the versions KRaft uses (VERSIONS); the
  server can encode them with the request/response header built from the envelope, unchanged.
- Every KRaft RPC names one partition (`__cluster_metadata`-0); `partition_of` returns it and
  raises Malformed for any other shape (answered with INVALID_REQUEST).
- KIP-996 pre-vote travels as `Envelope.pre_vote` because the schemas stop at VoteRequest v1
  (the PreVote field is v2); the server maps it to the v2 field once the schema has it.
- Error codes are Kafka's numbers (storage reference section 5.4).
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.protocol.uuids import METADATA_TOPIC_ID, ZERO_UUID, Uuid

TOPIC = "__cluster_metadata"

VERSIONS = {"Vote": 1, "BeginQuorumEpoch": 1, "EndQuorumEpoch": 1, "Fetch": 17, "FetchSnapshot": 1,
            "DescribeQuorum": 2, "AddRaftVoter": 0, "RemoveRaftVoter": 0, "UpdateRaftVoter": 0}
M = {f"{api}{kind}": codec.message_class(f"{api}{kind}") for api in VERSIONS for kind in ("Request", "Response")}


class Malformed(ValueError):
    """A request or response does not have the shape KRaft expects."""


class Envelope:
    """Routing data around one message: what the request/response header and the connection carry."""

    __slots__ = ("src", "dst", "correlation_id", "body", "pre_vote")

    def __init__(self, src: int, dst: int, correlation_id: int, body, pre_vote: bool = False):
        self.src, self.dst, self.correlation_id, self.body, self.pre_vote = src, dst, correlation_id, body, pre_vote

    @property
    def name(self) -> str:
        return type(self.body)._spec_name

    @property
    def api_key(self) -> int:
        return type(self.body).api_key

    @property
    def api_version(self) -> int:
        return VERSIONS[self.name.removesuffix("Request").removesuffix("Response")]

    @property
    def is_response(self) -> bool:
        return self.name.endswith("Response")

    def __repr__(self) -> str:
        pre = " pre_vote" if self.pre_vote else ""
        return f"<{self.src}->{self.dst} #{self.correlation_id} {self.name}{pre}>"

    def wire_round_trip(self) -> "Envelope":
        """Encode and decode the body at its KRaft version (proves it can go on the wire unchanged)."""
        raw = codec.encode(self.name, self.api_version, self.body)
        body = codec.decode(self.name, self.api_version, raw)
        return Envelope(self.src, self.dst, self.correlation_id, body, self.pre_vote)


def partition_of(body):
    """Return the single `__cluster_metadata`-0 partition of a KRaft request or response."""
    topics = getattr(body, "topics", None)
    if topics is None:
        topics = body.responses
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        raise Malformed(f"{type(body)._spec_name} must name exactly one partition")
    topic, part = topics[0], topics[0].partitions[0]
    name = getattr(topic, "topic_name", getattr(topic, "name", getattr(topic, "topic", TOPIC)))
    index = getattr(part, "partition_index", getattr(part, "partition", getattr(part, "index", 0)))
    topic_id = getattr(topic, "topic_id", METADATA_TOPIC_ID)
    if (name not in (TOPIC, "") or bytes(topic_id) != bytes(METADATA_TOPIC_ID)) or index != 0:
        raise Malformed(f"{type(body)._spec_name} names an unknown topic partition")
    return part


# ---------------------------------------------------------------- Vote


def vote_request(cluster_id, candidate_epoch, candidate_id, candidate_dir, voter_id, voter_dir, last_epoch,
                 last_offset):
    cls = M["VoteRequest"]
    part = cls.PartitionData(partition_index=0, candidate_epoch=candidate_epoch, candidate_id=candidate_id,
                             candidate_directory_id=Uuid(bytes(candidate_dir)),
                             voter_directory_id=Uuid(bytes(voter_dir)),
                             last_offset_epoch=last_epoch, last_offset=last_offset)
    return cls(cluster_id=cluster_id, voter_id=voter_id,
               topics=[cls.TopicData(topic_name=TOPIC, partitions=[part])])


def vote_response(error, part_error=Errors.NONE, leader_id=-1, leader_epoch=-1, granted=False):
    cls = M["VoteResponse"]
    part = cls.PartitionData(partition_index=0, error_code=part_error, leader_id=leader_id,
                             leader_epoch=leader_epoch, vote_granted=granted)
    return cls(error_code=error, topics=[cls.TopicData(topic_name=TOPIC, partitions=[part])])


# ---------------------------------------------------------------- Begin/EndQuorumEpoch


def begin_epoch_request(cluster_id, epoch, leader_id, voter_id, voter_dir, endpoints=()):
    cls = M["BeginQuorumEpochRequest"]
    part = cls.PartitionData(partition_index=0, voter_directory_id=Uuid(bytes(voter_dir)), leader_id=leader_id,
                             leader_epoch=epoch)
    eps = [cls.LeaderEndpoint(name=n, host=h, port=p) for n, h, p in endpoints]
    return cls(cluster_id=cluster_id, voter_id=voter_id, topics=[cls.TopicData(topic_name=TOPIC, partitions=[part])],
               leader_endpoints=eps)


def epoch_response(name, error, part_error=Errors.NONE, leader_id=-1, leader_epoch=-1):
    """Build a BeginQuorumEpochResponse or EndQuorumEpochResponse."""
    cls = M[name]
    part = cls.PartitionData(partition_index=0, error_code=part_error, leader_id=leader_id, leader_epoch=leader_epoch)
    return cls(error_code=error, topics=[cls.TopicData(topic_name=TOPIC, partitions=[part])])


def end_epoch_request(cluster_id, epoch, leader_id, preferred, endpoints=()):
    """`preferred` is [(voter id, directory id)] in order of preference."""
    cls = M["EndQuorumEpochRequest"]
    cands = [cls.ReplicaInfo(candidate_id=i, candidate_directory_id=Uuid(bytes(d))) for i, d in preferred]
    part = cls.PartitionData(partition_index=0, leader_id=leader_id, leader_epoch=epoch, preferred_candidates=cands)
    eps = [cls.LeaderEndpoint(name=n, host=h, port=p) for n, h, p in endpoints]
    return cls(cluster_id=cluster_id, topics=[cls.TopicData(topic_name=TOPIC, partitions=[part])],
               leader_endpoints=eps)


# ---------------------------------------------------------------- Fetch


def fetch_request(cluster_id, replica_id, epoch, fetch_offset, last_fetched_epoch, max_wait_ms, max_bytes,
                  directory_id=ZERO_UUID):
    cls = M["FetchRequest"]
    part = cls.FetchPartition(partition=0, current_leader_epoch=epoch, fetch_offset=fetch_offset,
                              last_fetched_epoch=last_fetched_epoch, log_start_offset=-1,
                              partition_max_bytes=max_bytes, replica_directory_id=Uuid(bytes(directory_id)))
    return cls(cluster_id=cluster_id, replica_state=cls.ReplicaState(replica_id=replica_id, replica_epoch=-1),
               max_wait_ms=max_wait_ms, min_bytes=0, max_bytes=max_bytes,
               topics=[cls.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[part])])


def fetch_replica_id(body) -> int:
    """Return the replica id a Fetch request names (Kafka's FetchRequest.replicaId): ReplicaId when it is not -1
    (v0-v14 carry it), else ReplicaState.ReplicaId (v15+); negative means a non-replica (a consumer, a reader)."""
    return body.replica_id if body.replica_id != -1 else body.replica_state.replica_id


def fetch_response(error, part_error=Errors.NONE, leader_id=-1, leader_epoch=-1, high_watermark=-1, records=b"",
                   diverging=None, snapshot_id=None, log_start_offset=-1):
    cls = M["FetchResponse"]
    part = cls.PartitionData(partition_index=0, error_code=part_error, high_watermark=high_watermark,
                             log_start_offset=log_start_offset,
                             current_leader=cls.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
                             records=records)
    if diverging is not None:
        part.diverging_epoch = cls.EpochEndOffset(epoch=diverging[0], end_offset=diverging[1])
    if snapshot_id is not None:
        part.snapshot_id = cls.SnapshotId(end_offset=snapshot_id[0], epoch=snapshot_id[1])
    return cls(error_code=error, responses=[cls.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID,
                                                                       partitions=[part])])


# ---------------------------------------------------------------- FetchSnapshot


def fetch_snapshot_request(cluster_id, replica_id, epoch, snapshot_id, position, max_bytes, directory_id=ZERO_UUID):
    cls = M["FetchSnapshotRequest"]
    part = cls.PartitionSnapshot(partition=0, current_leader_epoch=epoch, position=position,
                                 snapshot_id=cls.SnapshotId(end_offset=snapshot_id[0], epoch=snapshot_id[1]),
                                 replica_directory_id=Uuid(bytes(directory_id)))
    return cls(cluster_id=cluster_id, replica_id=replica_id, max_bytes=max_bytes,
               topics=[cls.TopicSnapshot(name=TOPIC, partitions=[part])])


def fetch_snapshot_response(error, part_error=Errors.NONE, leader_id=-1, leader_epoch=-1, snapshot_id=(-1, -1), size=0,
                            position=0, data=b""):
    cls = M["FetchSnapshotResponse"]
    part = cls.PartitionSnapshot(index=0, error_code=part_error,
                                 snapshot_id=cls.SnapshotId(end_offset=snapshot_id[0], epoch=snapshot_id[1]),
                                 current_leader=cls.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
                                 size=size, position=position, unaligned_records=data)
    return cls(error_code=error, topics=[cls.TopicSnapshot(name=TOPIC, partitions=[part])])


# ---------------------------------------------------------------- DescribeQuorum and voter changes


def describe_quorum_request():
    cls = M["DescribeQuorumRequest"]
    return cls(topics=[cls.TopicData(topic_name=TOPIC, partitions=[cls.PartitionData(partition_index=0)])])


def voter_change_response(name, error, message=None):
    """Build an AddRaftVoterResponse or RemoveRaftVoterResponse."""
    return M[name](error_code=error, error_message=message)
