"""UpdateFeatures on a real 3-voter quorum without an authorizer: controllers register themselves (KIP-919),
metadata.version moves down and up as Kafka 3.9 allows, every controller advertises the finalized level, and the
log shows it; the ACL APIs answer SECURITY_DISABLED, as Kafka's do without an authorizer."""
from __future__ import annotations

import pytest

from kraftsman.controller.client.controller_client import ActiveControllerClient
from kraftsman.storage.protocol import codec

from .quorum_fixtures import finalized_features, loop_fixture, running_quorum, stopped_follower, wait_for

loop = loop_fixture()
UPDATE = codec.message_class("UpdateFeaturesRequest")


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("features"), loop) as q:
        yield q


def update_mv(quorum, loop, level: int, upgrade_type: int = 1, validate_only: bool = False):
    """Send UpdateFeatures v1 for metadata.version to the quorum; return (error code, message) of its result."""
    async def send():
        client = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=10_000)
        try:
            body = UPDATE(validate_only=validate_only, feature_updates=[UPDATE.FeatureUpdateKey(
                feature="metadata.version", max_version_level=level, upgrade_type=upgrade_type)])
            return await client.request("UpdateFeatures", 1, body)
        finally:
            await client.close()
    response = loop.run(send())
    assert response.error_code == 0
    (result,) = response.results
    return result.error_code, result.error_message


def finalized_mv(address, loop) -> int:
    """Return the metadata.version a controller advertises in ApiVersions."""
    return finalized_features(address, loop)["metadata.version"]


def test_every_controller_registers_itself_so_feature_changes_are_allowed(quorum, loop):
    # Kafka refuses feature changes while a voter has not registered (from 3.7-IV0); ours register at start
    wait_for(lambda: update_mv(quorum, loop, 21, validate_only=True) == (0, None), timeout=30)


def test_safe_downgrade_reaches_every_controller_and_a_lossy_one_is_refused(quorum, loop):
    assert update_mv(quorum, loop, 18, upgrade_type=2) == (0, None)
    for address in quorum.addresses().values():
        wait_for(lambda: finalized_mv(address, loop) == 18)
    code, message = update_mv(quorum, loop, 16, upgrade_type=2)
    assert (code, message) == (95, "Invalid metadata.version 16. Refusing to perform the requested downgrade "
                                    "because it might delete metadata information.")
    assert update_mv(quorum, loop, 21, upgrade_type=2)[0] == 95  # a downgrade type for an upgrade
    assert update_mv(quorum, loop, 21) == (0, None)
    for address in quorum.addresses().values():
        wait_for(lambda: finalized_mv(address, loop) == 21)


def test_the_log_shows_the_registrations_and_the_feature_levels(quorum, loop):
    from kraftsman.controller.image.loader import load_directory

    with stopped_follower(quorum, loop) as follower:
        image = load_directory(quorum.partition_dir(follower)).image
    assert sorted(image.cluster.controllers) == sorted(quorum.ids)
    assert all(r.record.features for r in image.cluster.controllers.values())
    assert image.features.metadata_version == 21


def test_acl_apis_without_an_authorizer_answer_security_disabled(quorum, loop):
    create = codec.message_class("CreateAclsRequest")
    describe = codec.message_class("DescribeAclsRequest")
    creation = create.AclCreation(resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:a",
                                  host="*", operation=3, permission_type=3)

    async def ask():
        client = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=10_000)
        try:
            created = await client.request("CreateAcls", 3, create(creations=[creation]))
            described = await client.request("DescribeAcls", 3, describe(
                resource_type_filter=1, pattern_type_filter=1, operation=1, permission_type=1))
            return created, described
        finally:
            await client.close()
    created, described = loop.run(ask())
    assert [(r.error_code, r.error_message) for r in created.results] == [(54, "No Authorizer is configured.")]
    assert (described.error_code, described.error_message) == (54, "No Authorizer is configured on the broker")


def test_plaintext_listener_lists_and_answers_what_kafkas_controller_lists(quorum, loop):
    """SaslHandshake and SaslAuthenticate are listed on a PLAINTEXT listener and answered ILLEGAL_SASL_STATE (Kafka's
    ControllerApis); DescribeDelegationToken is listed and answered UNKNOWN_SERVER_ERROR; the connection stays open."""
    from kraftsman.controller.wire.connection import Connection

    host, port = next(iter(quorum.addresses().values()))
    handshake = codec.message_class("SaslHandshakeRequest")(mechanism="PLAIN")
    authenticate = codec.message_class("SaslAuthenticateRequest")(auth_bytes=b"\0alice\0secret")
    describe = codec.message_class("DescribeDelegationTokenRequest")(owners=None)

    async def ask():
        conn = await Connection.open(host, port, timeout_ms=10_000)
        try:
            listed = await conn.negotiate(timeout_ms=10_000)
            answers = [await conn.request("SaslHandshake", 1, handshake),
                       await conn.request("SaslAuthenticate", 2, authenticate),
                       await conn.request("DescribeDelegationToken", 3, describe),
                       await conn.request("DescribeDelegationToken", 1, describe)]
            return listed, answers, await conn.negotiate(timeout_ms=10_000)
        finally:
            await conn.close()
    listed, (shake, auth, describe3, describe1), again = loop.run(ask())
    assert (listed[17], listed[36], listed[41]) == ((0, 1), (0, 2), (0, 3)) and again == listed
    assert (shake.error_code, shake.mechanisms) == (34, [])                # ILLEGAL_SASL_STATE
    assert (auth.error_code, auth.error_message) == (34, "SaslAuthenticate request received after successful "
                                                         "authentication")
    assert [(d.error_code, d.tokens) for d in (describe3, describe1)] == [(-1, []), (-1, [])]  # UNKNOWN_SERVER_ERROR
