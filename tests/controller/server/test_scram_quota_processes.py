"""SCRAM credentials and client quotas on a real 3-voter kraftsman quorum (separate processes on 127.0.0.1).

Each voter serves two listeners: CONTROLLER (PLAINTEXT: Raft, admin clients) and SECURE (SASL_PLAINTEXT with
SCRAM-SHA-256/512, users from the metadata image). confluent-kafka's AdminClient alters and describes SCRAM
credentials through CONTROLLER; a user added that way then authenticates on every voter's SECURE listener
(kraftsman's blocking SASL client), and no longer does once deleted. confluent-kafka has no client-quota API,
so AlterClientQuotas goes through kraftsman's own ActiveControllerClient; a read-only Raft observer checks
that the ClientQuotaRecords reached the committed image. Tests run in file order.
"""
from __future__ import annotations

import time

import pytest

from kraftsman.controller.client import observer as ob
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.controller_client import ActiveControllerClient
from kraftsman.storage.protocol import codec

from .quorum_fixtures import FAST, SecureListenerQuorum, loop_fixture, running_quorum, wait_for

loop = loop_fixture()


SECURE = {"controller.listener.names": "CONTROLLER,SECURE",
          "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SECURE:SASL_PLAINTEXT",
          "listener.name.secure.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512"}


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("scram-quota"), loop, extra=FAST | SECURE,
                        quorum_class=SecureListenerQuorum) as q:
        yield q


def admin(quorum):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})


def authenticates(quorum, node_id: int, mechanism: str, user: str, password: str) -> bool:
    """Tell whether `user` gets through SASL SCRAM on voter `node_id`'s SECURE listener."""
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.jaas.config":
             f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" '
             f'password="{password}";'}
    deadline = time.monotonic() + 10
    try:
        with sc.SyncConnection.open("127.0.0.1", quorum.secure_ports[node_id], sc.ClientConfig.from_properties(props),
                                    deadline) as conn:
            body = codec.message_class("DescribeClusterRequest")(endpoint_type=2)
            return conn.request("DescribeCluster", 1, body, deadline).cluster_id == quorum.cluster_id
    except sc.AuthenticationFailed:
        return False


def everywhere(quorum, expected: bool, *args) -> bool:
    return all(authenticates(quorum, n, *args) is expected for n in quorum.ids)


def described(client, users=None) -> dict:
    """Return user -> {mechanism name: iterations} (or the exception of a failed user)."""
    def infos(description):
        return {info.mechanism.name: info.iterations for info in description.scram_credential_infos}

    answer = client.describe_user_scram_credentials(users, request_timeout=15)
    if users is None:  # one future for every user
        return {user: infos(d) for user, d in answer.result(20).items()}
    out = {}
    for user, future in answer.items():
        try:
            out[user] = infos(future.result(20))
        except Exception as e:  # noqa: BLE001 - a per-user KafkaException is the answer under test
            out[user] = e
    return out


def test_admin_client_upserts_and_describes_scram_users(quorum):
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    client = admin(quorum)
    alterations = [
        UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"carol-pw"),
        UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"carol-512")]
    futures = client.alter_user_scram_credentials(alterations[:1], request_timeout=15)
    futures["carol"].result(20)
    futures = client.alter_user_scram_credentials(alterations[1:], request_timeout=15)
    futures["carol"].result(20)
    dave = UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"dave-pw")
    client.alter_user_scram_credentials([dave], request_timeout=15)["dave"].result(20)
    wait_for(lambda: described(client).keys() == {"carol", "dave"})
    assert described(client) == {"carol": {"SCRAM_SHA_256": 4096, "SCRAM_SHA_512": 8192},
                                 "dave": {"SCRAM_SHA_512": 4096}}
    answer = described(client, ["dave", "nobody"])
    assert answer["dave"] == {"SCRAM_SHA_512": 4096}
    assert "Attempt to describe a user credential that does not exist: nobody" in str(answer["nobody"])


