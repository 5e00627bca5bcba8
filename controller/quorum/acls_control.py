"""ACL handlers: CreateAcls, DeleteAcls and DescribeAcls (v0-v3), as Kafka 3.9's AclApis and AclControlManager.

Rules:
- Codes outside an enum's range read as UNKNOWN (Kafka's `fromCode`). Below v1 the pattern type is LITERAL:
  the field is not on the wire.
- CreateAcls builds every binding first; an ANY resource type or operation or permission, a MATCH or ANY
  pattern type, or a null name/principal/host fails the whole request with UNKNOWN_SERVER_ERROR and no
  message, as Kafka's ResourcePattern/AccessControlEntry constructors throwing inside ControllerApis.
- Then, per creation, INVALID_REQUEST in Kafka's order: CLUSTER named other than `kafka-cluster`, empty
  name (AclApis), then UNKNOWN resource type, pattern type not LITERAL/PREFIXED, UNKNOWN operation,
  permission not ALLOW/DENY, principal without ':' (AclControlManager.validateNewAcl), with Kafka's messages.
- An ACL equal to one in the image (or earlier in the request) succeeds without a record; others get an
  AccessControlEntryRecord (version 0) with a fresh random id.
- DeleteAcls answers per filter: INVALID_REQUEST "Unknown patternFilter." / "Unknown entryFilter." for
  UNKNOWN codes, else every matching ACL; each matched ACL is removed once however many filters match it.
- DescribeAcls answers the filter from the image, grouped by resource pattern, ACLs in StandardAcl order
  (resource type, name descending, pattern type, operation, principal, host, permission).
- Beyond Kafka, an UNKNOWN (0) code, which Kafka rejects while parsing by closing the connection, is answered
  INVALID_REQUEST: as out-of-range codes in CreateAcls/DeleteAcls; DescribeAcls as a top-level error (its
  out-of-range codes match nothing, as in Kafka).
"""
from __future__ import annotations

from typing import NamedTuple

from kraftsman.controller.image.acls import OPERATIONS, PATTERN_TYPES, PERMISSION_TYPES, RESOURCE_TYPES
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .context import ControllerContext, ControllerResult
from .java_hash_order import java_order
from .topics import new_topic_id

UNKNOWN, ANY, MATCH, LITERAL, PREFIXED = 0, 1, 2, 3, 4      # PatternType; UNKNOWN and ANY are 0 and 1 in all four
CLUSTER, DENY, ALLOW = RESOURCE_TYPES.index("CLUSTER"), PERMISSION_TYPES.index("DENY"), PERMISSION_TYPES.index("ALLOW")
CLUSTER_NAME, WILDCARD = "kafka-cluster", "*"
_ENTRY = codec.message_class("AccessControlEntryRecord")
_REMOVE = codec.message_class("RemoveAccessControlEntryRecord")
_CREATE = codec.message_class("CreateAclsResponse")
_DELETE = codec.message_class("DeleteAclsResponse")
_DESCRIBE = codec.message_class("DescribeAclsResponse")


class Acl(NamedTuple):
    """One ACL as Kafka's StandardAcl (codes; equal tuples are the same ACL)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


class AclFilter(NamedTuple):
    """Kafka's AclBindingFilter: None name/principal/host match anything, ANY codes match any code."""

    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission_type: int


class _BadBinding(Exception):
    """A creation Kafka cannot even turn into an AclBinding: the whole request fails."""


def _code(table: list, code) -> int:
    """Return `code`, or UNKNOWN (0) when it is outside `table`, as Kafka's enum fromCode."""
    return code if isinstance(code, int) and 0 <= code < len(table) else UNKNOWN


def acl_of(record) -> Acl:
    """Return the Acl of an AccessControlEntryRecord (StandardAcl.fromRecord)."""
    return Acl(_code(RESOURCE_TYPES, record.resource_type), record.resource_name,
               _code(PATTERN_TYPES, record.pattern_type), record.principal, record.host,
               _code(OPERATIONS, record.operation), _code(PERMISSION_TYPES, record.permission_type))


def image_acls(image) -> list[tuple[bytes, Acl]]:
    """Return (id, Acl) for every ACL of the image, in replay order."""
    return [(key, acl_of(message)) for key, (message, _version) in image.acls.entries.items()]


