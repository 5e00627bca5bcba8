"""PeerEndpoints (where peers are reached, what clients are shown) and WriteForwarder (standby -> leader)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from kraftsman.controller.raft.voters import VoterNode, VoterSet
from kraftsman.controller.server.config import from_properties
from kraftsman.controller.server.forwarding import FORWARDED, WriteForwarder
from kraftsman.controller.server.network import Listener
from kraftsman.controller.server.peer_endpoints import PeerEndpoints
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors

CreateTopics = codec.message_class("CreateTopicsRequest")
CreateTopicsResponse = codec.message_class("CreateTopicsResponse")


def config(**extra):
    props = {"process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@h1:9093,2@h2:9093",
             "listeners": "CONTROLLER://0.0.0.0:9093,EXTERNAL://0.0.0.0:9094",
             "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT"}
    return from_properties(props | extra)


def voters(*nodes):
    return VoterSet([VoterNode(i, bytes(16), eps) for i, eps in nodes])


def test_configured_voters_come_first_then_the_voter_set_then_learned_addresses():
    peers = PeerEndpoints(config(), "h1")
    vs = voters((1, (("CONTROLLER", "h1", 9093),)), (2, (("CONTROLLER", "other", 1),)),
                (3, (("CONTROLLER", "h3", 9093), ("EXTERNAL", "x", 1))))
    assert peers.learn({3: ("learned", 7), 4: ("h4", 9093), 1: ("me", 1)}, known={})
    assert peers.table(vs) == {2: ("h2", 9093), 3: ("h3", 9093), 4: ("h4", 9093)}
    assert peers.learned == {4: ("h4", 9093)}  # 3 is in the voter set: its learned address is forgotten
    assert not peers.learn({4: ("h4", 9093)}, known={})  # nothing new: no rebuild of the router's map
    known = peers.table(vs)
    assert not peers.learn({2: ("elsewhere", 1), 3: ("elsewhere", 1)}, known)  # configured, voter set: kept
    assert peers.learn({4: ("h4-moved", 9093)}, known) and peers.table(vs)[4] == ("h4-moved", 9093)


def test_clients_see_voters_on_their_listener_and_registered_endpoints_elsewhere():
    peers = PeerEndpoints(config(), "h1")
    vs = voters((1, ()), (2, ()))
    listeners = [SimpleNamespace(name="CONTROLLER", port=19093), SimpleNamespace(name="EXTERNAL", port=19094)]
    nodes = peers.controller_nodes(vs, None, listeners, None)
    assert [(n.node_id, n.host, n.port) for n in nodes] == [(1, "h1", 19093), (2, "h2", 9093)]
    endpoint = SimpleNamespace(name="EXTERNAL", host="e2", port=9094)
    committed = SimpleNamespace(cluster=SimpleNamespace(controllers={
        2: SimpleNamespace(record=SimpleNamespace(end_points=[endpoint])),
        7: SimpleNamespace(record=SimpleNamespace(end_points=[endpoint]))}))  # 7 is no voter: left out
    nodes = peers.controller_nodes(vs, committed, listeners, "EXTERNAL")
    assert [(n.node_id, n.host, n.port) for n in nodes] == [(1, "h1", 19094), (2, "e2", 9094)]


def create_t():
    return CreateTopics(topics=[CreateTopics.CreatableTopic(name="t", num_partitions=1, replication_factor=1)])


def test_a_standby_relays_a_write_once_and_refuses_a_second_hop_or_an_unknown_leader():
    seen = []

    async def leader(ctx, body):
        seen.append(ctx.client_id)
        return CreateTopicsResponse(throttle_time_ms=7)

    async def body():
        listener = Listener("CONTROLLER", "127.0.0.1", 0, leader)
        await listener.start()
        forwarder = WriteForwarder(3, None, timeout_ms=2000)
        address = ("127.0.0.1", listener.port)
        answer = await forwarder.forward(2, address, "CreateTopics", 7, create_t(), "admin")
        hop = await forwarder.forward(2, address, "CreateTopics", 7, create_t(), f"{FORWARDED}1")
        unknown = await forwarder.forward(None, None, "CreateTopics", 7, create_t(), "admin")
        await listener.close()
        gone = await forwarder.forward(2, address, "CreateTopics", 7, create_t(), "admin")
        await forwarder.close()
        return answer, hop, unknown, gone

    answer, hop, unknown, gone = asyncio.run(asyncio.wait_for(body(), 10))
    assert answer.throttle_time_ms == 7 and seen == [f"{FORWARDED}3"]
    for refused in (hop, unknown, gone):
        assert [(t.name, t.error_code) for t in refused.topics] == [("t", Errors.NOT_CONTROLLER)]


def test_a_standby_answers_a_brokers_enveloped_write_not_controller_and_relays_a_direct_one():
    """Kafka's standby controllers never relay a write a broker forwarded in an Envelope: NOT_CONTROLLER sends the
    broker to the active controller (with the client's principal). A direct client write is still relayed."""
    from kraftsman.controller.server.dispatch import Dispatcher
    from kraftsman.controller.server.network import RequestContext

    relayed = []
    server = SimpleNamespace(authorizer=None, driver=SimpleNamespace(is_active=False, node=SimpleNamespace(leader_id=2)),
                             quorum=SimpleNamespace(handlers={"CreateTopics": None}, is_read_only=lambda name: False),
                             peer_endpoints=lambda: {2: ("h2", 9093)},
                             forwarder=SimpleNamespace(forward=lambda *a: relayed.append(a) or "relayed"))

    def ctx(forwarded_by):
        return RequestContext(19, 7, "CreateTopics", 1, "admin", None, "CONTROLLER", ("127.0.0.1", 1), "c",
                              forwarded_by=forwarded_by)
    enveloped = Dispatcher(server).handle(ctx("4"), create_t())
    assert [(t.name, t.error_code) for t in enveloped.topics] == [("t", Errors.NOT_CONTROLLER)] and not relayed
    assert Dispatcher(server).handle(ctx(None), create_t()) == "relayed" and len(relayed) == 1