def test_admin_client_gets_kafkas_per_user_errors(quorum):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    client = admin(quorum)
    few = UserScramCredentialUpsertion("erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw")
    missing = UserScramCredentialDeletion("ghost", ScramMechanism.SCRAM_SHA_256)
    futures = client.alter_user_scram_credentials([few, missing], request_timeout=15)
    with pytest.raises(KafkaException, match="Too few iterations"):
        futures["erin"].result(20)
    with pytest.raises(KafkaException, match="Attempt to delete a user credential that does not exist"):
        futures["ghost"].result(20)
    assert "erin" not in described(client)


def test_a_user_added_through_the_api_authenticates_and_a_deleted_one_no_longer_does(quorum):
    from confluent_kafka.admin import ScramMechanism, UserScramCredentialDeletion

    wait_for(lambda: everywhere(quorum, True, "SCRAM-SHA-256", "carol", "carol-pw"))
    assert everywhere(quorum, True, "SCRAM-SHA-512", "carol", "carol-512")
    assert everywhere(quorum, True, "SCRAM-SHA-512", "dave", "dave-pw")
    assert not authenticates(quorum, quorum.ids[0], "SCRAM-SHA-256", "carol", "wrong")
    assert not authenticates(quorum, quorum.ids[0], "SCRAM-SHA-256", "dave", "dave-pw")  # no SHA-256 credential
    client = admin(quorum)
    deletion = UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_256)
    client.alter_user_scram_credentials([deletion], request_timeout=15)["carol"].result(20)
    wait_for(lambda: everywhere(quorum, False, "SCRAM-SHA-256", "carol", "carol-pw"))
    assert everywhere(quorum, True, "SCRAM-SHA-512", "carol", "carol-512")
    assert described(client, ["carol"]) == {"carol": {"SCRAM_SHA_512": 8192}}


def _quota_request(entries, validate_only=False):
    cls = codec.message_class("AlterClientQuotasRequest")
    return cls(validate_only=validate_only, entries=[
        cls.EntryData(entity=[cls.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                      ops=[cls.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops])
        for entity, ops in entries])


def _committed_quotas(quorum) -> dict:
    observer = ob.Observer(sc.ClientConfig(request_timeout_ms=2000), voters=quorum.addresses())
    try:
        return observer.catch_up(time.monotonic() + 20).image.client_quotas.entities
    finally:
        observer.close()


@pytest.mark.parametrize("version", [0, 1])
def test_alter_client_quotas_reaches_the_image(quorum, loop, version):
    client = ActiveControllerClient(list(quorum.addresses().values()))
    try:
        user, ip = (("user", f"u{version}"),), (("ip", "10.0.0.9"),)
        response = loop.run(client.request("AlterClientQuotas", version, _quota_request(
            [(user, [("producer_byte_rate", 1048576), ("request_percentage", 50.5)]),
             (ip, [("connection_creation_rate", 10)]), ((("ip", "10.0.0.9"), ("user", "x")), [("x", 1)])])))
        answers = [([(e.entity_type, e.entity_name) for e in r.entity], r.error_code, r.error_message)
                   for r in response.entries]
        assert ([("user", f"u{version}")], 0, None) in answers and ([("ip", "10.0.0.9")], 0, None) in answers
        assert ([("user", "x"), ("ip", "10.0.0.9")], 42, "Invalid quota entity combination, IP entity shouldnot be "
                "combined with User or ClientId") in answers
        dry = loop.run(client.request("AlterClientQuotas", version, _quota_request(
            [((("client-id", "dry"),), [("consumer_byte_rate", 5)])], validate_only=True)))
        assert [r.error_code for r in dry.entries] == [0]
        quotas = wait_for(lambda: (q := _committed_quotas(quorum)).get(user) and q)
        assert quotas[user] == {"producer_byte_rate": 1048576.0, "request_percentage": 50.5}
        assert quotas[ip] == {"connection_creation_rate": 10.0}
        assert (("client-id", "dry"),) not in quotas
        loop.run(client.request("AlterClientQuotas", version, _quota_request(
            [(user, [("producer_byte_rate", None), ("request_percentage", None)])])))
        wait_for(lambda: user not in _committed_quotas(quorum))
    finally:
        loop.run(client.close())
