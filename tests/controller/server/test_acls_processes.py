"""ACLs on a real 3-voter kraftsman quorum, managed with confluent-kafka's AdminClient.

Each voter serves CONTROLLER (PLAINTEXT: Raft, and admin clients as User:ANONYMOUS, a super user) and SECURE
(SASL_PLAINTEXT with PLAIN users from JAAS), with the StandardAuthorizer on. Clients bootstrap to every voter, so
writes also reach the active controller through standbys. Tests run in file order and build on each other.
"""
from __future__ import annotations

import time

import pytest

from kraftsman.storage.protocol import codec

from .quorum_fixtures import FAST, SecureListenerQuorum, loop_fixture, running_quorum, stopped_follower, wait_for

CLUSTER_ID = "QWNsUXVvcnVtQ2x1c3Rlcg"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" '
        'user_admin="admin-secret";')
AUTHORIZED = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:admin;User:ANONYMOUS"}
CLUSTER_AUTHORIZATION_FAILED = 31

loop = loop_fixture()


SECURE = {"controller.listener.names": "CONTROLLER,SECURE",
          "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SECURE:SASL_PLAINTEXT",
          "listener.name.secure.sasl.enabled.mechanisms": "PLAIN", "listener.name.secure.plain.sasl.jaas.config": JAAS}

TOKENS = {"delegation.token.secret.key": "token-secret"}


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("acls"), loop, extra=FAST | AUTHORIZED | SECURE | TOKENS,
                        quorum_class=SecureListenerQuorum, cluster_id=CLUSTER_ID) as q:
        yield q


def admin(quorum):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})


ALICE = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" '
                             'password="alice-secret";'}


def as_alice(quorum, node_id: int, api: str, body):
    """Send one v3 request to a voter's SECURE listener as User:alice (kraftsman's client: librdkafka would
    follow the Metadata answer to the PLAINTEXT CONTROLLER listener)."""
    from kraftsman.controller.client import sync_client as sc

    deadline = time.monotonic() + 10
    config = sc.ClientConfig.from_properties(ALICE)
    with sc.SyncConnection.open("127.0.0.1", quorum.secure_ports[node_id], config, deadline) as conn:
        return conn.request(api, 3, body, deadline)


def binding(rt, name, pt, principal, op, perm, host="*"):
    from confluent_kafka.admin import AclBinding

    return AclBinding(rt, name, pt, principal, host, op, perm)


def acl_filter(rt, name, pt, principal=None, op=None, perm=None, host=None):
    from confluent_kafka.admin import AclBindingFilter, AclOperation, AclPermissionType

    return AclBindingFilter(rt, name, pt, principal, host, op or AclOperation.ANY, perm or AclPermissionType.ANY)


def described(client, f, expected=None) -> set:
    """Return the ACLs that DescribeAcls answers for `f`; given `expected`, first poll (up to 10 s) until they
    are that: a voter answers from its own committed image, which may trail the active controller's."""
    def once() -> set:
        return {as_tuple(b) for b in client.describe_acls(f, request_timeout=10).result(20)}
    if expected is not None:
        try:
            wait_for(lambda: once() == expected, timeout=10)
        except AssertionError:
            pass  # the caller's assertion shows the difference
    return once()


def as_tuple(b) -> tuple:
    return (b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type)


def _acls():
    from confluent_kafka.admin import AclOperation as Op
    from confluent_kafka.admin import AclPermissionType as Perm
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    return [binding(Rt.TOPIC, "orders", Pt.LITERAL, "User:bob", Op.READ, Perm.ALLOW),
            binding(Rt.TOPIC, "ord", Pt.PREFIXED, "User:bob", Op.WRITE, Perm.ALLOW),
            binding(Rt.TOPIC, "*", Pt.LITERAL, "User:carol", Op.DESCRIBE, Perm.DENY, host="10.0.0.9"),
            binding(Rt.GROUP, "g1", Pt.LITERAL, "User:bob", Op.READ, Perm.ALLOW)]


