"""Connection and PeerRouter over real sockets on 127.0.0.1."""
from __future__ import annotations

import asyncio

import pytest

from kraftsman.controller.raft import messages as msg
from kraftsman.controller.server import raft_wire
from kraftsman.controller.server.network import Listener
from kraftsman.controller.server.peers import PeerRouter
from kraftsman.controller.wire.connection import Connection, ConnectionClosed, RequestTimeout, UnsupportedVersion
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

DescribeCluster = codec.message_class("DescribeClusterRequest")
DescribeClusterResponse = codec.message_class("DescribeClusterResponse")


def run(coro_fn, timeout: float = 10.0):
    return asyncio.run(asyncio.wait_for(coro_fn(), timeout))


async def serving(handler, port: int = 0, **kwargs) -> Listener:
    listener = Listener("CONTROLLER", "127.0.0.1", port, handler, **kwargs)
    await listener.start()
    return listener


async def slow_echo(ctx, body):
    """Answer DescribeCluster after a delay set by the request (endpoint_type = tenths of a second)."""
    await asyncio.sleep(body.endpoint_type / 10)
    return DescribeClusterResponse(cluster_id=f"{ctx.client_id}/{ctx.correlation_id}")


# ---------------------------------------------------------------- Connection


def test_pipelined_requests_get_their_own_responses():
    async def body():
        listener = await serving(slow_echo)
        conn = await Connection.open("127.0.0.1", listener.port, client_id="me")
        delays = [3, 0, 2, 1]
        results = await asyncio.gather(*(conn.request("DescribeCluster", 1, DescribeCluster(endpoint_type=d))
                                         for d in delays))
        assert [r.cluster_id for r in results] == ["me/0", "me/1", "me/2", "me/3"]
        await conn.close()
        await listener.close()
    run(body)


def test_a_request_without_answer_times_out_with_a_clear_error():
    async def handler(ctx, body):
        return None

    async def body():
        listener = await serving(handler)
        conn = await Connection.open("127.0.0.1", listener.port)
        with pytest.raises(RequestTimeout, match=r"DescribeCluster v1 to 127\.0\.0\.1:\d+ got no response within 100 ms"):
            await conn.request("DescribeCluster", 1, DescribeCluster(), timeout_ms=100)
        assert isinstance(RequestTimeout("x"), asyncio.TimeoutError) and not conn.closed
        await conn.close()
        await listener.close()
    run(body)


def test_a_server_that_closes_fails_pending_requests():
    async def handler(ctx, body):
        raise RuntimeError("handler bug")  # the listener closes the connection

    async def body():
        listener = await serving(handler)
        conn = await Connection.open("127.0.0.1", listener.port)
        with pytest.raises(ConnectionClosed, match="closed"):
            await conn.request("DescribeCluster", 1, DescribeCluster(), timeout_ms=2000)
        assert conn.closed
        with pytest.raises(ConnectionClosed):
            await conn.request("DescribeCluster", 1, DescribeCluster())
        await conn.close()
        await listener.close()
    run(body)


def test_a_task_cancelled_while_closing_a_connection_stays_cancelled():
    """close() waits for the reader, but must not swallow its own task's cancellation: a loop closing a
    connection in its error path (the broker simulator's fetcher) would never end, and asyncio.run with it."""
    async def body():
        listener = await serving(slow_echo)
        conn = await Connection.open("127.0.0.1", listener.port)
        finished = []

        async def closer():
            await conn.close()
            finished.append(True)
        task = asyncio.create_task(closer())
        await asyncio.sleep(0)  # closer now waits for the reader task
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished == [] and conn.closed
        await listener.close()
    asyncio.run(asyncio.wait_for(body(), 10))


def test_an_open_cancelled_as_its_connect_completes_stays_cancelled(monkeypatch):
    """Python 3.11's asyncio.wait_for returns the result when a cancel meets the inner connect's end; a peer's
    send loop opening a connection while the node stops then never ends, and neither does the controller's
    SIGTERM shutdown. Each cancel that lands must raise, whatever step of the open it meets."""
    async def body():
        listener = await serving(slow_echo)
        real, swallowed, landed = asyncio.open_connection, [], 0
        for steps in range(8):
            pair = await real("127.0.0.1", listener.port)

            async def instant(host, port, **kwargs):
                return pair
            monkeypatch.setattr(asyncio, "open_connection", instant)
            task = asyncio.create_task(Connection.open("127.0.0.1", listener.port))
            for _ in range(steps):
                await asyncio.sleep(0)
            if not task.cancel():  # it had already finished: nothing to swallow
                (await task).abort()
                continue
            landed += 1
            try:
                (await task).abort()
                swallowed.append(steps)
            except asyncio.CancelledError:
                pair[1].close()
            monkeypatch.setattr(asyncio, "open_connection", real)
        await listener.close()
        assert landed >= 1 and swallowed == []
    run(body)


