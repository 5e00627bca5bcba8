"""The blocking client: golden request bytes (real Kafka 3.9 frames), real responses, KIP-511, failures, config."""
from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from kraftsman.controller.client import sync_client as sc
from kraftsman.storage.protocol import codec

from ..server.sync_fakes import FakeServer, body, http_server, silent_server

WIRE = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kafka-wire-3.9"


@pytest.fixture
def wire() -> Path:
    if not WIRE.is_dir():
        pytest.skip(f"real Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    return WIRE


class ScriptedSocket:
    """A socket stand-in: records what is sent, replays canned response frames."""

    def __init__(self, *responses: bytes):
        self.sent, self.inbox = b"", b"".join(responses)

    def settimeout(self, _):
        pass

    def sendall(self, data):
        self.sent += data

    def recv(self, n):
        chunk, self.inbox = self.inbox[:n], self.inbox[n:]
        return chunk

    def close(self):
        pass


def _conn(sock, client_id="adminclient-1", first_cid=1):
    conn = sc.SyncConnection(sock, "h", 1, sc.ClientConfig(client_id=client_id))
    conn._cids = itertools.count(first_cid)
    return conn


def _later():
    return time.monotonic() + 5


# ---------------------------------------------------------------- golden bytes against real Kafka 3.9 frames


def test_api_versions_v4_request_equals_kafkas(wire, monkeypatch):
    request = (wire / "msgs/000041_c3_req_ApiVersions_v4_c1.bin").read_bytes()
    response = (wire / "msgs/000042_c3_resp_ApiVersions_v4_c1.bin").read_bytes()
    monkeypatch.setattr(sc, "SOFTWARE_NAME", "apache-kafka-java")
    monkeypatch.setattr(sc, "SOFTWARE_VERSION", "3.9.0")
    sock = ScriptedSocket(response)
    versions = _conn(sock, client_id="3").negotiate(_later())
    assert sock.sent == request
    assert versions[64] == (0, 0) and versions[60][1] >= 1   # a real controller serves UnregisterBroker, DescribeCluster v1


def test_describe_cluster_v1_controllers_request_and_real_response(wire):
    from kraftsman.controller.client.admin import cluster as admin

    request = (wire / "msgs/001087_c1_req_DescribeCluster_v1_c1.bin").read_bytes()
    response = (wire / "msgs/001088_c1_resp_DescribeCluster_v1_c1.bin").read_bytes()
    sock = ScriptedSocket(response)
    conn = _conn(sock)
    conn.api_versions = {60: (0, 1), 3: (0, 12)}
    info = admin._describe_cluster_on(conn, _later(), admin.CONTROLLERS)
    assert sock.sent == request
    assert info.cluster_id == "Xq3mZ8tnT3ahbQ6c2Rj1Vw"           # the README's cluster id
    assert sorted(n.node_id for n in info.nodes) == [1, 2, 3]      # the three controllers


def test_metadata_v12_fallback_request_equals_kafkas(wire):
    from kraftsman.controller.client.admin import cluster as admin

    request = (wire / "msgs/000999_b4_req_Metadata_v12_c1.bin").read_bytes()
    sock = ScriptedSocket()
    conn = _conn(sock)
    conn.api_versions = {3: (0, 12)}                                  # no DescribeCluster: Metadata fallback
    with pytest.raises(sc.NotKafka):                                  # nothing scripted to answer
        admin._describe_cluster_on(conn, _later(), admin.BROKERS)
    assert sock.sent == request


@pytest.mark.parametrize("seq, expected_error", [(2798, 0), (2844, 102)])
def test_unregister_broker_v0_request_and_real_responses(wire, seq, expected_error):
    request = (wire / "envelope-inner/002793_inner_req_api64_v0_c3.bin").read_bytes()
    response = next((wire / "envelope-inner").glob(f"{seq:06d}_inner_resp_api64_v0_c3.bin")).read_bytes()
    sock = ScriptedSocket(response)
    decoded = _conn(sock, first_cid=3).request(
        "UnregisterBroker", 0, codec.message_class("UnregisterBrokerRequest")(broker_id=5), _later())
    assert sock.sent == request
    assert decoded.error_code == expected_error


def test_sasl_request_bytes_are_hand_derived():
    sock = ScriptedSocket()
    conn = _conn(sock, client_id="x", first_cid=0)
    with pytest.raises(sc.NotKafka):
        conn.request("SaslHandshake", 1, body("SaslHandshakeRequest", mechanism="PLAIN"), _later())
    # size 18 | key 17 | v1 | cid 0 | client "x" (int16 len) | mechanism "PLAIN" (int16 len; not flexible)
    assert sock.sent.hex() == "00000012" "0011" "0001" "00000000" "0001" "78" "0005" + b"PLAIN".hex()
    sock.sent = b""
    with pytest.raises(sc.NotKafka):
        conn.request("SaslAuthenticate", 2, body("SaslAuthenticateRequest", auth_bytes=b"\0a\0b"), _later())
    # v2 is flexible: header v2 (tag section 00), compact bytes uvarint(4+1)=05, body tag section 00
    assert sock.sent.hex() == "00000012" "0024" "0002" "00000001" "0001" "78" "00" "05" "00610062" "00"


# ---------------------------------------------------------------- against in-test servers


def test_kip511_fallback_to_the_servers_highest_api_versions():
    with FakeServer(ranges={18: (0, 2), 64: (0, 0)}) as server:
        with sc.SyncConnection.open("127.0.0.1", server.port, sc.ClientConfig(), _later()) as conn:
            assert conn.api_versions == {18: (0, 2), 64: (0, 0)}
            assert conn.pick_version("UnregisterBroker") == 0
            with pytest.raises(sc.UnsupportedVersion):
                conn.pick_version("DescribeCluster")
    assert [h.request_api_version for h, _ in server.requests] == [4, 2]   # v4 refused (KIP-511), then v2


def test_closed_port_is_unreachable_fast():
    with FakeServer() as server:
        port = server.port
    start = time.monotonic()
    with pytest.raises(sc.Unreachable, match=f"127.0.0.1:{port}"):
        sc.SyncConnection.open("127.0.0.1", port, sc.ClientConfig(), _later())
    assert time.monotonic() - start < 1


def test_http_server_is_not_kafka():
    with http_server() as server:
        with pytest.raises(sc.NotKafka, match="does not speak the Kafka protocol"):
            sc.SyncConnection.open("127.0.0.1", server.port, sc.ClientConfig(), _later())


def test_silent_server_times_out_at_the_deadline():
    with silent_server() as server:
        start = time.monotonic()
        with pytest.raises(sc.RequestTimeout):
            sc.SyncConnection.open("127.0.0.1", server.port, sc.ClientConfig(), time.monotonic() + 0.4)
        assert 0.3 < time.monotonic() - start < 2


def test_wrong_correlation_id_is_refused():
    from kraftsman.storage.protocol import framing

    reply = framing.encode_response(64, 0, 99, body("UnregisterBrokerResponse"))   # correlation id 99, not 1
    sock = ScriptedSocket(reply)
    with pytest.raises(sc.NotKafka, match="correlation id 99"):
        _conn(sock).request("UnregisterBroker", 0, body("UnregisterBrokerRequest", broker_id=1), _later())


# ---------------------------------------------------------------- configuration


def test_properties_are_read_with_kafkas_names():
    config = sc.ClientConfig.from_properties({
        "security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512", "client.id": "ops",
        "request.timeout.ms": "1500", "ssl.truststore.location": "/ca.pem",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            'username="alice" password="s3 cret";'})
    assert (config.security_protocol, config.sasl_mechanism, config.client_id) == ("SASL_SSL", "SCRAM-SHA-512", "ops")
    assert (config.sasl_username, config.sasl_password, config.request_timeout_ms) == ("alice", "s3 cret", 1500)
    assert config.uses_ssl and config.uses_sasl and config.ssl_cafile == "/ca.pem"


@pytest.mark.parametrize("props, message", [
    ({"security.protocol": "TLS"}, "String must be one of"),
    ({"request.timeout.ms": "soon"}, "Not a number"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.username": "a",
      "sasl.password": "b"}, "not supported"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs a username"),
    ({"ssl.truststore.type": "JKS"}, "PEM files only"),
])
def test_bad_properties_are_one_line_errors(props, message):
    with pytest.raises(ValueError, match=message):
        sc.ClientConfig.from_properties(props)


@pytest.mark.parametrize("text, expected", [("a:1", [("a", 1)]), ("[::1]:9093, b:2", [("::1", 9093), ("b", 2)])])
def test_addresses_parse(text, expected):
    assert sc.parse_addresses(text) == expected


@pytest.mark.parametrize("text", ["a", "a:0", "a:70000", ":1", "", "http://h:9092"])
def test_bad_addresses_are_refused(text):
    with pytest.raises(ValueError):
        sc.parse_addresses(text)
