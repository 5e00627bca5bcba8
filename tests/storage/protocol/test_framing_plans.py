"""The framing hot paths (a cached plan per api key and version, headers written directly) against the general
path they stand in for: the same bytes, the same messages and the same errors, for every API and version.

Rules:
- Every (api, version) of the registry is framed both ways, request and response, with default bodies and
  with the Raft and admin bodies the controller's commit path sends.
- Headers vary (correlation ids at the int32 edges, null, empty, non-ASCII and long client ids); a client id
  too long for an int16 string and a body that does not encode must fail as the general path fails.
- Frames the hot path cannot take (header tagged fields, trailing bytes, truncation, an ApiVersions answer
  read at v0) give what the general path gives.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftsman.controller.raft import messages
from kraftsman.storage.protocol import codec, framing

CASES = [(key, v) for key, info in framing.api_registry().items() for v in info.versions]
CLIENT_IDS = [None, "", "raft-client-1", "kafka-admin-ü", "x" * 300]


def general_request(key: int, version: int, cid: int, client_id, body) -> bytes:
    return framing.encode_request_frame(framing.request_header(key, version, cid, client_id), body)


def general_response(key: int, version: int, cid: int, body) -> bytes:
    return framing.encode_response_frame(key, version, framing.response_header(cid), body)


@pytest.mark.parametrize(("key", "version"), CASES)
def test_default_bodies_frame_as_the_general_path_frames_them(key, version):
    info = framing.api_info(key)
    request, response = codec.message_class(info.request)(), codec.message_class(info.response)()
    for client_id in CLIENT_IDS:
        frame = framing.encode_request(key, version, 7, client_id, request)
        assert frame == general_request(key, version, 7, client_id, request)
        assert framing.decode_request(frame[4:]) == framing._decode_request_slowly(frame[4:], False)
    frame = framing.encode_response(key, version, -3, response)
    assert frame == general_response(key, version, -3, response)
    assert framing.decode_response(key, version, frame[4:]) == framing._decode_response_slowly(key, version,
                                                                                               frame[4:])


def commit_path_bodies():
    """Return (api key, version, request, response) of the messages a commit on the quorum sends."""
    alter = codec.message_class("IncrementalAlterConfigsRequest")
    answer = codec.message_class("IncrementalAlterConfigsResponse")
    resource = alter.AlterConfigsResource(resource_type=2, resource_name="bench-0", configs=[
        alter.AlterableConfig(name="retention.ms", config_operation=0, value="1234")])
    fetch = messages.fetch_request("abcdefghijklmnopqrstuv", 2, 5, 12345, 5, 500, 8 << 20, b"\1" * 16)
    records = bytes(range(256)) * 3
    return [
        (44, 1, alter(resources=[resource]), answer(responses=[answer.AlterConfigsResourceResponse(
            error_code=0, resource_type=2, resource_name="bench-0")])),
        (1, 17, fetch, messages.fetch_response(0, 0, 2, 5, 12344, records, diverging=(4, 12000))),
        (1, 16, fetch, messages.fetch_response(0, 0, 2, 5, 12344, b"", snapshot_id=(100, 3))),
    ]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(cid=st.integers(-(2**31), 2**31 - 1), client_id=st.none() | st.text(max_size=40))
def test_commit_path_messages_frame_as_the_general_path_frames_them(cid, client_id):
    for key, version, request, response in commit_path_bodies():
        frame = framing.encode_request(key, version, cid, client_id, request)
        assert frame == general_request(key, version, cid, client_id, request)
        header, body = framing.decode_request(frame[4:])
        assert (header.correlation_id, header.client_id) == (cid, client_id)
        assert (header, body) == framing._decode_request_slowly(frame[4:], False)
        assert framing.encode_request(key, version, cid, client_id, body) == frame
        frame = framing.encode_response(key, version, cid, response)
        assert frame == general_response(key, version, cid, response)
        decoded = framing.decode_response(key, version, frame[4:])
        assert decoded == framing._decode_response_slowly(key, version, frame[4:])
        assert framing.encode_response(key, version, cid, decoded[1]) == frame


def test_a_client_id_too_long_for_an_int16_string_fails_as_the_general_path_fails():
    body = codec.message_class("ApiVersionsRequest")()
    with pytest.raises(framing.FramingError) as general:
        general_request(18, 3, 1, "x" * 40_000, body)
    with pytest.raises(framing.FramingError) as hot:
        framing.encode_request(18, 3, 1, "x" * 40_000, body)
    assert str(hot.value) == str(general.value)


def test_a_body_that_does_not_encode_fails_as_the_general_path_fails():
    key, version, request, response = commit_path_bodies()[1]
    request.topics = None
    response.responses = None
    for hot, general in ((lambda: framing.encode_request(key, version, 1, "c", request),
                          lambda: general_request(key, version, 1, "c", request)),
                         (lambda: framing.encode_response(key, version, 1, response),
                          lambda: general_response(key, version, 1, response))):
        with pytest.raises(framing.FramingError) as expected:
            general()
        with pytest.raises(framing.FramingError) as got:
            hot()
        assert str(got.value) == str(expected.value)


def test_frames_the_hot_path_leaves_to_the_general_one():
    key, version, request, response = commit_path_bodies()[1]
    frame = framing.encode_request(key, version, 9, "c", request)[4:]
    tagged = bytearray(frame)  # header v2 ends with its tag count: one unknown tag (5, b"hi")
    at = 8 + 2 + 1
    tagged[at:at + 1] = b"\x01\x05\x02hi"
    header, body = framing.decode_request(bytes(tagged))
    assert header._unknown_tagged_fields == [(5, b"hi")] and body == framing.decode_request(frame)[1]
    with pytest.raises(framing.FramingError, match="garbage"):
        framing.decode_request(frame + b"xyz")
    assert framing.decode_request(frame + b"xyz", trailing_ok=True)[1] == framing.decode_request(frame)[1]
    for cut in (len(frame) - 1, 12, 9):
        with pytest.raises(framing.FramingError) as got:
            framing.decode_request(frame[:cut])
        with pytest.raises(framing.FramingError) as expected:
            framing._decode_request_slowly(frame[:cut], False)
        assert str(got.value) == str(expected.value)
    answer = framing.encode_response(key, version, 9, response)[4:]
    for cut in (len(answer) - 1, 6):
        with pytest.raises(framing.FramingError) as got:
            framing.decode_response(key, version, answer[:cut])
        with pytest.raises(framing.FramingError) as expected:
            framing._decode_response_slowly(key, version, answer[:cut])
        assert str(got.value) == str(expected.value)


def test_an_api_versions_error_answer_is_still_read_at_v0():
    frame = framing.unsupported_api_versions_response(4)[4:]
    header, body = framing.decode_response(18, 3, frame)
    assert header.correlation_id == 4 and body.error_code == 35 and [k.api_key for k in body.api_keys] == [18]


def test_unknown_keys_and_versions_fail_before_anything_is_framed():
    body = codec.message_class("ApiVersionsRequest")()
    with pytest.raises(framing.FramingError, match="unknown api key 999"):
        framing.encode_request(999, 0, 1, "c", body)
    with pytest.raises(framing.UnsupportedVersionError):
        framing.encode_response(18, 99, 1, body)
    with pytest.raises(framing.UnsupportedVersionError):
        framing.decode_response(18, 99, b"\0\0\0\1")