def test_open_to_a_closed_port_raises_oserror():
    async def body():
        listener = await serving(slow_echo)
        port = listener.port
        await listener.close()
        with pytest.raises(OSError):
            await Connection.open("127.0.0.1", port, timeout_ms=1000)
    run(body)


def test_negotiate_reads_the_listener_table_and_picks_versions():
    async def body():
        table = {18: (0, 4), 52: (0, 1), 1: (4, 17)}
        ApiVersions = codec.message_class("ApiVersionsResponse")
        answer = ApiVersions(api_keys=[ApiVersions.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                                       for k, (lo, hi) in table.items()])
        listener = await serving(slow_echo, api_versions=answer)
        conn = await Connection.open("127.0.0.1", listener.port)
        assert await conn.negotiate() == table
        assert conn.pick_version("Vote", 2) == 1        # the server stops at v1
        assert conn.pick_version("Fetch", 17) == 17
        assert conn.pick_version(1, 12) == 12
        with pytest.raises(UnsupportedVersion, match="share no version of Fetch"):
            conn.pick_version("Fetch", 3)
        with pytest.raises(UnsupportedVersion, match="does not serve DescribeCluster"):
            conn.pick_version("DescribeCluster")
        await conn.close()
        await listener.close()
    run(body)


def test_negotiate_falls_back_as_kip_511_says():
    """A server that only knows ApiVersions v0-2 answers v4 with a v0 error body; the client retries at v2."""
    seen = []

    async def old_server(reader, writer):
        ApiVersions = codec.message_class("ApiVersionsResponse")
        while True:
            try:
                head = await reader.readexactly(4)
            except asyncio.IncompleteReadError:
                return
            frame = await reader.readexactly(int.from_bytes(head, "big"))
            version, cid = int.from_bytes(frame[2:4], "big"), int.from_bytes(frame[4:8], "big")
            seen.append(version)
            if version > 2:  # hand-made v0 body: error 35, [(18, 0, 2)]
                payload = cid.to_bytes(4, "big") + bytes.fromhex("0023 00000001 0012 0000 0002")
                writer.write(len(payload).to_bytes(4, "big") + payload)
            else:
                body = ApiVersions(api_keys=[ApiVersions.ApiVersion(api_key=18, min_version=0, max_version=2)])
                writer.write(framing.encode_response(18, version, cid, body))

    async def body():
        server = await asyncio.start_server(old_server, "127.0.0.1", 0)
        conn = await Connection.open("127.0.0.1", server.sockets[0].getsockname()[1])
        assert await conn.negotiate() == {18: (0, 2)}
        assert seen == [4, 2]
        await conn.close()
        server.close()
    run(body)


# ---------------------------------------------------------------- PeerRouter


class RaftNodeStub:
    """A listener that answers Vote requests like a voter would, and a router to reach the others."""

    def __init__(self, node_id: int):
        self.node_id, self.requests, self.responses = node_id, [], []
        self.listener: Listener | None = None
        self.router: PeerRouter | None = None
        self.got_response = asyncio.Event()

    async def handle(self, ctx, body):
        env = raft_wire.raft_request_from_wire(ctx.api_name, ctx.api_version, body, self.node_id)
        self.requests.append((ctx.api_version, env))
        return msg.vote_response(Errors.NONE, leader_epoch=env.body.topics[0].partitions[0].candidate_epoch,
                                 granted=True)

    def on_response(self, env) -> None:
        self.responses.append(env)
        self.got_response.set()

    async def start(self, port: int = 0) -> None:
        self.listener = await serving(self.handle, port)

    def connect(self, endpoints: dict, **kwargs) -> None:
        self.router = PeerRouter(self.node_id, endpoints, self.on_response, client_id=f"raft-client-{self.node_id}",
                                 **kwargs)

    async def close(self) -> None:
        if self.router is not None:
            await self.router.close()
        if self.listener is not None:
            await self.listener.close()


def vote(src: int, dst: int, cid: int, pre_vote: bool) -> msg.Envelope:
    body = msg.vote_request("cluster", 3, src, bytes(16), dst, bytes(16), 2, 10)
    return msg.Envelope(src, dst, cid, body, pre_vote)


async def next_response(node: RaftNodeStub, timeout: float = 3.0):
    await asyncio.wait_for(node.got_response.wait(), timeout)
    node.got_response.clear()
    return node.responses.pop(0)


