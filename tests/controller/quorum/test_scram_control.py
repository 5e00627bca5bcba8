"""AlterUserScramCredentials and DescribeUserScramCredentials (Kafka 3.9 ScramControlManager / ScramImage rules)."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum import scram_control as sc
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.java_hash_order import JavaHashMap
from kraftsman.storage import scram
from kraftsman.storage.protocol import codec

from .replication_fixtures import M, S, cluster, context, run

SALTED = bytes(range(32))


def upsert(name, mechanism=1, iterations=4096, salt=b"salt", salted=SALTED):
    return S("AlterUserScramCredentialsRequest", "ScramCredentialUpsertion", name=name, mechanism=mechanism,
             iterations=iterations, salt=salt, salted_password=salted)


def delete(name, mechanism=1):
    return S("AlterUserScramCredentialsRequest", "ScramCredentialDeletion", name=name, mechanism=mechanism)


def alter(image, upsertions=(), deletions=()):
    request = M("AlterUserScramCredentialsRequest", upsertions=list(upsertions), deletions=list(deletions))
    return run(sc.alter_user_scram_credentials, image, request, version=0)


def describe(image, names):
    users = None if names is None else [S("DescribeUserScramCredentialsRequest", "UserName", name=n) for n in names]
    request = M("DescribeUserScramCredentialsRequest", users=users)
    return sc.describe_user_scram_credentials(context(image), request).response


def answers(result):
    return {(r.user, r.error_code, r.error_message) for r in result.response.results}


@pytest.fixture
def alice_image():
    _, image = alter(cluster(), [upsert("alice"), upsert("alice2", 2, 8192)])
    return image


@pytest.mark.parametrize("upsertions, deletions, expected", [
    ([upsert("")], [], ("", 93, "Username must not be empty")),
    ([], [delete("")], ("", 93, "Username must not be empty")),
    ([upsert("u", 0)], [], ("u", 33, "Unknown SCRAM mechanism")),
    ([upsert("u", 3)], [], ("u", 33, "Unknown SCRAM mechanism")),
    ([], [delete("u", 7)], ("u", 33, "Unknown SCRAM mechanism")),
    ([upsert("u", 1, 4095)], [], ("u", 93, "Too few iterations")),
    ([upsert("u", 2, 16385)], [], ("u", 93, "Too many iterations")),
    ([], [delete("nobody")], ("nobody", 91, "Attempt to delete a user credential that does not exist")),
    ([], [delete("alice", 2)], ("alice", 91, "Attempt to delete a user credential that does not exist")),
    ([upsert("u"), upsert("u", 2)], [], ("u", 92, "A user credential cannot be altered twice in the same request")),
    ([upsert("alice")], [delete("alice")],
     ("alice", 92, "A user credential cannot be altered twice in the same request")),
    ([], [delete("alice"), delete("alice")],
     ("alice", 92, "A user credential cannot be altered twice in the same request")),
    ([upsert("u", salted=b"")], [], ("u", -1, None)),
])
def test_each_validation_error(alice_image, upsertions, deletions, expected):
    result, image = alter(alice_image, upsertions, deletions)
    assert answers(result) == {expected}
    assert result.records == []
    assert image.scram.entries == alice_image.scram.entries


def test_iteration_bounds_are_inclusive():
    result, image = alter(cluster(), [upsert("lo", 1, 4096), upsert("hi", 2, 16384)])
    assert answers(result) == {("lo", 0, None), ("hi", 0, None)}
    assert {k: v[0].iterations for k, v in image.scram.entries.items()} == {(1, "lo"): 4096, (2, "hi"): 16384}


def test_metadata_version_gate():
    result, _ = alter(cluster(mv=10), [upsert("u")], [delete("v")])
    assert answers(result) == {("u", 35, "The current metadata.version does not support SCRAM"),
                               ("v", 35, "The current metadata.version does not support SCRAM")}
    assert result.records == []
    result, _ = alter(cluster(mv=11), [upsert("u")])
    assert answers(result) == {("u", 0, None)}


def test_duplicate_wins_over_version_gate_and_a_failed_user_is_not_checked_again():
    result, _ = alter(cluster(mv=10), [upsert("u"), upsert("u")])
    assert answers(result) == {("u", 35, "The current metadata.version does not support SCRAM")}
    result, _ = alter(cluster(), [upsert("u", 1, 1), upsert("u")])
    assert answers(result) == {("u", 93, "Too few iterations")}


def test_upsert_records_hold_rfc5802_keys_then_delete_removes_them():
    result, image = alter(cluster(), [upsert("bob", 2, 8192, b"pepper")])
    (record,) = result.records
    stored, server = scram.stored_and_server_keys(scram.MECHANISMS["SCRAM-SHA-512"], SALTED)
    m = record.message
    assert (record.version, record.api_key, m.name, m.mechanism, m.salt, m.iterations) == (
        0, 11, "bob", 2, b"pepper", 8192)
    assert (m.stored_key, m.server_key) == (stored, server)
    result, image = alter(image, deletions=[delete("bob", 2)])
    (record,) = result.records
    assert (record.api_key, record.message.name, record.message.mechanism) == (22, "bob", 2)
    assert answers(result) == {("bob", 0, None)} and image.scram.entries == {}


def test_upsert_replaces_an_existing_credential(alice_image):
    result, image = alter(alice_image, [upsert("alice", 1, 10000)])
    assert answers(result) == {("alice", 0, None)}
    assert image.scram.entries[(1, "alice")][0].iterations == 10000


def test_results_and_records_follow_java_hashmap_order():
    names = [f"user{i}" for i in range(20)]
    result, _ = alter(cluster(), [upsert(n) for n in names] + [upsert("")])
    expected = JavaHashMap()
    for n in names:
        expected.put(n, None)
    assert [r.user for r in result.response.results] == expected.keys() + [""]
    assert [r.message.name for r in result.records] == expected.keys()


def test_describe_all_users_when_null_or_empty(alice_image):
    for names in (None, []):
        response = describe(alice_image, names)
        assert (response.error_code, sorted(r.user for r in response.results)) == (0, ["alice", "alice2"])
        by_user = {r.user: [(c.mechanism, c.iterations) for c in r.credential_infos] for r in response.results}
        assert by_user == {"alice": [(1, 4096)], "alice2": [(2, 8192)]}


def test_describe_named_missing_and_duplicate_users(alice_image):
    image = alter(alice_image, [upsert("alice", 2, 5000)])[1]
    response = describe(image, ["alice", "ghost", "alice2", "alice2"])
    got = {r.user: (r.error_code, r.error_message, [(c.mechanism, c.iterations) for c in r.credential_infos])
           for r in response.results}
    assert got == {
        "alice": (0, "", [(1, 4096), (2, 5000)]),
        "ghost": (91, "Attempt to describe a user credential that does not exist: ghost", []),
        "alice2": (92, "Cannot describe SCRAM credentials for the same user twice in a single request: alice2", [])}
    assert len(response.results) == 3


def test_describe_on_empty_image_and_encoding():
    response = describe(cluster(), None)
    assert response.results == []
    name = "DescribeUserScramCredentialsResponse"
    assert codec.decode(name, 0, codec.encode(name, 0, response)) == response


def test_handler_tables_and_read_only():
    controller = QuorumController()
    assert controller.handlers["AlterUserScramCredentials"] is sc.alter_user_scram_credentials
    assert controller.is_read_only("DescribeUserScramCredentials")
    assert not controller.is_read_only("AlterUserScramCredentials")


def test_empty_request_writes_nothing():
    result, _ = alter(cluster())
    assert (result.records, result.response.results) == ([], [])
