"""Request/response framing: registry, header versions, sized frames, KIP-511 and malformed frames.

Rules:
- Expected frames are commented hex worked out from reference §5.2.
- Every malformed frame raises FramingError with a one-line message; nothing else escapes.
"""
from __future__ import annotations

import re

import pytest

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.framing import FramingError, UnsupportedVersionError

# reference §5.1: the KRaft-relevant APIs, with (valid versions, first flexible version); Vote goes to v2
# (Kafka 4.0's KIP-996 PreVote) where the 3.9 reference stops at v1
API_TABLE = {
    1: (18, 12), 3: (13, 9), 18: (4, 3), 19: (7, 5), 20: (6, 4), 37: (3, 2), 43: (2, 2), 44: (1, 1), 45: (1, 0),
    # Fetch 18, Metadata 13, AlterPartitionReassignments 1: Kafka 4.x's newest versions beside the reference's
    46: (0, 0), 52: (2, 0), 53: (1, 1), 54: (1, 1), 55: (2, 0), 56: (3, 0), 59: (1, 0), 60: (2, 0), 62: (4, 0),
    63: (1, 0), 64: (0, 0), 70: (0, 0), 80: (1, 0), 81: (0, 0), 82: (0, 0),   # AddRaftVoter v1: Kafka 4.2's;
    # DescribeCluster 2: Kafka 4.0's (KIP-1073)
    58: (0, 0),  # Envelope (KIP-590), not in the reference table
    32: (4, 4), 33: (2, 2),  # DescribeConfigs and AlterConfigs (Kafka 3.9's specs, not in the reference table)
    67: (0, 0),  # AllocateProducerIds (Kafka 3.9's spec, not in the reference table)
    17: (1, -1), 36: (2, 2),  # SaslHandshake (never flexible) and SaslAuthenticate (kafka-cluster's client)
    29: (3, 2), 30: (3, 2), 31: (3, 2),  # Describe/Create/DeleteAcls (Kafka 3.9's specs, not in the reference table)
    49: (1, 1), 50: (0, 0), 51: (0, 0),  # AlterClientQuotas, Describe/AlterUserScramCredentials (Kafka 3.9's specs)
    57: (2, 0),  # UpdateFeatures (Kafka 3.9's spec with 4.0's v2, not in the reference table)
    73: (0, 0),  # AssignReplicasToDirs (KIP-858, Kafka 3.9's spec, not in the reference table)
    38: (3, 2), 39: (2, 2), 40: (2, 2),  # Create/Renew/ExpireDelegationToken (Kafka 3.9's ApiVersions ranges)
    41: (3, 2),  # DescribeDelegationToken (Kafka 3.9's ApiVersions range; its controllers list it)
    75: (0, 0), 48: (1, 1), 35: (4, 2),  # DescribeTopicPartitions, DescribeClientQuotas, DescribeLogDirs (a broker's)
}


def hexb(text: str) -> bytes:
    """Return the bytes of commented hex: '#' starts a comment, whitespace is ignored."""
    return bytes.fromhex(re.sub(r"#[^\n]*", "", text))


def M(spec: str, /, **fields):
    """Build a message of spec `spec`."""
    return codec.message_class(spec)(**fields)


def one_line_error(exc_info) -> str:
    text = str(exc_info.value)
    assert text and "\n" not in text
    return text


# ---------------------------------------------------------------- registry


def test_registry_matches_the_reference_api_table():
    registry = framing.api_registry()
    assert sorted(registry) == sorted(API_TABLE)
    for key, (hi, flex) in API_TABLE.items():
        info = registry[key]
        assert (info.valid_versions.lo, info.valid_versions.hi, info.flexible_versions.lo) == (0, hi, flex)


def test_request_and_response_specs_agree_on_versions():
    for info in framing.api_registry().values():
        request, response = (codec.message_class(n).spec for n in (info.request, info.response))
        assert request.api_key == response.api_key == info.api_key
        assert request.valid_versions == response.valid_versions, info.name
        assert request.flexible_versions == response.flexible_versions, info.name
        assert request.type == "request" and response.type == "response"


@pytest.mark.parametrize("api_key,version,request_hv,response_hv", [
    (1, 11, 1, 0), (1, 12, 2, 1), (3, 8, 1, 0), (3, 9, 2, 1),
    (18, 2, 1, 0), (18, 3, 2, 0), (18, 4, 2, 0),          # ApiVersions: response header always v0 (KIP-511)
    (53, 0, 1, 0), (53, 1, 2, 1), (54, 0, 1, 0), (54, 1, 2, 1),   # Begin/EndQuorumEpoch v0 are not flexible
    (52, 0, 2, 1), (62, 0, 2, 1), (82, 0, 2, 1),
])
def test_header_versions(api_key, version, request_hv, response_hv):
    assert framing.request_header_version(api_key, version) == request_hv
    assert framing.response_header_version(api_key, version) == response_hv


