"""A fake Kafka 3.9 controller quorum for client tests: standbys that refuse as Kafka 3.9's do, one active controller.

Rules:
- The standbys' answers are real Kafka 3.9 frames from shared/fixtures/kafka-wire-3.9 (a standby, c1, answering
  an Admin client's ApiVersions and DescribeCluster v1, and a broker's Fetch v17), with only the controllers'
  ports changed to the fakes'; the tests skip when those fixtures are absent.
- As in Kafka 3.9: DescribeCluster (EndpointType 2) names the active controller (ControllerId) and lists every
  controller's endpoint, and EndpointType 1 (brokers) is MISMATCHED_ENDPOINT_TYPE with Kafka's message; UnregisterBroker and UpdateFeatures answer NOT_CONTROLLER with no message;
  DescribeQuorum answers NOT_LEADER_OR_FOLLOWER with the schema's defaults (LeaderId 0, LeaderEpoch 0, no
  Nodes: DescribeQuorumResponse.singletonErrorResponse); Fetch answers NOT_LEADER_OR_FOLLOWER naming the leader
  and its endpoint. With `election=True` (no leader yet) ControllerId is -1 and Fetch names no leader (LeaderId -1
  in a newer epoch, no endpoint: frame 004190).
- The active controller (node 3) answers everything, with finalized features epoch ACTIVE_EPOCH so that a test
  can tell which controller described the features; its Fetch serves `log` up to `high_watermark`.
"""
from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import pytest

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft import records as R
from kraftsman.storage.protocol import codec, framing

from .sync_fakes import FakeServer, body

WIRE = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kafka-wire-3.9" / "msgs"
FRAMES = {"ApiVersions": ("001085_c1_resp_ApiVersions_v4_c0.bin", 4),
          "DescribeCluster": ("001088_c1_resp_DescribeCluster_v1_c1.bin", 1),
          "Fetch": ("004108_c1_resp_Fetch_v17_c568.bin", 17),
          "FetchElection": ("004190_c2_resp_Fetch_v17_c621.bin", 17)}
FIXTURE_PORTS = {1: 29093, 2: 29094, 3: 29095}
ACTIVE, STANDBYS, ACTIVE_EPOCH = 3, (1, 2), 9
NOT_LEADER_OR_FOLLOWER, NOT_CONTROLLER, MISMATCHED_ENDPOINT_TYPE = 6, 41, 114


def real_body(name: str):
    """Return the decoded body of one of FRAMES (skip the test when the fixtures are absent)."""
    path = WIRE / FRAMES[name][0]
    if not path.is_file():
        pytest.skip(f"{path} is absent (shared/fixtures/kafka-wire-3.9)")
    api = name.removesuffix("Election")
    info = next(i for i in framing.api_registry().values() if i.name == api)
    frame = path.read_bytes()[4:]
    flexible = FRAMES[name][1] in info.flexible_versions and info.api_key != 18
    _, pos = codec.decoder("ResponseHeader", 1 if flexible else 0)(frame, 0)
    return codec.decoder(api + "Response", FRAMES[name][1])(frame, pos)[0]


