"""Create/Renew/ExpireDelegationToken and the expired-token sweep (Kafka 3.9 DelegationTokenControlManager rules)."""
from __future__ import annotations

import dataclasses

from kraftsman.controller.quorum import tokens_control as tc
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.storage.protocol.errors import Errors

from .replication_fixtures import M, S, cluster, context, replay

SECRET = "s3cret"
NOW = 1_700_000_000_000
DAY, WEEK = 86_400_000, 604_800_000


def ctx(image, principal="User:alice", now=NOW, seed=0, **config):
    config.setdefault("delegation_token_secret_key", SECRET)
    return dataclasses.replace(context(image, seed=seed, **config), principal=principal, now_ms=now)


def create(image, renewers=(), max_lifetime_ms=-1, owner=None, **kw):
    request = M("CreateDelegationTokenRequest", max_lifetime_ms=max_lifetime_ms,
                owner_principal_type=owner and "User", owner_principal_name=owner, renewers=[
                    S("CreateDelegationTokenRequest", "CreatableRenewers", principal_type=t, principal_name=n)
                    for t, n in renewers])
    result = tc.create_delegation_token(ctx(image, **kw), request)
    return result, replay(image, result.records)


def renew(image, mac, period=-1, **kw):
    result = tc.renew_delegation_token(ctx(image, **kw), M("RenewDelegationTokenRequest", hmac=mac,
                                                            renew_period_ms=period))
    return result, replay(image, result.records)


def expire(image, mac, period, **kw):
    result = tc.expire_delegation_token(ctx(image, **kw), M("ExpireDelegationTokenRequest", hmac=mac,
                                                             expiry_time_period_ms=period))
    return result, replay(image, result.records)


def tokens(image):
    return {k: m for k, (m, _v) in image.delegation_tokens.entries.items()}


def test_hmac_is_hmac_sha512_of_the_utf8_texts():
    # RFC 4231 test case 2 (key "Jefe")
    assert tc.token_hmac("Jefe", "what do ya want for nothing?").hex() == (
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d"
        "4a6b4b636e070a38bce737")


def test_create_writes_a_token_record_and_answers_its_hmac_and_times():
    result, image = create(cluster(), renewers=[("User", "bob")], max_lifetime_ms=2 * DAY)
    r = result.response
    assert (r.error_code, r.principal_type, r.principal_name) == (0, "User", "alice")
    assert (r.token_requester_principal_type, r.token_requester_principal_name) == ("User", "alice")
    assert (r.issue_timestamp_ms, r.expiry_timestamp_ms, r.max_timestamp_ms) == (NOW, NOW + DAY, NOW + 2 * DAY)
    assert len(r.token_id) == 22 and r.hmac == tc.token_hmac(SECRET, r.token_id)
    token = tokens(image)[r.token_id]
    assert (token.owner, token.requester, token.renewers) == ("User:alice", "User:alice", ["User:bob"])
    assert (token.issue_timestamp, token.expiration_timestamp, token.max_timestamp) == (NOW, NOW + DAY, NOW + 2 * DAY)
    again, _ = create(cluster(), renewers=[("User", "bob")], max_lifetime_ms=2 * DAY)
    assert again.response.token_id == r.token_id  # ids come from ctx.rng: the same seed, the same id
    other, _ = create(cluster(), seed=1)
    assert other.response.token_id != r.token_id


def test_lifetimes_follow_the_server_maximum_and_expiry_time():
    r = create(cluster(), max_lifetime_ms=-1)[0].response
    assert (r.expiry_timestamp_ms, r.max_timestamp_ms) == (NOW + DAY, NOW + WEEK)
    r = create(cluster(), max_lifetime_ms=30 * WEEK)[0].response  # capped by delegation.token.max.lifetime.ms
    assert r.max_timestamp_ms == NOW + WEEK
    r = create(cluster(), max_lifetime_ms=1000)[0].response  # expiry never passes the max
    assert (r.expiry_timestamp_ms, r.max_timestamp_ms) == (NOW + 1000, NOW + 1000)


def test_an_owner_may_be_named_for_someone_else():
    r = create(cluster(), owner="carol", principal="User:admin")[0].response
    assert (r.principal_name, r.token_requester_principal_name) == ("carol", "admin")