def test_unknown_api_key_is_a_framing_error():
    with pytest.raises(FramingError) as e:
        framing.request_header_version(7, 0)  # ControlledShutdown: out of scope, not in the registry
    assert one_line_error(e) == "unknown api key 7"


# ---------------------------------------------------------------- requests


def test_encode_request_flexible_keeps_an_int16_client_id():
    body = M("ApiVersionsRequest", client_software_name="ks", client_software_version="1")
    assert framing.encode_request(18, 3, 7, "cli", body) == hexb("""
        00000014            # size 20
        0012 0003 00000007  # api key 18, version 3, correlation id 7
        0003 636c69         # ClientId "cli": int16 length even in header v2
        00                  # header tagged fields
        03 6b73 02 31 00    # body: compact "ks", compact "1", tags
    """)


def test_encode_request_non_flexible_with_null_client_id():
    body = M("MetadataRequest", topics=[])
    assert framing.encode_request(3, 0, 1, None, body) == hexb("""
        0000000e 0003 0000 00000001 ffff   # header v1, ClientId null
        00000000                           # Topics []
    """)


def test_decode_request_returns_header_and_body():
    frame = framing.encode_request(63, 1, 5, "b", M("BrokerHeartbeatRequest", broker_id=4))
    header, body = framing.decode_request(frame[4:])
    assert (header.request_api_key, header.request_api_version, header.correlation_id, header.client_id) == (
        63, 1, 5, "b")
    assert body == M("BrokerHeartbeatRequest", broker_id=4)


def test_request_header_tagged_fields_survive_reencoding():
    header = M("RequestHeader", request_api_key=52, request_api_version=0, correlation_id=2, client_id="")
    header._unknown_tagged_fields = [(5, b"\xaa")]
    body = M("VoteRequest", cluster_id=None)
    frame = framing.encode_request_frame(header, body)
    assert frame == hexb("""
        00000011 0034 0000 00000002 0000   # size 17; ClientId ""
        01 05 01 aa         # one unknown header tag (5, size 1)
        00 01 00            # body: ClusterId null, Topics [], tags
    """)
    again_header, again_body = framing.decode_request(frame[4:])
    assert again_header == header and again_body == body


@pytest.mark.parametrize("frame,message", [
    ("0001 0011 0000", "request frame of 6 byte(s) is shorter than a request header (8)"),
    ("03e7 0000 00000001 ffff", "unknown api key 999"),
    ("0001 0063 00000001 ffff", "Fetch v99 is not supported (valid: 0-18)"),
    ("0001 ffff 00000001 ffff", "Fetch v-1 is not supported (valid: 0-18)"),
])
def test_malformed_request_headers(frame, message):
    with pytest.raises(FramingError) as e:
        framing.decode_request(hexb(frame))
    assert one_line_error(e) == message


def test_garbage_after_a_request_body():
    frame = framing.encode_request(64, 0, 1, "a", M("UnregisterBrokerRequest", broker_id=1))[4:] + b"\x00"
    with pytest.raises(FramingError) as e:
        framing.decode_request(frame)
    assert one_line_error(e) == "Found 1 byte(s) of garbage after UnregisterBrokerRequest v0"
    assert e.value.position == len(frame) - 1
    header, body = framing.decode_request(frame, trailing_ok=True)   # a server's parser, as Kafka's
    assert (header.client_id, body.broker_id) == ("a", 1)


def test_truncated_request_body_is_a_framing_error():
    frame = framing.encode_request(64, 0, 1, "a", M("UnregisterBrokerRequest", broker_id=1))[4:]
    for cut in range(8, len(frame)):
        with pytest.raises(FramingError) as e:
            framing.decode_request(frame[:cut])
        assert one_line_error(e).startswith("cannot decode ")


def test_encoding_a_bad_body_is_a_framing_error():
    with pytest.raises(FramingError) as e:
        framing.encode_request(64, 0, 1, "a", M("UnregisterBrokerRequest", broker_id="x"))
    assert one_line_error(e).startswith("cannot encode UnregisterBrokerRequest v0")
    with pytest.raises(FramingError):
        framing.encode_request(64, 1, 1, "a", M("UnregisterBrokerRequest"))


# ---------------------------------------------------------------- responses


