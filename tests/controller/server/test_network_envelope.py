"""Listener unwraps Envelope (KIP-590): real Kafka 3.9 forwarded requests in, Kafka's own envelope responses out."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kraftsman.controller.server.network import Listener
from kraftsman.storage.protocol import codec, framing

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"


def _pairs() -> list[tuple[Path, Path, Path, Path]]:
    """Return (envelope request, envelope response, inner request, inner response) files, in order."""
    index = WIRE / "envelope-inner" / "index.json"
    if not index.is_file():
        return []
    rows = json.loads(index.read_text())
    outer = {int(p.name[:6]): p for p in (WIRE / "msgs").glob("*_Envelope_v0_*.bin")}
    pairs = []
    for req, resp in zip(rows[::2], rows[1::2]):
        assert (req["direction"], resp["direction"]) == ("req", "resp")
        pairs.append((outer[req["envelope_seq"]], outer[resp["envelope_seq"]], WIRE / req["file"], WIRE / resp["file"]))
    return pairs


PAIRS = _pairs()


async def _exchange(listener: Listener, frame: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(frame)
    head = await asyncio.wait_for(reader.readexactly(4), 3)
    data = head + await reader.readexactly(int.from_bytes(head, "big"))
    writer.close()
    return data


def _serve_one(handler, frame: bytes) -> bytes:
    async def body():
        listener = Listener("CONTROLLER", "127.0.0.1", 0, handler)
        await listener.start()
        try:
            return await _exchange(listener, frame)
        finally:
            await listener.close()
    return asyncio.run(asyncio.wait_for(body(), 10))


def test_fixture_has_every_forwarded_pair():
    if not PAIRS:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    assert len(PAIRS) == 17


@pytest.mark.parametrize("pair", PAIRS, ids=[p[0].name for p in PAIRS])
def test_forwarded_request_is_served_and_wrapped_like_kafka(pair):
    outer_req, outer_resp, inner_req, inner_resp = (p.read_bytes() for p in pair)
    req_header, req_body = framing.decode_request(framing.strip_size(inner_req))
    key, version = req_header.request_api_key, req_header.request_api_version
    _, answer = framing.decode_response(key, version, framing.strip_size(inner_resp))
    seen = []

    async def handler(ctx, body):
        seen.append(ctx)
        assert body == req_body
        return answer

    assert _serve_one(handler, outer_req) == outer_resp
    (ctx,) = seen
    assert (ctx.api_key, ctx.api_version, ctx.correlation_id) == (key, version, req_header.correlation_id)
    assert ctx.client_id == req_header.client_id and ctx.forwarded_by in ("4", "5")  # the brokers' ids
    assert ctx.client_address == bytes([127, 0, 0, 1]) and b"ANONYMOUS" in ctx.principal


def _envelope(inner: bytes) -> bytes:
    body = codec.message_class("EnvelopeRequest")(request_data=inner, request_principal=None,
                                                  client_host_address=bytes(4))
    return framing.encode_request(58, 0, 3, "4", body)


@pytest.mark.parametrize("inner,code", [
    (bytes.fromhex("003c 0001 00000001 0001 74 00 05"), 42),   # DescribeCluster v1, truncated body
    (bytes.fromhex("003c 0063 00000001 0001 74 00"), 35),      # DescribeCluster v99
    (bytes.fromhex("0012 0003 00000001 0001 74 00 00 00 00"), 42),  # ApiVersions is never forwarded
], ids=["truncated", "unsupported-version", "api-versions"])
def test_a_bad_inner_request_gets_an_envelope_error(inner, code):
    async def handler(ctx, body):
        raise AssertionError("the handler must not see it")

    frame = _serve_one(handler, _envelope(inner))
    # response header v1 (cid 3, no tags); body: ResponseData null (00), ErrorCode, no tags
    assert frame == bytes.fromhex("00000009 00000003 00 00") + code.to_bytes(2, "big") + b"\x00"



def _create_topics_refused():
    cls = codec.message_class("CreateTopicsResponse")
    return cls(topics=[cls.CreatableTopicResult(name="t", error_code=41)])


def _describe_quorum_refused():
    cls = codec.message_class("DescribeQuorumResponse")
    return cls(topics=[cls.TopicData(topic_name="__cluster_metadata",
                                     partitions=[cls.PartitionData(partition_index=0, error_code=6)])])


@pytest.mark.parametrize("api_key,version,request_spec,answer", [
    (19, 7, "CreateTopicsRequest", _create_topics_refused),
    (55, 2, "DescribeQuorumRequest", _describe_quorum_refused),
], ids=["not-controller-in-a-topic", "describe-quorum-not-leader"])
def test_an_inner_not_controller_answer_is_the_envelope_error(api_key, version, request_spec, answer):
    """Kafka's RequestChannel answers NOT_CONTROLLER (41) in the Envelope itself, without the inner response,
    when the inner one holds NOT_CONTROLLER (DescribeQuorum: NOT_LEADER_OR_FOLLOWER), so the broker retries."""
    inner = framing.encode_request(api_key, version, 9, "adminclient-1", codec.message_class(request_spec)())[4:]

    async def handler(ctx, body):
        return answer()

    frame = _serve_one(handler, _envelope(inner))
    # response header v1 (cid 3, no tags); body: ResponseData null (00), NOT_CONTROLLER, no tags
    assert frame == bytes.fromhex("00000009 00000003 00 00 0029 00")
