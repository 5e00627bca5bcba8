"""Client quota handler: AlterClientQuotas (v0-v1), as Kafka 3.9's ClientQuotaControlManager answers it.

Rules:
- An entry's entity is a map of entity type -> name, as AlterClientQuotasRequest.entries() builds it (a type
  named twice keeps its last name); a null name is the default entity. An op with Remove set is a removal.
- A key set twice in one entry, or an entity already answered earlier in the request, answers INVALID_REQUEST
  "Ignoring duplicate entity <entity>" (one result per entity; records an earlier entry produced stay, as in Kafka).
- Entity checks, in order (INVALID_REQUEST): no entity part; a type other than user, client-id, ip; an empty
  name; ip together with user or client-id; an ip name that is not an IP address literal.
- Keys: user and client-id entities take producer_byte_rate, consumer_byte_rate (LONG), request_percentage and
  controller_mutation_rate (DOUBLE); ip entities take connection_creation_rate (INT). A set value must be > 0,
  and for INT/LONG keys within range and whole (Kafka's 1e-6 tolerance). The first bad key fails its entity.
- A removal of a key the entity does not have, and a set to the current value, write nothing. Records carry the
  entity parts, keys and results in Kafka's HashMap iteration order.
- validate_only answers as if applied but returns no records. More than 10000 records (Kafka's
  MAX_RECORDS_PER_USER_OP) fail the whole request with UNKNOWN_SERVER_ERROR.
"""
from __future__ import annotations

import ipaddress
import math

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .java_hash_order import JavaHashMap, entity_hash

UNKNOWN_SERVER_MESSAGE = "The server experienced an unexpected error when processing the request."
USER, CLIENT_ID, IP = "user", "client-id", "ip"
DOUBLE, INT, LONG = "DOUBLE", "INT", "LONG"
USER_AND_CLIENT_KEYS = {"producer_byte_rate": LONG, "consumer_byte_rate": LONG,
                        "request_percentage": DOUBLE, "controller_mutation_rate": DOUBLE}
IP_KEYS = {"connection_creation_rate": INT}
_LIMITS = {INT: (2**31 - 1, "an INT"), LONG: (float(2**63 - 1), "a LONG")}
MAX_RECORDS_PER_USER_OP = 10_000
EMPTY_ENTITY = "Invalid empty client quota entity"

_RESPONSE = codec.message_class("AlterClientQuotasResponse")
_RECORD = codec.message_class("ClientQuotaRecord")


class _QuotaError(Exception):
    """An entity's INVALID_REQUEST answer (caught within this module)."""


def entity_text(parts) -> str:
    """Return ClientQuotaEntity.toString for ordered (type, name) parts."""
    inner = ", ".join(f"{kind}={'null' if name is None else name}" for kind, name in parts)
    return f"ClientQuotaEntity(entries={{{inner}}})"


def _java_map(pairs) -> list:
    """Return the (key, value) pairs of a HashMap sized len(pairs) filled in order (last value wins)."""
    out = JavaHashMap(len(pairs))
    for key, value in pairs:
        out.put(key, value)
    return out.items()