def test_encode_response_flexible_has_header_tags():
    body = M("UnregisterBrokerResponse", error_code=102, error_message=None)
    assert framing.encode_response(64, 0, 3, body) == hexb("""
        0000000d 00000003 00    # size 13, correlation id, header tags
        00000000 0066 00 00     # throttle, BROKER_ID_NOT_REGISTERED, ErrorMessage null, tags
    """)


def test_api_versions_response_uses_header_v0_even_when_flexible():
    body = M("ApiVersionsResponse", api_keys=[])
    frame = framing.encode_response(18, 4, 9, body)
    assert frame == hexb("""
        0000000c 00000009       # size 12, correlation id, no header tags
        0000 01 00000000 00     # ErrorCode, ApiKeys [], ThrottleTimeMs, body tags
    """)
    header, again = framing.decode_response(18, 4, frame[4:])
    assert header.correlation_id == 9 and again == body


def test_unsupported_api_versions_request_gets_a_v0_error_response():
    request = hexb("00120009 0000002a 0003 636c69 00 02 61 02 62 00")  # ApiVersions v9, header v2
    with pytest.raises(UnsupportedVersionError) as e:
        framing.decode_request(request)
    assert one_line_error(e) == "ApiVersions v9 is not supported (valid: 0-4)"
    assert (e.value.header.correlation_id, e.value.header.client_id) == (42, "cli")
    assert framing.unsupported_api_versions_response(42) == hexb("""
        00000010 0000002a       # size 16, correlation id; header v0
        0023                    # ErrorCode 35 UNSUPPORTED_VERSION
        00000001 0012 0000 0004 # ApiKeys (v0: int32 count) holding only ApiVersions 0-4
    """)


def test_unsupported_version_of_another_api_has_no_header():
    with pytest.raises(UnsupportedVersionError) as e:
        framing.decode_request(hexb("0034 0009 00000001 ffff"))
    assert e.value.header is None and (e.value.api_key, e.value.api_version) == (52, 9)


def test_client_falls_back_to_v0_for_an_api_versions_error_response():
    frame = framing.unsupported_api_versions_response(42)[4:]
    header, body = framing.decode_response(18, 4, frame)
    assert header.correlation_id == 42 and body.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 4)]


def test_other_responses_do_not_fall_back():
    frame = framing.unsupported_api_versions_response(42)[4:]
    with pytest.raises(FramingError):
        framing.decode_response(60, 1, frame)


def test_response_garbage_and_truncation():
    frame = framing.encode_response(63, 1, 1, M("BrokerHeartbeatResponse"))[4:]
    with pytest.raises(FramingError) as e:
        framing.decode_response(63, 1, frame + b"\x01\x02")
    assert one_line_error(e) == "Found 2 byte(s) of garbage after BrokerHeartbeatResponse v1"
    for cut in range(len(frame)):
        with pytest.raises(FramingError):
            framing.decode_response(63, 1, frame[:cut])


def test_response_header_tagged_fields_survive_reencoding():
    header = M("ResponseHeader", correlation_id=1)
    header._unknown_tagged_fields = [(0, b"")]
    frame = framing.encode_response_frame(64, 0, header, M("UnregisterBrokerResponse"))
    assert frame[4:11] == hexb("00000001 01 00 00")
    assert framing.decode_response(64, 0, frame[4:])[0] == header


# ---------------------------------------------------------------- size prefix


def test_read_frame_splits_a_stream():
    one = framing.encode_response(64, 0, 1, M("UnregisterBrokerResponse"))
    two = framing.encode_response(64, 0, 2, M("UnregisterBrokerResponse"))
    stream = one + two[:5]
    frame, pos = framing.read_frame(stream)
    assert frame == one[4:] and pos == len(one)
    assert framing.read_frame(stream, pos) == (None, pos)  # incomplete: wait for more bytes
    assert framing.read_frame(b"\x00\x00") == (None, 0)


@pytest.mark.parametrize("data,message", [
    ("ffffffff", "Invalid receive (size = -1)"),
    ("7fffffff", "Invalid receive (size = 2147483647 larger than 104857600)"),
])
def test_read_frame_rejects_bad_sizes(data, message):
    with pytest.raises(FramingError) as e:
        framing.read_frame(hexb(data))
    assert one_line_error(e) == message


@pytest.mark.parametrize("data,message", [
    ("0000", "frame of 2 byte(s) is too short for its 4-byte size"),
    ("00000005 00", "frame size 5 does not match the 1 byte(s) that follow"),
])
def test_strip_size_checks_the_prefix(data, message):
    with pytest.raises(FramingError) as e:
        framing.strip_size(hexb(data))
    assert one_line_error(e) == message


def test_with_size_and_strip_size_are_inverse():
    assert framing.strip_size(framing.with_size(b"abc")) == b"abc"