@dataclasses.dataclass
class Kafka39Quorum:
    """Three fake controllers on 127.0.0.1: standbys 1 and 2, active controller 3."""

    servers: dict = dataclasses.field(default_factory=dict)
    log: list = dataclasses.field(default_factory=list)       # record batches the active controller serves
    high_watermark: int = 0
    election: bool = False              # no leader: DescribeCluster's ControllerId and Fetch's LeaderId are -1
    leader_epoch: int = 3               # the active controller's epoch (an election runs in the next one)
    fetch_endpoints: bool = True        # False: Fetch refusals carry no NodeEndpoints (as before Fetch v17)

    def address(self, node_id: int) -> str:
        return self.servers[node_id].address

    def apis(self, node_id: int) -> list[int]:
        """Return the api keys node `node_id` was sent, ApiVersions left out."""
        return [h.request_api_key for h, _ in self.servers[node_id].requests if h.request_api_key != 18]

    # ------------------------------------------------------------ the standbys (Kafka 3.9's answers)
    def standby(self, header, request):
        api = header.request_api_key
        if api == 18:
            return real_body("ApiVersions")
        if api == 60:
            return self.describe_cluster(request)
        if api == 55:
            cls = codec.message_class("DescribeQuorumResponse")
            part = cls.PartitionData(partition_index=0, error_code=NOT_LEADER_OR_FOLLOWER)
            return cls(topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[part])])
        if api == 64:
            return body("UnregisterBrokerResponse", error_code=NOT_CONTROLLER)
        if api == 57:
            return body("UpdateFeaturesResponse", error_code=NOT_CONTROLLER, results=[])
        if api == 1:
            return self.fetch_refusal()
        raise AssertionError(f"a standby got api {api}")

    def describe_cluster(self, request=None):
        if request is not None and request.endpoint_type != 2:
            return codec.message_class("DescribeClusterResponse")(
                error_code=MISMATCHED_ENDPOINT_TYPE, endpoint_type=request.endpoint_type, cluster_id="",
                error_message="The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of "
                              "type BROKER")
        answer = real_body("DescribeCluster")
        for node in answer.brokers:
            node.port = self.servers[node.broker_id].port
        if self.election:
            answer.controller_id = -1
        return answer

    def fetch_refusal(self):
        answer = real_body("FetchElection" if self.election else "Fetch")
        for node in answer.node_endpoints:
            node.port = self.servers[node.node_id].port
        if not self.fetch_endpoints:
            answer.node_endpoints = []
        answer.responses[0].partitions[0].current_leader.leader_epoch = self.leader_epoch + self.election
        return answer

    # ------------------------------------------------------------ the active controller
    def active(self, header, request):
        api = header.request_api_key
        if api == 18:
            answer = real_body("ApiVersions")
            answer.finalized_features_epoch = ACTIVE_EPOCH
            return answer
        if api == 60:
            return self.describe_cluster(request)
        if api == 55:
            return self.describe_quorum()
        if api == 64:
            return body("UnregisterBrokerResponse", error_code=0)
        if api == 57:
            cls = codec.message_class("UpdateFeaturesResponse")
            results = [cls.UpdatableFeatureResult(feature=u.feature, error_code=0) for u in request.feature_updates]
            return cls(error_code=0, results=results)
        if api == 1:
            records = R.join_batches(b for b in self.log if b.base_offset >= request.topics[0].partitions[0].fetch_offset)
            return msg.fetch_response(0, 0, ACTIVE, self.leader_epoch, self.high_watermark, records)
        raise AssertionError(f"the active controller got api {api}")

    def describe_quorum(self):
        cls = codec.message_class("DescribeQuorumResponse")
        voters = [cls.ReplicaState(replica_id=i, replica_directory_id=bytes(16), log_end_offset=100,
                                   last_fetch_timestamp=1000, last_caught_up_timestamp=1000) for i in (1, 2, 3)]
        part = cls.PartitionData(partition_index=0, leader_id=ACTIVE, leader_epoch=3, high_watermark=100,
                                 current_voters=voters, observers=[])
        nodes = [cls.Node(node_id=i, listeners=[cls.Listener(name="CONTROLLER", host="127.0.0.1", port=s.port)])
                 for i, s in sorted(self.servers.items())]
        return cls(topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[part])], nodes=nodes)


@contextlib.contextmanager
def kafka39_quorum():
    """Yield a running Kafka39Quorum; close its servers afterwards."""
    real_body("DescribeCluster")        # skip early without the fixtures
    quorum = Kafka39Quorum()
    with contextlib.ExitStack() as stack:
        for node_id in (*STANDBYS, ACTIVE):
            server = stack.enter_context(FakeServer(quorum.active if node_id == ACTIVE else quorum.standby))
            server.ranges = None        # ApiVersions goes to the handler too: the real frame's versions
            quorum.servers[node_id] = server
        yield quorum