def test_create_acls_then_describe_them_with_match_and_literal_filters(quorum):
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    client = admin(quorum)
    futures = client.create_acls(_acls(), request_timeout=15)
    for f in futures.values():
        assert f.result(20) is None
    everything = {as_tuple(b) for b in _acls()}
    assert described(client, acl_filter(Rt.ANY, None, Pt.ANY), everything) == everything
    for f, expected in ((acl_filter(Rt.TOPIC, "orders", Pt.MATCH), _acls()[:3]),
                        (acl_filter(Rt.TOPIC, "orders", Pt.LITERAL), _acls()[:1]),
                        (acl_filter(Rt.TOPIC, None, Pt.PREFIXED), _acls()[1:2])):
        # MATCH: LITERAL "orders", LITERAL "*" and PREFIXED "ord" all apply to topic "orders"
        assert described(client, f, {as_tuple(b) for b in expected}) == {as_tuple(b) for b in expected}


def test_creating_the_same_acls_again_succeeds_and_adds_nothing(quorum):
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    client = admin(quorum)
    for f in client.create_acls(_acls()[:2], request_timeout=15).values():
        assert f.result(20) is None
    everything = {as_tuple(b) for b in _acls()}
    assert described(client, acl_filter(Rt.ANY, None, Pt.ANY), everything) == everything


def test_invalid_creations_get_kafkas_errors_and_the_valid_one_lands(quorum):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AclOperation as Op
    from confluent_kafka.admin import AclPermissionType as Perm
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    client = admin(quorum)
    no_colon = binding(Rt.TOPIC, "t", Pt.LITERAL, "dave", Op.READ, Perm.ALLOW)
    bad_cluster = binding(Rt.BROKER, "my-cluster", Pt.LITERAL, "User:dave", Op.ALTER, Perm.ALLOW)
    good = binding(Rt.TOPIC, "t", Pt.LITERAL, "User:dave", Op.READ, Perm.ALLOW)
    futures = client.create_acls([no_colon, bad_cluster, good], request_timeout=15)
    assert futures[good].result(20) is None
    for bad, message in ((no_colon, "Could not parse principal from `dave` (no colon is present separating the "
                                    "principal type from the principal name)"),
                         (bad_cluster, "The only valid name for the CLUSTER resource is kafka-cluster")):
        with pytest.raises(KafkaException) as e:
            futures[bad].result(20)
        error = e.value.args[0]
        assert (error.code(), error.str()) == (KafkaError.INVALID_REQUEST, message)
    assert described(client, acl_filter(Rt.TOPIC, "t", Pt.LITERAL), {as_tuple(good)}) == {as_tuple(good)}


def test_delete_acls_by_overlapping_filters_removes_each_once(quorum):
    from confluent_kafka.admin import AclOperation as Op
    from confluent_kafka.admin import AclPermissionType as Perm
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    client = admin(quorum)
    by_topic = acl_filter(Rt.TOPIC, "orders", Pt.MATCH, principal="User:bob")
    by_principal = acl_filter(Rt.ANY, None, Pt.ANY, principal="User:bob")
    futures = client.delete_acls([by_topic, by_principal], request_timeout=15)
    assert {as_tuple(b) for b in futures[by_topic].result(20)} == {as_tuple(b) for b in _acls()[:2]}
    assert {as_tuple(b) for b in futures[by_principal].result(20)} == {as_tuple(b) for b in _acls()[:2] + _acls()[3:]}
    left = {as_tuple(_acls()[2]), as_tuple(binding(Rt.TOPIC, "t", Pt.LITERAL, "User:dave", Op.READ, Perm.ALLOW))}
    assert described(client, acl_filter(Rt.ANY, None, Pt.ANY), left) == left


