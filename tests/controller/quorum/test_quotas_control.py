"""AlterClientQuotas (Kafka 3.9 ClientQuotaControlManager and AlterClientQuotasRequest.entries() rules)."""
from __future__ import annotations

import math

import pytest

from kraftsman.controller.quorum import quotas_control as qc
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.java_hash_order import JavaHashMap, entity_hash, string_hash
from kraftsman.storage.protocol import codec

from .replication_fixtures import M, S, cluster, run

USER_A = (("user", "a"),)


def entry(parts, *ops):
    entity = [S("AlterClientQuotasRequest", "EntityData", entity_type=t, entity_name=n) for t, n in parts]
    data = [S("AlterClientQuotasRequest", "OpData", key=k, value=0.0 if v is None else v, remove=v is None)
            for k, v in ops]
    return S("AlterClientQuotasRequest", "EntryData", entity=entity, ops=data)


def alter(image, *entries, validate_only=False, version=1):
    request = M("AlterClientQuotasRequest", entries=list(entries), validate_only=validate_only)
    return run(qc.alter_client_quotas, image, request, version=version)


def answers(result):
    return [([(e.entity_type, e.entity_name) for e in r.entity], r.error_code, r.error_message)
            for r in result.response.entries]


def quotas(image):
    return image.client_quotas.entities


