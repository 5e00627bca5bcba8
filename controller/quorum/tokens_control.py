"""Delegation token handlers (KIP-48 on KRaft, KIP-900): CreateDelegationToken (v0-3), RenewDelegationToken and
ExpireDelegationToken (v0-2), and the periodic removal of expired tokens.

Rules:
- As Kafka 3.9's DelegationTokenControlManager: without delegation.token.secret.key every create and expire
  fails with DELEGATION_TOKEN_AUTH_DISABLED (61); below metadata.version 3.6-IV2 a create fails with
  UNSUPPORTED_VERSION (35); a renewer whose principal type is not `User` fails it with
  INVALID_PRINCIPAL_TYPE (67).
- A token's id is a random Kafka Uuid (ctx.rng); its HMAC is HmacSHA512 of the id's UTF-8 text keyed with the
  secret's UTF-8 bytes. The owner is the request's owner, or the requester (ctx.principal) when the request
  names none. Lifetimes: max = now + min(delegation.token.max.lifetime.ms, the request's MaxLifetimeMs when
  > 0); expiry = min(max, now + delegation.token.expiry.time.ms).
- Renew and expire find the token by HMAC; then DELEGATION_TOKEN_NOT_FOUND (62), DELEGATION_TOKEN_EXPIRED (66)
  when its max or expiry time has passed, DELEGATION_TOKEN_OWNER_MISMATCH (63) unless the requester is its
  owner or a renewer. A renewal sets expiry = min(max, now + min(expiry.time.ms, RenewPeriodMs when > 0)); an
  expire with a negative period removes the token (RemoveDelegationTokenRecord) and answers that period,
  otherwise it sets expiry = min(max, now + period).
- The connection checks Kafka's ControllerApis makes first (token requests refused on PLAINTEXT or
  anonymous one-way TLS, CREATE_TOKENS for another owner) belong to the server (node.handle), not here.
- sweep_expired(): every delegation.token.expiry.check.interval.ms the active controller removes the tokens
  whose max or expiry time has passed.
"""
from __future__ import annotations

import hashlib
import hmac as hmac_lib

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .feature_levels import metadata_version
from .topics import random_uuid

DELEGATION_TOKEN_LEVEL = 14  # metadata.version 3.6-IV2 (MetadataVersion.isDelegationTokenSupported)
USER_TYPE = "User"

_CREATE = codec.message_class("CreateDelegationTokenResponse")
_RENEW = codec.message_class("RenewDelegationTokenResponse")
_EXPIRE = codec.message_class("ExpireDelegationTokenResponse")
_TOKEN = codec.message_class("DelegationTokenRecord")
_REMOVE = codec.message_class("RemoveDelegationTokenRecord")


def principal_parts(principal: str) -> tuple[str, str]:
    """Split 'Type:name' as Kafka's SecurityUtils.parseKafkaPrincipal does (at the first colon)."""
    kind, _, name = principal.partition(":")
    return kind, name


def token_hmac(secret: str, token_id: str) -> bytes:
    """Return HmacSHA512(secret, token id), as Kafka's createHmac."""
    return hmac_lib.new(secret.encode(), token_id.encode(), hashlib.sha512).digest()


def token_owner(request, principal: str) -> str:
    """Return the owner a CreateDelegationToken names ('Type:name'), or the requester `principal` when none."""
    name = request.owner_principal_name
    return f"{request.owner_principal_type or ''}:{name}" if name else principal


def create_response(owner: str, requester: str, **fields):
    """Return a CreateDelegationTokenResponse naming `owner` and `requester` ('Type:name'), with `fields`."""
    (owner_type, owner_name), (requester_type, requester_name) = principal_parts(owner), principal_parts(requester)
    fields.setdefault("hmac", b"")
    return _CREATE(principal_type=owner_type, principal_name=owner_name, token_requester_principal_type=requester_type,
                   token_requester_principal_name=requester_name, **fields)


def expired(token, now_ms: int) -> bool:
    """Tell whether a DelegationTokenRecord's max or expiry time has passed."""
    return token.max_timestamp < now_ms or token.expiration_timestamp < now_ms


def find_token(ctx: ControllerContext, mac: bytes):
    """Return the DelegationTokenRecord whose HMAC is `mac`, or None."""
    secret = ctx.config.delegation_token_secret_key
    if not secret:
        return None
    for message, _version in ctx.image.delegation_tokens.entries.values():
        if hmac_lib.compare_digest(token_hmac(secret, message.token_id), bytes(mac or b"")):
            return message
    return None


