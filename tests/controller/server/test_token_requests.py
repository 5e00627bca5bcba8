"""token_requests: Kafka 3.9 ControllerApis' checks before a delegation-token request reaches the controller."""
from __future__ import annotations

from types import SimpleNamespace

from kraftsman.controller.server import token_requests as tr
from kraftsman.controller.server.authorizer import StandardAuthorizer
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors


def principal_data(kind: str, name: str, token_authenticated: bool) -> bytes:
    """Serialize DefaultPrincipalData v0 (flexible) by hand, as a forwarding Kafka broker does."""
    def compact(text: str) -> bytes:
        raw = text.encode()
        return bytes([len(raw) + 1]) + raw
    return b"\x00\x00" + compact(kind) + compact(name) + bytes([token_authenticated]) + b"\x00"


def rctx(api="CreateDelegationToken", session="User:alice", forwarded=None):
    return SimpleNamespace(api_name=api, session_principal=session, peer=("10.0.0.1", 1), principal=forwarded,
                           forwarded_by="broker-1" if forwarded is not None else None)


def create(owner=None):
    return codec.message_class("CreateDelegationTokenRequest")(
        owner_principal_type=owner and "User", owner_principal_name=owner, renewers=[], max_lifetime_ms=-1)


def code(response):
    return None if response is None else response.error_code


def test_direct_requests_need_an_authenticated_non_plaintext_connection():
    assert code(tr.refusal(rctx(), create(), "PLAINTEXT", None)) == Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    anonymous = tr.refusal(rctx(session="User:ANONYMOUS"), create(), "SSL", None)
    assert code(anonymous) == Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert tr.refusal(rctx(session="User:CN=client"), create(), "SSL", None) is None  # two-way TLS
    assert tr.refusal(rctx(), create(), "SASL_PLAINTEXT", None) is None


def test_forwarded_requests_may_use_plaintext_unless_their_principal_logged_in_with_a_token():
    forwarded = rctx(session="User:broker", forwarded=principal_data("User", "alice", False))
    assert tr.refusal(forwarded, create(), "PLAINTEXT", None) is None
    by_token = rctx(session="User:broker", forwarded=principal_data("User", "alice", True))
    refused = tr.refusal(by_token, create(), "SASL_SSL", None)
    assert code(refused) == Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert refused.token_requester_principal_name == "alice"
    renew = tr.refusal(rctx("RenewDelegationToken", session="User:broker", forwarded=principal_data("User", "a", True)),
                       None, "PLAINTEXT", None)
    assert (renew.error_code, renew.expiry_timestamp_ms) == (Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)


def test_a_token_for_another_owner_needs_create_tokens_on_that_user():
    acl = SimpleNamespace(resource_type=7, resource_name="User:bob", pattern_type=3, principal="User:alice", host="*",
                          operation=13, permission_type=3)  # USER, LITERAL, CREATE_TOKENS, ALLOW
    none = StandardAuthorizer(acls=lambda: ())
    granted = StandardAuthorizer(acls=lambda: (acl,))
    refused = tr.refusal(rctx(), create(owner="bob"), "SASL_SSL", none)
    assert code(refused) == Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    assert (refused.principal_name, refused.token_requester_principal_name, refused.issue_timestamp_ms) == (
        "bob", "alice", -1)
    assert tr.refusal(rctx(), create(owner="bob"), "SASL_SSL", granted) is None
    assert tr.refusal(rctx(), create(owner="alice"), "SASL_SSL", none) is None  # oneself: no ACL needed
    assert tr.refusal(rctx(), create(owner="bob"), "SASL_SSL", None) is None  # no authorizer configured