@pytest.mark.parametrize("parts, ops, message", [
    ((), [("producer_byte_rate", 1)], "Invalid empty client quota entity"),
    ((("group", "g"),), [("producer_byte_rate", 1)], "Unhandled client quota entity type: group"),
    ((("user", ""),), [("producer_byte_rate", 1)], "Empty user not supported"),
    ((("client-id", ""),), [("producer_byte_rate", 1)], "Empty client-id not supported"),
    ((("ip", ""),), [("connection_creation_rate", 1)], "Empty ip not supported"),
    ((("ip", "1.2.3.4"), ("user", "a")), [("connection_creation_rate", 1)],
     "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
    ((("ip", "not-an-ip"),), [("connection_creation_rate", 1)], "not-an-ip is not a valid IP or resolvable host."),
    (USER_A, [("connection_creation_rate", 1)], "Invalid configuration key connection_creation_rate"),
    ((("ip", "::1"),), [("producer_byte_rate", 1)], "Invalid configuration key producer_byte_rate"),
    (USER_A, [("SCRAM-SHA-256", 1)], "Invalid configuration key SCRAM-SHA-256"),
    (USER_A, [("producer_byte_rate", 0)], "Quota producer_byte_rate must be greater than 0"),
    (USER_A, [("request_percentage", -1.5)], "Quota request_percentage must be greater than 0"),
    (USER_A, [("consumer_byte_rate", 1.5)], "consumer_byte_rate cannot be a fractional value."),
    (USER_A, [("producer_byte_rate", 2.0**64)], "Proposed value for producer_byte_rate is too large for a LONG."),
    ((("ip", None),), [("connection_creation_rate", 2.0**31)],
     "Proposed value for connection_creation_rate is too large for an INT."),
    ((("ip", "10.0.0.1"),), [("connection_creation_rate", 3.25)],
     "connection_creation_rate cannot be a fractional value."),
    (USER_A, [("producer_byte_rate", 5), ("producer_byte_rate", 6)],
     "Ignoring duplicate entity ClientQuotaEntity(entries={user=a})"),
])
def test_each_validation_error(parts, ops, message):
    result, image = alter(cluster(), entry(parts, *ops))
    assert [(code, text) for _, code, text in answers(result)] == [(42, message)]
    assert result.records == [] and quotas(image) == {}


@pytest.mark.parametrize("parts, key, value", [
    (USER_A, "producer_byte_rate", 1024), (USER_A, "consumer_byte_rate", 1024.0000001),
    ((("client-id", None),), "request_percentage", 0.5), ((("user", None), ("client-id", "c")),
                                                          "controller_mutation_rate", 1e-9),
    ((("ip", "192.168.0.1"),), "connection_creation_rate", 2**31 - 1), ((("ip", "[::1]"),), "connection_creation_rate", 3),
    ((("ip", None),), "connection_creation_rate", 7),
])
def test_accepted_entities_keys_and_values(parts, key, value):
    result, image = alter(cluster(), entry(parts, (key, value)))
    assert [code for _, code, _ in answers(result)] == [0]
    assert quotas(image) == {tuple(sorted(parts)): {key: value}}


def test_upsert_then_remove():
    parts = (("user", "a"), ("client-id", "c"))
    result, image = alter(cluster(), entry(parts, ("producer_byte_rate", 1000), ("request_percentage", 25.5)))
    assert answers(result) == [([("client-id", "c"), ("user", "a")], 0, None)]
    assert quotas(image) == {(("client-id", "c"), ("user", "a")): {"producer_byte_rate": 1000,
                                                                   "request_percentage": 25.5}}
    record = result.records[0]
    assert (record.api_key, record.version, record.message.remove) == (14, 0, False)
    # parts in Java HashMap order: client-id (bucket 0) before user (bucket 1)
    assert [(e.entity_type, e.entity_name) for e in record.message.entity] == [("client-id", "c"), ("user", "a")]
    result, image = alter(image, entry(parts, ("producer_byte_rate", None), ("consumer_byte_rate", None)))
    assert [(r.message.key, r.message.remove) for r in result.records] == [("producer_byte_rate", True)]
    assert quotas(image) == {(("client-id", "c"), ("user", "a")): {"request_percentage": 25.5}}
    result, image = alter(image, entry(parts, ("request_percentage", None)))
    assert quotas(image) == {} and answers(result) == [([("client-id", "c"), ("user", "a")], 0, None)]


def test_unchanged_value_and_absent_removal_write_nothing():
    _, image = alter(cluster(), entry(USER_A, ("producer_byte_rate", 10)))
    result, _ = alter(image, entry(USER_A, ("producer_byte_rate", 10), ("consumer_byte_rate", None)))
    assert result.records == [] and answers(result) == [([("user", "a")], 0, None)]


def test_removal_skips_key_validation_but_a_bad_set_drops_the_whole_entity():
    result, _ = alter(cluster(), entry(USER_A, ("nonsense", None)))
    assert answers(result) == [([("user", "a")], 0, None)]
    result, image = alter(cluster(), entry(USER_A, ("producer_byte_rate", 10), ("consumer_byte_rate", -1)))
    assert answers(result) == [([("user", "a")], 42, "Quota consumer_byte_rate must be greater than 0")]
    assert result.records == [] and quotas(image) == {}


def test_validate_only_answers_without_records():
    result, image = alter(cluster(), entry(USER_A, ("producer_byte_rate", 10)), entry((("user", ""),), ("x", 1)),
                          validate_only=True)
    assert [code for _, code, _ in answers(result)] == [0, 42]
    assert result.records == [] and quotas(image) == {}


def test_duplicate_entity_in_another_order_is_ignored_but_earlier_records_stay():
    first, second = (("user", "a"), ("client-id", "c")), (("client-id", "c"), ("user", "a"))
    result, image = alter(cluster(), entry(first, ("producer_byte_rate", 10)), entry(second, ("consumer_byte_rate", 20)))
    assert answers(result) == [([("client-id", "c"), ("user", "a")], 42,
                                "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, user=a})")]
    assert quotas(image) == {(("client-id", "c"), ("user", "a")): {"producer_byte_rate": 10}}


def test_entity_type_named_twice_keeps_its_last_name():
    result, image = alter(cluster(), entry((("user", "x"), ("user", "y")), ("producer_byte_rate", 5)))
    assert answers(result) == [([("user", "y")], 0, None)]
    assert quotas(image) == {(("user", "y"),): {"producer_byte_rate": 5}}


def test_results_follow_java_hashmap_order_of_entities():
    names = [f"u{i}" for i in range(14)]
    result, _ = alter(cluster(), *[entry((("user", n),), ("producer_byte_rate", 1)) for n in names])
    expected = JavaHashMap(hash_of=entity_hash)
    for n in names:
        expected.put(frozenset({("user", n)}), None)
    assert [r.entity[0].entity_name for r in result.response.entries] == [
        next(iter(k))[1] for k in expected.keys()]
    assert string_hash("user") == 3599307  # "user".hashCode() in Java


def test_nan_equals_nan_as_java_doubles():
    _, image = alter(cluster(), entry(USER_A, ("request_percentage", math.nan)))
    result, _ = alter(image, entry(USER_A, ("request_percentage", math.nan)))
    assert result.records == []


def test_too_many_records_fail_the_whole_request():
    entries = [entry((("user", f"u{i}"),), ("producer_byte_rate", 1), ("consumer_byte_rate", 1))
               for i in range(5001)]
    result, _ = alter(cluster(), *entries)
    assert result.records == []
    assert {(code, text) for _, code, text in answers(result)} == {(-1, qc.UNKNOWN_SERVER_MESSAGE)}
    assert len(result.response.entries) == 5001


@pytest.mark.parametrize("version", [0, 1])
def test_versions_encode(version):
    result, _ = alter(cluster(), entry(USER_A, ("producer_byte_rate", 10)), entry((), ("x", 1)), version=version)
    name = "AlterClientQuotasResponse"
    assert codec.decode(name, version, codec.encode(name, version, result.response)) == result.response


def test_handler_table():
    controller = QuorumController()
    assert controller.handlers["AlterClientQuotas"] is qc.alter_client_quotas
    assert not controller.is_read_only("AlterClientQuotas")


def test_empty_request():
    result, _ = alter(cluster())
    assert (result.records, result.response.entries) == ([], [])
