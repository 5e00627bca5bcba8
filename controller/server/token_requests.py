"""token_requests: the checks Kafka 3.9's ControllerApis makes on a delegation-token request before the
controller sees it.

Rules:
- A token request is refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (64) when its principal logged in with
  a delegation token, or when it came straight (not in an Envelope) over PLAINTEXT, or over one-way TLS as
  User:ANONYMOUS. Forwarded requests may use PLAINTEXT, as Kafka allows them for testing.
- A CreateDelegationToken for another owner needs CREATE_TOKENS on that USER resource when an authorizer is
  configured, else DELEGATION_TOKEN_AUTHORIZATION_FAILED (65).
- Refusals carry -1 timestamps, an empty token id and HMAC, and the owner and requester, as Kafka's
  CreateDelegationTokenResponse.prepareResponse; renew and expire refusals answer expiry -1.
"""
from __future__ import annotations

from kraftsman.controller.quorum.tokens_control import create_response, token_owner
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors

from .authorizer import ANONYMOUS, envelope_token_authenticated, request_principal

TOKEN_APIS = frozenset({"CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken"})


def refusal(rctx, body, protocol: str, authorizer):
    """Return the response refusing a token request, or None when the controller may serve it."""
    principal = request_principal(rctx)
    if not _allowed(rctx, principal, protocol):
        return _refused(rctx.api_name, body, principal, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
    if rctx.api_name == "CreateDelegationToken" and authorizer is not None:
        owner = token_owner(body, principal)
        host = str(rctx.peer[0]) if rctx.peer else "*"
        if owner != principal and not authorizer.authorize(principal, host, "CREATE_TOKENS", "USER", owner):
            return _refused(rctx.api_name, body, principal, Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
    return None


def _allowed(rctx, principal: str, protocol: str) -> bool:
    forwarded = rctx.forwarded_by is not None
    if forwarded and envelope_token_authenticated(rctx.principal):
        return False
    if not forwarded and protocol == "PLAINTEXT":
        return False
    return not (not forwarded and protocol == "SSL" and principal == ANONYMOUS)


def _refused(api_name: str, body, principal: str, code: int):
    if api_name != "CreateDelegationToken":
        return codec.message_class(f"{api_name}Response")(error_code=code, expiry_timestamp_ms=-1)
    return create_response(token_owner(body, principal), principal, error_code=code, issue_timestamp_ms=-1,
                           expiry_timestamp_ms=-1, max_timestamp_ms=-1)
