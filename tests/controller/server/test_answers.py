"""AnswerEncoder: a Fetch body framed for several followers is encoded once, byte for byte as framing would."""
from types import SimpleNamespace

import pytest

from kraftsman.controller.raft import messages
from kraftsman.controller.server.answers import AnswerEncoder
from kraftsman.storage.protocol import codec, framing


def _ctx(api_key, version, cid):
    return SimpleNamespace(api_key=api_key, api_version=version, correlation_id=cid)


def _plain_body():
    cls = codec.message_class("FetchResponse")
    part = cls.PartitionData(partition_index=0, high_watermark=40, records=b"\x01" * 30)
    return cls(responses=[cls.FetchableTopicResponse(topic="__cluster_metadata", partitions=[part])])


def _body():
    return messages.fetch_response(0, 0, 1, 3, 40, b"\x00" * 70, log_start_offset=0)


@pytest.mark.parametrize("version", [4, 12, 16, 17])  # header v0 (v4: not flexible) and v1
def test_the_same_fetch_body_gets_the_frame_framing_would_build(version):
    encoder, body = AnswerEncoder(), _body() if version >= 12 else _plain_body()
    for cid in (7, 8, 1 << 30):
        assert encoder.frame(_ctx(1, version, cid), body) == framing.encode_response(1, version, cid, body)


def test_a_new_body_or_another_version_is_encoded_afresh():
    encoder, first, second = AnswerEncoder(), _body(), messages.fetch_response(0, 0, 1, 3, 41, b"", log_start_offset=0)
    encoder.frame(_ctx(1, 17, 1), first)
    assert encoder.frame(_ctx(1, 17, 2), second) == framing.encode_response(1, 17, 2, second)
    assert encoder.frame(_ctx(1, 16, 3), second) == framing.encode_response(1, 16, 3, second)


def test_other_apis_are_encoded_by_framing():
    encoder = AnswerEncoder()
    body = messages.vote_response(0)
    assert encoder.frame(_ctx(52, 1, 5), body) == framing.encode_response(52, 1, 5, body)
