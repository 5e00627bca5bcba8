"""Golden bytes for every RPC in the registry, request and response, at its lowest and highest version.

Rules:
- Versions a real Kafka 3.9 cluster used (shared/fixtures/kafka-wire-3.9) are checked against those
  frames: small ones are built here from scratch and must encode to the recorded frame; large ones
  are decoded and spot-checked against facts known independently of the codec (cluster id, node ids,
  the README's story), then re-encoded.
- Every other (api, version) has a body worked out by hand from the spec, one field per line.
- Fixture cases skip cleanly when ../shared is absent; hand cases always run.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, NamedTuple

import pytest

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.uuids import ONE_UUID, ZERO_UUID, Uuid

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"
CLUSTER_ID = "Xq3mZ8tnT3ahbQ6c2Rj1Vw"
U1 = Uuid(b"\x11" * 16)
U1_HEX = "11" * 16
T = "0001 74"       # int16-length "t"
CT = "02 74"        # compact "t"
CONTROLLER = "0b 434f4e54524f4c4c4552"  # compact "CONTROLLER"
LOCAL = "0a 3132372e302e302e31"         # compact "127.0.0.1"
CLUSTER_HEX = "17 5871336d5a38746e543361686251366332526a315677"  # compact CLUSTER_ID (22 chars)
META_TOPIC = "13 5f5f636c75737465725f6d65746164617461"         # compact "__cluster_metadata"
MV = "11 6d657461646174612e76657273696f6e"                     # compact "metadata.version"


def hexb(text: str) -> bytes:
    """Return the bytes of commented hex: '#' starts a comment, whitespace is ignored."""
    return bytes.fromhex(re.sub(r"#[^\n]*", "", text))


def M(spec: str, /, **fields):
    """Build a message of spec `spec`."""
    return codec.message_class(spec)(**fields)


def S(spec: str, struct: str, /, **fields):
    """Build a nested struct `struct` of spec `spec`."""
    return getattr(codec.message_class(spec), struct)(**fields)


class Body(NamedTuple):
    name: str
    version: int
    build: Callable[[], object]
    hex: str


def _reassign(partition: int, replicas):
    return S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=partition,
             replicas=replicas)


HAND = [
    # ---- Fetch (1)
    Body("FetchRequest", 0, lambda: M(
        "FetchRequest", replica_id=1, max_wait_ms=500, min_bytes=1, topics=[S(
            "FetchRequest", "FetchTopic", topic="t", partitions=[S(
                "FetchRequest", "FetchPartition", partition=0, fetch_offset=5, partition_max_bytes=1048576)])]), f"""
        00000001 000001f4 00000001   # ReplicaId, MaxWaitMs 500, MinBytes
        00000001 {T}                 # Topics: 1, "t"
        00000001 00000000 0000000000000005 00100000   # Partitions: 0, offset 5, 1 MiB
    """),
    Body("FetchResponse", 0, lambda: M(
        "FetchResponse", responses=[S(
            "FetchResponse", "FetchableTopicResponse", topic="t", partitions=[S(
                "FetchResponse", "PartitionData", partition_index=0, error_code=1, high_watermark=7,
                records=b"\x00\x01")])]), f"""
        00000001 {T} 00000001 00000000 0001 0000000000000007
        00000002 0001                # Records: int32 length + bytes
    """),
    # ---- Metadata (3)
    Body("MetadataRequest", 0, lambda: M(
        "MetadataRequest", topics=[S("MetadataRequest", "MetadataRequestTopic", name="t")]), f"00000001 {T}"),
    Body("MetadataResponse", 0, lambda: M(
        "MetadataResponse",
        brokers=[S("MetadataResponse", "MetadataResponseBroker", node_id=4, host="h", port=9092)],
        topics=[S("MetadataResponse", "MetadataResponseTopic", error_code=5, name="t", partitions=[S(
            "MetadataResponse", "MetadataResponsePartition", error_code=9, partition_index=0, leader_id=4,
            replica_nodes=[4, 5], isr_nodes=[4])])]), f"""
        00000001 00000004 0001 68 00002384   # Brokers: 4 h:9092 (Port is int32)
        00000001 0005 {T}                    # Topics: error 5, "t"
        00000001 0009 00000000 00000004      # Partitions: error 9, index 0, leader 4
        00000002 00000004 00000005 00000001 00000004   # ReplicaNodes, IsrNodes
    """),
    # ---- SaslHandshake (17): never flexible
    Body("SaslHandshakeRequest", 0, lambda: M("SaslHandshakeRequest", mechanism="PLAIN"), "0005 504c41494e"),
    Body("SaslHandshakeRequest", 1, lambda: M("SaslHandshakeRequest", mechanism="SCRAM-SHA-256"),
         "000d 534352414d2d5348412d323536"),
    Body("SaslHandshakeResponse", 0, lambda: M("SaslHandshakeResponse", error_code=33, mechanisms=["PLAIN"]),
         "0021 00000001 0005 504c41494e"),        # UNSUPPORTED_SASL_MECHANISM, the enabled ones
    Body("SaslHandshakeResponse", 1, lambda: M("SaslHandshakeResponse", mechanisms=[]), "0000 00000000"),
    # ---- SaslAuthenticate (36): v1 adds SessionLifetimeMs, v2 is flexible
    Body("SaslAuthenticateRequest", 0, lambda: M("SaslAuthenticateRequest", auth_bytes=b"\0a\0b"),
         "00000004 00610062"),
    Body("SaslAuthenticateRequest", 2, lambda: M("SaslAuthenticateRequest", auth_bytes=b"\0a\0b"),
         "05 00610062 00"),                         # compact bytes (length + 1), tags
    Body("SaslAuthenticateResponse", 0, lambda: M(
        "SaslAuthenticateResponse", error_code=58, error_message="bad", auth_bytes=b""),
        "003a 0003 626164 00000000"),               # SASL_AUTHENTICATION_FAILED, message, empty bytes
    Body("SaslAuthenticateResponse", 2, lambda: M(
        "SaslAuthenticateResponse", error_message=None, auth_bytes=b"v", session_lifetime_ms=1000),
        "0000 00 02 76 00000000000003e8 00"),       # null compact string, bytes "v", lifetime, tags
    # ---- ApiVersions (18)
    Body("ApiVersionsRequest", 0, lambda: M("ApiVersionsRequest"), ""),
    Body("ApiVersionsResponse", 0, lambda: M(
        "ApiVersionsResponse", api_keys=[S("ApiVersionsResponse", "ApiVersion", api_key=18, max_version=4)]),
        "0000 00000001 0012 0000 0004"),
    # ---- CreateTopics (19)
    Body("CreateTopicsRequest", 0, lambda: M(
        "CreateTopicsRequest", timeout_ms=1000, topics=[S(
            "CreateTopicsRequest", "CreatableTopic", name="t", num_partitions=3, replication_factor=2,
            assignments=[S("CreateTopicsRequest", "CreatableReplicaAssignment", partition_index=0,
                           broker_ids=[1, 2])],
            configs=[S("CreateTopicsRequest", "CreatableTopicConfig", name="k", value=None)])]), f"""
        00000001 {T} 00000003 0002                   # Topics: "t", 3 partitions, RF 2
        00000001 00000000 00000002 00000001 00000002 # Assignments: partition 0 -> [1, 2]
        00000001 0001 6b ffff                        # Configs: k = null
        000003e8                                     # timeoutMs
    """),
    Body("CreateTopicsResponse", 0, lambda: M(
        "CreateTopicsResponse", topics=[S("CreateTopicsResponse", "CreatableTopicResult", name="t",
                                          error_code=36)]), f"00000001 {T} 0024"),
    # ---- DeleteTopics (20)
    Body("DeleteTopicsRequest", 0, lambda: M("DeleteTopicsRequest", topic_names=["t"], timeout_ms=1000),
         f"00000001 {T} 000003e8"),
    Body("DeleteTopicsResponse", 0, lambda: M(
        "DeleteTopicsResponse", responses=[S("DeleteTopicsResponse", "DeletableTopicResult", name="t",
                                             error_code=3)]), f"00000001 {T} 0003"),
    # ---- CreatePartitions (37)
    Body("CreatePartitionsRequest", 0, lambda: M(
        "CreatePartitionsRequest", timeout_ms=1000, validate_only=True, topics=[S(
            "CreatePartitionsRequest", "CreatePartitionsTopic", name="t", count=4, assignments=[S(
                "CreatePartitionsRequest", "CreatePartitionsAssignment", broker_ids=[1])])]), f"""
        00000001 {T} 00000004 00000001 00000001 00000001   # "t" -> 4, assignments [[1]]
        000003e8 01
    """),
    Body("CreatePartitionsRequest", 3, lambda: M(
        "CreatePartitionsRequest", timeout_ms=1000, validate_only=True, topics=[S(
            "CreatePartitionsRequest", "CreatePartitionsTopic", name="t", count=4, assignments=None)]), f"""
        02 {CT} 00000004 00 00      # "t" -> 4, Assignments null (compact 0), struct tags
        000003e8 01 00
    """),
    Body("CreatePartitionsResponse", 0, lambda: M(
        "CreatePartitionsResponse", throttle_time_ms=10, results=[S(
            "CreatePartitionsResponse", "CreatePartitionsTopicResult", name="t", error_code=37,
            error_message="bad")]), f"0000000a 00000001 {T} 0025 0003 626164"),
    Body("CreatePartitionsResponse", 3, lambda: M(
        "CreatePartitionsResponse", throttle_time_ms=10, results=[S(
            "CreatePartitionsResponse", "CreatePartitionsTopicResult", name="t", error_code=37,
            error_message="bad")]), f"0000000a 02 {CT} 0025 04 626164 00 00"),
    # ---- ElectLeaders (43)
    Body("ElectLeadersRequest", 0, lambda: M(
        "ElectLeadersRequest", timeout_ms=1000, topic_partitions=[S(
            "ElectLeadersRequest", "TopicPartitions", topic="t", partitions=[0, 1])]),
        f"00000001 {T} 00000002 00000000 00000001 000003e8"),
    Body("ElectLeadersRequest", 2, lambda: M(
        "ElectLeadersRequest", election_type=1, topic_partitions=None, timeout_ms=1000),
        "01 00 000003e8 00"),   # ElectionType, TopicPartitions null, TimeoutMs
    Body("ElectLeadersResponse", 0, lambda: M(
        "ElectLeadersResponse", throttle_time_ms=10, replica_election_results=[S(
            "ElectLeadersResponse", "ReplicaElectionResult", topic="t", partition_result=[S(
                "ElectLeadersResponse", "PartitionResult", partition_id=0, error_code=84,
                error_message=None)])]), f"0000000a 00000001 {T} 00000001 00000000 0054 ffff"),
    Body("ElectLeadersResponse", 2, lambda: M(
        "ElectLeadersResponse", throttle_time_ms=10, error_code=41, replica_election_results=[S(
            "ElectLeadersResponse", "ReplicaElectionResult", topic="t", partition_result=[S(
                "ElectLeadersResponse", "PartitionResult", partition_id=0, error_message="ok")])]), f"""
        0000000a 0029 02 {CT} 02 00000000 0000 03 6f6b 00 00 00
    """),
    # ---- IncrementalAlterConfigs (44)
    Body("IncrementalAlterConfigsRequest", 0, lambda: M(
        "IncrementalAlterConfigsRequest", validate_only=True, resources=[S(
            "IncrementalAlterConfigsRequest", "AlterConfigsResource", resource_type=2, resource_name="t",
            configs=[S("IncrementalAlterConfigsRequest", "AlterableConfig", name="k", config_operation=1,
                       value=None)])]), f"00000001 02 {T} 00000001 0001 6b 01 ffff 01"),
    Body("IncrementalAlterConfigsResponse", 0, lambda: M(
        "IncrementalAlterConfigsResponse", throttle_time_ms=10, responses=[S(
            "IncrementalAlterConfigsResponse", "AlterConfigsResourceResponse", error_code=40, error_message="m",
            resource_type=2, resource_name="t")]), f"0000000a 00000001 0028 0001 6d 02 {T}"),
    # ---- DescribeConfigs (32) and AlterConfigs (33), hand-encoded from Kafka 3.9's specs
    Body("DescribeConfigsRequest", 0, lambda: M(
        "DescribeConfigsRequest", resources=[S(
            "DescribeConfigsRequest", "DescribeConfigsResource", resource_type=2, resource_name="t",
            configuration_keys=None)]), f"00000001 02 {T} ffffffff"),
    Body("DescribeConfigsRequest", 4, lambda: M(
        "DescribeConfigsRequest", include_synonyms=True, resources=[S(
            "DescribeConfigsRequest", "DescribeConfigsResource", resource_type=2, resource_name="t",
            configuration_keys=["k"])]), f"02 02 {CT} 02 026b 00 01 00 00"),
    Body("DescribeConfigsResponse", 0, lambda: M(
        "DescribeConfigsResponse", throttle_time_ms=10, results=[S(
            "DescribeConfigsResponse", "DescribeConfigsResult", error_message=None, resource_type=2,
            resource_name="t", configs=[S("DescribeConfigsResponse", "DescribeConfigsResourceResult", name="k",
                                          value="v", is_default=True)])]),
         f"0000000a 00000001 0000 ffff 02 {T} 00000001 0001 6b 0001 76 00 01 00"),
    Body("DescribeConfigsResponse", 4, lambda: M(
        "DescribeConfigsResponse", throttle_time_ms=10, results=[S(
            "DescribeConfigsResponse", "DescribeConfigsResult", error_message=None, resource_type=2,
            resource_name="t", configs=[S(
                "DescribeConfigsResponse", "DescribeConfigsResourceResult", name="k", value="v", config_source=5,
                config_type=2, documentation=None, synonyms=[S(
                    "DescribeConfigsResponse", "DescribeConfigsSynonym", name="k", value=None, source=5)])])]),
         f"0000000a 02 0000 00 02 {CT} 02 026b 0276 00 05 00 02 026b 00 05 00 02 00 00 00 00"),
    Body("AlterConfigsRequest", 0, lambda: M(
        "AlterConfigsRequest", validate_only=True, resources=[S(
            "AlterConfigsRequest", "AlterConfigsResource", resource_type=2, resource_name="t",
            configs=[S("AlterConfigsRequest", "AlterableConfig", name="k", value=None)])]),
         f"00000001 02 {T} 00000001 0001 6b ffff 01"),
    Body("AlterConfigsResponse", 0, lambda: M(
        "AlterConfigsResponse", throttle_time_ms=10, responses=[S(
            "AlterConfigsResponse", "AlterConfigsResourceResponse", error_code=40, error_message="m",
            resource_type=2, resource_name="t")]), f"0000000a 00000001 0028 0001 6d 02 {T}"),
    # ---- AlterPartitionReassignments (45)
    Body("AlterPartitionReassignmentsRequest", 0, lambda: M(
        "AlterPartitionReassignmentsRequest", timeout_ms=1000, topics=[S(
            "AlterPartitionReassignmentsRequest", "ReassignableTopic", name="t",
            partitions=[_reassign(0, [1, 2]), _reassign(1, None)])]), f"""
        000003e8 02 {CT} 03
        00000000 03 00000001 00000002 00   # partition 0 -> [1, 2]
        00000001 00 00                     # partition 1 -> null (cancel)
        00 00
    """),
    Body("AlterPartitionReassignmentsResponse", 0, lambda: M(
        "AlterPartitionReassignmentsResponse", throttle_time_ms=10, error_message=None, responses=[S(
            "AlterPartitionReassignmentsResponse", "ReassignableTopicResponse", name="t", partitions=[S(
                "AlterPartitionReassignmentsResponse", "ReassignablePartitionResponse", partition_index=0,
                error_code=60, error_message="busy")])]), f"""
        0000000a 0000 00 02 {CT} 02 00000000 003c 05 62757379 00 00 00
    """),
    # ---- Vote (52)
    Body("VoteRequest", 0, lambda: M(
        "VoteRequest", cluster_id="c", topics=[S("VoteRequest", "TopicData", topic_name="t", partitions=[S(
            "VoteRequest", "PartitionData", partition_index=0, candidate_epoch=5, candidate_id=1,
            last_offset_epoch=4, last_offset=100)])]), f"""
        02 63 02 {CT} 02 00000000 00000005 00000001 00000004 0000000000000064 00 00 00
    """),
    Body("VoteResponse", 0, lambda: M(
        "VoteResponse", topics=[S("VoteResponse", "TopicData", topic_name="t", partitions=[S(
            "VoteResponse", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
            vote_granted=True)])]), f"0000 02 {CT} 02 00000000 0000 00000001 00000005 01 00 00 00"),
    # Vote v2 (Kafka 4.0, KIP-996): PreVote ends PartitionData; the response gains no field
    Body("VoteRequest", 2, lambda: M(
        "VoteRequest", cluster_id="c", voter_id=2, topics=[S("VoteRequest", "TopicData", topic_name="t", partitions=[S(
            "VoteRequest", "PartitionData", partition_index=0, candidate_epoch=5, candidate_id=1,
            candidate_directory_id=U1, last_offset_epoch=4, last_offset=100, pre_vote=True)])]), f"""
        02 63 00000002 02 {CT} 02 00000000 00000005 00000001
        {U1_HEX} {"00" * 16}             # ReplicaDirectoryId U1, VoterDirectoryId zero
        00000004 0000000000000064 01     # LastOffsetEpoch 4, LastOffset 100, PreVote true
        00 00 00
    """),
    Body("VoteResponse", 2, lambda: M(
        "VoteResponse", topics=[S("VoteResponse", "TopicData", topic_name="t", partitions=[S(
            "VoteResponse", "PartitionData", partition_index=0, leader_id=-1, leader_epoch=5,
            vote_granted=True)])]), f"0000 02 {CT} 02 00000000 0000 ffffffff 00000005 01 00 00 00"),
    # ---- BeginQuorumEpoch (53): v0 is not flexible
    Body("BeginQuorumEpochRequest", 0, lambda: M(
        "BeginQuorumEpochRequest", cluster_id="c", topics=[S(
            "BeginQuorumEpochRequest", "TopicData", topic_name="t", partitions=[S(
                "BeginQuorumEpochRequest", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5)])]),
        f"0001 63 00000001 {T} 00000001 00000000 00000001 00000005"),
    Body("BeginQuorumEpochResponse", 0, lambda: M(
        "BeginQuorumEpochResponse", topics=[S(
            "BeginQuorumEpochResponse", "TopicData", topic_name="t", partitions=[S(
                "BeginQuorumEpochResponse", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5)])]),
        f"0000 00000001 {T} 00000001 00000000 0000 00000001 00000005"),
    # ---- EndQuorumEpoch (54)
    Body("EndQuorumEpochRequest", 0, lambda: M(
        "EndQuorumEpochRequest", cluster_id=None, topics=[S(
            "EndQuorumEpochRequest", "TopicData", topic_name="t", partitions=[S(
                "EndQuorumEpochRequest", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
                preferred_successors=[2, 3])])]), f"""
        ffff 00000001 {T} 00000001 00000000 00000001 00000005 00000002 00000002 00000003
    """),
    Body("EndQuorumEpochRequest", 1, lambda: M(
        "EndQuorumEpochRequest", cluster_id="c", topics=[S(
            "EndQuorumEpochRequest", "TopicData", topic_name="t", partitions=[S(
                "EndQuorumEpochRequest", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
                preferred_candidates=[S("EndQuorumEpochRequest", "ReplicaInfo", candidate_id=2,
                                        candidate_directory_id=U1)])])],
        leader_endpoints=[S("EndQuorumEpochRequest", "LeaderEndpoint", name="CONTROLLER", host="h", port=9093)]),
        f"""
        02 63 02 {CT} 02 00000000 00000001 00000005
        02 00000002 {U1_HEX} 00      # PreferredCandidates [(2, U1)]
        00 00                        # partition and topic tags
        02 {CONTROLLER} 02 68 2385 00   # LeaderEndpoints [CONTROLLER h:9093]
        00
    """),
    Body("EndQuorumEpochResponse", 0, lambda: M(
        "EndQuorumEpochResponse", topics=[S(
            "EndQuorumEpochResponse", "TopicData", topic_name="t", partitions=[S(
                "EndQuorumEpochResponse", "PartitionData", partition_index=0, error_code=6, leader_id=1,
                leader_epoch=5)])]), f"0000 00000001 {T} 00000001 00000000 0006 00000001 00000005"),
    Body("EndQuorumEpochResponse", 1, lambda: M(
        "EndQuorumEpochResponse", topics=[S(
            "EndQuorumEpochResponse", "TopicData", topic_name="t", partitions=[S(
                "EndQuorumEpochResponse", "PartitionData", partition_index=0, error_code=6, leader_id=1,
                leader_epoch=5)])],
        node_endpoints=[S("EndQuorumEpochResponse", "NodeEndpoint", node_id=1, host="h", port=9093)]), f"""
        0000 02 {CT} 02 00000000 0006 00000001 00000005 00 00
        01 00 0a 02 00000001 02 68 2385 00   # tag 0 NodeEndpoints, size 10
    """),
    # ---- DescribeQuorum (55)
    Body("DescribeQuorumRequest", 0, lambda: M(
        "DescribeQuorumRequest", topics=[S("DescribeQuorumRequest", "TopicData", topic_name="t", partitions=[S(
            "DescribeQuorumRequest", "PartitionData", partition_index=0)])]), f"02 {CT} 02 00000000 00 00 00"),
    Body("DescribeQuorumResponse", 0, lambda: M(
        "DescribeQuorumResponse", topics=[S("DescribeQuorumResponse", "TopicData", topic_name="t", partitions=[S(
            "DescribeQuorumResponse", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
            high_watermark=100, current_voters=[S("DescribeQuorumResponse", "ReplicaState", replica_id=1,
                                                  log_end_offset=100)])])]), f"""
        0000 02 {CT} 02 00000000 0000 00000001 00000005 0000000000000064
        02 00000001 0000000000000064 00    # CurrentVoters [(1, LEO 100)]
        01                                 # Observers []
        00 00 00
    """),
    # ---- AlterPartition (56)
    Body("AlterPartitionRequest", 0, lambda: M(
        "AlterPartitionRequest", broker_id=1, broker_epoch=5, topics=[S(
            "AlterPartitionRequest", "TopicData", topic_name="t", partitions=[S(
                "AlterPartitionRequest", "PartitionData", partition_index=0, leader_epoch=5, new_isr=[1, 2],
                partition_epoch=7)])]), f"""
        00000001 0000000000000005 02 {CT} 02 00000000 00000005 03 00000001 00000002 00000007 00 00 00
    """),
    Body("AlterPartitionRequest", 3, lambda: M(
        "AlterPartitionRequest", broker_id=1, broker_epoch=5, topics=[S(
            "AlterPartitionRequest", "TopicData", topic_id=U1, partitions=[S(
                "AlterPartitionRequest", "PartitionData", partition_index=0, leader_epoch=5,
                new_isr_with_epochs=[S("AlterPartitionRequest", "BrokerState", broker_id=1, broker_epoch=9)],
                leader_recovery_state=1, partition_epoch=7)])]), f"""
        00000001 0000000000000005 02 {U1_HEX} 02 00000000 00000005
        02 00000001 0000000000000009 00    # NewIsrWithEpochs [(1, epoch 9)]
        01 00000007 00 00 00               # LeaderRecoveryState, PartitionEpoch, tags
    """),
    Body("AlterPartitionResponse", 0, lambda: M(
        "AlterPartitionResponse", throttle_time_ms=10, topics=[S(
            "AlterPartitionResponse", "TopicData", topic_name="t", partitions=[S(
                "AlterPartitionResponse", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
                isr=[1], partition_epoch=7)])]), f"""
        0000000a 0000 02 {CT} 02 00000000 0000 00000001 00000005 02 00000001 00000007 00 00 00
    """),
    Body("AlterPartitionResponse", 3, lambda: M(
        "AlterPartitionResponse", throttle_time_ms=10, topics=[S(
            "AlterPartitionResponse", "TopicData", topic_id=U1, partitions=[S(
                "AlterPartitionResponse", "PartitionData", partition_index=0, leader_id=1, leader_epoch=5,
                isr=[1], leader_recovery_state=1, partition_epoch=7)])]), f"""
        0000000a 0000 02 {U1_HEX} 02 00000000 0000 00000001 00000005 02 00000001 01 00000007 00 00 00
    """),
    # ---- FetchSnapshot (59)
    Body("FetchSnapshotRequest", 0, lambda: M(
        "FetchSnapshotRequest", cluster_id="c", replica_id=2, max_bytes=1000, topics=[S(
            "FetchSnapshotRequest", "TopicSnapshot", name="t", partitions=[S(
                "FetchSnapshotRequest", "PartitionSnapshot", partition=0, current_leader_epoch=5,
                snapshot_id=S("FetchSnapshotRequest", "SnapshotId", end_offset=100, epoch=4))])]), f"""
        00000002 000003e8 02 {CT} 02 00000000 00000005
        0000000000000064 00000004 00      # SnapshotId (100, 4)
        0000000000000000 00 00            # Position, partition and topic tags
        01 00 02 02 63                    # tag 0 ClusterId "c"
    """),
    Body("FetchSnapshotRequest", 1, lambda: M(
        "FetchSnapshotRequest", replica_id=2, max_bytes=1000, topics=[S(
            "FetchSnapshotRequest", "TopicSnapshot", name="t", partitions=[S(
                "FetchSnapshotRequest", "PartitionSnapshot", partition=0, current_leader_epoch=5,
                snapshot_id=S("FetchSnapshotRequest", "SnapshotId", end_offset=100, epoch=4), position=3,
                replica_directory_id=U1)])]), f"""
        00000002 000003e8 02 {CT} 02 00000000 00000005 0000000000000064 00000004 00 0000000000000003
        01 00 10 {U1_HEX}                 # partition tag 0 ReplicaDirectoryId, size 16
        00 00                             # topic tags; no ClusterId (null default)
    """),
    Body("FetchSnapshotResponse", 0, lambda: M(
        "FetchSnapshotResponse", topics=[S("FetchSnapshotResponse", "TopicSnapshot", name="t", partitions=[S(
            "FetchSnapshotResponse", "PartitionSnapshot", index=0,
            snapshot_id=S("FetchSnapshotResponse", "SnapshotId", end_offset=100, epoch=4),
            current_leader=S("FetchSnapshotResponse", "LeaderIdAndEpoch", leader_id=1, leader_epoch=5),
            size=3, unaligned_records=b"abc")])]), f"""
        00000000 0000 02 {CT} 02 00000000 0000
        0000000000000064 00000004 00      # SnapshotId
        0000000000000003 0000000000000000 # Size, Position
        04 616263                         # UnalignedRecords (compact bytes)
        01 00 09 00000001 00000005 00     # tag 0 CurrentLeader (1, 5), size 9
        00 00
    """),
    Body("FetchSnapshotResponse", 1, lambda: M(
        "FetchSnapshotResponse", error_code=98,
        node_endpoints=[S("FetchSnapshotResponse", "NodeEndpoint", node_id=1, host="h", port=9093)]), """
        00000000 0062 01                  # ErrorCode SNAPSHOT_NOT_FOUND, Topics []
        01 00 0a 02 00000001 02 68 2385 00   # tag 0 NodeEndpoints
    """),
    # ---- DescribeCluster (60)
    Body("DescribeClusterRequest", 0, lambda: M(
        "DescribeClusterRequest", include_cluster_authorized_operations=True), "01 00"),
    Body("DescribeClusterResponse", 0, lambda: M(
        "DescribeClusterResponse", cluster_id="c", controller_id=1, cluster_authorized_operations=3,
        brokers=[S("DescribeClusterResponse", "DescribeClusterBroker", broker_id=4, host="h", port=9092)]), """
        00000000 0000 00 02 63 00000001   # throttle, error, ErrorMessage null, ClusterId, ControllerId
        02 00000004 02 68 00002384 00 00  # Brokers [4 h:9092 rack null]
        00000003 00
    """),
    Body("DescribeClusterRequest", 2, lambda: M(
        "DescribeClusterRequest", endpoint_type=1, include_fenced_brokers=True), "00 01 01 00"),
    Body("DescribeClusterResponse", 2, lambda: M(
        "DescribeClusterResponse", endpoint_type=1, cluster_id="c", controller_id=-1,
        brokers=[S("DescribeClusterResponse", "DescribeClusterBroker", broker_id=4, host="h", port=9092,
                   is_fenced=True)]), """
        00000000 0000 00 01 02 63 ffffffff   # throttle, error, ErrorMessage null, EndpointType, ClusterId, ControllerId
        02 00000004 02 68 00002384 00 01 00  # Brokers [4 h:9092 rack null IsFenced true]
        80000000 00
    """),
    # ---- BrokerRegistration (62)
    Body("BrokerRegistrationRequest", 0, lambda: M(
        "BrokerRegistrationRequest", broker_id=4, cluster_id="c", incarnation_id=U1, rack=None,
        listeners=[S("BrokerRegistrationRequest", "Listener", name="PLAINTEXT", host="h", port=9092)],
        features=[S("BrokerRegistrationRequest", "Feature", name="metadata.version", min_supported_version=1,
                    max_supported_version=21)]), f"""
        00000004 02 63 {U1_HEX}
        02 0a 504c41494e54455854 02 68 2384 0000 00              # Listeners
        02 11 6d657461646174612e76657273696f6e 0001 0015 00      # Features
        00 00                                                    # Rack null, tags
    """),
    Body("BrokerRegistrationResponse", 0, lambda: M("BrokerRegistrationResponse", broker_epoch=26),
         "00000000 0000 000000000000001a 00"),
    # ---- BrokerHeartbeat (63)
    Body("BrokerHeartbeatRequest", 0, lambda: M(
        "BrokerHeartbeatRequest", broker_id=4, broker_epoch=26, current_metadata_offset=100, want_fence=True),
        "00000004 000000000000001a 0000000000000064 01 00 00"),
    Body("BrokerHeartbeatResponse", 0, lambda: M("BrokerHeartbeatResponse", is_caught_up=True, is_fenced=False),
         "00000000 0000 01 00 00 00"),
    # ---- AddRaftVoter (80), RemoveRaftVoter (81), UpdateRaftVoter (82)
    Body("AddRaftVoterRequest", 0, lambda: M(
        "AddRaftVoterRequest", cluster_id="c", timeout_ms=1000, voter_id=4, voter_directory_id=U1,
        listeners=[S("AddRaftVoterRequest", "Listener", name="CONTROLLER", host="h", port=9093)]), f"""
        02 63 000003e8 00000004 {U1_HEX} 02 {CONTROLLER} 02 68 2385 00 00
    """),
    Body("AddRaftVoterResponse", 0, lambda: M("AddRaftVoterResponse", error_code=126, error_message="dup"),
         "00000000 007e 04 647570 00"),
    Body("RemoveRaftVoterRequest", 0, lambda: M(
        "RemoveRaftVoterRequest", cluster_id=None, voter_id=4, voter_directory_id=U1), f"00 00000004 {U1_HEX} 00"),
    Body("RemoveRaftVoterResponse", 0, lambda: M("RemoveRaftVoterResponse", error_code=127, error_message=None),
         "00000000 007f 00 00"),
    Body("UpdateRaftVoterRequest", 0, lambda: M(
        "UpdateRaftVoterRequest", cluster_id="c", current_leader_epoch=5, voter_id=4, voter_directory_id=U1,
        kraft_version_feature=S("UpdateRaftVoterRequest", "KRaftVersionFeature", max_supported_version=1)), f"""
        02 63 00000005 00000004 {U1_HEX} 01   # ..., Listeners []
        0000 0001 00                           # KRaftVersionFeature 0..1
        00
    """),
    Body("UpdateRaftVoterResponse", 0, lambda: M(
        "UpdateRaftVoterResponse", current_leader=S(
            "UpdateRaftVoterResponse", "CurrentLeader", leader_id=1, leader_epoch=5, host="h", port=9093)), """
        00000000 0000
        01 00 0f 00000001 00000005 02 68 00002385 00   # tag 0 CurrentLeader, size 15 (Port is int32 here)
    """),
    # ---- UpdateFeatures (57): v0 AllowDowngrade, v1 UpgradeType + ValidateOnly
    Body("UpdateFeaturesRequest", 0, lambda: M(
        "UpdateFeaturesRequest", feature_updates=[S("UpdateFeaturesRequest", "FeatureUpdateKey",
                                                    feature="metadata.version", max_version_level=21,
                                                    allow_downgrade=True)]), f"""
        0000ea60 02 {MV} 0015 01 00   # timeoutMs 60000, [metadata.version 21, AllowDowngrade]
        00
    """),
    Body("UpdateFeaturesRequest", 1, lambda: M(
        "UpdateFeaturesRequest", timeout_ms=30000, validate_only=True, feature_updates=[S(
            "UpdateFeaturesRequest", "FeatureUpdateKey", feature="metadata.version", max_version_level=17,
            upgrade_type=2)]), f"""
        00007530 02 {MV} 0011 02 00   # timeoutMs 30000, [metadata.version 17, SAFE_DOWNGRADE]
        01 00                         # ValidateOnly
    """),
    Body("UpdateFeaturesResponse", 0, lambda: M(
        "UpdateFeaturesResponse", error_message=None, results=[S(
            "UpdateFeaturesResponse", "UpdatableFeatureResult", feature="metadata.version", error_code=95,
            error_message="no")]), f"""
        00000000 0000 00              # throttle, error, ErrorMessage null
        02 {MV} 005f 03 6e6f 00 00    # Results [metadata.version INVALID_UPDATE_VERSION "no"]
    """),
    Body("UpdateFeaturesResponse", 1, lambda: M(
        "UpdateFeaturesResponse", error_message=None, results=[S(
            "UpdateFeaturesResponse", "UpdatableFeatureResult", feature="metadata.version", error_message=None)]),
         f"00000000 0000 00 02 {MV} 0000 00 00 00"),
    # ---- Kafka 4.x's new versions (reference/kafka-4x/schema-diff-3.9-to-4x.md), bytes laid out by hand
    Body("FetchRequest", 18, lambda: M(
        "FetchRequest", max_wait_ms=500, min_bytes=1, max_bytes=1048576, session_epoch=-1, topics=[S(
            "FetchRequest", "FetchTopic", topic_id=U1, partitions=[S(
                "FetchRequest", "FetchPartition", partition=0, current_leader_epoch=3, fetch_offset=5,
                last_fetched_epoch=2, partition_max_bytes=1048576, high_watermark=7)])],
        forgotten_topics_data=[], rack_id=""), f"""
        000001f4 00000001 00100000 00 00000000 ffffffff   # MaxWait, MinBytes, MaxBytes, isolation, session, epoch
        02 {U1_HEX} 02                                   # Topics [TopicId, Partitions [
        00000000 00000003 0000000000000005 00000002      #   0, leader epoch 3, offset 5, last fetched epoch 2
        ffffffffffffffff 00100000                        #   LogStartOffset -1, 1 MiB
        01 01 08 0000000000000007                        #   tag 1 HighWatermark (v18, KIP-1166) = 7 ]
        00 01 01 00                                      # topic tags, Forgotten [], RackId "", tags
    """),
    Body("FetchResponse", 18, lambda: M(
        "FetchResponse", responses=[S(
            "FetchResponse", "FetchableTopicResponse", topic_id=U1, partitions=[S(
                "FetchResponse", "PartitionData", partition_index=0, high_watermark=7, last_stable_offset=7,
                log_start_offset=0, aborted_transactions=None, records=None)])]), f"""
        00000000 0000 00000000 02 {U1_HEX} 02             # throttle, error, session, [topic [
        00000000 0000 0000000000000007 0000000000000007 0000000000000000   # index, error, HW, LSO, log start
        00 ffffffff 00 00 00 00                          # aborted null, no preferred replica, records null, tags
    """),
    Body("MetadataRequest", 13, lambda: M(
        "MetadataRequest", topics=[S("MetadataRequest", "MetadataRequestTopic", topic_id=U1, name=None)],
        allow_auto_topic_creation=False, include_topic_authorized_operations=True),
        f"02 {U1_HEX} 00 00 00 01 00"),
    Body("MetadataResponse", 13, lambda: M(
        "MetadataResponse", brokers=[], cluster_id="c", controller_id=1, topics=[], error_code=5),
        "00000000 01 02 63 00000001 01 0005 00"),          # v13's top-level ErrorCode after Topics
    Body("UpdateFeaturesRequest", 2, lambda: M(
        "UpdateFeaturesRequest", timeout_ms=30000, feature_updates=[S(
            "UpdateFeaturesRequest", "FeatureUpdateKey", feature="metadata.version", max_version_level=29,
            upgrade_type=1)]), f"00007530 02 {MV} 001d 01 00 00 00"),
    Body("UpdateFeaturesResponse", 2, lambda: M(
        "UpdateFeaturesResponse", error_code=95, error_message="x"),
         "00000000 005f 02 78 00"),                        # v2: no Results, the top-level error only
    Body("AlterPartitionReassignmentsRequest", 1, lambda: M(
        "AlterPartitionReassignmentsRequest", timeout_ms=1000, allow_replication_factor_change=False,
        topics=[S("AlterPartitionReassignmentsRequest", "ReassignableTopic", name="t",
                  partitions=[_reassign(0, [1, 2])])]),
         f"000003e8 00 02 {CT} 02 00000000 03 00000001 00000002 00 00 00"),
    Body("AlterPartitionReassignmentsResponse", 1, lambda: M(
        "AlterPartitionReassignmentsResponse", throttle_time_ms=10, allow_replication_factor_change=False,
        error_message=None, responses=[]), "0000000a 00 0000 00 01 00"),
    Body("AddRaftVoterRequest", 1, lambda: M(
        "AddRaftVoterRequest", cluster_id="c", timeout_ms=1000, voter_id=4, voter_directory_id=U1,
        listeners=[S("AddRaftVoterRequest", "Listener", name="CONTROLLER", host="h", port=9093)],
        ack_when_committed=False), f"02 63 000003e8 00000004 {U1_HEX} 02 {CONTROLLER} 02 68 2385 00 00 00"),
    Body("AddRaftVoterResponse", 1, lambda: M("AddRaftVoterResponse", error_code=126, error_message="dup"),
         "00000000 007e 04 647570 00"),
    # ---- AssignReplicasToDirs (73, KIP-858): v0 only, flexible
    Body("AssignReplicasToDirsRequest", 0, lambda: M(
        "AssignReplicasToDirsRequest", broker_id=1, broker_epoch=8, directories=[S(
            "AssignReplicasToDirsRequest", "DirectoryData", id=U1, topics=[S(
                "AssignReplicasToDirsRequest", "TopicData", topic_id=Uuid(b"\x22" * 16), partitions=[
                    S("AssignReplicasToDirsRequest", "PartitionData", partition_index=0),
                    S("AssignReplicasToDirsRequest", "PartitionData", partition_index=2)])])]), f"""
        00000001 0000000000000008     # BrokerId 1, BrokerEpoch 8
        02 {"11" * 16}                # Directories [(U1,
        02 {"22" * 16}                #   Topics [(topic id,
        03 00000000 00 00000002 00    #     Partitions [0, 2])])]
        00 00 00                      # topic, directory and top-level tags
    """),
    Body("AssignReplicasToDirsResponse", 0, lambda: M(
        "AssignReplicasToDirsResponse", directories=[S(
            "AssignReplicasToDirsResponse", "DirectoryData", id=U1, topics=[S(
                "AssignReplicasToDirsResponse", "TopicData", topic_id=Uuid(b"\x22" * 16), partitions=[
                    S("AssignReplicasToDirsResponse", "PartitionData", partition_index=0),
                    S("AssignReplicasToDirsResponse", "PartitionData", partition_index=2, error_code=6)])])]),
         f"""
        00000000 0000                 # ThrottleTimeMs, ErrorCode NONE
        02 {"11" * 16}                # Directories [(U1,
        02 {"22" * 16}                #   Topics [(topic id,
        03 00000000 0000 00           #     Partitions [(0, NONE),
        00000002 0006 00              #                 (2, NOT_LEADER_OR_FOLLOWER)])])]
        00 00 00                      # topic, directory and top-level tags
    """),
    # ---- CreateDelegationToken (38): v2 is flexible, v3 adds the owner (request) and the requester (response)
    Body("CreateDelegationTokenRequest", 0, lambda: M(
        "CreateDelegationTokenRequest", max_lifetime_ms=3_600_000, renewers=[S(
            "CreateDelegationTokenRequest", "CreatableRenewers", principal_type="User", principal_name="bob")]), """
        00000001 0004 55736572 0003 626f62   # Renewers [User:bob]
        000000000036ee80                     # MaxLifetimeMs 3600000
    """),
    Body("CreateDelegationTokenRequest", 3, lambda: M(
        "CreateDelegationTokenRequest", owner_principal_type=None, owner_principal_name=None, max_lifetime_ms=-1,
        renewers=[S("CreateDelegationTokenRequest", "CreatableRenewers", principal_type="User",
                    principal_name="bob")]), """
        00 00                                # OwnerPrincipalType, OwnerPrincipalName null
        02 05 55736572 04 626f62 00          # Renewers [User:bob]
        ffffffffffffffff 00                  # MaxLifetimeMs -1, tags
    """),
    Body("CreateDelegationTokenResponse", 0, lambda: M(
        "CreateDelegationTokenResponse", principal_type="User", principal_name="alice", issue_timestamp_ms=1000,
        expiry_timestamp_ms=2000, max_timestamp_ms=3000, token_id="t1", hmac=b"\x01\x02"), """
        0000 0004 55736572 0005 616c696365   # NONE, owner User:alice
        00000000000003e8 00000000000007d0 0000000000000bb8   # issue, expiry, max
        0002 7431 00000002 0102 00000000     # TokenId "t1", Hmac, ThrottleTimeMs
    """),
    Body("CreateDelegationTokenResponse", 3, lambda: M(
        "CreateDelegationTokenResponse", error_code=65, principal_type="User", principal_name="alice",
        token_requester_principal_type="User", token_requester_principal_name="bob", issue_timestamp_ms=-1,
        expiry_timestamp_ms=-1, max_timestamp_ms=-1, token_id="", hmac=b""), """
        0041 05 55736572 06 616c696365       # DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner User:alice
        05 55736572 04 626f62                # requester User:bob
        ffffffffffffffff ffffffffffffffff ffffffffffffffff
        01 01 00000000 00                    # TokenId "", Hmac empty, ThrottleTimeMs, tags
    """),
    # ---- RenewDelegationToken (39), ExpireDelegationToken (40): v2 is flexible
    Body("RenewDelegationTokenRequest", 0, lambda: M(
        "RenewDelegationTokenRequest", hmac=b"\x01\x02", renew_period_ms=100), "00000002 0102 0000000000000064"),
    Body("RenewDelegationTokenRequest", 2, lambda: M(
        "RenewDelegationTokenRequest", hmac=b"\x01\x02", renew_period_ms=100), "03 0102 0000000000000064 00"),
    Body("RenewDelegationTokenResponse", 0, lambda: M(
        "RenewDelegationTokenResponse", error_code=62, expiry_timestamp_ms=-1), "003e ffffffffffffffff 00000000"),
    Body("RenewDelegationTokenResponse", 2, lambda: M(
        "RenewDelegationTokenResponse", expiry_timestamp_ms=2000), "0000 00000000000007d0 00000000 00"),
    Body("ExpireDelegationTokenRequest", 0, lambda: M(
        "ExpireDelegationTokenRequest", hmac=b"\x01\x02", expiry_time_period_ms=-1), "00000002 0102 ffffffffffffffff"),
    Body("ExpireDelegationTokenRequest", 2, lambda: M(
        "ExpireDelegationTokenRequest", hmac=b"", expiry_time_period_ms=0), "01 0000000000000000 00"),
    Body("ExpireDelegationTokenResponse", 0, lambda: M(
        "ExpireDelegationTokenResponse", expiry_timestamp_ms=-1), "0000 ffffffffffffffff 00000000"),
    Body("ExpireDelegationTokenResponse", 2, lambda: M(
        "ExpireDelegationTokenResponse", error_code=66, expiry_timestamp_ms=0), "0042 0000000000000000 00000000 00"),
    # ---- DescribeDelegationToken (41): v2 is flexible, v3 adds the requester to each token
    Body("DescribeDelegationTokenRequest", 0, lambda: M(
        "DescribeDelegationTokenRequest", owners=None), "ffffffff"),
    Body("DescribeDelegationTokenRequest", 3, lambda: M(
        "DescribeDelegationTokenRequest", owners=[S("DescribeDelegationTokenRequest", "DescribeDelegationTokenOwner",
                                                    principal_type="User", principal_name="bob")]), """
        02 05 55736572 04 626f62 00 00       # Owners [User:bob], owner and top-level tags
    """),
    Body("DescribeDelegationTokenResponse", 0, lambda: M(
        "DescribeDelegationTokenResponse", error_code=-1), "ffff 00000000 00000000"),
    Body("DescribeDelegationTokenResponse", 3, lambda: M(
        "DescribeDelegationTokenResponse", tokens=[S(
            "DescribeDelegationTokenResponse", "DescribedDelegationToken", principal_type="User",
            principal_name="alice", token_requester_principal_type="User", token_requester_principal_name="bob",
            issue_timestamp=1000, expiry_timestamp=2000, max_timestamp=3000, token_id="t1", hmac=b"\x01",
            renewers=[])]), """
        0000 02                              # NONE, Tokens [
        05 55736572 06 616c696365            #   owner User:alice
        05 55736572 04 626f62                #   requester User:bob
        00000000000003e8 00000000000007d0 0000000000000bb8   # issue, expiry, max
        03 7431 02 01 01 00                  #   TokenId "t1", Hmac, Renewers [], tags]
        00000000 00                          # ThrottleTimeMs, tags
    """),
    # ---- DescribeAcls (29), CreateAcls (30), DeleteAcls (31): v1 adds the pattern type, v2 is flexible
    Body("DescribeAclsRequest", 0, lambda: M(
        "DescribeAclsRequest", resource_type_filter=2, resource_name_filter="t", principal_filter=None,
        host_filter="*", operation=3, permission_type=3), f"""
        02 {T} ffff 0001 2a 03 03     # TOPIC "t", principal null, host "*", READ, ALLOW
    """),
    Body("DescribeAclsRequest", 3, lambda: M(
        "DescribeAclsRequest", resource_type_filter=2, resource_name_filter="t", pattern_type_filter=4,
        principal_filter="User:a", host_filter=None, operation=3, permission_type=3), f"""
        02 {CT} 04 07 557365723a61   # TOPIC "t" PREFIXED, "User:a"
        00 03 03 00                  # host null, READ, ALLOW, tags
    """),
    Body("DescribeAclsResponse", 0, lambda: M(
        "DescribeAclsResponse", error_message=None, resources=[S(
            "DescribeAclsResponse", "DescribeAclsResource", resource_type=2, resource_name="t", acls=[S(
                "DescribeAclsResponse", "AclDescription", principal="User:a", host="*", operation=3,
                permission_type=3)])]), f"""
        00000000 0000 ffff 00000001 02 {T}       # throttle, error, message null, [TOPIC "t"
        00000001 0006 557365723a61 0001 2a 03 03  #   [("User:a", "*", READ, ALLOW)]]
    """),
    Body("DescribeAclsResponse", 3, lambda: M(
        "DescribeAclsResponse", error_code=42, error_message="x", resources=[S(
            "DescribeAclsResponse", "DescribeAclsResource", resource_type=2, resource_name="t", pattern_type=4,
            acls=[S("DescribeAclsResponse", "AclDescription", principal="User:a", host="*", operation=3,
                    permission_type=2)])]), f"""
        00000000 002a 02 78 02 02 {CT} 04             # INVALID_REQUEST "x", [TOPIC "t" PREFIXED
        02 07 557365723a61 02 2a 03 02 00 00 00       #   [("User:a", "*", READ, DENY)]], tags
    """),
    Body("CreateAclsRequest", 0, lambda: M(
        "CreateAclsRequest", creations=[S(
            "CreateAclsRequest", "AclCreation", resource_type=2, resource_name="t", principal="User:a", host="*",
            operation=3, permission_type=3)]), f"""
        00000001 02 {T} 0006 557365723a61 0001 2a 03 03
    """),
    Body("CreateAclsRequest", 3, lambda: M(
        "CreateAclsRequest", creations=[S(
            "CreateAclsRequest", "AclCreation", resource_type=2, resource_name="t", resource_pattern_type=4,
            principal="User:a", host="*", operation=4, permission_type=2)]), f"""
        02 02 {CT} 04 07 557365723a61 02 2a 04 02 00 00   # [TOPIC "t" PREFIXED "User:a" "*" WRITE DENY]
    """),
    Body("CreateAclsResponse", 0, lambda: M(
        "CreateAclsResponse", results=[S("CreateAclsResponse", "AclCreationResult", error_message=None), S(
            "CreateAclsResponse", "AclCreationResult", error_code=42, error_message="x")]), """
        00000000 00000002 0000 ffff 002a 0001 78
    """),
    Body("CreateAclsResponse", 3, lambda: M(
        "CreateAclsResponse", results=[S("CreateAclsResponse", "AclCreationResult", error_message=None), S(
            "CreateAclsResponse", "AclCreationResult", error_code=42, error_message="x")]), """
        00000000 03 0000 00 00 002a 02 78 00 00
    """),
    Body("DeleteAclsRequest", 0, lambda: M(
        "DeleteAclsRequest", filters=[S(
            "DeleteAclsRequest", "DeleteAclsFilter", resource_type_filter=1, resource_name_filter=None,
            principal_filter="User:a", host_filter=None, operation=1, permission_type=1)]), """
        00000001 01 ffff 0006 557365723a61 ffff 01 01   # [ANY, null, "User:a", null, ANY, ANY]
    """),
    Body("DeleteAclsRequest", 3, lambda: M(
        "DeleteAclsRequest", filters=[S(
            "DeleteAclsRequest", "DeleteAclsFilter", resource_type_filter=2, resource_name_filter="t",
            pattern_type_filter=2, principal_filter=None, host_filter=None, operation=1, permission_type=1)]), f"""
        02 02 {CT} 02 00 00 01 01 00 00                 # [TOPIC "t" MATCH, null, null, ANY, ANY]
    """),
    Body("DeleteAclsResponse", 0, lambda: M(
        "DeleteAclsResponse", filter_results=[S(
            "DeleteAclsResponse", "DeleteAclsFilterResult", error_message=None, matching_acls=[S(
                "DeleteAclsResponse", "DeleteAclsMatchingAcl", error_message=None, resource_type=2,
                resource_name="t", principal="User:a", host="*", operation=3, permission_type=3)])]), f"""
        00000000 00000001 0000 ffff                           # throttle, [(NONE, null,
        00000001 0000 ffff 02 {T} 0006 557365723a61 0001 2a 03 03   #   [(NONE, null, TOPIC "t" ...)])]
    """),
    Body("DeleteAclsResponse", 3, lambda: M(
        "DeleteAclsResponse", filter_results=[S(
            "DeleteAclsResponse", "DeleteAclsFilterResult", error_message=None, matching_acls=[S(
                "DeleteAclsResponse", "DeleteAclsMatchingAcl", error_message=None, resource_type=2,
                resource_name="t", pattern_type=4, principal="User:a", host="*", operation=3,
                permission_type=3)])]), f"""
        00000000 02 0000 00                                   # throttle, [(NONE, null,
        02 0000 00 02 {CT} 04 07 557365723a61 02 2a 03 03 00  #   [(NONE, null, TOPIC "t" PREFIXED ...)])]
        00 00                                                 # filter result and top-level tags
    """),
    # ---- AlterClientQuotas (49): v1 is flexible; OpData.Value is a float64
    Body("AlterClientQuotasRequest", 0, lambda: M(
        "AlterClientQuotasRequest", validate_only=True, entries=[S(
            "AlterClientQuotasRequest", "EntryData",
            entity=[S("AlterClientQuotasRequest", "EntityData", entity_type="user", entity_name=None)],
            ops=[S("AlterClientQuotasRequest", "OpData", key="k", value=1024.0, remove=False)])]), """
        00000001 00000001 0004 75736572 ffff   # [([user=null],
        00000001 0001 6b 4090000000000000 00   #   [k = 1024.0, set])]
        01                                     # ValidateOnly
    """),
    Body("AlterClientQuotasRequest", 1, lambda: M(
        "AlterClientQuotasRequest", entries=[S(
            "AlterClientQuotasRequest", "EntryData",
            entity=[S("AlterClientQuotasRequest", "EntityData", entity_type="user", entity_name="u")],
            ops=[S("AlterClientQuotasRequest", "OpData", key="k", value=1024.0, remove=True)])]), """
        02 02 05 75736572 02 75 00             # [([user=u],
        02 02 6b 4090000000000000 01 00 00     #   [k, remove])]
        00 00                                  # ValidateOnly false, tags
    """),
    Body("AlterClientQuotasResponse", 0, lambda: M(
        "AlterClientQuotasResponse", entries=[S(
            "AlterClientQuotasResponse", "EntryData", error_code=42, error_message="x",
            entity=[S("AlterClientQuotasResponse", "EntityData", entity_type="ip", entity_name=None)])]), """
        00000000 00000001 002a 0001 78         # throttle, [(INVALID_REQUEST, "x",
        00000001 0002 6970 ffff                #   [ip=null])]
    """),
    Body("AlterClientQuotasResponse", 1, lambda: M(
        "AlterClientQuotasResponse", entries=[S(
            "AlterClientQuotasResponse", "EntryData", error_message=None,
            entity=[S("AlterClientQuotasResponse", "EntityData", entity_type="ip", entity_name=None)])]),
         "00000000 02 0000 00 02 03 6970 00 00 00 00"),
    # ---- DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): v0 only, flexible
    Body("DescribeUserScramCredentialsRequest", 0, lambda: M(
        "DescribeUserScramCredentialsRequest", users=[S("DescribeUserScramCredentialsRequest", "UserName",
                                                        name="a")]),
         "02 02 61 00 00"),                    # [("a")], tags
    Body("DescribeUserScramCredentialsResponse", 0, lambda: M(
        "DescribeUserScramCredentialsResponse", error_message=None, results=[S(
            "DescribeUserScramCredentialsResponse", "DescribeUserScramCredentialsResult", user="a",
            error_message=None, credential_infos=[
                S("DescribeUserScramCredentialsResponse", "CredentialInfo", mechanism=1, iterations=4096),
                S("DescribeUserScramCredentialsResponse", "CredentialInfo", mechanism=2, iterations=8192)])]), """
        00000000 0000 00                       # throttle, NONE, message null
        02 02 61 0000 00                       # [("a", NONE, null,
        03 01 00001000 00 02 00002000 00       #   [(SHA-256, 4096), (SHA-512, 8192)])]
        00 00                                  # result and top-level tags
    """),
    Body("AlterUserScramCredentialsRequest", 0, lambda: M(
        "AlterUserScramCredentialsRequest",
        deletions=[S("AlterUserScramCredentialsRequest", "ScramCredentialDeletion", name="a", mechanism=1)],
        upsertions=[S("AlterUserScramCredentialsRequest", "ScramCredentialUpsertion", name="b", mechanism=2,
                      iterations=4096, salt=b"s", salted_password=b"pw")]), """
        02 02 61 01 00                         # Deletions [("a", SHA-256)]
        02 02 62 02 00001000 02 73 03 7077 00  # Upsertions [("b", SHA-512, 4096, salt "s", "pw")]
        00
    """),
    Body("AlterUserScramCredentialsResponse", 0, lambda: M(
        "AlterUserScramCredentialsResponse", results=[
            S("AlterUserScramCredentialsResponse", "AlterUserScramCredentialsResult", user="a", error_message=None),
            S("AlterUserScramCredentialsResponse", "AlterUserScramCredentialsResult", user="b", error_code=93,
              error_message="x")]), """
        00000000 03                            # throttle, [
        02 61 0000 00 00                       #   ("a", NONE, null),
        02 62 005d 02 78 00                    #   ("b", UNACCEPTABLE_CREDENTIAL, "x")]
        00
    """),
    # ---- DescribeTopicPartitions (75): v0 only, flexible (a broker's read, KIP-966)
    Body("DescribeTopicPartitionsRequest", 0, lambda: M(
        "DescribeTopicPartitionsRequest", topics=[S("DescribeTopicPartitionsRequest", "TopicRequest", name="t")],
        response_partition_limit=2000,
        cursor=S("DescribeTopicPartitionsRequest", "Cursor", topic_name="t", partition_index=1)), """
        02 02 74 00                            # [("t")]
        000007d0                               # ResponsePartitionLimit 2000
        01 02 74 00000001 00                   # Cursor present: ("t", 1)
        00
    """),
    Body("DescribeTopicPartitionsResponse", 0, lambda: M(
        "DescribeTopicPartitionsResponse", topics=[S(
            "DescribeTopicPartitionsResponse", "DescribeTopicPartitionsResponseTopic", name="t", topic_id=U1,
            partitions=[S("DescribeTopicPartitionsResponse", "DescribeTopicPartitionsResponsePartition",
                          partition_index=0, leader_id=4, leader_epoch=2, replica_nodes=[4, 5], isr_nodes=[4],
                          eligible_leader_replicas=[], last_known_elr=None, offline_replicas=[5])])],
        next_cursor=None), f"""
        00000000 02                            # throttle, [
        0000 02 74 {U1_HEX} 00                 #   (NONE, "t", id, not internal,
        02 0000 00000000 00000004 00000002     #    [(NONE, 0, leader 4, epoch 2,
        03 00000004 00000005 02 00000004       #      replicas [4, 5], isr [4],
        01 00 02 00000005 00                   #      elr [], last known elr null, offline [5])],
        80000000 00                            #    authorized operations not asked)]
        ff 00                                  # NextCursor null, tags
    """),
    # ---- DescribeClientQuotas (48): v0-v1, flexible from v1 (a broker's read)
    Body("DescribeClientQuotasRequest", 0, lambda: M(
        "DescribeClientQuotasRequest", components=[S(
            "DescribeClientQuotasRequest", "ComponentData", entity_type="user", match_type=0, match="alice")],
        strict=False), """
        00000001 0004 75736572 00 0005 616c696365  # [("user", EXACT, "alice")]
        00                                         # Strict false
    """),
    Body("DescribeClientQuotasRequest", 1, lambda: M(
        "DescribeClientQuotasRequest", components=[S(
            "DescribeClientQuotasRequest", "ComponentData", entity_type="client-id", match_type=1, match=None)],
        strict=True), """
        02 0a 636c69656e742d6964 01 00 00          # [("client-id", DEFAULT, null)]
        01 00                                      # Strict true, tags
    """),
    Body("DescribeClientQuotasResponse", 0, lambda: M(
        "DescribeClientQuotasResponse", error_message=None, entries=[S(
            "DescribeClientQuotasResponse", "EntryData",
            entity=[S("DescribeClientQuotasResponse", "EntityData", entity_type="user", entity_name="alice")],
            values=[S("DescribeClientQuotasResponse", "ValueData", key="request_percentage", value=50.0)])]), """
        00000000 0000 ffff                         # throttle, NONE, message null
        00000001 00000001 0004 75736572 0005 616c696365     # [([("user", "alice")],
        00000001 0012 726571756573745f70657263656e74616765  #   [("request_percentage",
        4049000000000000                                    #     50.0)])]
    """),
    Body("DescribeClientQuotasResponse", 1, lambda: M(
        "DescribeClientQuotasResponse", error_message=None, entries=[S(
            "DescribeClientQuotasResponse", "EntryData",
            entity=[S("DescribeClientQuotasResponse", "EntityData", entity_type="user", entity_name=None)],
            values=[S("DescribeClientQuotasResponse", "ValueData", key="producer_byte_rate", value=4096.0)])]), """
        00000000 0000 00                           # throttle, NONE, message null
        02 02 05 75736572 00 00                    # [([("user", null)],
        02 13 70726f64756365725f627974655f72617465 #   [("producer_byte_rate",
        40b0000000000000 00 00                     #     4096.0)])]
        00
    """),
    # ---- DescribeLogDirs (35): v0-v4, flexible from v2 (a broker's read)
    Body("DescribeLogDirsRequest", 0, lambda: M(
        "DescribeLogDirsRequest", topics=[S("DescribeLogDirsRequest", "DescribableLogDirTopic", topic="t",
                                            partitions=[0, 1])]),
         "00000001 0001 74 00000002 00000000 00000001"),   # [("t", [0, 1])]
    Body("DescribeLogDirsRequest", 4, lambda: M("DescribeLogDirsRequest", topics=None),
         "00 00"),                                         # Topics null (every partition), tags
    Body("DescribeLogDirsResponse", 0, lambda: M(
        "DescribeLogDirsResponse", results=[S(
            "DescribeLogDirsResponse", "DescribeLogDirsResult", log_dir="/d", topics=[S(
                "DescribeLogDirsResponse", "DescribeLogDirsTopic", name="t", partitions=[S(
                    "DescribeLogDirsResponse", "DescribeLogDirsPartition", partition_index=0, partition_size=1024,
                    offset_lag=0, is_future_key=False)])])]), """
        00000000 00000001 0000 0002 2f64       # throttle, [(NONE, "/d",
        00000001 0001 74 00000001              #   [("t", [
        00000000 0000000000000400              #     (0, size 1024,
        0000000000000000 00                    #      lag 0, not future)])])]
    """),
    Body("DescribeLogDirsResponse", 4, lambda: M(
        "DescribeLogDirsResponse", results=[S(
            "DescribeLogDirsResponse", "DescribeLogDirsResult", log_dir="/d", topics=[], total_bytes=1000,
            usable_bytes=500)]), """
        00000000 0000                          # throttle, NONE
        02 0000 03 2f64 01                     # [(NONE, "/d", [],
        00000000000003e8 00000000000001f4 00   #   total 1000, usable 500)]
        00
    """),
]


@pytest.mark.parametrize("case", HAND, ids=[f"{c.name}-v{c.version}" for c in HAND])
def test_hand_derived_body(case: Body):
    expected = hexb(case.hex)
    assert codec.encode(case.name, case.version, case.build()) == expected
    assert codec.decode(case.name, case.version, expected) == case.build()


# ---------------------------------------------------------------- recorded frames (Kafka 3.9)


class Recorded(NamedTuple):
    file: str
    api_key: int
    version: int
    direction: str
    build: Callable[[], bytes] | None  # the whole frame built from scratch, or None: decode + spot-check


def _req(key, v, corr, client, spec, **fields):
    return lambda: framing.encode_request(key, v, corr, client, M(spec, **fields))


def _resp(key, v, corr, spec, **fields):
    return lambda: framing.encode_response(key, v, corr, M(spec, **fields))


def _local(spec, struct, port, **fields):
    return S(spec, struct, host="127.0.0.1", port=port, **fields)


def _meta_topic(spec, **partition):
    return [S(spec, "TopicData", topic_name="__cluster_metadata", partitions=[S(spec, "PartitionData", **partition)])]


RECORDED = [
    Recorded("msgs/000001_c1_req_ApiVersions_v4_c1.bin", 18, 4, "req", _req(
        18, 4, 1, "raft-client-3", "ApiVersionsRequest", client_software_name="apache-kafka-java",
        client_software_version="3.9.0")),
    Recorded("msgs/000002_c1_resp_ApiVersions_v4_c1.bin", 18, 4, "resp", None),
    Recorded("msgs/000003_c1_req_Vote_v1_c0.bin", 52, 1, "req", _req(
        52, 1, 0, "raft-client-3", "VoteRequest", cluster_id=CLUSTER_ID, voter_id=1, topics=_meta_topic(
            "VoteRequest", partition_index=0, candidate_epoch=1, candidate_id=3,
            candidate_directory_id=Uuid(bytes.fromhex("c00aef073ee8716c2b0e95ac9fed41cf")),
            voter_directory_id=ZERO_UUID, last_offset_epoch=0, last_offset=0))),
    Recorded("msgs/000004_c1_resp_Vote_v1_c0.bin", 52, 1, "resp", _resp(
        52, 1, 0, "VoteResponse", topics=_meta_topic(
            "VoteResponse", partition_index=0, error_code=74, leader_id=-1, leader_epoch=2, vote_granted=False))),
    Recorded("msgs/000017_c1_req_BeginQuorumEpoch_v1_c13.bin", 53, 1, "req", _req(
        53, 1, 13, "raft-client-3", "BeginQuorumEpochRequest", cluster_id=CLUSTER_ID, voter_id=1,
        topics=_meta_topic("BeginQuorumEpochRequest", partition_index=0, leader_id=3, leader_epoch=3),
        leader_endpoints=[_local("BeginQuorumEpochRequest", "LeaderEndpoint", 29095, name="CONTROLLER")])),
    Recorded("msgs/000020_c1_resp_BeginQuorumEpoch_v1_c13.bin", 53, 1, "resp", _resp(
        53, 1, 13, "BeginQuorumEpochResponse",
        topics=_meta_topic("BeginQuorumEpochResponse", partition_index=0, leader_id=3, leader_epoch=3),
        node_endpoints=[_local("BeginQuorumEpochResponse", "NodeEndpoint", 29095, node_id=3)])),
    Recorded("msgs/000025_c3_req_Fetch_v17_c8.bin", 1, 17, "req", None),
    Recorded("msgs/000026_c3_resp_Fetch_v17_c8.bin", 1, 17, "resp", None),
    Recorded("msgs/000044_c3_req_ControllerRegistration_v0_c0.bin", 70, 0, "req", _req(
        70, 0, 0, "3", "ControllerRegistrationRequest", controller_id=3,
        incarnation_id=Uuid(bytes.fromhex("a28273fd50054445aaec7979465fbe16")), zk_migration_ready=False,
        listeners=[_local("ControllerRegistrationRequest", "Listener", 29095, name="CONTROLLER")],
        features=[S("ControllerRegistrationRequest", "Feature", name="kraft.version", max_supported_version=1),
                  S("ControllerRegistrationRequest", "Feature", name="metadata.version", min_supported_version=1,
                    max_supported_version=21)])),
    Recorded("msgs/000055_c3_resp_ControllerRegistration_v0_c0.bin", 70, 0, "resp", _resp(
        70, 0, 0, "ControllerRegistrationResponse", error_message="")),  # "" (01), not null (00)
    Recorded("msgs/000173_c3_req_BrokerRegistration_v4_c0.bin", 62, 4, "req", None),
    Recorded("msgs/000186_c3_resp_BrokerRegistration_v4_c0.bin", 62, 4, "resp", _resp(
        62, 4, 0, "BrokerRegistrationResponse", broker_epoch=32)),
    Recorded("msgs/000187_c3_req_BrokerHeartbeat_v1_c2.bin", 63, 1, "req", _req(
        63, 1, 2, "5", "BrokerHeartbeatRequest", broker_id=5, broker_epoch=32, current_metadata_offset=31,
        want_fence=True)),
    Recorded("msgs/000188_c3_resp_BrokerHeartbeat_v1_c2.bin", 63, 1, "resp", _resp(
        63, 1, 2, "BrokerHeartbeatResponse", is_caught_up=False, is_fenced=True)),
    # AllocateProducerIds (67): broker 4 (epoch 36) gets ids 0-999, then broker 5 (epoch 32) gets 1000-1999
    Recorded("msgs/002210_c3_req_AllocateProducerIds_v0_c5.bin", 67, 0, "req", _req(
        67, 0, 5, "4", "AllocateProducerIdsRequest", broker_id=4, broker_epoch=36)),
    Recorded("msgs/002216_c3_resp_AllocateProducerIds_v0_c5.bin", 67, 0, "resp", _resp(
        67, 0, 5, "AllocateProducerIdsResponse", producer_id_start=0, producer_id_len=1000)),
    Recorded("msgs/002221_c3_req_AllocateProducerIds_v0_c6.bin", 67, 0, "req", _req(
        67, 0, 6, "5", "AllocateProducerIdsRequest", broker_id=5, broker_epoch=32)),
    Recorded("msgs/002224_c3_resp_AllocateProducerIds_v0_c6.bin", 67, 0, "resp", _resp(
        67, 0, 6, "AllocateProducerIdsResponse", producer_id_start=1000, producer_id_len=1000)),
    Recorded("msgs/000999_b4_req_Metadata_v12_c1.bin", 3, 12, "req", _req(
        3, 12, 1, "adminclient-1", "MetadataRequest", topics=[], allow_auto_topic_creation=True)),
    Recorded("msgs/001000_b4_resp_Metadata_v12_c1.bin", 3, 12, "resp", _resp(
        3, 12, 1, "MetadataResponse", cluster_id=CLUSTER_ID, controller_id=4, brokers=[
            _local("MetadataResponse", "MetadataResponseBroker", 29192, node_id=4),
            _local("MetadataResponse", "MetadataResponseBroker", 29193, node_id=5)])),
    Recorded("msgs/001087_c1_req_DescribeCluster_v1_c1.bin", 60, 1, "req", _req(
        60, 1, 1, "adminclient-1", "DescribeClusterRequest", endpoint_type=2)),  # 2 = controllers (KIP-919)
    Recorded("msgs/001088_c1_resp_DescribeCluster_v1_c1.bin", 60, 1, "resp", _resp(
        60, 1, 1, "DescribeClusterResponse", endpoint_type=2, cluster_id=CLUSTER_ID, controller_id=3, brokers=[
            _local("DescribeClusterResponse", "DescribeClusterBroker", 29092 + n, broker_id=n) for n in (1, 2, 3)])),
    # Envelope (58): broker 5 forwards an admin client's DescribeQuorum; the inner frames are their own fixtures
    Recorded("msgs/001277_c3_req_Envelope_v0_c0.bin", 58, 0, "req", lambda: framing.encode_request(
        58, 0, 0, "5", M("EnvelopeRequest", request_data=_inner("envelope-inner/001277_inner_req_api55_v2_c4.bin"),
                         request_principal=hexb("""
                             0000                  # DefaultPrincipalData version 0
                             05 55736572           # PrincipalType "User"
                             0a 414e4f4e594d4f5553 # PrincipalName "ANONYMOUS"
                             00 00                 # TokenAuthenticated false, no tagged fields
                         """), client_host_address=bytes([127, 0, 0, 1])))),
    Recorded("msgs/001278_c3_resp_Envelope_v0_c0.bin", 58, 0, "resp", lambda: framing.encode_response(
        58, 0, 0, M("EnvelopeResponse", error_code=0,
                    response_data=_inner("envelope-inner/001278_inner_resp_api55_v2_c4.bin")))),
    Recorded("envelope-inner/001277_inner_req_api55_v2_c4.bin", 55, 2, "req", _req(
        55, 2, 4, "adminclient-1", "DescribeQuorumRequest", topics=[S(
            "DescribeQuorumRequest", "TopicData", topic_name="__cluster_metadata",
            partitions=[S("DescribeQuorumRequest", "PartitionData", partition_index=0)])])),
    Recorded("envelope-inner/001278_inner_resp_api55_v2_c4.bin", 55, 2, "resp", None),
    Recorded("envelope-inner/001629_inner_req_api19_v7_c3.bin", 19, 7, "req", _req(
        19, 7, 3, "adminclient-1", "CreateTopicsRequest", timeout_ms=29977, topics=[S(
            "CreateTopicsRequest", "CreatableTopic", name="t-three", num_partitions=3, replication_factor=2)])),
    Recorded("envelope-inner/001637_inner_resp_api19_v7_c3.bin", 19, 7, "resp", None),
    Recorded("envelope-inner/001923_inner_req_api44_v1_c4.bin", 44, 1, "req", _req(
        44, 1, 4, "adminclient-1", "IncrementalAlterConfigsRequest", resources=[S(
            "IncrementalAlterConfigsRequest", "AlterConfigsResource", resource_type=2, resource_name="t-three",
            configs=[S("IncrementalAlterConfigsRequest", "AlterableConfig", name=k, value=v)
                     for k, v in (("max.message.bytes", "2000000"), ("retention.ms", "3600000"))])])),
    Recorded("envelope-inner/001932_inner_resp_api44_v1_c4.bin", 44, 1, "resp", _resp(
        44, 1, 4, "IncrementalAlterConfigsResponse", responses=[S(
            "IncrementalAlterConfigsResponse", "AlterConfigsResourceResponse", error_message=None,
            resource_type=2, resource_name="t-three")])),
    Recorded("envelope-inner/001995_inner_req_api33_v2_c4.bin", 33, 2, "req", _req(
        33, 2, 4, "adminclient-1", "AlterConfigsRequest", resources=[S(
            "AlterConfigsRequest", "AlterConfigsResource", resource_type=4, resource_name="",
            configs=[S("AlterConfigsRequest", "AlterableConfig", name="log.cleaner.threads", value="2")])])),
    Recorded("envelope-inner/002000_inner_resp_api33_v2_c4.bin", 33, 2, "resp", _resp(
        33, 2, 4, "AlterConfigsResponse", responses=[S(
            "AlterConfigsResponse", "AlterConfigsResourceResponse", error_message=None, resource_type=4,
            resource_name="")])),
    Recorded("envelope-inner/002283_inner_req_api20_v6_c4.bin", 20, 6, "req", _req(
        20, 6, 4, "adminclient-1", "DeleteTopicsRequest", timeout_ms=30000,
        topics=[S("DeleteTopicsRequest", "DeleteTopicState", name="doomed", topic_id=ZERO_UUID)])),
    Recorded("envelope-inner/002292_inner_resp_api20_v6_c4.bin", 20, 6, "resp", _resp(
        20, 6, 4, "DeleteTopicsResponse", responses=[S(
            "DeleteTopicsResponse", "DeletableTopicResult", name="doomed",
            topic_id=Uuid(bytes.fromhex("452e371cd803406887c0d17c418645f9")))])),
    Recorded("envelope-inner/002377_inner_req_api46_v0_c9.bin", 46, 0, "req", _req(
        46, 0, 9, "adminclient-1", "ListPartitionReassignmentsRequest", timeout_ms=30000, topics=[S(
            "ListPartitionReassignmentsRequest", "ListPartitionReassignmentsTopics", name=name, partition_indexes=ids)
            for name, ids in (("t-six", [2, 1, 0, 5, 4, 3]), ("t-three", [2, 1, 0]), ("t-single", [0]))])),
    Recorded("envelope-inner/002378_inner_resp_api46_v0_c9.bin", 46, 0, "resp", _resp(
        46, 0, 9, "ListPartitionReassignmentsResponse", error_message=None)),
    Recorded("envelope-inner/002793_inner_req_api64_v0_c3.bin", 64, 0, "req", _req(
        64, 0, 3, "adminclient-1", "UnregisterBrokerRequest", broker_id=5)),
    Recorded("envelope-inner/002798_inner_resp_api64_v0_c3.bin", 64, 0, "resp", _resp(
        64, 0, 3, "UnregisterBrokerResponse", error_message="")),  # the success carries "", not null
]


def _inner(file: str) -> bytes:
    """Return an unpacked Envelope inner frame without its size prefix."""
    return framing.strip_size(_read(file))


def _read(file: str) -> bytes:
    path = WIRE / file
    if not path.is_file():
        pytest.skip(f"Kafka wire fixture {path} not found (../shared is absent)")
    return path.read_bytes()


def _decode(case: Recorded, data: bytes):
    frame = framing.strip_size(data)
    if case.direction == "req":
        return framing.decode_request(frame)
    return framing.decode_response(case.api_key, case.version, frame)


def _reencode(case: Recorded, header, body) -> bytes:
    if case.direction == "req":
        return framing.encode_request_frame(header, body)
    return framing.encode_response_frame(case.api_key, case.version, header, body)


BUILT = [c for c in RECORDED if c.build]


@pytest.mark.parametrize("case", BUILT, ids=[c.file.split("/")[1] for c in BUILT])
def test_built_from_scratch_matches_recorded_frame(case: Recorded):
    assert case.build() == _read(case.file)


SPOT_CHECKS = {}


def _spot(file_prefix: str):
    def register(fn):
        SPOT_CHECKS[file_prefix] = fn
        return fn
    return register


# APIs whose specs go past Kafka 3.9: Vote v2 (KIP-996), DescribeCluster v2 (KIP-1073), Fetch v18, UpdateFeatures v2,
# AddRaftVoter v1, AlterPartitionReassignments v1 (Kafka 4.x; each release's controller advertises its own,
# api_versions.RELEASE_RANGES)
KAFKA_39_MAX = {"Vote": 1, "DescribeCluster": 1, "Fetch": 17, "UpdateFeatures": 1, "AddRaftVoter": 0,
                "AlterPartitionReassignments": 0}


@_spot("msgs/000002")
def _api_versions_from_a_controller(header, body):
    advertised = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert body.error_code == 0 and len(advertised) == 42
    for key, info in framing.api_registry().items():
        listeners = codec.message_class(info.request).spec.listeners
        if "controller" in listeners:  # reference §5.1: a controller lists exactly these
            hi = KAFKA_39_MAX.get(info.name, info.valid_versions.hi)
            assert advertised[key] == (info.valid_versions.lo, hi), info.name
        else:
            assert key not in advertised, info.name  # e.g. Metadata is not served by controllers
    assert [f.name for f in body.supported_features] == ["kraft.version", "metadata.version"]


@_spot("msgs/000025")
def _raft_fetch_request(header, body):
    assert header.client_id == "raft-client-2" and body.replica_state.replica_id == 2
    assert body.cluster_id == CLUSTER_ID and body.max_bytes == 8 * 1024 * 1024  # reference §5.1
    (topic,) = body.topics
    assert topic.topic_id == ONE_UUID and [p.partition for p in topic.partitions] == [0]


@_spot("msgs/000026")
def _raft_fetch_response(header, body):
    (partition,) = body.responses[0].partitions
    assert body.responses[0].topic_id == ONE_UUID
    assert (partition.current_leader.leader_id, partition.current_leader.leader_epoch) == (3, 3)
    assert partition.records[16] == 2  # record batch magic v2
    assert [(n.node_id, n.host, n.port) for n in body.node_endpoints] == [(3, "127.0.0.1", 29095)]


@_spot("msgs/000173")
def _broker_registration(header, body):
    assert (header.client_id, body.broker_id, body.cluster_id) == ("5", 5, CLUSTER_ID)
    assert [(x.name, x.port) for x in body.listeners] == [("PLAINTEXT", 29193)]
    assert [f.name for f in body.features] == ["kraft.version", "metadata.version"]
    assert body.previous_broker_epoch == -1 and len(body.log_dirs) == 1


@_spot("envelope-inner/001278")
def _describe_quorum(header, body):
    (partition,) = body.topics[0].partitions
    assert partition.leader_id == 3
    assert [v.replica_id for v in partition.current_voters] == [1, 2, 3]
    assert [o.replica_id for o in partition.observers] == [4, 5]
    assert [n.node_id for n in body.nodes] == [1, 2, 3]


@_spot("envelope-inner/001637")
def _create_topics_result(header, body):
    (topic,) = body.topics
    assert (topic.name, topic.num_partitions, topic.replication_factor, topic.error_code) == ("t-three", 3, 2, 0)
    assert ("cleanup.policy", "delete") in [(c.name, c.value) for c in topic.configs]


SPOTTED = [c for c in RECORDED if not c.build]


@pytest.mark.parametrize("case", SPOTTED, ids=[c.file.split("/")[1] for c in SPOTTED])
def test_recorded_frame_decodes_to_known_facts(case: Recorded):
    data = _read(case.file)
    header, body = _decode(case, data)
    SPOT_CHECKS[case.file[:case.file.index("_")]](header, body)
    assert _reencode(case, header, body) == data


def test_unregister_broker_story_from_the_readme():
    codes = []
    for path in sorted((WIRE / "envelope-inner").glob("*_inner_resp_api64_v0_*.bin")):
        codes.append(framing.decode_response(64, 0, framing.strip_size(path.read_bytes()))[1].error_code)
    if not codes:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    assert codes == [0, 102, 102]  # a success, then BROKER_ID_NOT_REGISTERED twice


def test_every_rpc_is_covered_at_lowest_and_highest_version():
    covered = {(c.name, c.version) for c in HAND}
    for c in RECORDED:
        info = framing.api_info(c.api_key)
        covered.add((info.request if c.direction == "req" else info.response, c.version))
    assert set(SPOT_CHECKS) == {c.file[:c.file.index("_")] for c in SPOTTED}
    for info in framing.api_registry().values():
        for name in (info.request, info.response):
            for version in (info.valid_versions.lo, info.valid_versions.hi):
                assert (name, version) in covered, (name, version)
