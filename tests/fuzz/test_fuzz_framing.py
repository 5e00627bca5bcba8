"""Fuzz the request framing and every request and response decoder the API registry knows.

Oracle: read_frame returns (None, pos) for an incomplete frame, a frame, or raises FramingError;
decode_request (what the server runs on every frame) and decode_response raise only FramingError;
whatever decode_request accepts re-encodes and decodes to the same messages.
"""
from __future__ import annotations

import pytest
from fuzzkit import (
    CORPUS,
    SMALL_ALLOCATION,
    WIRE,
    check,
    frame_cases,
    fuzz_inputs,
    fuzz_settings,
    mutated,
    peak_bytes,
    real_files,
    regressions,
    single_mutations,
)
from hypothesis import given
from hypothesis import strategies as st

from kraftsman.storage.protocol import framing
from kraftsman.storage.protocol.framing import FramingError

REQUESTS = frame_cases("request")
RESPONSES = frame_cases("response")
REQUEST_SEEDS = [frame for _, _, frame in REQUESTS] + real_files("*_req_*.bin", root=WIRE, limit=60)


def _same(a, b) -> bool:
    return a == b or repr(a) == repr(b)  # repr: NaN float64 fields are equal in text only


def decode_request(frame: bytes):
    """Decode a request frame as the server does; check the result re-encodes to the same messages."""
    header, body = framing.decode_request(frame)
    again = framing.decode_request(framing.strip_size(framing.encode_request_frame(header, body)))
    assert _same(again[0], header) and _same(again[1], body)
    return header, body


def read_frames(buf: bytes):
    """Split `buf` into frames as a connection does; return the frames read."""
    frames, pos = [], 0
    while True:
        frame, end = framing.read_frame(buf, pos, max_size=1 << 16)
        if frame is None:
            assert end == pos
            return frames
        assert pos < end <= len(buf)
        frames.append(frame)
        pos = end


def test_corpus_files_name_a_known_api_and_version():
    registry = framing.api_registry()
    for target in ("request", "response"):
        names = {p.stem for p in (CORPUS / target).glob("*.bin")}
        known = {f"{k}-{i.name}-v{v}" for k, i in registry.items() for v in i.versions}
        assert len(names) >= 40 and names <= known, names - known


@pytest.mark.parametrize("key,version,frame", REQUESTS, ids=[f"{k}-v{v}" for k, v, _ in REQUESTS])
def test_single_byte_mutations_of_every_request(key, version, frame):
    assert decode_request(frame[4:])[0].request_api_key == key
    for data in single_mutations(frame[4:], max_positions=48):
        check(decode_request, data, (FramingError,))


@fuzz_settings(400)
@given(fuzz_inputs(REQUEST_SEEDS, max_size=80))
def test_request_decoders(frame):
    check(decode_request, frame[4:], (FramingError,))


@fuzz_settings(200)
@given(fuzz_inputs(REQUEST_SEEDS, max_size=80), st.binary(max_size=8))
def test_read_frame(stream, tail):
    check(read_frames, stream + tail, (FramingError,))


@fuzz_settings(300)
@given(st.data())
def test_response_decoders(data):
    key, version, frame = data.draw(st.sampled_from(RESPONSES))
    raw = data.draw(mutated([frame]) | st.binary(max_size=48))
    check(lambda f: framing.decode_response(key, version, f[4:]), raw, (FramingError,))


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in regressions("request")])
def test_request_regressions(name, data):
    check(decode_request, data[4:], (FramingError,))


@pytest.mark.parametrize("size", [2 ** 31 - 1, framing.MAX_FRAME_SIZE + 1, -1, -2 ** 31])
def test_oversized_and_negative_frame_sizes_are_refused_without_allocating(size):
    buf = size.to_bytes(4, "big", signed=True) + b"\x00" * 8
    assert peak_bytes(lambda: check(read_frames, buf, (FramingError,))) < SMALL_ALLOCATION
    with pytest.raises(FramingError):
        framing.read_frame(buf)


@pytest.mark.parametrize("key,version,frame", REQUESTS[::7], ids=[f"{k}-v{v}" for k, v, _ in REQUESTS[::7]])
def test_huge_lengths_inside_a_request_allocate_little(key, version, frame):
    body = frame[4:]
    for at in range(8, len(body) - 3):
        for big in (b"\x7f\xff\xff\xff", b"\xff\xff\xff\x0f"):
            data = body[:at] + big + body[at + 4:]
            assert peak_bytes(lambda: check(decode_request, data, (FramingError,))) < SMALL_ALLOCATION


ALL_VERSIONS = [(k, v) for k, info in framing.api_registry().items() for v in info.versions]


@fuzz_settings(400)
@given(st.data())
def test_every_api_version_with_a_foreign_or_random_body(data):
    key, version = data.draw(st.sampled_from(ALL_VERSIONS))
    seeds = [f[4:] for k, _, f in REQUESTS if k == key]
    body = data.draw(mutated(seeds) | st.binary(max_size=48))
    frame = _retag(body, key, version)
    check(decode_request, frame, (FramingError,))
    raw = data.draw(mutated([f for k, _, f in RESPONSES if k == key]) | st.binary(max_size=48))
    check(lambda f: framing.decode_response(key, version, f[4:]), raw, (FramingError,))


def _retag(frame: bytes, key: int, version: int) -> bytes:
    """Return `frame` with its header's api key and version replaced (the rest kept as it is)."""
    return key.to_bytes(2, "big") + version.to_bytes(2, "big") + frame[4:]
