"""Listener over real sockets on 127.0.0.1: framing edge cases, ordering, idle reaping, handler failures.

Expected bytes are derived by hand from Kafka's protocol (size, header, body layouts), not from our encoder.
"""
from __future__ import annotations

import asyncio
import logging
import struct

import pytest

from kraftsman.controller.server.network import Listener
from kraftsman.storage.protocol import codec, framing

DescribeCluster = codec.message_class("DescribeClusterRequest")
DescribeClusterResponse = codec.message_class("DescribeClusterResponse")


def run(coro_fn, *args, timeout: float = 10.0):
    """Run an async test body with a hard timeout."""
    return asyncio.run(asyncio.wait_for(coro_fn(*args), timeout))


async def echo_cluster_id(ctx, body):
    """Answer DescribeCluster with the correlation id as cluster id."""
    return DescribeClusterResponse(cluster_id=f"c{ctx.correlation_id}", controller_id=1)


class Client:
    """A raw socket client: sends hand-made frames, reads frames (None at EOF)."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, listener: Listener) -> "Client":
        return cls(*await asyncio.open_connection("127.0.0.1", listener.port))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def describe_cluster(self, cid: int) -> None:
        await self.send(framing.encode_request(60, 1, cid, "test", DescribeCluster()))

    async def frame(self, timeout: float = 2.0) -> bytes | None:
        try:
            head = await asyncio.wait_for(self.reader.readexactly(4), timeout)
            return await asyncio.wait_for(self.reader.readexactly(int.from_bytes(head, "big")), timeout)
        except asyncio.IncompleteReadError:
            return None
        except ConnectionResetError:
            return None

    async def is_closed(self, timeout: float = 2.0) -> bool:
        try:
            return await asyncio.wait_for(self.reader.read(1), timeout) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.writer.close()


async def serving(handler=echo_cluster_id, **kwargs) -> Listener:
    listener = Listener("CONTROLLER", "127.0.0.1", 0, handler, **kwargs)
    await listener.start()
    return listener


def cid_of(frame: bytes) -> int:
    return struct.unpack_from(">i", frame)[0]


def test_port_zero_binds_a_real_port_and_answers():
    async def body():
        listener = await serving()
        assert listener.port > 0
        client = await Client.open(listener)
        await client.describe_cluster(7)
        _, response = framing.decode_response(60, 1, await client.frame())
        assert response.cluster_id == "c7"
        client.close()
        await listener.close()
    run(body)


def test_api_versions_v99_is_answered_at_v0_with_unsupported_version():
    async def body():
        listener = await serving()
        client = await Client.open(listener)
        # header v2 (ApiVersions v3+ is flexible): key 18, version 99, cid 5, client id "t", no tagged fields
        await client.send(bytes.fromhex("0000000c 0012 0063 00000005 0001 74 00"))
        frame = await client.frame()
        # response header v0 (cid 5); ApiVersionsResponse v0: error 35, [ (18, 0, 4) ]
        assert frame == bytes.fromhex("00000005 0023 00000001 0012 0000 0004")
        client.close()
        await listener.close()
    run(body)


def test_api_versions_is_answered_by_the_listener_with_header_v0():
    seen = []

    async def handler(ctx, body):
        seen.append(ctx.api_name)

    async def body():
        table = codec.message_class("ApiVersionsResponse")(api_keys=[
            codec.message_class("ApiVersionsResponse").ApiVersion(api_key=18, min_version=0, max_version=4)])
        listener = await serving(handler, api_versions=lambda: table)
        client = await Client.open(listener)
        request = codec.message_class("ApiVersionsRequest")(client_software_name="t", client_software_version="1")
        await client.send(framing.encode_request(18, 3, 9, "t", request))
        frame = await client.frame()
        # header v0 = just the correlation id, then v3 body: error 0, compact array of 1, (18, 0, 4, no tags),
        # throttle 0, empty top-level tagged fields
        assert frame == bytes.fromhex("00000009 0000 02 0012 0000 0004 00 00000000 00")
        bad = codec.message_class("ApiVersionsRequest")(client_software_name="no spaces", client_software_version="1")
        await client.send(framing.encode_request(18, 3, 10, "t", bad))
        assert (await client.frame())[4:6] == b"\x00\x2a"  # INVALID_REQUEST
        assert seen == []
        client.close()
        await listener.close()
    run(body)


@pytest.mark.parametrize("size", [-1, 1025])
def test_invalid_size_closes_only_that_connection(size):
    async def body():
        listener = await serving(max_request_size=1024)
        bad, good = await Client.open(listener), await Client.open(listener)
        await bad.send(struct.pack(">i", size))
        assert await bad.is_closed()
        await good.describe_cluster(1)
        assert cid_of(await good.frame()) == 1
        bad.close()
        good.close()
        await listener.close()
    run(body)


@pytest.mark.parametrize("frame", [
    "0000000b 03e7 0000 00000001 0001 74",        # unknown api key 999
    "0000000b 003c 0063 00000001 0001 74",        # DescribeCluster v99
    "0000000d 003c 0001 00000001 0001 74 00 05",  # DescribeCluster v1: truncated body
    "00000004 003c 0001",                          # shorter than a request header
])
def test_unknown_or_undecodable_requests_close_the_connection(frame):
    async def body():
        listener = await serving()
        client = await Client.open(listener)
        await client.send(bytes.fromhex(frame))
        assert await client.is_closed()
        client.close()
        await listener.close()
    run(body)


def test_an_api_the_listener_does_not_advertise_closes_the_connection():
    ApiVersions = codec.message_class("ApiVersionsResponse")
    table = ApiVersions(api_keys=[ApiVersions.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                                  for k, lo, hi in ((18, 0, 4), (60, 0, 0))])

    async def body():
        listener = await serving(api_versions=table)
        served = await Client.open(listener)
        await served.send(framing.encode_request(60, 0, 1, "t", DescribeCluster()))
        assert cid_of(await served.frame()) == 1
        for key, version, request in ((60, 1, DescribeCluster()), (55, 0, codec.message_class(
                "DescribeQuorumRequest")())):
            client = await Client.open(listener)
            await client.send(framing.encode_request(key, version, 2, "t", request))
            assert await client.is_closed()
            client.close()
        served.close()
        await listener.close()
    run(body)


def test_bytes_after_a_decoded_body_are_ignored():
    async def body():
        listener = await serving()
        client = await Client.open(listener)
        # DescribeCluster v1 (flexible): header v2 "t", body: include ops 00, endpoint type 01, no tags; + 3 bytes
        await client.send(bytes.fromhex("00000012 003c 0001 00000006 0001 74 00 00 01 00 010000"))
        assert cid_of(await client.frame()) == 6
        client.close()
        await listener.close()
    run(body)


def test_responses_leave_in_request_order_when_an_earlier_request_is_slow():
    finished = []

    async def handler(ctx, body):
        await asyncio.sleep(0.3 if ctx.correlation_id == 1 else 0)
        finished.append(ctx.correlation_id)
        return await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler)
        client = await Client.open(listener)
        for cid in (1, 2, 3):
            await client.describe_cluster(cid)
        assert [cid_of(await client.frame()) for _ in range(3)] == [1, 2, 3]
        assert finished == [2, 3, 1]  # processed concurrently, sent in order
        client.close()
        await listener.close()
    run(body)


def test_a_none_response_sends_nothing_for_that_request():
    async def handler(ctx, body):
        return None if ctx.correlation_id == 1 else await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(1)
        await client.describe_cluster(2)
        assert cid_of(await client.frame()) == 2
        client.close()
        await listener.close()
    run(body)


def test_immediate_answers_wait_behind_an_earlier_pending_one():
    """A handler may answer at once (a plain value) or later (a future): order still holds."""
    later: list[asyncio.Future] = []

    def handler(ctx, body):
        if ctx.correlation_id == 1:
            later.append(asyncio.get_running_loop().create_future())
            return later[0]
        return None if ctx.correlation_id == 3 else DescribeClusterResponse(cluster_id="now", controller_id=1)

    async def ordered():
        listener = await serving(handler)
        client = await Client.open(listener)
        for cid in (1, 2, 3, 4):
            await client.describe_cluster(cid)
        with pytest.raises(asyncio.TimeoutError):  # answers 2 and 4 are ready but must not pass answer 1
            await client.frame(timeout=0.3)
        later[0].set_result(DescribeClusterResponse(cluster_id="late", controller_id=1))
        assert [cid_of(await client.frame()) for _ in range(3)] == [1, 2, 4]  # 3 answered None: nothing
        await client.describe_cluster(5)  # nothing pending now: answered at once
        assert cid_of(await client.frame()) == 5
        client.close()
        await listener.close()
    run(ordered)


def test_a_handler_failing_at_once_closes_that_connection(caplog):
    def handler(ctx, body):
        raise RuntimeError("boom")

    async def body():
        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(1)
        assert await client.is_closed()
        await listener.close()
    with caplog.at_level(logging.ERROR, logger="kraftsman.server"):
        run(body)
    assert [r.getMessage() for r in caplog.records if "boom" in r.getMessage()] and \
        all("request failed: RuntimeError: boom" in r.getMessage() for r in caplog.records if "boom" in r.getMessage())


def test_idle_connections_are_reaped():
    async def body():
        listener = await serving(idle_timeout_ms=150)
        idle, busy = await Client.open(listener), await Client.open(listener)
        for cid in range(6):  # keep one connection active for ~4x the idle timeout
            await busy.describe_cluster(cid)
            assert cid_of(await busy.frame()) == cid
            await asyncio.sleep(0.1)
        assert await idle.is_closed(timeout=1)
        await busy.describe_cluster(99)
        assert cid_of(await busy.frame()) == 99
        await asyncio.sleep(0.5)
        assert listener.connection_count == 0
        idle.close()
        busy.close()
        await listener.close()
    run(body)


def test_a_slow_request_in_flight_is_not_idle():
    async def handler(ctx, body):
        await asyncio.sleep(0.5)
        return await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler, idle_timeout_ms=100)
        client = await Client.open(listener)
        await client.describe_cluster(4)
        assert cid_of(await client.frame()) == 4
        client.close()
        await listener.close()
    run(body)


def test_handler_exception_logs_one_line_and_closes_that_connection(caplog):
    async def handler(ctx, body):
        if ctx.client_id == "boom":
            raise RuntimeError("kaput")
        return await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler)
        bad, good = await Client.open(listener), await Client.open(listener)
        await bad.send(framing.encode_request(60, 1, 1, "boom", DescribeCluster()))
        assert await bad.is_closed()
        await good.describe_cluster(2)
        assert cid_of(await good.frame()) == 2
        bad.close()
        good.close()
        await listener.close()
    with caplog.at_level(logging.INFO, logger="kraftsman.server"):
        run(body)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].name == "kraftsman.server"
    assert "kaput" in errors[0].getMessage() and "\n" not in errors[0].getMessage() and not errors[0].exc_info


def test_a_body_that_cannot_be_encoded_counts_as_a_handler_failure():
    async def handler(ctx, body):
        return DescribeClusterResponse(cluster_id=12345)  # not a string

    async def body():
        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(1)
        assert await client.is_closed()
        client.close()
        await listener.close()
    run(body)


def test_close_cancels_in_flight_requests_and_closes_connections():
    async def body():
        started, stopped = asyncio.Event(), []

        async def handler(ctx, body):
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                stopped.append(ctx.correlation_id)
                raise

        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(3)
        await started.wait()
        await listener.close()
        assert stopped == [3] and await client.is_closed()
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", listener.port)
        client.close()
    run(body)


def test_an_awaitable_answer_cancelled_before_it_started_is_not_left_unawaited():
    """A handler may return an awaitable; a listener closed before it ran must close it, not drop it (Python then
    prints 'coroutine ... was never awaited' into the controller's log, at every voter that stops that way)."""
    async def body():
        answers, closing = [], []

        async def slow():
            await asyncio.sleep(30)

        def handler(ctx, body):
            closing.append(asyncio.get_running_loop().create_task(listener.close()))  # runs before the answer
            answers.append(slow())
            return answers[-1]

        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(4)
        while not closing:
            await asyncio.sleep(0.01)
        await closing[0]
        assert await client.is_closed()
        assert answers[0].cr_frame is None, "the answer's coroutine was never started nor closed"
        client.close()
    run(body)


@pytest.mark.parametrize("limits", [{"max_connections": 2}, {"max_connections_per_ip": 2}])
def test_connections_past_the_limit_are_closed_and_the_others_kept(limits):
    async def body():
        listener = await serving(**limits)
        first, second = await Client.open(listener), await Client.open(listener)
        await first.describe_cluster(1)
        assert cid_of(await first.frame()) == 1       # both accepted before the third arrives
        await second.describe_cluster(2)
        assert cid_of(await second.frame()) == 2
        third = await Client.open(listener)
        assert await third.is_closed()
        assert listener.rejected == 1
        await first.describe_cluster(3)
        assert cid_of(await first.frame()) == 3
        first.close()
        await asyncio.sleep(0.2)                     # a slot frees up once a connection ends
        fourth = await Client.open(listener)
        await fourth.describe_cluster(4)
        assert cid_of(await fourth.frame()) == 4
        for c in (second, third, fourth):
            c.close()
        await listener.close()
    run(body)


def test_connection_limits_come_from_kafkas_properties():
    from kraftsman.controller.server.config import from_properties

    props = {"process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093",
             "listeners": "CONTROLLER://127.0.0.1:9093", "controller.listener.names": "CONTROLLER",
             "max.connections": "100", "max.connections.per.ip": "7"}
    config = from_properties(props)
    assert (config.max_connections, config.max_connections_per_ip) == (100, 7)
    assert from_properties({k: v for k, v in props.items() if not k.startswith("max.")}).max_connections == 2**31 - 1


def test_requests_cut_anywhere_or_packed_together_are_all_answered_in_order():
    """The listener cuts frames from the byte stream itself: a request split byte by byte, and several requests in
    one segment, are each served once, in order."""
    async def body():
        listener = await serving()
        client = await Client.open(listener)
        frames = b"".join(framing.encode_request(60, 1, cid, "test", DescribeCluster()) for cid in (1, 2, 3))
        for i in range(len(frames) // 2):  # the first half a byte at a time
            await client.send(frames[i:i + 1])
            await asyncio.sleep(0)
        await client.send(frames[len(frames) // 2:])  # the rest in one write
        assert [cid_of(await client.frame()) for _ in range(3)] == [1, 2, 3]
        client.close()
        await listener.close()
    run(body)


def test_reading_pauses_at_max_in_flight_and_resumes_as_answers_leave():
    seen, release = [], asyncio.Event()

    async def handler(ctx, body):
        seen.append(ctx.correlation_id)
        await release.wait()
        return await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler, max_in_flight=2)
        client = await Client.open(listener)
        await client.send(b"".join(framing.encode_request(60, 1, cid, "test", DescribeCluster())
                                   for cid in (1, 2, 3, 4, 5)))
        await asyncio.sleep(0.3)
        assert seen == [1, 2]  # the others wait in the socket until answers leave
        release.set()
        assert [cid_of(await client.frame()) for _ in range(5)] == [1, 2, 3, 4, 5]
        assert seen == [1, 2, 3, 4, 5]
        client.close()
        await listener.close()
    run(body)


def test_a_client_that_ends_its_side_gets_no_answer_and_the_connection_closes():
    async def handler(ctx, body):
        await asyncio.sleep(0.2)
        return await echo_cluster_id(ctx, body)

    async def body():
        listener = await serving(handler)
        client = await Client.open(listener)
        await client.describe_cluster(1)
        client.writer.write_eof()
        assert await client.frame() is None  # EOF ends the connection: the answer in flight is dropped
        for _ in range(50):
            if listener.connection_count == 0:
                break
            await asyncio.sleep(0.01)
        assert listener.connection_count == 0
        client.close()
        await listener.close()
    run(body)
