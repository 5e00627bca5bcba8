"""kafka-cluster over SASL_SSL against a real kafka-controller process with the StandardAuthorizer.

Three voters (real processes) each serve two listeners: CONTROLLER (PLAINTEXT: Raft between the voters and the
simulated brokers, whose principal User:ANONYMOUS is a super user) and SECURE (SASL_SSL: TLS from a throwaway CA
made here, SCRAM users written into bootstrap.checkpoint by `kafka-storage format --add-scram`, PLAIN users from
JAAS). Clients bootstrap to every SECURE listener, so writes also reach the leader through a follower.
Tests run in file order (the unregister tests change the broker set).
"""
from __future__ import annotations

import datetime
import io
import ipaddress
import time

import pytest

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.demo.local_quorum import LocalQuorum
from kraftsman.cli.storage import tool as storage_tool
from kraftsman.controller.client.broker_sim import SimulatedBroker

from ...controller.server.quorum_fixtures import (
    FAST,
    LoopThread,
    SecureListenerQuorum,
    find_leader,
    running_brokers,
    wait_for,
)

BROKER_IDS = (201, 202, 203)
CLUSTER_ID = "U2VjdXJlQ2x1c3RlcjAxMg"
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-plain";'


def kc(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(cluster_tool.run, list(argv), Environment(stdout=out, stderr=err), prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


def _make_pki(base):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def cert(subject, key, issuer_name, issuer_key, ca):
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=2))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    pem = serialization.Encoding.PEM
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    (base / "ca.pem").write_bytes(cert("test CA", ca_key, ca_name, ca_key, True).public_bytes(pem))
    key = ec.generate_private_key(ec.SECP256R1())
    (base / "server.pem").write_bytes(cert("127.0.0.1", key, ca_name, ca_key, False).public_bytes(pem) +
                                      key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))


@pytest.fixture(scope="module")
def loop():
    runner = LoopThread()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def secure(tmp_path_factory, loop):
    """Yield (quorum, SASL_SSL bootstrap list, directory of the client files)."""
    pytest.importorskip("cryptography")
    base = tmp_path_factory.mktemp("cluster-tool-security")
    _make_pki(base)
    q = SecureListenerQuorum(base / "quorum", 3, cluster_id=CLUSTER_ID, extra=FAST)
    q.extra |= {
        "controller.listener.names": "CONTROLLER,SECURE",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SECURE:SASL_SSL",
        "listener.name.secure.ssl.keystore.type": "PEM",
        "listener.name.secure.ssl.keystore.location": str(base / "server.pem"),
        "listener.name.secure.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
        "listener.name.secure.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
    }
    _format(q)
    q.start()
    try:
        q.wait_listening()
        loop.run(find_leader(q.addresses()))
        yield q, q.secure_bootstrap(), base
    finally:
        q.stop()


def _format(q: LocalQuorum) -> None:
    """Format like LocalQuorum.format, adding SCRAM users to bootstrap.checkpoint with --add-scram."""
    for node_id in q.ids:
        q.node_dir(node_id).mkdir(parents=True, exist_ok=True)
        q.config_path(node_id).write_text("".join(f"{k}={v}\n" for k, v in q.properties(node_id).items()))
        out, err = io.StringIO(), io.StringIO()
        status = storage_tool.run(["format", "-t", q.cluster_id, "-c", str(q.config_path(node_id)),
                                   "--add-scram", "SCRAM-SHA-256=[name=admin,password=admin-secret]",
                                   "--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]",
                                   "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]"],
                                  Environment(stdout=out, stderr=err))
        assert status == 0, err.getvalue()


@pytest.fixture(scope="module")
def brokers(secure, loop):
    with running_brokers(secure[0], loop, BROKER_IDS, fetch=False) as sims:
        yield {s.broker_id: s for s in sims}


def client_config(base, name: str, mechanism: str = "SCRAM-SHA-256", user: str = "admin",
                  password: str = "admin-secret", **extra) -> str:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": mechanism,
             "sasl.jaas.config": f'org.apache.kafka.common.security.{module} required username="{user}" '
                                 f'password="{password}";',
             "ssl.truststore.type": "PEM", "ssl.truststore.location": str(base / "ca.pem")} | extra
    path = base / f"{name}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return str(path)


@pytest.mark.parametrize("mechanism, password", [("SCRAM-SHA-256", "admin-secret"),
                                                 ("SCRAM-SHA-512", "admin-secret"), ("PLAIN", "admin-plain")])
def test_cluster_id_over_sasl_ssl_as_a_super_user(secure, mechanism, password):
    q, bootstrap, base = secure
    config = client_config(base, f"admin-{mechanism}", mechanism, password=password)
    assert kc("cluster-id", "-C", bootstrap, "-c", config) == (0, f"Cluster ID: {CLUSTER_ID}\n", "")