def test_create_refusals_disabled_old_metadata_version_and_non_user_renewers():
    for image, kw, code in ((cluster(), {"delegation_token_secret_key": None}, Errors.DELEGATION_TOKEN_AUTH_DISABLED),
                            (cluster(mv=13), {}, Errors.UNSUPPORTED_VERSION),
                            (cluster(), {"renewers": [("User", "bob"), ("Group", "g")]},
                             Errors.INVALID_PRINCIPAL_TYPE)):
        result, _ = create(image, **kw)
        assert result.records == [] and result.response.error_code == code
        assert (result.response.principal_name, result.response.token_requester_principal_name) == ("alice", "alice")


def test_renew_by_owner_or_renewer_moves_the_expiry_up_to_the_max():
    made, image = create(cluster(), renewers=[("User", "bob")], max_lifetime_ms=3 * DAY)
    mac, token_id = made.response.hmac, made.response.token_id
    result, image = renew(image, mac, period=-1, principal="User:bob", now=NOW + DAY // 2)
    assert result.response.error_code == 0 and result.response.expiry_timestamp_ms == NOW + DAY // 2 + DAY
    assert tokens(image)[token_id].expiration_timestamp == NOW + DAY // 2 + DAY
    result, image = renew(image, mac, period=1000, now=NOW + DAY)  # the owner, a shorter period
    assert result.response.expiry_timestamp_ms == NOW + DAY + 1000
    result, image = renew(image, mac, period=10 * DAY, now=NOW + DAY)  # capped by delegation.token.expiry.time.ms
    assert result.response.expiry_timestamp_ms == NOW + 2 * DAY
    result, image = renew(image, mac, now=NOW + 2 * DAY - 1)
    assert result.response.expiry_timestamp_ms == NOW + 3 * DAY - 1
    result, image = renew(image, mac, now=NOW + 3 * DAY - 2)  # capped by the token's max timestamp
    assert result.response.expiry_timestamp_ms == NOW + 3 * DAY
    assert tokens(image)[token_id].expiration_timestamp == NOW + 3 * DAY


def test_renew_refusals_unknown_expired_and_stranger():
    made, image = create(cluster())
    mac = made.response.hmac
    for kw, code in (({"mac": b"nope"}, Errors.DELEGATION_TOKEN_NOT_FOUND),
                     ({"now": NOW + DAY + 1}, Errors.DELEGATION_TOKEN_EXPIRED),
                     ({"principal": "User:mallory"}, Errors.DELEGATION_TOKEN_OWNER_MISMATCH)):
        result, _ = renew(image, kw.pop("mac", mac), **kw)
        assert result.records == [] and result.response.error_code == code


def test_expire_now_removes_the_token_and_a_period_moves_its_expiry():
    made, image = create(cluster())
    mac, token_id = made.response.hmac, made.response.token_id
    result, later = expire(image, mac, 5000)
    assert result.response.expiry_timestamp_ms == NOW + 5000
    assert tokens(later)[token_id].expiration_timestamp == NOW + 5000
    result, gone = expire(image, mac, -1)
    assert result.response.error_code == 0 and result.response.expiry_timestamp_ms == -1
    assert tokens(gone) == {} and type(result.records[0].message).__name__.endswith("RemoveDelegationTokenRecord")
    assert expire(gone, mac, -1)[0].response.error_code == Errors.DELEGATION_TOKEN_NOT_FOUND
    refused = expire(image, mac, -1, delegation_token_secret_key=None)[0].response
    assert refused.error_code == Errors.DELEGATION_TOKEN_AUTH_DISABLED


def test_the_active_controller_sweeps_expired_tokens_every_check_interval():
    first, image = create(cluster(), max_lifetime_ms=1000)
    second, image = create(image, seed=1)
    config = dataclasses.replace(ctx(image).config, delegation_token_expiry_check_interval_ms=60_000)
    controller = QuorumController(config, noop_interval_ms=None)
    controller.on_activate(ctx(image))
    assert controller.periodic(ctx(image, now=NOW + 30_000)) == []  # not due yet
    results = controller.periodic(ctx(image, now=NOW + 60_000))
    assert [r.message.token_id for res in results for r in res.records] == [first.response.token_id]
    assert controller.periodic(ctx(image, now=NOW + 90_000)) == []  # next sweep one interval later
    off = QuorumController(dataclasses.replace(config, delegation_token_secret_key=None), noop_interval_ms=None)
    off.on_activate(ctx(image))
    assert off.periodic(ctx(image, now=NOW + WEEK)) == []
    assert second.response.token_id in tokens(image)
