"""Whole-request error responses of the SCRAM and client-quota APIs, as Kafka's getErrorResponse builds them."""
from __future__ import annotations

from kraftsman.controller.quorum.error_responses import error_response
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors


def _message(spec: str, **fields):
    return codec.message_class(spec)(**fields)


def _roundtrip(name: str, version: int, body):
    assert codec.decode(name, version, codec.encode(name, version, body)) == body


def test_alter_user_scram_credentials_one_result_per_distinct_user_java_sorted():
    cls = codec.message_class("AlterUserScramCredentialsRequest")
    request = cls(deletions=[cls.ScramCredentialDeletion(name="zoe", mechanism=1)],
                  upsertions=[cls.ScramCredentialUpsertion(name=n, mechanism=1, iterations=4096, salt=b"s",
                                                           salted_password=b"p") for n in ("bob", "zoe", "\U0001f600",
                                                                                           "\uffff")])
    body = error_response("AlterUserScramCredentials", request, 31, "Cluster authorization failed.")
    # Java compares UTF-16 code units: a surrogate pair (0xD83D...) sorts before U+FFFF
    assert [(r.user, r.error_code, r.error_message) for r in body.results] == [
        ("bob", 31, "Cluster authorization failed."), ("zoe", 31, "Cluster authorization failed."),
        ("\U0001f600", 31, "Cluster authorization failed."), ("\uffff", 31, "Cluster authorization failed.")]
    _roundtrip("AlterUserScramCredentialsResponse", 0, body)


def test_describe_user_scram_credentials_top_level_error_and_nameless_results():
    cls = codec.message_class("DescribeUserScramCredentialsRequest")
    body = error_response("DescribeUserScramCredentials", cls(users=[cls.UserName(name="a"), cls.UserName(name="b")]),
                          Errors.NOT_CONTROLLER)
    message = "This is not the correct controller for this cluster."
    assert (body.error_code, body.error_message) == (41, message)
    assert [(r.user, r.error_code, r.error_message) for r in body.results] == [("", 41, message)] * 2
    assert error_response("DescribeUserScramCredentials", cls(users=None), Errors.NOT_CONTROLLER).results == []
    _roundtrip("DescribeUserScramCredentialsResponse", 0, body)


def test_alter_client_quotas_one_entry_per_request_entry_with_its_parts_as_sent():
    cls = codec.message_class("AlterClientQuotasRequest")
    parts = [cls.EntityData(entity_type="user", entity_name="u"), cls.EntityData(entity_type="client-id",
                                                                                 entity_name=None)]
    request = cls(entries=[cls.EntryData(entity=parts, ops=[]), cls.EntryData(entity=parts[:1], ops=[])])
    body = error_response("AlterClientQuotas", request, 7)
    assert [([(e.entity_type, e.entity_name) for e in r.entity], r.error_code, r.error_message)
            for r in body.entries] == [([("user", "u"), ("client-id", None)], 7, "The request timed out."),
                                       ([("user", "u")], 7, "The request timed out.")]
    for version in (0, 1):
        _roundtrip("AlterClientQuotasResponse", version, body)