def test_wrong_password_and_plaintext_client_are_refused(secure):
    q, bootstrap, base = secure
    config = client_config(base, "wrong", password="nope")
    status, out, err = kc("cluster-id", "-C", bootstrap, "-c", config, "--timeout", "10")
    assert (status, out) == (69, "") and err.count("\n") == 1
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
           "SCRAM-SHA-256" in err
    status, out, err = kc("cluster-id", "-C", bootstrap, "--timeout", "5")
    assert (status, out) == (69, "") and err.count("\n") == 1


def test_a_user_without_acls_is_not_authorized(secure, brokers):
    q, bootstrap, base = secure
    config = client_config(base, "alice", user="alice", password="alice-secret")
    status, out, err = kc("unregister", "--id", "201", "-C", bootstrap, "-c", config, "--timeout", "10")
    assert (status, out, err) == (1, "", "CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed.\n")
    status, out, err = kc("cluster-id", "-C", bootstrap, "-c", config)  # DescribeCluster needs ALTER
    assert (status, out) == (1, "") and err.startswith("CLUSTER_AUTHORIZATION_FAILED")
    assert not brokers[201].fenced


def test_a_super_user_unregisters_a_broker_through_a_follower(secure, brokers, loop):
    q, bootstrap, base = secure
    leader, _ = loop.run(find_leader(q.addresses()))
    follower = f"127.0.0.1:{next(p for i, p in q.secure_ports.items() if i != leader)}"
    brokers[203].crash()
    alice = client_config(base, "alice-follower", user="alice", password="alice-secret")
    status, _, err = kc("unregister", "--id", "203", "-C", follower, "-c", alice, "--timeout", "10")
    assert (status, err) == (1, "CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed.\n")
    config = client_config(base, "admin-unregister")
    status, out, err = kc("unregister", "--id", "203", "-C", follower, "-c", config, "--timeout", "10")
    assert (status, out, err) == (0, "Broker 203 is no longer registered.\n", "")
    status, out, err = kc("unregister", "--id", "203", "-C", bootstrap, "-c", config)
    assert status == 1 and "BROKER_ID_NOT_REGISTERED" in err


def test_the_live_shell_and_metadata_quorum_over_sasl_ssl(secure, brokers):
    """The shell's live mode and kafka-metadata-quorum take the same client keys as kafka-cluster."""
    from kraftsman.cli.quorum import tool as metadata_quorum
    from kraftsman.cli.shell import tool as metadata_shell

    q, bootstrap, base = secure
    config = client_config(base, "admin-live", "SCRAM-SHA-512")
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_shell.run, ["--bootstrap-controller", bootstrap, "-c", config,
                                              "ls", "/image/cluster/brokers"],
                         Environment(stdout=out, stderr=err, env={}), prog="kafka-metadata-shell")
    assert status == 0, err.getvalue()
    assert {"201", "202"} <= set(out.getvalue().split())
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_quorum.run, ["--bootstrap-controller", bootstrap, "--command-config", config,
                                               "describe", "--status"],
                         Environment(stdout=out, stderr=err, env={}), prog="kafka-metadata-quorum")
    assert status == 0, err.getvalue()
    assert f"ClusterId:              {CLUSTER_ID}\n" in out.getvalue()
    wrong = client_config(base, "wrong-live", password="nope")
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_shell.run, ["--bootstrap-controller", bootstrap, "-c", wrong, "--timeout", "10",
                                              "ls", "/"], Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-metadata-shell")
    assert status == 69 and err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()


# ---------------------------------------------------------------- one SASL_SSL listener for everything

CONTROLLER_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="controller" '
                   'password="controller-secret" user_controller="controller-secret" user_broker="broker-secret" '
                   'user_admin="admin-plain";')


class SaslOnlyQuorum(LocalQuorum):
    """Voters whose only listener is CONTROLLER:SASL_SSL: Raft, brokers and admin clients all log in."""

    def properties(self, node_id: int) -> dict[str, str]:
        return super().properties(node_id) | {
            "listener.security.protocol.map": "CONTROLLER:SASL_SSL",
            "ssl.keystore.location": str(self.base.parent / "server.pem"),
            "ssl.truststore.location": str(self.base.parent / "ca.pem"),
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": CONTROLLER_JAAS,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:controller;User:broker;User:admin"}


async def _secure_leader(addresses, security, timeout_s: float = 30):
    """Return the leader id once a voter, asked over SASL_SSL, says it leads and has committed something."""
    import asyncio

    from kraftsman.controller.client.controller_client import describe_quorum_request
    from kraftsman.controller.wire import secure_connect

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for node_id, (host, port) in addresses.items():
            try:
                conn = await secure_connect.open_connection(host, port, security, client_id="t", timeout_ms=2000)
            except (OSError, asyncio.TimeoutError):
                continue
            try:
                response = await conn.request("DescribeQuorum", 2, describe_quorum_request(), timeout_ms=2000)
            except (OSError, asyncio.TimeoutError):
                continue
            finally:
                await conn.close()
            part = response.topics[0].partitions[0] if response.topics else None
            if part is not None and not part.error_code and part.leader_id == node_id and part.high_watermark >= 1:
                return node_id
        await asyncio.sleep(0.2)
    raise AssertionError("no leader over SASL_SSL")


