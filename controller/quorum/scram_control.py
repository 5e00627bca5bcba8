"""SCRAM credential handlers: AlterUserScramCredentials (v0) and DescribeUserScramCredentials (v0, read-only).

Rules:
- Alter follows Kafka 3.9's ScramControlManager.alterCredentials: deletions are checked first, then
  upsertions. A user named again in the same request (by a deletion or an upsertion, whatever the
  mechanism) fails with DUPLICATE_RESOURCE and none of its changes apply; below metadata.version 3.5-IV2
  every user fails with UNSUPPORTED_VERSION.
- Per user, in Kafka's order: an empty name (UNACCEPTABLE_CREDENTIAL), an unknown mechanism
  (UNSUPPORTED_SASL_MECHANISM), then for an upsertion iterations below 4096 or above 16384
  (UNACCEPTABLE_CREDENTIAL) and for a deletion a credential that does not exist (RESOURCE_NOT_FOUND).
- A deletion is a RemoveUserScramCredentialRecord; an upsertion a UserScramCredentialRecord whose stored and
  server keys derive from the client's salted password (RFC 5802, kraftsman.storage.scram). An empty salted
  password is a key Java's HMAC refuses: UNKNOWN_SERVER_ERROR with no message, as Kafka answers it.
- Results and records follow Kafka's HashMap iteration order: deletions, then upsertions, then errors.
- Describe answers as the broker's ScramImage.describe: every user holding a credential when the list is null
  or empty; otherwise RESOURCE_NOT_FOUND for a user without one and DUPLICATE_RESOURCE for a user named twice.
  Credential infos list the mechanisms in type order.
"""
from __future__ import annotations

from kraftsman.storage import scram
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .feature_levels import metadata_version
from .java_hash_order import JavaHashMap

SCRAM_LEVEL = 11  # metadata.version 3.5-IV2 (MetadataVersion.isScramSupported)
MECHANISMS_BY_TYPE = {m.type: m for m in scram.MECHANISMS.values()}
TWICE = "A user credential cannot be altered twice in the same request"
NO_SCRAM = "The current metadata.version does not support SCRAM"
EMPTY_NAME = "Username must not be empty"
UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"
NO_SUCH_CREDENTIAL = "Attempt to delete a user credential that does not exist"
DESCRIBE_TWICE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
DESCRIBE_MISSING = "Attempt to describe a user credential that does not exist: "

_ALTER = codec.message_class("AlterUserScramCredentialsResponse")
_DESCRIBE = codec.message_class("DescribeUserScramCredentialsResponse")
_CREDENTIAL = codec.message_class("UserScramCredentialRecord")
_REMOVE = codec.message_class("RemoveUserScramCredentialRecord")


def _check_name_and_mechanism(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return Errors.UNACCEPTABLE_CREDENTIAL, EMPTY_NAME
    if mechanism not in MECHANISMS_BY_TYPE:
        return Errors.UNSUPPORTED_SASL_MECHANISM, UNKNOWN_MECHANISM
    return None


def _check_deletion(image, deletion) -> tuple[int, str] | None:
    error = _check_name_and_mechanism(deletion.name, deletion.mechanism)
    if error is None and (deletion.mechanism, deletion.name) not in image.scram.entries:
        return Errors.RESOURCE_NOT_FOUND, NO_SUCH_CREDENTIAL
    return error


def _check_upsertion(upsertion) -> tuple[int, str] | None:
    error = _check_name_and_mechanism(upsertion.name, upsertion.mechanism)
    if error is not None:
        return error
    mechanism = MECHANISMS_BY_TYPE[upsertion.mechanism]
    if upsertion.iterations < mechanism.min_iterations:
        return Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if upsertion.iterations > mechanism.max_iterations:
        return Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def _admit(item, check, accepted: JavaHashMap, earlier: tuple, errors: JavaHashMap, supported: bool) -> None:
    """Sort one deletion or upsertion into `accepted` or `errors`, as alterCredentials' loops do."""
    name = item.name
    if name in errors:
        return
    if any(m.pop(name) is not None for m in earlier):
        errors.put(name, (Errors.DUPLICATE_RESOURCE, TWICE))
    elif not supported:
        errors.put(name, (Errors.UNSUPPORTED_VERSION, NO_SCRAM))
    else:
        error = check(item)
        if error is None:
            accepted.put(name, item)
        else:
            errors.put(name, error)


def _credential_record(upsertion) -> ApiMessageAndVersion:
    mechanism = MECHANISMS_BY_TYPE[upsertion.mechanism]
    stored_key, server_key = scram.stored_and_server_keys(mechanism, upsertion.salted_password)
    return ApiMessageAndVersion(_CREDENTIAL(name=upsertion.name, mechanism=upsertion.mechanism, salt=upsertion.salt,
                                           stored_key=stored_key, server_key=server_key,
                                           iterations=upsertion.iterations), 0)


def alter_user_scram_credentials(ctx: ControllerContext, request) -> ControllerResult:
    """Answer AlterUserScramCredentials: one result per user, records for the accepted changes."""
    supported = metadata_version(ctx.image) >= SCRAM_LEVEL
    deletions, upsertions, errors = JavaHashMap(), JavaHashMap(), JavaHashMap()
    for deletion in request.deletions:
        _admit(deletion, lambda d: _check_deletion(ctx.image, d), deletions, (deletions,), errors, supported)
    for upsertion in request.upsertions:
        _admit(upsertion, _check_upsertion, upsertions, (deletions, upsertions), errors, supported)
    records, results = [], []
    for name, deletion in deletions.items():
        results.append(_ALTER.AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
        records.append(ApiMessageAndVersion(_REMOVE(name=name, mechanism=deletion.mechanism), 0))
    for name, upsertion in upsertions.items():
        if not upsertion.salted_password:
            errors.put(name, (Errors.UNKNOWN_SERVER_ERROR, None))
            continue
        records.append(_credential_record(upsertion))
        results.append(_ALTER.AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
    for name, (code, message) in errors.items():
        results.append(_ALTER.AlterUserScramCredentialsResult(user=name, error_code=code, error_message=message))
    return ControllerResult(records, _ALTER(results=results))


def _describe_user(credentials: dict, user: str, twice: bool):
    result = _DESCRIBE.DescribeUserScramCredentialsResult(user=user)
    if twice:
        result.error_code, result.error_message = Errors.DUPLICATE_RESOURCE, DESCRIBE_TWICE + user
        return result
    infos = [_DESCRIBE.CredentialInfo(mechanism=mech, iterations=credentials[(mech, user)][0].iterations)
             for mech in sorted(MECHANISMS_BY_TYPE) if (mech, user) in credentials]
    if infos:
        result.credential_infos = infos
    else:
        result.error_code, result.error_message = Errors.RESOURCE_NOT_FOUND, DESCRIBE_MISSING + user
    return result


def describe_user_scram_credentials(ctx: ControllerContext, request) -> ControllerResult:
    """Answer DescribeUserScramCredentials from the image (read-only)."""
    credentials = ctx.image.scram.entries
    unique = JavaHashMap()
    if not request.users:
        for _, user in sorted(credentials):
            unique.put(user, False)
    else:
        for user in request.users:
            unique.put(user.name, user.name in unique)
    results = [_describe_user(credentials, user, twice) for user, twice in unique.items()]
    return ControllerResult([], _DESCRIBE(results=results))


HANDLERS: dict = {"AlterUserScramCredentials": alter_user_scram_credentials,
                  "DescribeUserScramCredentials": describe_user_scram_credentials}
READ_ONLY: frozenset = frozenset({"DescribeUserScramCredentials"})