def test_two_routers_exchange_vote_requests_and_responses():
    async def body():
        a, b = RaftNodeStub(1), RaftNodeStub(2)
        await a.start()
        await b.start()
        a.connect({2: ("127.0.0.1", b.listener.port)})
        b.connect({1: ("127.0.0.1", a.listener.port)})
        a.router.send(vote(1, 2, 41, pre_vote=True))
        reply = await next_response(a)
        assert (reply.src, reply.dst, reply.correlation_id, reply.pre_vote) == (2, 1, 41, True)
        assert reply.name == "VoteResponse" and reply.body.topics[0].partitions[0].vote_granted
        version, request = b.requests[0]
        assert version == 2 and (request.src, request.dst, request.pre_vote) == (1, 2, True)
        b.router.send(vote(2, 1, 7, pre_vote=False))
        reply = await next_response(b)
        assert (reply.src, reply.dst, reply.correlation_id, reply.pre_vote) == (1, 2, 7, False)
        assert a.requests[0][1].pre_vote is False
        await a.close()
        await b.close()
    run(body)


def test_messages_to_a_down_peer_are_dropped_then_delivered_after_reconnect():
    async def body():
        a, b = RaftNodeStub(1), RaftNodeStub(2)
        await b.start()
        port = b.listener.port
        await b.listener.close()  # the peer is down
        a.connect({2: ("127.0.0.1", port)}, reconnect_backoff_ms=50, reconnect_backoff_max_ms=100)
        a.router.send(vote(1, 2, 1, pre_vote=False))
        await asyncio.sleep(0.05)
        assert a.router.dropped >= 1 and a.responses == []
        await b.start(port)  # the peer comes back on the same port
        for cid in range(2, 100):
            a.router.send(vote(1, 2, cid, pre_vote=False))
            await asyncio.sleep(0.02)
            if a.responses:
                break
        reply = await next_response(a)
        assert reply.src == 2 and reply.correlation_id >= 2 and len(b.requests) >= 1
        await a.close()
        await b.close()
    run(body)


def test_unknown_peers_are_dropped_and_endpoint_updates_move_the_peer():
    async def body():
        a, b, c = RaftNodeStub(1), RaftNodeStub(2), RaftNodeStub(2)
        await b.start()
        await c.start()
        a.connect({2: ("127.0.0.1", b.listener.port)})
        a.router.send(vote(1, 3, 1, pre_vote=False))
        assert a.router.dropped == 1
        a.router.send(vote(1, 2, 2, pre_vote=False))
        assert (await next_response(a)).correlation_id == 2 and len(b.requests) == 1
        a.router.update_endpoints({2: ("127.0.0.1", c.listener.port)})
        a.router.send(vote(1, 2, 3, pre_vote=False))
        assert (await next_response(a)).correlation_id == 3 and len(c.requests) == 1 and len(b.requests) == 1
        await a.close()
        await b.close()
        await c.close()
    run(body)


def test_a_pre_vote_for_a_peer_that_only_speaks_vote_v1_is_answered_unsupported_version(caplog):
    """Kafka 3.9 speaks Vote v0-1: the pre-vote is not sent, the core gets UNSUPPORTED_VERSION (Kafka 4.0's
    network client answers so), the real vote goes at v1, and the case is logged at INFO once."""
    async def body():
        ApiVersions = codec.message_class("ApiVersionsResponse")
        old = ApiVersions(api_keys=[ApiVersions.ApiVersion(api_key=k, min_version=0, max_version=hi)
                                    for k, hi in ((18, 4), (52, 1))])
        b = RaftNodeStub(2)
        b.listener = await serving(b.handle, api_versions=old)
        a = RaftNodeStub(1)
        a.connect({2: ("127.0.0.1", b.listener.port)})
        a.router.send(vote(1, 2, 1, pre_vote=True))
        first = await next_response(a)
        a.router.send(vote(1, 2, 2, pre_vote=True))
        second = await next_response(a)
        a.router.send(vote(1, 2, 3, pre_vote=False))
        reply = await next_response(a)
        assert (first.correlation_id, first.pre_vote, first.body.error_code) == (1, True, 35)
        assert (second.correlation_id, second.body.error_code) == (2, 35)
        assert reply.correlation_id == 3 and not reply.pre_vote and reply.body.error_code == 0
        assert [v for v, _ in b.requests] == [1] and a.router.dropped == 0
        await a.close()
        await b.close()
    with caplog.at_level("INFO", logger="kraftsman.server"):
        run(body)
    said = [r for r in caplog.records if "cannot take a pre-vote" in r.getMessage()]
    assert len(said) == 1 and said[0].levelname == "INFO"
