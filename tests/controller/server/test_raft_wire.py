"""raft_wire: Raft envelopes to Kafka frames and back, checked against a real Kafka 3.9 quorum's frames.

Oracles: Kafka's raft client names itself `raft-client-<node id>` (the sender), the proxy name `c<N>`
is the receiving controller, and re-encoding must give Kafka's bytes back.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft.config import RaftConfig
from kraftsman.controller.raft.core import RaftNode
from kraftsman.controller.raft.log import MemoryLog
from kraftsman.controller.server import raft_wire
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"
RAFT_APIS = ("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch")


def _raft_requests() -> list[dict]:
    index = WIRE / "index.jsonl"
    if not index.is_file():
        return []
    rows = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["direction"] == "req" and r["api_name"] in RAFT_APIS and r["proxy"][0] == "c"]


FRAMES = _raft_requests()


def _need_frames():
    if not FRAMES:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")


def test_fixture_holds_every_raft_request_kind_kafka_sent():
    _need_frames()
    assert {r["api_name"] for r in FRAMES} == {"Vote", "BeginQuorumEpoch", "Fetch"}


@pytest.mark.parametrize("row", FRAMES, ids=[r["file"].split("/")[1] for r in FRAMES])
def test_golden_raft_request_decodes_to_an_envelope_and_back(row):
    data = (WIRE / row["file"]).read_bytes()
    header, body = framing.decode_request(framing.strip_size(data))
    server = int(row["proxy"][1:])
    env = raft_wire.raft_request_from_wire(row["api_name"], row["api_version"], body, server)
    assert env.dst == server
    assert env.src == int(row["client_id"].removeprefix("raft-client-"))
    assert env.pre_vote is False and env.body is body
    if row["api_name"] in ("Vote", "BeginQuorumEpoch"):
        assert body.voter_id == server  # v1: the request names its recipient
    assert msg.partition_of(body) is not None  # the core's shape check accepts it
    again = raft_wire.encode_raft_request(env, header.correlation_id, header.client_id, version=row["api_version"])
    assert again == data


def test_core_versions_are_kafkas_except_vote_which_goes_to_v2():
    _need_frames()
    seen = {r["api_name"]: r["api_version"] for r in FRAMES}
    assert raft_wire.WIRE_VERSIONS["Fetch"] == seen["Fetch"] == 17
    assert raft_wire.WIRE_VERSIONS["BeginQuorumEpoch"] == seen["BeginQuorumEpoch"]
    assert seen["Vote"] == 1 and raft_wire.WIRE_VERSIONS["Vote"] == 2


def _golden_vote() -> tuple[bytes, msg.Envelope, int, str]:
    _need_frames()
    row = next(r for r in FRAMES if r["api_name"] == "Vote")
    data = (WIRE / row["file"]).read_bytes()
    header, body = framing.decode_request(framing.strip_size(data))
    return data, raft_wire.raft_request_from_wire("Vote", 1, body, 1), header.correlation_id, header.client_id


def test_pre_vote_travels_in_vote_v2():
    data, env, cid, client_id = _golden_vote()
    env.pre_vote = True
    v2 = raft_wire.encode_raft_request(env, cid, client_id)
    # By hand from the v1 frame: size + 1, api version 2, PreVote byte 01 before the three tag sections.
    expected = (len(data) - 4 + 1).to_bytes(4, "big") + data[4:6] + b"\x00\x02" + data[8:-3] + b"\x01\x00\x00\x00"
    assert v2 == expected
    header, body = framing.decode_request(framing.strip_size(v2))
    back = raft_wire.raft_request_from_wire("Vote", header.request_api_version, body, 1)
    assert back.pre_vote is True and back.src == env.src
    assert env.body.topics[0].partitions[0].pre_vote is False  # the core's body is not mutated


def test_pre_vote_cannot_be_said_below_v2_and_a_real_vote_can():
    data, env, cid, client_id = _golden_vote()
    assert raft_wire.encode_raft_request(env, cid, client_id, version=1) == data
    env.pre_vote = True
    with pytest.raises(raft_wire.PreVoteUnsupported, match="v2"):
        raft_wire.encode_raft_request(env, cid, client_id, version=1)


def test_src_of_other_requests():
    Fetch = codec.message_class("FetchRequest")
    assert raft_wire.request_src("Fetch", Fetch(replica_id=7)) == 7  # v0-v14 carry ReplicaId at the top
    assert raft_wire.request_src("Fetch", Fetch(replica_state=Fetch.ReplicaState(replica_id=3))) == 3
    assert raft_wire.request_src("FetchSnapshot", codec.message_class("FetchSnapshotRequest")(replica_id=5)) == 5
    assert raft_wire.request_src("DescribeQuorum", msg.describe_quorum_request()) == -1
    end = msg.end_epoch_request("c", 4, 2, [(3, bytes(16))])
    assert raft_wire.raft_request_from_wire("EndQuorumEpoch", 1, end, 1).src == 2


def _node(node_id: int = 1) -> RaftNode:
    cfg = RaftConfig(node_id=node_id, voters=(1, 2, 3), endpoints=(("CONTROLLER", "localhost", 9001),))
    return RaftNode(cfg, MemoryLog(), random.Random(0))


def _reply(node: RaftNode, env: msg.Envelope) -> msg.Envelope:
    node.step(env)
    rd = node.ready()
    (reply,) = [m for m in rd.messages if m.dst == env.src]
    return reply


def _at(name: str, version: int, body):
    """Encode at `version` and decode again: what the listener hands over for an old client."""
    return codec.decode(name, version, codec.encode(name, version, body))


def test_vote_v0_from_the_wire_is_granted_by_the_core():
    body = msg.vote_request(None, 1, 2, bytes(16), 1, bytes(16), 0, 0)
    old = _at("VoteRequest", 0, body)
    assert old.voter_id == -1  # v0 has no VoterId: the default
    reply = _reply(_node(1), raft_wire.raft_request_from_wire("Vote", 0, old, 1))
    part = reply.body.topics[0].partitions[0]
    assert reply.body.error_code == 0 and part.error_code == 0 and part.vote_granted is True


def test_fetch_v0_from_the_wire_names_no_topic_id_and_gets_invalid_request():
    Fetch = codec.message_class("FetchRequest")  # a v0 follower: ReplicaId at the top, topics by name
    part = Fetch.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)
    body = Fetch(replica_id=2, max_wait_ms=500, min_bytes=0,
                 topics=[Fetch.FetchTopic(topic=msg.TOPIC, partitions=[part])])
    old = _at("FetchRequest", 0, body)
    env = raft_wire.raft_request_from_wire("Fetch", 0, old, 1)
    assert env.src == 2
    reply = _reply(_node(1), env)
    assert reply.body.error_code == Errors.INVALID_REQUEST


# ---------------------------------------------------------------- leader endpoints (KIP-853)

OBSERVER_FETCH_ANSWER = "msgs/004108_c1_resp_Fetch_v17_c568.bin"  # c1 (a follower) to observer 4: leader is 3


def _kafka_response(name: str):
    path = WIRE / name
    if not path.is_file():
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    _header, body = framing.decode_response(1, 17, framing.strip_size(path.read_bytes()))
    return body


def test_kafka_follower_names_the_leaders_endpoint_to_an_observer_and_we_read_it():
    body = _kafka_response(OBSERVER_FETCH_ANSWER)
    part = msg.partition_of(body)
    assert (part.error_code, part.current_leader.leader_id) == (Errors.NOT_LEADER_OR_FOLLOWER, 3)
    assert raft_wire.message_endpoints(body, "CONTROLLER") == {3: ("127.0.0.1", 29095)}


def test_our_fetch_answer_names_the_leaders_endpoint_as_kafkas_does():
    kafka = _kafka_response(OBSERVER_FETCH_ANSWER)
    leader = msg.partition_of(kafka).current_leader
    ours = msg.fetch_response(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER, leader.leader_id, leader.leader_epoch)
    ours = raft_wire.add_leader_endpoint("Fetch", 17, ours, {3: ("127.0.0.1", 29095)}.get)
    assert ours.node_endpoints == kafka.node_endpoints
    again = codec.decode("FetchResponse", 17, codec.encode("FetchResponse", 17, ours))
    assert raft_wire.message_endpoints(again, "CONTROLLER") == {3: ("127.0.0.1", 29095)}


def test_no_endpoint_without_a_leader_an_address_or_the_field():
    addresses = {1: ("h", 1)}.get
    assert raft_wire.add_leader_endpoint("Fetch", 17, msg.fetch_response(Errors.NONE), addresses).node_endpoints == []
    unknown = msg.fetch_response(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER, 2, 5)
    assert raft_wire.add_leader_endpoint("Fetch", 17, unknown, addresses).node_endpoints == []
    old = msg.fetch_response(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER, 1, 5)
    assert raft_wire.add_leader_endpoint("Fetch", 15, old, addresses).node_endpoints == []
    vote = raft_wire.add_leader_endpoint("Vote", 1, msg.vote_response(Errors.NONE, Errors.NONE, 1, 5), addresses)
    assert [(e.node_id, e.host, e.port) for e in vote.node_endpoints] == [(1, "h", 1)]
    assert raft_wire.add_leader_endpoint("DescribeQuorum", 2, None, addresses) is None


def test_begin_quorum_epoch_leader_endpoints_are_read_on_our_listener():
    body = msg.begin_epoch_request("c", 4, 2, 1, bytes(16), (("OTHER", "x", 1), ("CONTROLLER", "h", 9093)))
    assert raft_wire.message_endpoints(body, "CONTROLLER") == {2: ("h", 9093)}
    assert raft_wire.message_endpoints(body, "NOPE") == {}


def test_a_follower_refuses_a_fetch_with_the_bytes_kafkas_follower_sends():
    """Kafka 3.9's follower c1 told observer 4 that 3 leads epoch 3: error, leader, high watermark -1, and its log
    start offset (0), not -1."""
    kafka = _kafka_response(OBSERVER_FETCH_ANSWER)
    follower = RaftNode(RaftConfig(node_id=1, voters=(1, 2, 3), cluster_id=None), MemoryLog(), random.Random(1))
    follower.learn_leader(3, 3)
    follower.step(msg.Envelope(4, 1, 7, msg.fetch_request(None, 4, 3, 0, 0, 500, 1 << 20)))
    [answer] = [m for m in follower.ready().messages if m.dst == 4]
    ours = raft_wire.add_leader_endpoint("Fetch", 17, answer.body, {3: ("127.0.0.1", 29095)}.get)
    assert codec.encode("FetchResponse", 17, ours) == codec.encode("FetchResponse", 17, kafka)
