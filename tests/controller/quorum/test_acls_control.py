"""CreateAcls, DeleteAcls and DescribeAcls handlers against Kafka 3.9's AclApis / AclControlManager semantics."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum import acls_control as A
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.error_responses import error_response
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import RESERVED, Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import M, S, at, ctx, image_of, names, replay

TOPIC, GROUP, CLUSTER, USER = 2, 3, 4, 7
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
ALL, READ, WRITE, DESCRIBE = 2, 3, 4, 8
DENY, ALLOW = 2, 3
INVALID_REQUEST = 42
COLON = "Could not parse principal from `{}` (no colon is present separating the principal type from the " \
        "principal name)"


def creation(rt=TOPIC, name="foo", pt=LITERAL, principal="User:alice", host="*", op=READ, perm=ALLOW):
    """Return one CreateAclsRequest creation."""
    return S("CreateAclsRequest", "AclCreation", resource_type=rt, resource_name=name, resource_pattern_type=pt,
             principal=principal, host=host, operation=op, permission_type=perm)


def create(*creations):
    return M("CreateAclsRequest", creations=list(creations))


def acl_filter(rt=ANY, name=None, pt=ANY, principal=None, host=None, op=ANY, perm=ANY):
    """Return one DeleteAclsRequest filter."""
    return S("DeleteAclsRequest", "DeleteAclsFilter", resource_type_filter=rt, resource_name_filter=name,
             pattern_type_filter=pt, principal_filter=principal, host_filter=host, operation=op, permission_type=perm)


def describe(rt=ANY, name=None, pt=ANY, principal=None, host=None, op=ANY, perm=ANY):
    return M("DescribeAclsRequest", resource_type_filter=rt, resource_name_filter=name, pattern_type_filter=pt,
             principal_filter=principal, host_filter=host, operation=op, permission_type=perm)


def entry(n: int, rt=TOPIC, name="foo", pt=LITERAL, principal="User:alice", host="*", op=READ, perm=ALLOW):
    """Return an AccessControlEntryRecord with a recognisable id."""
    return ApiMessageAndVersion(M("AccessControlEntryRecord", id=Uuid.from_longs(0xAC1, n), resource_type=rt,
                                  resource_name=name, pattern_type=pt, principal=principal, host=host,
                                  operation=op, permission_type=perm), 0)


def results(response) -> list[tuple]:
    return [(r.error_code, r.error_message) for r in response.results]


def encodes(name: str, version: int, message) -> None:
    """Check that the message encodes and decodes back at `version`."""
    assert codec.decode(name, version, codec.encode(name, version, message)) is not None


# ------------------------------------------------------------------ CreateAcls
def test_create_writes_one_record_with_a_fresh_id_and_succeeds():
    image = image_of()
    result = A.create_acls(ctx(image, version=3), create(creation(pt=PREFIXED, host="10.0.0.1", perm=DENY)))
    assert results(result.response) == [(0, None)]
    (record,) = result.records
    m = record.message
    assert (record.name, record.version) == ("AccessControlEntryRecord", 0)
    assert (m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
            m.permission_type) == (TOPIC, "foo", PREFIXED, "User:alice", "10.0.0.1", READ, DENY)
    acl_id = Uuid(bytes(m.id))
    assert acl_id not in RESERVED and not str(acl_id).startswith("-")
    assert acl_id[6] >> 4 == 4 and acl_id[8] >> 6 == 2  # Uuid.randomUuid: version 4, IETF variant
    after = replay(image, result.records)
    assert list(after.acls.entries) == [bytes(acl_id)]


def test_an_acl_already_in_the_image_succeeds_without_a_record():
    image = image_of(entry(1))
    result = A.create_acls(ctx(image, version=2), create(creation(), creation(op=WRITE)))
    assert results(result.response) == [(0, None), (0, None)]
    assert [r.message.operation for r in result.records] == [WRITE]


def test_identical_creations_in_one_request_make_one_record():
    result = A.create_acls(ctx(image_of(), version=1), create(creation(), creation(), creation(host="h")))
    assert results(result.response) == [(0, None)] * 3
    assert [r.message.host for r in result.records] == ["*", "h"]
    assert len({bytes(r.message.id) for r in result.records}) == 2


@pytest.mark.parametrize("fields,message", [
    (dict(rt=CLUSTER, name="foo"), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (dict(rt=CLUSTER, name=""), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (dict(name=""), "Invalid empty resource name"),
    (dict(rt=0), "Invalid resourceType UNKNOWN"),
    (dict(rt=99), "Invalid resourceType UNKNOWN"),
    (dict(rt=-3, name=""), "Invalid empty resource name"),
    (dict(pt=0), "Invalid patternType UNKNOWN"),
    (dict(pt=5), "Invalid patternType UNKNOWN"),
    (dict(op=0), "Invalid operation UNKNOWN"),
    (dict(op=16), "Invalid operation UNKNOWN"),
    (dict(perm=0), "Invalid permissionType UNKNOWN"),
    (dict(perm=4), "Invalid permissionType UNKNOWN"),
    (dict(principal="alice"), COLON.format("alice")),
    (dict(principal=""), COLON.format("")),
    (dict(rt=0, principal="alice"), "Invalid resourceType UNKNOWN"),
], ids=lambda v: str(v) if isinstance(v, dict) else None)
def test_each_invalid_creation_gets_invalid_request_with_kafkas_message(fields, message):
    result = A.create_acls(ctx(image_of(), version=3), create(creation(**fields), creation(host="ok")))
    assert results(result.response) == [(INVALID_REQUEST, message), (0, None)]
    assert [r.message.host for r in result.records] == ["ok"]


@pytest.mark.parametrize("fields", [
    dict(rt=CLUSTER, name="kafka-cluster"), dict(principal="User:"), dict(principal=":x"), dict(rt=USER),
    dict(op=ALL), dict(host="")])
def test_creations_kafka_accepts(fields):
    result = A.create_acls(ctx(image_of(), version=3), create(creation(**fields)))
    assert results(result.response) == [(0, None)] and len(result.records) == 1


@pytest.mark.parametrize("fields", [dict(rt=ANY), dict(pt=MATCH), dict(pt=ANY), dict(op=ANY), dict(perm=ANY),
                                    dict(host=None), dict(principal=None), dict(name=None)])
def test_a_creation_kafka_cannot_bind_fails_the_whole_request(fields):
    result = A.create_acls(ctx(image_of(), version=3), create(creation(), creation(**fields), creation(op=WRITE)))
    assert result.records == []
    assert results(result.response) == [(-1, None)] * 3


def test_version_0_creations_are_literal():
    result = A.create_acls(ctx(image_of(), version=0), create(creation(pt=PREFIXED)))
    assert [r.message.pattern_type for r in result.records] == [LITERAL]


def test_create_then_delete_through_the_controller_facade_and_image():
    quorum = QuorumController(QuorumConfig())
    image = image_of()
    created = quorum.handle("CreateAcls", ctx(image, version=3), create(creation(), creation(op=WRITE)))
    image = replay(image, created.records)
    assert len(image.acls.entries) == 2
    deleted = quorum.handle("DeleteAcls", ctx(image, version=3), M("DeleteAclsRequest", filters=[acl_filter()]))
    assert names(deleted.records) == ["RemoveAccessControlEntryRecord"] * 2
    assert replay(image, deleted.records).acls.is_empty()
    assert quorum.is_read_only("DescribeAcls") and not quorum.is_read_only("CreateAcls")


# ------------------------------------------------------------------ filter matching
IMAGE_ACLS = [
    entry(1, name="foo"), entry(2, name="*"), entry(3, name="fo", pt=PREFIXED), entry(4, name="foo", pt=PREFIXED),
    entry(5, name="bar", pt=PREFIXED), entry(6, rt=GROUP, name="foo"),
    entry(7, name="foo", principal="User:bob", host="10.0.0.1", op=WRITE, perm=DENY),
]


@pytest.mark.parametrize("f,expected", [
    (acl_filter(), [1, 2, 3, 4, 5, 6, 7]),
    (acl_filter(rt=TOPIC, name="foo", pt=MATCH), [1, 2, 3, 4, 7]),
    (acl_filter(rt=TOPIC, name="foobar", pt=MATCH), [2, 3, 4]),
    (acl_filter(rt=TOPIC, name="f", pt=MATCH), [2]),
    (acl_filter(rt=TOPIC, name=None, pt=MATCH), [1, 2, 3, 4, 5, 7]),
    (acl_filter(rt=TOPIC, name="foo", pt=LITERAL), [1, 7]),
    (acl_filter(rt=TOPIC, name="*", pt=LITERAL), [2]),
    (acl_filter(rt=TOPIC, name="foo", pt=ANY), [1, 4, 7]),
    (acl_filter(rt=TOPIC, name="foo", pt=PREFIXED), [4]),
    (acl_filter(rt=TOPIC, name="foobar", pt=PREFIXED), []),
    (acl_filter(rt=ANY, name=None, pt=PREFIXED), [3, 4, 5]),
    (acl_filter(rt=GROUP), [6]),
    (acl_filter(principal="User:bob"), [7]),
    (acl_filter(principal="User:*"), []),
    (acl_filter(host="10.0.0.1"), [7]),
    (acl_filter(op=WRITE), [7]),
    (acl_filter(op=ALL), []),
    (acl_filter(perm=DENY), [7]),
    (acl_filter(perm=ALLOW, rt=TOPIC, name="foo", pt=MATCH), [1, 2, 3, 4]),
], ids=repr)
def test_filter_matching_follows_acl_binding_filter(f, expected):
    image = image_of(*IMAGE_ACLS)
    result = A.delete_acls(ctx(image, version=3), M("DeleteAclsRequest", filters=[f]))
    ids = {bytes(r.message.id): r.message.id for r in IMAGE_ACLS}
    got = [Uuid(ids[bytes(r.message.id)]).lsb for r in result.records]
    assert got == expected
    (filter_result,) = result.response.filter_results
    assert (filter_result.error_code, filter_result.error_message) == (0, None)
    assert len(filter_result.matching_acls) == len(expected)


def test_matching_acls_carry_the_acl_fields():
    image = image_of(entry(7, name="foo", principal="User:bob", host="10.0.0.1", op=WRITE, perm=DENY))
    result = A.delete_acls(ctx(image, version=1), M("DeleteAclsRequest", filters=[acl_filter()]))
    (m,) = result.response.filter_results[0].matching_acls
    assert (m.error_code, m.error_message, m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host,
            m.operation, m.permission_type) == (0, None, TOPIC, "foo", LITERAL, "User:bob", "10.0.0.1", WRITE, DENY)


def test_overlapping_filters_remove_each_acl_once_and_list_it_for_every_filter():
    image = image_of(*IMAGE_ACLS)
    filters = [acl_filter(rt=TOPIC, name="foo", pt=LITERAL), acl_filter(principal="User:bob"), acl_filter(rt=GROUP)]
    result = A.delete_acls(ctx(image, version=2), M("DeleteAclsRequest", filters=filters))
    assert [Uuid(r.message.id).lsb for r in result.records] == [1, 7, 6]
    assert [len(f.matching_acls) for f in result.response.filter_results] == [2, 1, 1]
    assert len(replay(image, result.records).acls.entries) == len(IMAGE_ACLS) - 3


@pytest.mark.parametrize("f,message", [
    (acl_filter(rt=0), "Unknown patternFilter."), (acl_filter(rt=42), "Unknown patternFilter."),
    (acl_filter(pt=0), "Unknown patternFilter."), (acl_filter(pt=7), "Unknown patternFilter."),
    (acl_filter(op=0), "Unknown entryFilter."), (acl_filter(op=-1), "Unknown entryFilter."),
    (acl_filter(perm=0), "Unknown entryFilter."), (acl_filter(perm=9), "Unknown entryFilter."),
    (acl_filter(rt=0, op=0), "Unknown patternFilter."),
], ids=repr)
def test_unknown_filter_parts_are_invalid_request_for_that_filter_only(f, message):
    image = image_of(*IMAGE_ACLS)
    result = A.delete_acls(ctx(image, version=3), M("DeleteAclsRequest", filters=[f, acl_filter(rt=GROUP)]))
    bad, good = result.response.filter_results
    assert (bad.error_code, bad.error_message, bad.matching_acls) == (INVALID_REQUEST, message, [])
    assert good.error_code == 0 and [Uuid(r.message.id).lsb for r in result.records] == [6]


def test_delete_with_nothing_matching_has_no_records():
    result = A.delete_acls(ctx(image_of(entry(1)), version=3), M("DeleteAclsRequest", filters=[acl_filter(rt=GROUP)]))
    assert result.records == [] and result.response.filter_results[0].matching_acls == []


def test_version_0_delete_filters_are_literal():
    image = image_of(*IMAGE_ACLS)
    result = A.delete_acls(ctx(image, version=0), M("DeleteAclsRequest", filters=[acl_filter(rt=TOPIC, pt=ANY)]))
    assert [Uuid(r.message.id).lsb for r in result.records] == [1, 2, 7]
    encodes("DeleteAclsResponse", 0, result.response)


# ------------------------------------------------------------------ DescribeAcls
def described(response) -> list[tuple]:
    return [(r.resource_type, r.resource_name, r.pattern_type,
             [(a.principal, a.host, a.operation, a.permission_type) for a in r.acls]) for r in response.resources]


def test_describe_groups_by_resource_in_standard_acl_order():
    image = image_of(*IMAGE_ACLS, entry(8, name="foo", op=DESCRIBE))
    result = A.describe_acls(ctx(image, version=3), describe())
    assert result.records == []
    assert (result.response.error_code, result.response.error_message) == (0, None)
    assert described(result.response) == [
        (TOPIC, "foo", LITERAL, [("User:alice", "*", READ, ALLOW), ("User:bob", "10.0.0.1", WRITE, DENY),
                                 ("User:alice", "*", DESCRIBE, ALLOW)]),
        (TOPIC, "foo", PREFIXED, [("User:alice", "*", READ, ALLOW)]),
        (TOPIC, "fo", PREFIXED, [("User:alice", "*", READ, ALLOW)]),
        (TOPIC, "bar", PREFIXED, [("User:alice", "*", READ, ALLOW)]),
        (TOPIC, "*", LITERAL, [("User:alice", "*", READ, ALLOW)]),
        (GROUP, "foo", LITERAL, [("User:alice", "*", READ, ALLOW)]),
    ]


@pytest.mark.parametrize("request_,expected", [
    (describe(rt=TOPIC, name="foobar", pt=MATCH), [(TOPIC, "foo", PREFIXED), (TOPIC, "fo", PREFIXED),
                                                   (TOPIC, "*", LITERAL)]),
    (describe(rt=TOPIC, name="foo", pt=LITERAL, principal="User:bob"), [(TOPIC, "foo", LITERAL)]),
    (describe(rt=GROUP), [(GROUP, "foo", LITERAL)]),
    (describe(rt=99), []),          # out of range reads as UNKNOWN, which matches nothing (Kafka)
    (describe(op=ALL), []),
], ids=repr)
def test_describe_filters(request_, expected):
    result = A.describe_acls(ctx(image_of(*IMAGE_ACLS), version=3), request_)
    assert [r[:3] for r in described(result.response)] == expected
    assert result.response.error_code == 0


@pytest.mark.parametrize("field", ["resource_type_filter", "pattern_type_filter", "operation", "permission_type"])
def test_describe_with_an_unknown_code_is_invalid_request(field):
    request = describe()
    setattr(request, field, 0)
    response = A.describe_acls(ctx(image_of(*IMAGE_ACLS), version=3), request).response
    assert (response.error_code, response.resources) == (INVALID_REQUEST, [])
    assert response.error_message == "DescribeAclsRequest contains UNKNOWN elements"


def test_describe_version_0_is_literal_only_and_encodes():
    result = A.describe_acls(ctx(image_of(*IMAGE_ACLS), version=0), describe(rt=TOPIC, pt=PREFIXED))
    assert {r.pattern_type for r in result.response.resources} == {LITERAL}
    encodes("DescribeAclsResponse", 0, result.response)


# ------------------------------------------------------------------ versions and error responses
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_every_response_encodes_at_every_version(version):
    image = image_of(*[r for r in IMAGE_ACLS if r.message.pattern_type == LITERAL])
    context = at(ctx(image), api_version=version)
    bad = creation(principal="alice")
    encodes("CreateAclsResponse", version, A.create_acls(context, create(creation(op=WRITE), bad)).response)
    encodes("DeleteAclsResponse", version, A.delete_acls(context, M("DeleteAclsRequest", filters=[
        acl_filter(rt=TOPIC, pt=LITERAL), acl_filter(op=0)])).response)
    encodes("DescribeAclsResponse", version, A.describe_acls(context, describe(pt=LITERAL)).response)


def test_whole_request_error_responses_answer_every_creation_and_filter():
    created = error_response("CreateAcls", create(creation(), creation()), 41)
    assert results(created) == [(41, "This is not the correct controller for this cluster.")] * 2
    deleted = error_response("DeleteAcls", M("DeleteAclsRequest", filters=[acl_filter()] * 3), 31, "denied")
    assert [(f.error_code, f.error_message, f.matching_acls) for f in deleted.filter_results] == [
        (31, "denied", [])] * 3
    described_ = error_response("DescribeAcls", describe(), 41)
    assert (described_.error_code, described_.resources) == (41, [])
    for version in range(4):
        encodes("CreateAclsResponse", version, created)
        encodes("DeleteAclsResponse", version, deleted)
        encodes("DescribeAclsResponse", version, described_)