def test_an_acl_lets_a_sasl_principal_do_what_was_denied(quorum):
    from confluent_kafka.admin import AclOperation as Op
    from confluent_kafka.admin import AclPermissionType as Perm
    from confluent_kafka.admin import ResourcePatternType as Pt
    from confluent_kafka.admin import ResourceType as Rt

    describe = codec.message_class("DescribeAclsRequest")(resource_type_filter=1, resource_name_filter=None,
                                                         pattern_type_filter=1, principal_filter=None,
                                                         host_filter=None, operation=1, permission_type=1)
    for node_id in quorum.ids:
        denied = as_alice(quorum, node_id, "DescribeAcls", describe)
        assert (denied.error_code, denied.resources) == (CLUSTER_AUTHORIZATION_FAILED, [])
    grant = binding(Rt.BROKER, "kafka-cluster", Pt.LITERAL, "User:alice", Op.DESCRIBE, Perm.ALLOW)
    client = admin(quorum)
    for f in client.create_acls([grant], request_timeout=15).values():
        assert f.result(20) is None
    for node_id in quorum.ids:  # each voter authorizes from its own committed image
        allowed = wait_for(lambda: (lambda r: r if r.error_code == 0 else None)(
            as_alice(quorum, node_id, "DescribeAcls", describe)))
        assert ("User:alice", 4, "kafka-cluster") in {(a.principal, r.resource_type, r.resource_name)
                                                      for r in allowed.resources for a in r.acls}
    creation = codec.message_class("CreateAclsRequest").AclCreation(
        resource_type=2, resource_name="mine", resource_pattern_type=3, principal="User:alice", host="*",
        operation=2, permission_type=3)
    refused = as_alice(quorum, quorum.ids[0], "CreateAcls",   # DESCRIBE does not imply ALTER
                       codec.message_class("CreateAclsRequest")(creations=[creation, creation]))
    assert [r.error_code for r in refused.results] == [CLUSTER_AUTHORIZATION_FAILED] * 2


def test_every_voter_holds_the_acls_in_its_image(quorum, loop):
    from kraftsman.controller.image.acls import standard_acl
    from kraftsman.controller.image.loader import load_directory

    with stopped_follower(quorum, loop) as follower:
        image = load_directory(quorum.partition_dir(follower)).image
    texts = sorted(standard_acl(message) for message, _ in image.acls.entries.values())
    assert texts == sorted([
        "StandardAcl(resourceType=TOPIC, resourceName=*, patternType=LITERAL, principal=User:carol, host=10.0.0.9, "
        "operation=DESCRIBE, permissionType=DENY)",
        "StandardAcl(resourceType=TOPIC, resourceName=t, patternType=LITERAL, principal=User:dave, host=*, "
        "operation=READ, permissionType=ALLOW)",
        "StandardAcl(resourceType=CLUSTER, resourceName=kafka-cluster, patternType=LITERAL, principal=User:alice, "
        "host=*, operation=DESCRIBE, permissionType=ALLOW)"])


def test_an_admin_client_on_the_sasl_listener_is_sent_to_that_listener_of_every_voter(quorum):
    from confluent_kafka.admin import AdminClient

    # Metadata and DescribeCluster name each controller's endpoint on the listener the request came in on,
    # from the controllers' registrations (KIP-919); before, the PLAINTEXT ports came back and SASL broke there
    admin_client = AdminClient({"bootstrap.servers": quorum.secure_bootstrap(), "security.protocol": "SASL_PLAINTEXT",
                                "sasl.mechanism": "PLAIN", "sasl.username": "admin", "sasl.password": "admin-secret",
                                "socket.timeout.ms": 10000})
    wait_for(lambda: {b.port for b in admin_client.list_topics(timeout=10).brokers.values()}
             == set(quorum.secure_ports.values()), timeout=30)
    cluster = admin_client.describe_cluster().result(timeout=10)
    assert {n.port for n in cluster.nodes} == set(quorum.secure_ports.values())
    topics = admin_client.list_topics(timeout=10).topics
    assert isinstance(topics, dict)


# ---------------------------------------------------------------- delegation tokens (same quorum, secret key set)
def on_listener(port: int, api: str, version: int, body, props=None):
    """Send one request to 127.0.0.1:port (SASL as User:alice when props say so) and return the answer."""
    from kraftsman.controller.client import sync_client as sc

    deadline = time.monotonic() + 10
    with sc.SyncConnection.open("127.0.0.1", port, sc.ClientConfig.from_properties(props or {}), deadline) as conn:
        return conn.request(api, version, body, deadline)