@pytest.fixture(scope="module")
def sasl_only(secure, loop):
    """Yield (quorum, client security of the broker principal, directory of the client files)."""
    from kraftsman.controller.server import client_security
    from kraftsman.controller.server.config import from_properties

    base = secure[2]
    q = SaslOnlyQuorum(base / "sasl-only", 3, cluster_id=CLUSTER_ID, extra=FAST)
    _format(q)
    q.start()
    try:
        q.wait_listening()
        props = q.properties(q.ids[0]) | {"listener.name.controller.plain.sasl.jaas.config": CONTROLLER_JAAS.replace(
            'username="controller" password="controller-secret"', 'username="broker" password="broker-secret"')}
        security = client_security.controller_client_security(from_properties(props))
        loop.run(_secure_leader(q.addresses(), security))
        yield q, security, base
    finally:
        q.stop()


def test_a_quorum_whose_controllers_log_in_to_each_other_serves_brokers_and_authorizes(sasl_only, loop):
    q, security, base = sasl_only
    sims = [SimulatedBroker(b, q.addresses(), q.cluster_id, heartbeat_interval_ms=500, fetch=True, security=security)
            for b in (301, 302)]
    try:
        for sim in sims:
            loop.run(sim.start())
        wait_for(lambda: all(not s.fenced and s.metadata_offset > 0 for s in sims))   # registered, fetching
        admin = client_config(base, "sasl-only-admin", password="admin-secret")
        alice = client_config(base, "sasl-only-alice", user="alice", password="alice-secret")
        assert kc("cluster-id", "-C", q.bootstrap(), "-c", admin) == (0, f"Cluster ID: {CLUSTER_ID}\n", "")
        status, out, err = kc("unregister", "--id", "302", "-C", q.bootstrap(), "-c", alice, "--timeout", "10")
        assert (status, err) == (1, "CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed.\n")
        sims[1].crash()
        status, out, err = kc("unregister", "--id", "302", "-C", q.bootstrap(), "-c", admin, "--timeout", "10")
        assert (status, out, err) == (0, "Broker 302 is no longer registered.\n", "")
        status, out, err = kc("cluster-id", "-C", q.bootstrap(), "--timeout", "5")         # PLAINTEXT client
        assert status == 69
    finally:
        for sim in sims:
            loop.run(sim.stop())
    for node_id in q.ids:
        assert "cannot log in" not in (q.node_dir(node_id) / "controller.log").read_text()


def test_confluent_kafka_admin_client_over_sasl_ssl_scram(sasl_only, loop):
    admin_module = pytest.importorskip("confluent_kafka.admin")
    q, security, base = sasl_only
    broker = SimulatedBroker(311, q.addresses(), q.cluster_id, heartbeat_interval_ms=500, fetch=False,
                             security=security)
    loop.run(broker.start())
    try:
        wait_for(lambda: not broker.fenced)
        _admin_client_checks(q, base, admin_module)
    finally:
        loop.run(broker.stop())


def _admin_client_checks(q, base, admin_module):

    errors = []

    def client(user: str, password: str):
        return admin_module.AdminClient({
            "bootstrap.servers": q.bootstrap(), "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": user, "sasl.password": password, "ssl.ca.location": str(base / "ca.pem"),
            "socket.timeout.ms": 10000, "error_cb": lambda e: errors.append(str(e))})

    admin = client("admin", "admin-secret")
    assert admin.list_topics(timeout=15).cluster_id == CLUSTER_ID
    futures = admin.create_topics([admin_module.NewTopic("secured", 1, 1)], operation_timeout=10, request_timeout=15)
    futures["secured"].result(timeout=20)
    alice = client("alice", "alice-secret")
    futures = alice.create_topics([admin_module.NewTopic("by-alice", 1, 1)], operation_timeout=10, request_timeout=15)
    with pytest.raises(Exception, match="TOPIC_AUTHORIZATION_FAILED|[Aa]uthoriz"):
        futures["by-alice"].result(timeout=20)
    wrong = client("admin", "wrong")
    with pytest.raises(Exception):    # noqa: B017 (confluent-kafka raises KafkaException or its own subclasses)
        wrong.list_topics(timeout=3)
    wrong.poll(1)
    assert any("Authentication failed during authentication due to invalid credentials with SASL mechanism "
               "SCRAM-SHA-256" in e for e in errors), errors