def create_delegation_token(ctx: ControllerContext, request) -> ControllerResult:
    """Handle CreateDelegationToken: a DelegationTokenRecord and the token's HMAC."""
    cfg, now = ctx.config, ctx.now_ms
    owner = token_owner(request, ctx.principal)
    response = create_response(owner, ctx.principal)
    if not cfg.delegation_token_secret_key:
        return ControllerResult([], response.replace(error_code=Errors.DELEGATION_TOKEN_AUTH_DISABLED))
    if metadata_version(ctx.image) < DELEGATION_TOKEN_LEVEL:
        return ControllerResult([], response.replace(error_code=Errors.UNSUPPORTED_VERSION))
    if any(r.principal_type != USER_TYPE for r in request.renewers):
        return ControllerResult([], response.replace(error_code=Errors.INVALID_PRINCIPAL_TYPE))
    lifetime = cfg.delegation_token_max_lifetime_ms
    if request.max_lifetime_ms > 0:
        lifetime = min(lifetime, request.max_lifetime_ms)
    max_timestamp = now + lifetime
    expiry = min(max_timestamp, now + cfg.delegation_token_expiry_time_ms)
    token_id = str(random_uuid(ctx.rng))
    record = _TOKEN(owner=owner, requester=ctx.principal,
                    renewers=[f"{r.principal_type}:{r.principal_name}" for r in request.renewers],
                    issue_timestamp=now, max_timestamp=max_timestamp, expiration_timestamp=expiry, token_id=token_id)
    response = response.replace(issue_timestamp_ms=now, expiry_timestamp_ms=expiry, max_timestamp_ms=max_timestamp,
                                token_id=token_id, hmac=token_hmac(cfg.delegation_token_secret_key, token_id))
    return ControllerResult([ApiMessageAndVersion(record, 0)], response)


def _usable_token(ctx: ControllerContext, mac: bytes):
    """Return (token, None) when the requester may renew or expire the token `mac` names, else (None, error)."""
    token = find_token(ctx, mac)
    if token is None:
        return None, Errors.DELEGATION_TOKEN_NOT_FOUND
    if expired(token, ctx.now_ms):
        return None, Errors.DELEGATION_TOKEN_EXPIRED
    if ctx.principal != token.owner and ctx.principal not in token.renewers:
        return None, Errors.DELEGATION_TOKEN_OWNER_MISMATCH
    return token, None


def renew_delegation_token(ctx: ControllerContext, request) -> ControllerResult:
    """Handle RenewDelegationToken: a DelegationTokenRecord with the later expiry."""
    token, error = _usable_token(ctx, request.hmac)
    if error is not None:
        return ControllerResult([], _RENEW(error_code=error))
    period = ctx.config.delegation_token_expiry_time_ms
    if request.renew_period_ms > 0:
        period = min(period, request.renew_period_ms)
    expiry = min(token.max_timestamp, ctx.now_ms + period)
    return ControllerResult([ApiMessageAndVersion(token.replace(expiration_timestamp=expiry), 0)],
                            _RENEW(expiry_timestamp_ms=expiry))


def expire_delegation_token(ctx: ControllerContext, request) -> ControllerResult:
    """Handle ExpireDelegationToken: remove the token (negative period) or move its expiry."""
    if not ctx.config.delegation_token_secret_key:
        return ControllerResult([], _EXPIRE(error_code=Errors.DELEGATION_TOKEN_AUTH_DISABLED))
    token, error = _usable_token(ctx, request.hmac)
    if error is not None:
        return ControllerResult([], _EXPIRE(error_code=error))
    period = request.expiry_time_period_ms
    if period < 0:
        return ControllerResult([ApiMessageAndVersion(_REMOVE(token_id=token.token_id), 0)],
                                _EXPIRE(expiry_timestamp_ms=period))
    expiry = min(token.max_timestamp, ctx.now_ms + period)
    return ControllerResult([ApiMessageAndVersion(token.replace(expiration_timestamp=expiry), 0)],
                            _EXPIRE(expiry_timestamp_ms=expiry))


def sweep_expired(ctx: ControllerContext) -> ControllerResult | None:
    """Return the removal of every token whose max or expiry time has passed (None when there is none)."""
    now = ctx.now_ms
    records = [ApiMessageAndVersion(_REMOVE(token_id=message.token_id), 0)
               for message, _version in ctx.image.delegation_tokens.entries.values() if expired(message, now)]
    return ControllerResult(records, None) if records else None


HANDLERS = {
    "CreateDelegationToken": create_delegation_token,
    "RenewDelegationToken": renew_delegation_token,
    "ExpireDelegationToken": expire_delegation_token,
}
READ_ONLY = frozenset()