def token_request(api: str, **fields):
    return codec.message_class(f"{api}Request")(**fields)


def create_token(owner=None, renewers=()):
    cls = codec.message_class("CreateDelegationTokenRequest")
    return cls(owner_principal_type=owner and "User", owner_principal_name=owner, max_lifetime_ms=-1,
               renewers=[cls.CreatableRenewers(principal_type="User", principal_name=r) for r in renewers])


def test_delegation_tokens_are_created_renewed_and_expired_on_the_active_controller(quorum, loop):
    from kraftsman.controller.quorum.tokens_control import token_hmac

    from .quorum_fixtures import find_leader

    leader, _ = loop.run(find_leader(quorum.addresses()))
    standby = next(i for i in quorum.ids if i != leader)
    made = on_listener(quorum.secure_ports[leader], "CreateDelegationToken", 3, create_token(renewers=["admin"]), ALICE)
    assert (made.error_code, made.principal_name, made.token_requester_principal_name) == (0, "alice", "alice")
    assert made.hmac == token_hmac("token-secret", made.token_id)
    assert made.max_timestamp_ms - made.issue_timestamp_ms == 604_800_000  # Kafka's default max lifetime
    assert made.expiry_timestamp_ms - made.issue_timestamp_ms == 86_400_000  # and expiry time
    refusals = [
        on_listener(quorum.secure_ports[leader], "CreateDelegationToken", 3, create_token(owner="bob"), ALICE),
        on_listener(quorum.ports[leader], "CreateDelegationToken", 3, create_token()),  # PLAINTEXT, not forwarded
        on_listener(quorum.secure_ports[standby], "CreateDelegationToken", 3, create_token(), ALICE)]
    assert [r.error_code for r in refusals] == [65, 64, 41]  # AUTHORIZATION_FAILED, REQUEST_NOT_ALLOWED, NOT_CONTROLLER
    assert refusals[0].principal_name == "bob" and refusals[0].max_timestamp_ms == -1
    renewed = on_listener(quorum.secure_ports[leader], "RenewDelegationToken", 2,
                          token_request("RenewDelegationToken", hmac=made.hmac, renew_period_ms=1000), ALICE)
    assert renewed.error_code == 0 and made.issue_timestamp_ms + 1000 <= renewed.expiry_timestamp_ms
    assert renewed.expiry_timestamp_ms < made.expiry_timestamp_ms
    expired = on_listener(quorum.secure_ports[leader], "ExpireDelegationToken", 2,
                          token_request("ExpireDelegationToken", hmac=made.hmac, expiry_time_period_ms=-1), ALICE)
    assert (expired.error_code, expired.expiry_timestamp_ms) == (0, -1)
    again = on_listener(quorum.secure_ports[leader], "RenewDelegationToken", 2,
                        token_request("RenewDelegationToken", hmac=made.hmac, renew_period_ms=1000), ALICE)
    assert again.error_code == 62  # DELEGATION_TOKEN_NOT_FOUND: the token is gone


def test_a_delegation_token_reaches_every_voters_image(quorum, loop):
    from kraftsman.controller.image.loader import load_directory
    from kraftsman.controller.image.tokens import delegation_token

    from .quorum_fixtures import find_leader

    leader, _ = loop.run(find_leader(quorum.addresses()))
    made = on_listener(quorum.secure_ports[leader], "CreateDelegationToken", 3, create_token(renewers=["admin"]), ALICE)
    assert made.error_code == 0
    with stopped_follower(quorum, loop) as follower:
        image = load_directory(quorum.partition_dir(follower)).image
    message, _ = image.delegation_tokens.entries[made.token_id]
    assert delegation_token(message) == (
        f"DelegationTokenDatatokenId={made.token_id}(owner=User:alice(tokenRequester=User:alice(renewers=User:admin, "
        f"issueTimestamp={made.issue_timestamp_ms}, maxTimestamp={made.max_timestamp_ms}), "
        f"expiryTimestamp={made.expiry_timestamp_ms}")
