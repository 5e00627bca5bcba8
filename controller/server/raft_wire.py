"""Raft envelopes on the wire: requests from the core to Kafka frames, and inbound request bodies to envelopes.

Rules:
- Outbound requests use the core's versions (messages.VERSIONS) except Vote, which goes at the highest
  version our schema has (v2, KIP-996) so that `Envelope.pre_vote` travels in the PreVote field.
  A pre-vote cannot be said below Vote v2: `wire_body` raises PreVoteUnsupported rather than turn it
  into a real vote.
- Inbound requests are accepted at any version our schemas decode: the generated class is one per
  message, so fields an older version lacks keep their defaults (as Kafka's generated Data classes do).
- `src` comes from the body (Vote: candidate_id, Begin/EndQuorumEpoch: leader_id, Fetch: Kafka's
  FetchRequest.replicaId rule, messages.fetch_replica_id; FetchSnapshot: replica_id, others: -1); `dst` is us.
- Endpoints travel as Kafka sends them (KIP-853): every Raft response that names a leader carries that
  leader's endpoint in its NodeEndpoints tagged field (Fetch v16+, Vote/Begin/EndQuorumEpoch/FetchSnapshot
  v1+; Kafka's RaftUtil), and Begin/EndQuorumEpoch requests carry the leader's LeaderEndpoints. A replica
  that knows no address for the leader (an observer that found it through a bootstrap server) learns it
  from there: `message_endpoints` reads them.
"""
from __future__ import annotations

from kraftsman.controller.raft import messages
from kraftsman.controller.raft.messages import Envelope
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

VOTE_WIRE_VERSION = codec.message_class("VoteRequest").spec.valid_versions.hi
WIRE_VERSIONS = {**messages.VERSIONS, "Vote": max(messages.VERSIONS["Vote"], VOTE_WIRE_VERSION)}
PRE_VOTE_MIN_VERSION = 2


class PreVoteUnsupported(ValueError):
    """A pre-vote request cannot be encoded at a Vote version below 2."""


def unsupported_vote_response():
    """Return the VoteResponse a pre-vote gets from a peer that speaks Vote below v2 (UNSUPPORTED_VERSION)."""
    return messages.vote_response(Errors.UNSUPPORTED_VERSION)


def api_name(env: Envelope) -> str:
    """Return the API name of an envelope's body ('Vote' for a VoteRequest)."""
    return env.name.removesuffix("Request").removesuffix("Response")


def wire_body(env: Envelope, version: int):
    """Return the body to send at `version`: for Vote, a copy with PreVote set from the envelope."""
    body = env.body
    if api_name(env) != "Vote":
        return body
    if version < PRE_VOTE_MIN_VERSION:
        if env.pre_vote:
            raise PreVoteUnsupported(f"a pre-vote needs Vote v{PRE_VOTE_MIN_VERSION}+, the peer speaks v{version}")
        return body
    topics = [t.replace(partitions=[p.replace(pre_vote=env.pre_vote) for p in t.partitions]) for t in body.topics]
    return body.replace(topics=topics)


def encode_raft_request(env: Envelope, correlation_id: int, client_id: str | None, version: int | None = None) -> bytes:
    """Return the sized request frame of a Raft request envelope (at WIRE_VERSIONS unless `version`)."""
    name = api_name(env)
    version = WIRE_VERSIONS[name] if version is None else version
    return framing.encode_request(env.api_key, version, correlation_id, client_id, wire_body(env, version))


def request_src(api: str, body) -> int:
    """Return the replica id that sent a Raft request, read from its body (-1 when it does not say)."""
    if api == "Vote":
        return _first_partition(body, "candidate_id")
    if api in ("BeginQuorumEpoch", "EndQuorumEpoch"):
        return _first_partition(body, "leader_id")
    if api == "Fetch":
        return messages.fetch_replica_id(body)
    if api == "FetchSnapshot":
        return body.replica_id
    return -1


def _first_partition(body, field: str) -> int:
    for topic in body.topics:
        for part in topic.partitions:
            return getattr(part, field)
    return -1


def raft_request_from_wire(api: str, version: int, body, server_node_id: int) -> Envelope:
    """Wrap an inbound Raft request body (decoded at `version`) in an Envelope for the core."""
    pre_vote = False
    if api == "Vote" and version >= PRE_VOTE_MIN_VERSION:
        pre_vote = any(p.pre_vote for t in body.topics for p in t.partitions)
    return Envelope(request_src(api, body), server_node_id, -1, body, pre_vote)


NODE_ENDPOINTS_MIN_VERSION = {"Fetch": 16, "FetchSnapshot": 1, "Vote": 1, "BeginQuorumEpoch": 1, "EndQuorumEpoch": 1}


def response_leader(body) -> int:
    """Return the leader id a Raft response names (-1 when it names none)."""
    topics = getattr(body, "responses", None)
    if topics is None:
        topics = getattr(body, "topics", ())
    for topic in topics:
        for part in topic.partitions:
            current = getattr(part, "current_leader", None)
            return current.leader_id if current is not None else getattr(part, "leader_id", -1)
    return -1


def add_leader_endpoint(api: str, version: int, body, address_of):
    """Name the response's leader in its NodeEndpoints (Kafka's RaftUtil: when the version has the field and
    the leader's address on this listener is known); `address_of(id)` returns (host, port) or None."""
    if body is None or version < NODE_ENDPOINTS_MIN_VERSION.get(api, 1 << 15):
        return body
    leader = response_leader(body)
    address = address_of(leader) if leader >= 0 else None
    if address is not None and not any(e.node_id == leader for e in body.node_endpoints):
        body.node_endpoints = [*body.node_endpoints, type(body).NodeEndpoint(node_id=leader, host=address[0],
                                                                             port=address[1])]
    return body


def message_endpoints(body, listener_name: str) -> dict[int, tuple[str, int]]:
    """Return the node addresses a Raft message carries: a response's NodeEndpoints, a Begin/EndQuorumEpoch
    request's LeaderEndpoints on `listener_name` (for its leader id)."""
    out = {e.node_id: (e.host, e.port) for e in getattr(body, "node_endpoints", ()) if e.node_id >= 0}
    leader_endpoints = getattr(body, "leader_endpoints", None)
    if leader_endpoints:
        leader = _first_partition(body, "leader_id")
        for e in leader_endpoints:
            if leader >= 0 and e.name == listener_name:
                out[leader] = (e.host, e.port)
    return out


async def warm_codecs() -> None:
    """Generate the Raft messages' codecs now, one per event-loop turn, rather than on first use: a voter
    that has only ever followed would otherwise generate Vote, BeginQuorumEpoch and Fetch-as-leader
    codecs during a failover, some 10-20 ms each in series with every round trip of the election."""
    import asyncio

    for api, version in WIRE_VERSIONS.items():
        for name in (f"{api}Request", f"{api}Response"):
            for make in (codec.decoder, codec.encoder):
                await asyncio.sleep(0)
                make(name, version)
