"""The controller's listener over TLS (throwaway CA made here) and SASL PLAIN / SCRAM, and the StandardAuthorizer.

A real network.Listener runs in-process on a background loop; the client is the blocking sync_client.
"""
from __future__ import annotations

import base64
import datetime
import ipaddress
import time
from types import SimpleNamespace

import pytest

from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.server import authorizer as authz
from kraftsman.controller.server import listener_security, sasl_server
from kraftsman.controller.server.config import ConfigError, from_properties
from kraftsman.controller.server.network import Listener, RequestContext
from kraftsman.controller.wire import sasl
from kraftsman.storage import scram
from kraftsman.storage.protocol import codec

from .quorum_fixtures import LoopThread

USERS = {"alice": "alice-secret", "admin": "admin-secret"}
BASE = {"process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093",
        "controller.listener.names": "CONTROLLER", "listeners": "CONTROLLER://127.0.0.1:0"}
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" ' \
       'user_admin="admin-secret";'


# ---------------------------------------------------------------- throwaway PKI


def _certificate(subject, key, issuer, ca: bool, *, expired: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = (now - datetime.timedelta(days=2), now - datetime.timedelta(days=1)) if expired else \
        (now - datetime.timedelta(minutes=5), now + datetime.timedelta(hours=1))
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (x509.CertificateBuilder().subject_name(name)
               .issuer_name(issuer[1].subject if issuer else name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer[0] if issuer else key, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    base = tmp_path_factory.mktemp("pki")
    pem = serialization.Encoding.PEM
    cas = {}
    for name in ("ca", "rogue"):
        key = ec.generate_private_key(ec.SECP256R1())
        cas[name] = (key, _certificate(f"{name} CA", key, None, ca=True))
        (base / f"{name}.pem").write_bytes(cas[name][1].public_bytes(pem))

    def leaf(file: str, subject: str, ca: str, **kw):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(subject, key, cas[ca], ca=False, **kw)
        key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        (base / f"{file}.pem").write_bytes(cert.public_bytes(pem) + key_pem)
        (base / f"{file}.crt").write_bytes(cert.public_bytes(pem))
        (base / f"{file}.key").write_bytes(key_pem)

    leaf("server", "127.0.0.1", "ca")
    leaf("client", "admin", "ca")
    leaf("expired", "admin", "ca", expired=True)
    leaf("foreign", "admin", "rogue")
    return base


# ---------------------------------------------------------------- an in-process listener


@pytest.fixture(scope="module")
def loop():
    runner = LoopThread()
    yield runner
    runner.close()


def _credential(mechanism: str, password: str):
    mech = scram.MECHANISMS[mechanism]
    salt = b"salt-" + mechanism.encode()
    stored, server = scram.stored_and_server_keys(mech, scram.salted_password(mech, password, salt, 4096))
    return SimpleNamespace(salt=salt, stored_key=stored, server_key=server, iterations=4096)


CREDENTIALS = {(m, u): _credential(m, p) for m in scram.MECHANISMS for u, p in USERS.items()}


class Served:
    """A started Listener with the given security properties; remembers the principals it served."""

    def __init__(self, loop, props: dict):
        self.loop, self.seen = loop, []
        config = from_properties(BASE | props)
        security = listener_security.for_listener(config, "CONTROLLER", lambda m, u: CREDENTIALS.get((m, u)))
        self.listener = Listener("CONTROLLER", "127.0.0.1", 0, self.handle, security=security)
        loop.run(self.listener.start())

    async def handle(self, ctx: RequestContext, body):
        self.seen.append(ctx.session_principal)
        return codec.message_class("DescribeClusterResponse")(cluster_id="test-cluster", controller_id=1)

    def connect(self, props: dict) -> sc.SyncConnection:
        return sc.SyncConnection.open("127.0.0.1", self.listener.port, sc.ClientConfig.from_properties(props),
                                      time.monotonic() + 10)

    def describe(self, props: dict) -> str:
        with self.connect(props) as conn:
            body = codec.message_class("DescribeClusterRequest")(endpoint_type=2)
            return conn.request("DescribeCluster", 1, body, time.monotonic() + 10).cluster_id

    def close(self) -> None:
        self.loop.run(self.listener.close())


@pytest.fixture
def serve(loop):
    started = []

    def start(props: dict) -> Served:
        started.append(Served(loop, props))
        return started[-1]
    yield start
    for served in started:
        served.close()


def _ssl_server(pki, auth: str = "required") -> dict:
    return {"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki / "server.pem"), "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki / "ca.pem"), "ssl.client.auth": auth}


def _ssl_client(pki, keystore: str | None = "client") -> dict:
    props = {"security.protocol": "SSL", "ssl.truststore.location": str(pki / "ca.pem")}
    return props | ({"ssl.keystore.location": str(pki / f"{keystore}.pem")} if keystore else {})


def _sasl_server(protocol: str = "SASL_PLAINTEXT", mechanisms: str = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512") -> dict:
    return {"listener.security.protocol.map": f"CONTROLLER:{protocol}",
            "listener.name.controller.sasl.enabled.mechanisms": mechanisms,
            "listener.name.controller.plain.sasl.jaas.config": JAAS}


def _sasl_client(mechanism: str, user: str = "alice", password: str = "alice-secret",
                 protocol: str = "SASL_PLAINTEXT") -> dict:
    return {"security.protocol": protocol, "sasl.mechanism": mechanism, "sasl.jaas.config":
            f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" '
            f'password="{password}";'}


# ---------------------------------------------------------------- TLS


def test_tls_handshake_with_a_verified_client_certificate(serve, pki):
    served = serve(_ssl_server(pki))
    assert served.describe(_ssl_client(pki)) == "test-cluster"
    assert served.seen == ["User:CN=admin"]                               # Kafka's default SSL principal


def test_listener_overrides_and_inline_pem_keystore(serve, pki):
    props = {"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.location": "/nonexistent.pem",
             "listener.name.controller.ssl.keystore.location": "",
             # one-line forms, as .properties continuation lines join them (with and without spaces)
             "listener.name.controller.ssl.keystore.certificate.chain": " ".join((pki / "server.crt").read_text().split()),
             "listener.name.controller.ssl.keystore.key": "".join((pki / "server.key").read_text().splitlines()),
             "listener.name.controller.ssl.client.auth": "required",
             "ssl.truststore.certificates": " ".join((pki / "ca.pem").read_text().split())}
    served = serve(props)
    assert served.describe(_ssl_client(pki)) == "test-cluster"
    with pytest.raises((sc.AuthenticationFailed, sc.NotKafka)):
        served.describe(_ssl_client(pki, keystore=None))
    assert served.seen == ["User:CN=admin"]


def test_sasl_ssl_listener_ignores_the_unprefixed_client_auth_setting(serve, pki):
    client = _sasl_client("PLAIN", protocol="SASL_SSL") | {"ssl.truststore.location": str(pki / "ca.pem")}
    served = serve(_ssl_server(pki, "required") | _sasl_server("SASL_SSL"))
    assert served.describe(client) == "test-cluster"                      # KIP-684: no certificate asked
    served = serve(_ssl_server(pki, "none") | _sasl_server("SASL_SSL") |
                   {"listener.name.controller.ssl.client.auth": "required"})
    with pytest.raises((sc.AuthenticationFailed, sc.NotKafka)):
        served.describe(client)
    assert served.describe(client | {"ssl.keystore.location": str(pki / "client.pem")}) == "test-cluster"
    assert served.seen == ["User:alice"]                                  # the SASL user, not the certificate


@pytest.mark.parametrize("keystore", ["expired", "foreign", None])
def test_required_client_auth_refuses_expired_foreign_and_missing_certificates(serve, pki, keystore):
    served = serve(_ssl_server(pki, "required"))
    with pytest.raises((sc.AuthenticationFailed, sc.NotKafka)):
        served.describe(_ssl_client(pki, keystore))
    assert served.seen == []


def test_requested_client_auth_accepts_no_certificate_but_refuses_a_foreign_one(serve, pki):
    served = serve(_ssl_server(pki, "requested"))
    assert served.describe(_ssl_client(pki, None)) == "test-cluster"
    with pytest.raises((sc.AuthenticationFailed, sc.NotKafka)):
        served.describe(_ssl_client(pki, "foreign"))
    assert served.seen == ["User:ANONYMOUS"]


def test_plaintext_client_on_a_tls_listener_gets_nothing(serve, pki):
    served = serve(_ssl_server(pki, "none"))
    with pytest.raises((sc.NotKafka, sc.RequestTimeout)):
        sc.SyncConnection.open("127.0.0.1", served.listener.port, sc.ClientConfig(), time.monotonic() + 2)


# ---------------------------------------------------------------- SASL


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_mechanisms_authenticate_the_user(serve, mechanism):
    served = serve(_sasl_server())
    assert served.describe(_sasl_client(mechanism)) == "test-cluster"
    assert served.seen == ["User:alice"]


def test_scram_over_sasl_ssl(serve, pki):
    served = serve(_ssl_server(pki, "none") | _sasl_server("SASL_SSL", "SCRAM-SHA-512"))
    client = _sasl_client("SCRAM-SHA-512", "admin", "admin-secret", "SASL_SSL")
    assert served.describe(client | {"ssl.truststore.location": str(pki / "ca.pem")}) == "test-cluster"
    assert served.seen == ["User:admin"]


def test_sasl_listener_advertises_the_sasl_apis_and_refuses_other_requests_before_authentication(serve):
    served = serve(_sasl_server())
    with served.connect({}) as conn:                                      # PLAINTEXT client, no SASL
        assert conn.api_versions[17] == (0, 1) and conn.api_versions[36] == (0, 2)
        with pytest.raises(sc.NotKafka, match="closed the connection"):
            conn.request("DescribeCluster", 1, codec.message_class("DescribeClusterRequest")(),
                         time.monotonic() + 5)
    with served.connect({}) as conn:                                      # SaslAuthenticate before the handshake
        with pytest.raises(sc.NotKafka):
            conn.request("SaslAuthenticate", 2, codec.message_class("SaslAuthenticateRequest")(auth_bytes=b"x"),
                         time.monotonic() + 5)
    assert served.seen == []


def _handshake(conn, mechanism: str, version: int = 1):
    body = codec.message_class("SaslHandshakeRequest")(mechanism=mechanism)
    return conn.request("SaslHandshake", version, body, time.monotonic() + 5)


def _authenticate(conn, data: bytes):
    body = codec.message_class("SaslAuthenticateRequest")(auth_bytes=data)
    return conn.request("SaslAuthenticate", 2, body, time.monotonic() + 5)


@pytest.mark.parametrize("mechanism, message", [
    ("PLAIN", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-256", "Authentication failed during authentication due to invalid credentials with SASL "
                      "mechanism SCRAM-SHA-256"),
    ("SCRAM-SHA-512", "Authentication failed during authentication due to invalid credentials with SASL "
                      "mechanism SCRAM-SHA-512"),
])
def test_wrong_password_gets_sasl_authentication_failed_then_the_connection_closes(serve, mechanism, message):
    served = serve(_sasl_server())
    with pytest.raises(sc.AuthenticationFailed, match=message):
        served.describe(_sasl_client(mechanism, password="wrong"))
    with served.connect({}) as conn:
        assert _handshake(conn, mechanism).error_code == 0
        client = sasl.client_for(mechanism, "alice", "wrong")
        response = _authenticate(conn, client.first())
        if mechanism != "PLAIN":
            response = _authenticate(conn, client.respond(response.auth_bytes))
        assert (response.error_code, response.error_message) == (58, message)
        with pytest.raises(sc.NotKafka):
            _handshake(conn, mechanism)
    assert served.seen == []


def test_unknown_scram_user_fails_like_a_wrong_password(serve):
    served = serve(_sasl_server())
    with pytest.raises(sc.AuthenticationFailed, match="invalid credentials with SASL mechanism SCRAM-SHA-256"):
        served.describe(_sasl_client("SCRAM-SHA-256", user="mallory"))


def test_disabled_mechanism_and_handshake_v0_are_refused(serve):
    served = serve(_sasl_server(mechanisms="SCRAM-SHA-256"))
    with pytest.raises(sc.AuthenticationFailed, match="does not enable SASL mechanism PLAIN"):
        served.describe(_sasl_client("PLAIN"))
    with served.connect({}) as conn:
        response = _handshake(conn, "PLAIN")
        assert (response.error_code, response.mechanisms) == (33, ["SCRAM-SHA-256"])
        with pytest.raises(sc.NotKafka):                                  # closed after the answer
            _handshake(conn, "SCRAM-SHA-256")
    with served.connect({}) as conn:
        with pytest.raises(sc.NotKafka):
            _handshake(conn, "SCRAM-SHA-256", version=0)


def test_sasl_requests_after_authentication_get_illegal_sasl_state(serve):
    served = serve(_sasl_server())
    with served.connect(_sasl_client("SCRAM-SHA-256")) as conn:
        assert _handshake(conn, "PLAIN").error_code == 34
        assert _authenticate(conn, b"x").error_code == 34


def test_a_request_during_the_exchange_gets_illegal_sasl_state(serve):
    served = serve(_sasl_server())
    with served.connect({}) as conn:
        assert _handshake(conn, "SCRAM-SHA-256").error_code == 0
        response = conn.request("DescribeCluster", 1, codec.message_class("DescribeClusterRequest")(),
                                time.monotonic() + 5)
        assert (response.error_code, response.error_message) == (
            34, "Unexpected Kafka request of type DescribeCluster during SASL authentication.")
        with pytest.raises(sc.NotKafka):                                  # then the connection closes
            _handshake(conn, "PLAIN")
    assert served.seen == []


# ---------------------------------------------------------------- pure SCRAM server vs the client


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_server_verifies_the_client_and_the_client_verifies_the_server(mechanism):
    server = sasl_server.ScramServer(mechanism, lambda m, u: CREDENTIALS.get((m, u)), nonce="srv")
    client = sasl.client_for(mechanism, "alice", "alice-secret")
    first = server.evaluate(client.first())
    assert first.decode().startswith(f"r={client.nonce}srv,s={base64.b64encode(b'salt-' + mechanism.encode()).decode()}")
    final = server.evaluate(client.respond(first))
    assert server.done and server.username == "alice" and client.respond(final) is None and client.done


def test_scram_server_refuses_a_replayed_nonce():
    server = sasl_server.ScramServer("SCRAM-SHA-256", lambda m, u: CREDENTIALS.get((m, u)), nonce="srv")
    client = sasl.client_for("SCRAM-SHA-256", "alice", "alice-secret")
    first = server.evaluate(client.first())
    final = client.respond(first).replace(b"srv,", b"xyz,")
    with pytest.raises(sasl_server.SaslFailed, match="invalid credentials"):
        server.evaluate(final)


def test_plain_server_messages():
    server = sasl_server.PlainServer({"alice": "pw"})
    with pytest.raises(sasl_server.SaslFailed, match="username not specified"):
        server.evaluate(b"\0\0pw")
    with pytest.raises(sasl_server.SaslFailed, match="different from username"):
        server.evaluate(b"bob\0alice\0pw")
    assert server.evaluate(b"\0alice\0pw") == b"" and server.username == "alice"
    assert sasl_server.plain_users(JAAS) == USERS


# ---------------------------------------------------------------- configuration


def _server(props: dict):
    """Make a ControllerServer from `props`: reading them checks the listener map, making the server checks the
    TLS and SASL settings (nothing is opened)."""
    from kraftsman.controller.server.node import ControllerServer

    return ControllerServer(from_properties(props))


@pytest.mark.parametrize("props, message", [
    ({"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT"}, "GSSAPI"),
    ({"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "sasl.enabled.mechanisms": "PLAIN"},
     "plain.sasl.jaas.config"),
    ({"listener.security.protocol.map": "CONTROLLER:SSL"}, "ssl.keystore.location"),
    ({"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.location": "/nonexistent/k.pem"},
     "cannot load the TLS key material"),
    ({"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.type": "JKS"}, "PEM only"),
    ({"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.certificate.chain": "abc",
      "ssl.keystore.key": "def"}, "holds no -----BEGIN"),
    ({"listener.security.protocol.map": "OTHER:SSL"}, "No security protocol defined for listener CONTROLLER"),
    ({"listener.security.protocol.map": "CONTROLLER:TLS"}, "not a valid listener:protocol pair"),
    ({"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "sasl.enabled.mechanisms": "SCRAM-SHA-256",
      "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094"}, "sasl.mechanism.controller.protocol=GSSAPI"),
    ({"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "sasl.enabled.mechanisms": "PLAIN",
      "sasl.mechanism.controller.protocol": "PLAIN", "controller.quorum.voters": "1@h:9093,2@h:9094",
      "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";'},
     "needs username"),
])
def test_bad_security_settings_are_one_line_config_errors(props, message):
    with pytest.raises(ConfigError, match=message) as info:
        _server(BASE | props)
    assert "\n" not in str(info.value)


def test_default_protocol_map_keeps_controller_listeners_plaintext():
    assert from_properties(BASE).security_protocols == {"CONTROLLER": "PLAINTEXT"}
    config = from_properties(BASE | {"listeners": "CONTROLLER://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                                     "controller.listener.names": "CONTROLLER,SASL_PLAINTEXT",
                                     "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,"
                                                                       "SASL_PLAINTEXT:SASL_PLAINTEXT",
                                     "sasl.enabled.mechanisms": "SCRAM-SHA-256"})
    assert config.security_protocols == {"CONTROLLER": "PLAINTEXT", "SASL_PLAINTEXT": "SASL_PLAINTEXT"}


# ---------------------------------------------------------------- authorizer


def _acl(principal, operation, permission="ALLOW", resource="CLUSTER", name="kafka-cluster", pattern=3, host="*"):
    from kraftsman.controller.image.acls import OPERATIONS, PERMISSION_TYPES, RESOURCE_TYPES

    return SimpleNamespace(resource_type=RESOURCE_TYPES.index(resource), resource_name=name, pattern_type=pattern,
                           principal=principal, host=host, operation=OPERATIONS.index(operation),
                           permission_type=PERMISSION_TYPES.index(permission))


def _ctx(api: str, who: str, **kw) -> RequestContext:
    return RequestContext(0, 0, api, 1, "c", None, "CONTROLLER", ("127.0.0.1", 1), "id",
                          session_principal=who, **kw)


def test_authorizer_super_users_acls_and_deny():
    acls = [_acl("User:ops", "ALTER"), _acl("User:*", "CLUSTER_ACTION"), _acl("User:eve", "ALL", "DENY"),
            _acl("User:eve", "ALTER"), _acl("User:dev", "CREATE", resource="TOPIC", name="dev-", pattern=4)]
    auth = authz.StandardAuthorizer(authz.parse_super_users("User:admin; User:root"), acls=lambda: acls)
    unregister = codec.message_class("UnregisterBrokerRequest")(broker_id=1)
    denied = authz.request_denial(auth, _ctx("UnregisterBroker", "User:alice"), unregister)
    assert (denied.error_code, denied.error_message) == (31, "Cluster authorization failed.")
    for principal in ("User:admin", "User:ops"):
        assert authz.request_denial(auth, _ctx("UnregisterBroker", principal), unregister) is None
    assert authz.request_denial(auth, _ctx("UnregisterBroker", "User:eve"), unregister) is not None
    assert auth.authorize("User:alice", "h", "CLUSTER_ACTION", "CLUSTER", "kafka-cluster")
    assert auth.authorize("User:ops", "h", "DESCRIBE", "CLUSTER", "kafka-cluster")     # implied by ALTER
    create = codec.message_class("CreateTopicsRequest")
    body = create(topics=[create.CreatableTopic(name="dev-a"), create.CreatableTopic(name="prod")])
    assert authz.request_denial(auth, _ctx("CreateTopics", "User:dev"), body).topics[1].error_code == 29
    body = create(topics=[create.CreatableTopic(name="dev-a")])
    assert authz.request_denial(auth, _ctx("CreateTopics", "User:dev"), body) is None
    describe = codec.message_class("DescribeConfigsRequest")
    body = describe(resources=[describe.DescribeConfigsResource(resource_type=2, resource_name="prod")])
    result = authz.request_denial(auth, _ctx("DescribeConfigs", "User:dev"), body).results[0]
    assert (result.error_code, result.resource_name) == (29, "prod")


@pytest.mark.parametrize("api, operation", [
    ("UpdateFeatures", "ALTER"), ("CreateAcls", "ALTER"), ("DeleteAcls", "ALTER"), ("DescribeAcls", "DESCRIBE"),
    ("AlterUserScramCredentials", "ALTER"), ("DescribeUserScramCredentials", "DESCRIBE"),
    ("AlterClientQuotas", "ALTER_CONFIGS")])
def test_admin_apis_need_kafkas_cluster_operation(api, operation):
    auth = authz.StandardAuthorizer(frozenset(), acls=lambda: [_acl("User:ops", operation)])
    body = codec.message_class(f"{api}Request")()
    assert authz.request_denial(auth, _ctx(api, "User:ops"), body) is None
    assert authz.request_denial(auth, _ctx(api, "User:dev"), body) is not None  # CLUSTER_AUTHORIZATION_FAILED
    weaker = authz.StandardAuthorizer(frozenset(), acls=lambda: [_acl("User:ops", "CLUSTER_ACTION")])
    assert authz.request_denial(weaker, _ctx(api, "User:ops"), body) is not None


def test_authorizer_warns_when_plaintext_traffic_is_not_a_super_user(caplog):
    props = {"authorizer.class.name": authz.AUTHORIZERS[0], "super.users": "User:admin"}
    with caplog.at_level("WARNING", logger="kraftsman.server"):
        authz.from_properties(props, lambda: None)
        authz.from_properties(props | {"super.users": "User:admin;User:ANONYMOUS"}, lambda: None)
        authz.from_properties(props, lambda: None, anonymous_listeners=False)
    warnings = [r.getMessage() for r in caplog.records if r.getMessage().startswith("authorizer on:")]
    assert [m.count("User:ANONYMOUS") for m in warnings] == [1]  # other tests' servers may still log meanwhile


def test_forwarded_requests_use_the_envelope_principal():
    auth = authz.StandardAuthorizer({"User:broker", "User:admin"})
    principal = b"\0\0" + b"\x05User" + b"\x06admin" + b"\0\0"           # DefaultPrincipalData v0
    assert authz.envelope_principal(principal) == "User:admin"
    body = codec.message_class("UnregisterBrokerRequest")(broker_id=1)
    ctx = _ctx("UnregisterBroker", "User:broker", principal=principal, forwarded_by="broker-1")
    assert authz.request_denial(auth, ctx, body) is None
    ctx = _ctx("UnregisterBroker", "User:alice", principal=principal, forwarded_by="broker-1")
    assert authz.request_denial(auth, ctx, body).error_code == 31       # the forwarder lacks CLUSTER_ACTION


def test_no_authorizer_class_allows_everything():
    assert authz.from_properties({}, lambda: None) is None
    assert authz.from_properties({"authorizer.class.name": authz.AUTHORIZERS[0]}, lambda: None) is not None


def test_frames_before_authentication_are_limited_by_sasl_server_max_receive_size(serve):
    import socket

    served = serve(_sasl_server() | {"sasl.server.max.receive.size": "1000"})
    with socket.create_connection(("127.0.0.1", served.listener.port), timeout=5) as sock:
        sock.sendall((1001).to_bytes(4, "big"))
        assert sock.recv(1) == b""                                        # closed: invalid receive
    with pytest.raises(ConfigError, match="sasl.server.max.receive.size"):
        _server(BASE | _sasl_server() | {"sasl.server.max.receive.size": "big"})
    assert served.describe(_sasl_client("PLAIN")) == "test-cluster"      # a normal exchange fits


# ---------------------------------------------------------------- the controller-side client (secure_connect)


def _controller_props(pki, mechanism: str = "SCRAM-SHA-512", password: str = "admin-secret") -> dict:
    """One server.properties holding both sides, as Kafka's: the listener and how controllers log in to it."""
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return _ssl_server(pki, "none") | _sasl_server("SASL_SSL") | {
        "sasl.mechanism.controller.protocol": mechanism,
        f"listener.name.controller.{mechanism.lower()}.sasl.jaas.config":
            f'org.apache.kafka.common.security.{module} required username="admin" password="{password}" '
            + ('user_admin="admin-secret";' if mechanism == "PLAIN" else ";")}


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_controller_client_authenticates_with_the_server_properties(serve, pki, loop, mechanism):
    from kraftsman.controller.server import client_security
    from kraftsman.controller.wire import secure_connect

    props = _controller_props(pki, mechanism)
    served = serve(props)
    security = client_security.controller_client_security(from_properties(BASE | props))
    assert (security.protocol, security.mechanism, security.username) == ("SASL_SSL", mechanism, "admin")

    async def describe():
        conn = await secure_connect.open_connection("127.0.0.1", served.listener.port, security,
                                                    client_id="raft-client-1", timeout_ms=5000)
        try:
            body = codec.message_class("DescribeClusterRequest")(endpoint_type=2)
            return (await conn.request("DescribeCluster", 1, body)).cluster_id
        finally:
            await conn.close()
    assert loop.run(describe()) == "test-cluster"
    assert served.seen == ["User:admin"]


def test_controller_client_reports_a_failed_login_and_bad_settings(serve, pki, loop):
    from kraftsman.controller.server import client_security
    from kraftsman.controller.wire import secure_connect

    served = serve(_controller_props(pki))
    security = client_security.controller_client_security(from_properties(BASE | _controller_props(pki, password="x")))
    coro = secure_connect.open_connection("127.0.0.1", served.listener.port, security, client_id="c", timeout_ms=5000)
    with pytest.raises(secure_connect.AuthenticationError, match="invalid credentials with SASL mechanism"):
        loop.run(coro)
    rogue = client_security.controller_client_security(from_properties(
        BASE | _controller_props(pki) | {"ssl.truststore.location": str(pki / "rogue.pem")}))
    coro = secure_connect.open_connection("127.0.0.1", served.listener.port, rogue, client_id="c", timeout_ms=5000)
    with pytest.raises(secure_connect.AuthenticationError, match="TLS handshake"):
        loop.run(coro)
    with pytest.raises(ConfigError, match="sasl.mechanism.controller.protocol=GSSAPI"):
        client_security.controller_client_security(from_properties(BASE | _ssl_server(pki, "none") |
                                                                  _sasl_server("SASL_SSL")))
    assert served.seen == []


def test_metadata_keeps_only_the_topics_the_principal_may_describe():
    auth = authz.StandardAuthorizer({"User:admin"}, acls=lambda: [_acl("User:dev", "READ", resource="TOPIC",
                                                                        name="dev-", pattern=4)])
    response_cls, request_cls = codec.message_class("MetadataResponse"), codec.message_class("MetadataRequest")
    topics = [response_cls.MetadataResponseTopic(name=n, partitions=[]) for n in ("dev-a", "prod", "other")]
    response = response_cls(cluster_id="c", topics=topics)
    everything = request_cls(topics=None)
    assert [t.name for t in authz.filter_metadata(auth, _ctx("Metadata", "User:admin"), everything, response).topics] \
        == ["dev-a", "prod", "other"]
    assert [t.name for t in authz.filter_metadata(auth, _ctx("Metadata", "User:dev"), everything, response).topics] \
        == ["dev-a"]                                                      # DESCRIBE implied by READ
    named = request_cls(topics=[request_cls.MetadataRequestTopic(name="prod")])
    kept = authz.filter_metadata(auth, _ctx("Metadata", "User:dev"), named, response).topics
    assert [(t.name, t.error_code) for t in kept] == [("dev-a", 0), ("prod", 29)]


def test_delete_topics_by_id_is_checked_against_the_topic_name():
    from kraftsman.storage.protocol.uuids import Uuid

    dev_id, prod_id = Uuid(b"\1" * 16), Uuid(b"\2" * 16)
    auth = authz.StandardAuthorizer({"User:admin"}, acls=lambda: [_acl("User:dev", "DELETE", resource="TOPIC",
                                                                        name="dev-", pattern=4)],
                                    topic_names=lambda: {bytes(dev_id): "dev-a", bytes(prod_id): "prod"})
    cls = codec.message_class("DeleteTopicsRequest")
    by_id = lambda *ids: cls(topics=[cls.DeleteTopicState(topic_id=i) for i in ids])  # noqa: E731
    assert authz.request_denial(auth, _ctx("DeleteTopics", "User:dev"), by_id(dev_id)) is None
    assert authz.request_denial(auth, _ctx("DeleteTopics", "User:dev"), by_id(dev_id, prod_id)) is not None
    assert authz.request_denial(auth, _ctx("DeleteTopics", "User:admin"), by_id(prod_id)) is None
    assert authz.request_denial(auth, _ctx("DeleteTopics", "User:dev"), cls(topic_names=["prod"])) is not None


def test_controller_client_over_mutual_tls_presents_the_listener_keystore(serve, pki, loop):
    from kraftsman.controller.server import client_security
    from kraftsman.controller.wire import secure_connect

    props = _ssl_server(pki, "required")
    served = serve(props)
    security = client_security.controller_client_security(from_properties(BASE | props))
    inline = {"ssl.keystore.location": "", "ssl.keystore.certificate.chain": (pki / "server.crt").read_text(),
              "ssl.keystore.key": (pki / "server.key").read_text()}
    assert client_security.controller_client_security(from_properties(BASE | props | inline)).ssl_context
    assert (security.protocol, security.mechanism) == ("SSL", None)

    async def describe():
        conn = await secure_connect.open_connection("127.0.0.1", served.listener.port, security, client_id="c",
                                                    timeout_ms=5000)
        try:
            return (await conn.request("DescribeCluster", 1, codec.message_class("DescribeClusterRequest")())).cluster_id
        finally:
            await conn.close()
    assert loop.run(describe()) == "test-cluster"
    assert served.seen == ["User:CN=127.0.0.1"]                           # the controller's own certificate


def test_failed_authentication_is_answered_after_the_configured_delay(serve):
    served = serve(_sasl_server() | {"connection.failed.authentication.delay.ms": "400"})
    start = time.monotonic()
    with pytest.raises(sc.AuthenticationFailed, match="Invalid username or password"):
        served.describe(_sasl_client("PLAIN", password="wrong"))
    assert time.monotonic() - start >= 0.35


def test_ssl_enabled_protocols_bound_the_tls_versions(serve, pki):
    served = serve(_ssl_server(pki, "none") | {"ssl.enabled.protocols": "TLSv1.3"})
    with served.connect(_ssl_client(pki, None)) as conn:
        assert conn.sock.version() == "TLSv1.3"
    with pytest.raises(ConfigError, match="ssl.enabled.protocols"):
        _server(BASE | _ssl_server(pki) | {"ssl.enabled.protocols": "SSLv3"})