def _valid_ip(name: str | None) -> bool:
    if name is None:
        return True
    text = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validated(parts: list) -> tuple[list, dict]:
    """Check an entity's parts; return them in record order and the quota keys they allow."""
    if not parts:
        raise _QuotaError(EMPTY_ENTITY)
    for kind, name in parts:
        if kind not in (USER, CLIENT_ID, IP):
            raise _QuotaError(f"Unhandled client quota entity type: {kind}")
        if name == "":
            raise _QuotaError(f"Empty {kind} not supported")
    checked = JavaHashMap(3)
    for kind, name in parts:
        checked.put(kind, name)
    validated = checked.items()
    kinds = dict(validated)
    if IP in kinds:
        if USER in kinds or CLIENT_ID in kinds:
            raise _QuotaError("Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
        if not _valid_ip(kinds[IP]):
            raise _QuotaError(f"{kinds[IP]} is not a valid IP or resolvable host.")
        return validated, IP_KEYS
    return validated, USER_AND_CLIENT_KEYS


def _check_value(keys: dict, key: str, value: float) -> None:
    kind = keys.get(key)
    if kind is None:
        raise _QuotaError(f"Invalid configuration key {key}")
    if value <= 0.0:
        raise _QuotaError(f"Quota {key} must be greater than 0")
    if kind == DOUBLE:
        return
    limit, name = _LIMITS[kind]
    if value > limit:
        raise _QuotaError(f"Proposed value for {key} is too large for {name}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise _QuotaError(f"{key} cannot be a fractional value.")


def _same(current: float | None, value: float) -> bool:
    """Tell whether Objects.equals(current, value) holds for Java Doubles."""
    return current is not None and (current == value or (math.isnan(current) and math.isnan(value)))


def _entity_records(ctx: ControllerContext, parts: list, alterations: list) -> list:
    """Return the ClientQuotaRecords of one entity's alterations (raises _QuotaError on a bad one)."""
    validated, keys = _validated(parts)
    current = ctx.image.client_quotas.entities.get(tuple(sorted(parts)), {})
    records = []
    for key, value in alterations:
        entity = [_RECORD.EntityData(entity_type=kind, entity_name=name) for kind, name in validated]
        if value is None:
            if key in current:
                records.append(ApiMessageAndVersion(_RECORD(entity=entity, key=key, remove=True), 0))
            continue
        _check_value(keys, key, value)
        if not _same(current.get(key), value):
            records.append(ApiMessageAndVersion(_RECORD(entity=entity, key=key, value=value, remove=False), 0))
    return records


def _alter_entry(ctx: ControllerContext, entry, results: JavaHashMap, records: list) -> None:
    """Apply one request entry: put its entity's answer in `results`, its records in `records`."""
    parts = _java_map([(e.entity_type, e.entity_name) for e in entry.entity])
    key = frozenset(parts)
    alterations = JavaHashMap(len(entry.ops))
    for op in entry.ops:
        if op.key in alterations:
            _answer(results, key, parts, f"Duplicate quota key {op.key} not updating quota for this entity "
                                         f"{entity_text(parts)}")
        else:
            alterations.put(op.key, None if op.remove else op.value)
    if key in results:
        _answer(results, key, parts, f"Ignoring duplicate entity {entity_text(parts)}")
        return
    try:
        records.extend(_entity_records(ctx, parts, alterations.items()))
    except _QuotaError as e:
        _answer(results, key, parts, str(e))
        return
    _answer(results, key, parts, None)


def _answer(results: JavaHashMap, key, parts: list, message: str | None) -> None:
    first = results.get(key)
    code = 0 if message is None else Errors.INVALID_REQUEST
    results.put(key, (parts if first is None else first[0], code, message))


def _response(entries) -> object:
    return _RESPONSE(entries=[
        _RESPONSE.EntryData(error_code=code, error_message=message,
                            entity=[_RESPONSE.EntityData(entity_type=k, entity_name=n) for k, n in parts])
        for parts, code, message in entries])


def alter_client_quotas(ctx: ControllerContext, request) -> ControllerResult:
    """Answer AlterClientQuotas: one result per distinct entity; records unless validate_only."""
    results, records = JavaHashMap(hash_of=entity_hash), []
    for entry in request.entries:
        _alter_entry(ctx, entry, results, records)
    if len(records) > MAX_RECORDS_PER_USER_OP:
        return ControllerResult([], _response(([(e.entity_type, e.entity_name) for e in entry.entity],
                                               Errors.UNKNOWN_SERVER_ERROR, UNKNOWN_SERVER_MESSAGE)
                                              for entry in request.entries))
    response = _response(value for _, value in results.items())
    return ControllerResult([] if request.validate_only else records, response)


HANDLERS: dict = {"AlterClientQuotas": alter_client_quotas}
READ_ONLY: frozenset = frozenset()
