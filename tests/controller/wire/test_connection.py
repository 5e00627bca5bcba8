"""wire.connection.Connection against a raw server on 127.0.0.1: responses cut from the byte stream at any
boundary, a bad size or a closed socket failing what waits, and answers handed to callbacks (send_to).

The server side is written by hand here (frames from framing, written in chosen pieces), not a Listener.
"""
from __future__ import annotations

import asyncio
import socket

import pytest

from kraftsman.controller.wire.connection import Connection, ConnectionClosed
from kraftsman.storage.protocol import codec, framing

DescribeCluster = codec.message_class("DescribeClusterRequest")
Answer = codec.message_class("DescribeClusterResponse")


def run(coro_fn, timeout: float = 10.0):
    return asyncio.run(asyncio.wait_for(coro_fn(), timeout))


async def raw_server(serve):
    """Start a server whose connections run serve(reader, writer); return (server, port)."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def read_requests(reader, count: int) -> list[int]:
    """Read `count` request frames; return their correlation ids."""
    cids = []
    for _ in range(count):
        size = int.from_bytes(await reader.readexactly(4), "big")
        header, _ = framing.decode_request(await reader.readexactly(size))
        cids.append(header.correlation_id)
    return cids


def answer(cid: int) -> bytes:
    return framing.encode_response(60, 1, cid, Answer(cluster_id=f"c{cid}", controller_id=1))


def test_responses_cut_anywhere_or_packed_together_reach_their_requests():
    async def serve(reader, writer):
        cids = await read_requests(reader, 3)
        data = b"".join(answer(c) for c in reversed(cids))  # out of order, as correlation ids allow
        for i in range(len(data) // 2):
            writer.write(data[i:i + 1])
            await writer.drain()
            await asyncio.sleep(0)
        writer.write(data[len(data) // 2:])  # the rest, several frames in one write
        await writer.drain()

    async def body():
        server, port = await raw_server(serve)
        conn = await Connection.open("127.0.0.1", port, client_id="t")
        answers = await asyncio.gather(*(conn.request("DescribeCluster", 1, DescribeCluster()) for _ in range(3)))
        assert [a.cluster_id for a in answers] == ["c0", "c1", "c2"]
        await conn.close()
        server.close()
    run(body)


def test_send_to_hands_the_answer_to_its_callback_as_it_is_read():
    async def serve(reader, writer):
        (cid,) = await read_requests(reader, 1)
        writer.write(answer(cid))
        await writer.drain()

    async def body():
        server, port = await raw_server(serve)
        conn = await Connection.open("127.0.0.1", port, client_id="t")
        got = asyncio.get_running_loop().create_future()
        conn.send_to("DescribeCluster", 1, DescribeCluster(), lambda body, error: got.set_result((body, error)))
        body, error = await got
        assert error is None and body.cluster_id == "c0"
        await conn.close()
        server.close()
    run(body)


@pytest.mark.parametrize("size", [-1, 3, framing.MAX_FRAME_SIZE + 1])
def test_a_bad_response_size_fails_what_waits_and_closes_the_connection(size):
    async def serve(reader, writer):
        await read_requests(reader, 1)
        writer.write(size.to_bytes(4, "big", signed=True) + b"\0" * 8)
        await writer.drain()
        await asyncio.sleep(1)

    async def body():
        server, port = await raw_server(serve)
        conn = await Connection.open("127.0.0.1", port, client_id="t")
        with pytest.raises(ConnectionClosed, match=f"invalid response size {size}"):
            await conn.request("DescribeCluster", 1, DescribeCluster())
        assert conn.closed
        server.close()
    run(body)


def test_a_server_that_closes_fails_what_waits_and_what_comes_after():
    async def serve(reader, writer):
        await read_requests(reader, 1)
        writer.close()

    async def body():
        server, port = await raw_server(serve)
        conn = await Connection.open("127.0.0.1", port, client_id="t")
        with pytest.raises(ConnectionClosed, match="closed by the server"):
            await conn.request("DescribeCluster", 1, DescribeCluster())
        assert conn.closed
        with pytest.raises(ConnectionClosed, match="is closed"):
            await conn.request("DescribeCluster", 1, DescribeCluster())
        server.close()
    run(body)


def test_an_undecodable_response_fails_what_waits():
    async def serve(reader, writer):
        (cid,) = await read_requests(reader, 1)
        writer.write(framing.with_size(cid.to_bytes(4, "big") + b"\x00\xff"))
        await writer.drain()
        await asyncio.sleep(1)

    async def body():
        server, port = await raw_server(serve)
        conn = await Connection.open("127.0.0.1", port, client_id="t")
        with pytest.raises(ConnectionClosed, match="cannot decode DescribeClusterResponse"):
            await conn.request("DescribeCluster", 1, DescribeCluster())
        server.close()
    run(body)


def test_requests_that_wait_for_a_full_send_buffer_all_go_once_it_drains():
    """Several requests written while the socket's buffer is over its high-water mark each wait for it to drain,
    then get their answers (none is forgotten). Small kernel buffers on both ends make the transport's own buffer
    fill with the first request."""
    Create = codec.message_class("CreateTopicsRequest")
    big = Create(topics=[Create.CreatableTopic(name=f"t{i:05d}" + "x" * 200, num_partitions=1, replication_factor=1)
                         for i in range(2000)], timeout_ms=1000)  # some 450 KB each
    paused = []

    async def serve(reader, writer):
        await asyncio.sleep(0.3)  # read nothing yet: the client's buffer fills
        for _ in range(4):
            size = int.from_bytes(await reader.readexactly(4), "big")
            header, _ = framing.decode_request(await reader.readexactly(size))
            writer.write(framing.encode_response(19, 7, header.correlation_id,
                                                 codec.message_class("CreateTopicsResponse")()))
        await writer.drain()

    async def body():
        listening = socket.socket()
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # accepted sockets inherit it
        listening.bind(("127.0.0.1", 0))
        server = await asyncio.start_server(serve, sock=listening)
        conn = await Connection.open("127.0.0.1", listening.getsockname()[1], client_id="t")
        conn.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        requests = [asyncio.ensure_future(conn.request("CreateTopics", 7, big, timeout_ms=5000)) for _ in range(4)]
        await asyncio.sleep(0.1)
        paused.append(conn.protocol.paused)
        assert len(await asyncio.gather(*requests)) == 4
        await conn.close()
        server.close()
    run(body)
    assert paused == [True]  # the requests did wait for the buffer