def sorted_acls(acls) -> list[Acl]:
    """Return `acls` in StandardAcl.compareTo order (resource name descending)."""
    out = sorted(acls, key=lambda a: (a.pattern_type, a.operation, java_order(a.principal), java_order(a.host),
                                      a.permission_type))
    out.sort(key=lambda a: java_order(a.resource_name), reverse=True)
    out.sort(key=lambda a: a.resource_type)
    return out


def pattern_matches(f: AclFilter, acl: Acl) -> bool:
    """Tell whether the filter's resource part matches (ResourcePatternFilter.matches)."""
    if f.resource_type not in (ANY, acl.resource_type):
        return False
    if f.pattern_type not in (ANY, MATCH, acl.pattern_type):
        return False
    if f.resource_name is None:
        return True
    if f.pattern_type in (ANY, acl.pattern_type):
        return f.resource_name == acl.resource_name
    if acl.pattern_type == LITERAL:
        return acl.resource_name in (f.resource_name, WILDCARD)
    return acl.pattern_type == PREFIXED and f.resource_name.startswith(acl.resource_name)


def entry_matches(f: AclFilter, acl: Acl) -> bool:
    """Tell whether the filter's entry part matches (AccessControlEntryFilter.matches)."""
    return ((f.principal is None or f.principal == acl.principal) and (f.host is None or f.host == acl.host)
            and f.operation in (ANY, acl.operation) and f.permission_type in (ANY, acl.permission_type))


def matches(f: AclFilter, acl: Acl) -> bool:
    """Tell whether `f` matches `acl` (AclBindingFilter.matches)."""
    return pattern_matches(f, acl) and entry_matches(f, acl)


def _pattern_type(ctx: ControllerContext, code) -> int:
    return _code(PATTERN_TYPES, code) if ctx.api_version >= 1 else LITERAL


# ------------------------------------------------------------------ CreateAcls
def _binding(ctx: ControllerContext, c) -> Acl:
    """Return the creation's Acl, or raise _BadBinding where Kafka's AclBinding constructors throw."""
    acl = Acl(_code(RESOURCE_TYPES, c.resource_type), c.resource_name, _pattern_type(ctx, c.resource_pattern_type),
              c.principal, c.host, _code(OPERATIONS, c.operation), _code(PERMISSION_TYPES, c.permission_type))
    if None in (acl.resource_name, acl.principal, acl.host) or ANY in (acl.resource_type, acl.operation,
                                                                      acl.permission_type):
        raise _BadBinding()
    if acl.pattern_type in (ANY, MATCH):
        raise _BadBinding()
    return acl


def creation_error(acl: Acl) -> str | None:
    """Return the INVALID_REQUEST message for a new ACL (AclApis, then validateNewAcl), or None."""
    if acl.resource_type == CLUSTER and acl.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.resource_name:
        return "Invalid empty resource name"
    if acl.resource_type == UNKNOWN:
        return "Invalid resourceType UNKNOWN"
    if acl.pattern_type not in (LITERAL, PREFIXED):
        return f"Invalid patternType {PATTERN_TYPES[acl.pattern_type]}"
    if acl.operation == UNKNOWN:
        return "Invalid operation UNKNOWN"
    if acl.permission_type not in (DENY, ALLOW):
        return f"Invalid permissionType {PERMISSION_TYPES[acl.permission_type]}"
    if ":" not in acl.principal:
        return (f"Could not parse principal from `{acl.principal}` (no colon is present separating the "
                "principal type from the principal name)")
    return None


def _entry_record(acl_id: Uuid, acl: Acl) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(_ENTRY(id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
                                       pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
                                       operation=acl.operation, permission_type=acl.permission_type), 0)


def create_acls(ctx: ControllerContext, request) -> ControllerResult:
    """Answer CreateAcls: one result per creation; a record per ACL not already present."""
    creations = list(request.creations or [])
    try:
        bindings = [_binding(ctx, c) for c in creations]
    except _BadBinding:
        failed = [_CREATE.AclCreationResult(error_code=E.UNKNOWN_SERVER_ERROR, error_message=None) for _ in creations]
        return ControllerResult([], _CREATE(results=failed))
    existing = {acl for _, acl in image_acls(ctx.image)}
    taken = set(ctx.image.acls.entries)
    records, results = [], []
    for acl in bindings:
        message = creation_error(acl)
        if message is not None:
            results.append(_CREATE.AclCreationResult(error_code=E.INVALID_REQUEST, error_message=message))
            continue
        if acl not in existing:
            existing.add(acl)
            acl_id = new_topic_id(ctx, taken)  # Kafka's Uuid.randomUuid, as for topic ids
            taken.add(acl_id)
            records.append(_entry_record(acl_id, acl))
        results.append(_CREATE.AclCreationResult(error_code=E.NONE, error_message=None))
    return ControllerResult(records, _CREATE(results=results))


# ------------------------------------------------------------------ DeleteAcls / DescribeAcls
def filter_of(ctx: ControllerContext, f, name, principal, host) -> AclFilter:
    """Return the AclFilter of a DeleteAcls filter or a DescribeAcls request (codes read with fromCode)."""
    return AclFilter(_code(RESOURCE_TYPES, f.resource_type_filter), name, _pattern_type(ctx, f.pattern_type_filter),
                     principal, host, _code(OPERATIONS, f.operation), _code(PERMISSION_TYPES, f.permission_type))


def filter_error(f: AclFilter) -> str | None:
    """Return the INVALID_REQUEST message for a filter with UNKNOWN parts (validateFilter), or None."""
    if UNKNOWN in (f.resource_type, f.pattern_type):
        return "Unknown patternFilter."
    if UNKNOWN in (f.operation, f.permission_type):
        return "Unknown entryFilter."
    return None


def _matching_acl(acl: Acl):
    return _DELETE.DeleteAclsMatchingAcl(
        error_code=E.NONE, error_message=None, resource_type=acl.resource_type, resource_name=acl.resource_name,
        pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
        permission_type=acl.permission_type)


def delete_acls(ctx: ControllerContext, request) -> ControllerResult:
    """Answer DeleteAcls: per filter its matching ACLs; one RemoveAccessControlEntryRecord per matched ACL."""
    acls = image_acls(ctx.image)
    removed: dict[bytes, None] = {}
    results = []
    for raw in request.filters or []:
        f = filter_of(ctx, raw, raw.resource_name_filter, raw.principal_filter, raw.host_filter)
        error = filter_error(f)
        if error is not None:
            results.append(_DELETE.DeleteAclsFilterResult(error_code=E.INVALID_REQUEST, error_message=error))
            continue
        hits = [(acl_id, acl) for acl_id, acl in acls if matches(f, acl)]
        removed.update(dict.fromkeys(acl_id for acl_id, _ in hits))
        results.append(_DELETE.DeleteAclsFilterResult(error_code=E.NONE, error_message=None,
                                                      matching_acls=[_matching_acl(acl) for _, acl in hits]))
    records = [ApiMessageAndVersion(_REMOVE(id=Uuid(acl_id)), 0) for acl_id in removed]
    return ControllerResult(records, _DELETE(filter_results=results))


def _resources(acls: list[Acl]) -> list:
    """Group ACLs by resource pattern (DescribeAclsResponse.aclsResources), keeping their order."""
    groups: dict[tuple, dict] = {}
    for acl in acls:
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        entry = (acl.principal, acl.host, acl.operation, acl.permission_type)
        groups.setdefault(key, {})[entry] = None
    return [_DESCRIBE.DescribeAclsResource(
        resource_type=rt, resource_name=name, pattern_type=pt,
        acls=[_DESCRIBE.AclDescription(principal=p, host=h, operation=op, permission_type=perm)
              for p, h, op, perm in entries]) for (rt, name, pt), entries in groups.items()]


def describe_acls(ctx: ControllerContext, request) -> ControllerResult:
    """Answer DescribeAcls from the image: the ACLs matching the request's filter, grouped by resource."""
    raw = (request.resource_type_filter, request.operation, request.permission_type,
           request.pattern_type_filter if ctx.api_version >= 1 else LITERAL)
    if UNKNOWN in raw:
        return ControllerResult([], _DESCRIBE(error_code=E.INVALID_REQUEST,
                                              error_message="DescribeAclsRequest contains UNKNOWN elements"))
    f = filter_of(ctx, request, request.resource_name_filter, request.principal_filter, request.host_filter)
    hits = [acl for acl in sorted_acls(acl for _, acl in image_acls(ctx.image)) if matches(f, acl)]
    return ControllerResult([], _DESCRIBE(error_code=E.NONE, error_message=None, resources=_resources(hits)))


HANDLERS = {"CreateAcls": create_acls, "DeleteAcls": delete_acls, "DescribeAcls": describe_acls}
READ_ONLY = frozenset({"DescribeAcls"})
