"""Kafka's ACL calls: describeAcls, createAcls and deleteAcls, with their types (ResourcePattern,
AccessControlEntry, AclBinding and their filters) (a part of Admin).

Rules:
- Codes are Kafka's enums (ResourceType, PatternType, AclOperation, AclPermissionType), named as in
  controller.image.acls; the texts are the Java toString()s the tools print: ResourcePattern(resourceType=TOPIC,
  name=plain, patternType=LITERAL) and (principal=User:alice, host=*, operation=READ, permissionType=ALLOW).
- DescribeAcls goes to any node (core.any_node), CreateAcls and DeleteAcls to the controller (core.on_controller:
  with bootstrap servers a broker, which forwards them, as Kafka's least loaded node would; with bootstrap
  controllers the active one: Kafka 3.9 controllers serve all three, a kraftsman addition to kafka-acls).
- describe_acls: a top-level error is a ServerError. create_acls returns one outcome per binding sent, in order
  (None: created; an answer missing is Kafka's "The broker reported no creation result for the given ACL: ...").
  delete_acls returns per filter either its ServerError or the bindings it matched, each with its own outcome.
"""
from __future__ import annotations

from typing import NamedTuple

from kraftsman.controller.image.acls import OPERATIONS, PATTERN_TYPES, PERMISSION_TYPES, RESOURCE_TYPES
from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from .core import ServerError, error_message, raise_for

ANY_TYPE, TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 1, 2, 3, 4, 5, 6, 7   # ResourceType
ANY_PATTERN, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4                                             # PatternType
ANY_OPERATION, ALL = 1, 2                                                                      # AclOperation
ANY_PERMISSION, DENY, ALLOW = 1, 2, 3                                                          # AclPermissionType
CLUSTER_NAME = "kafka-cluster"


def _name(table: list[str], code: int) -> str:
    return table[code] if 0 <= code < len(table) else "UNKNOWN"


class ResourcePattern(NamedTuple):
    """A resource pattern (type, name, pattern type); as a filter, name None matches any name."""

    resource_type: int
    name: str | None
    pattern_type: int

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return (f"ResourcePattern(resourceType={_name(RESOURCE_TYPES, self.resource_type)}, name={name}, "
                f"patternType={_name(PATTERN_TYPES, self.pattern_type)})")


class AccessControlEntry(NamedTuple):
    """An access control entry; as a filter, principal or host None matches any."""

    principal: str | None
    host: str | None
    operation: int
    permission_type: int

    def __str__(self) -> str:
        principal = "<any>" if self.principal is None else self.principal
        host = "<any>" if self.host is None else self.host
        return (f"(principal={principal}, host={host}, operation={_name(OPERATIONS, self.operation)}, "
                f"permissionType={_name(PERMISSION_TYPES, self.permission_type)})")


class AclBinding(NamedTuple):
    """A resource pattern and an entry: one ACL (or, with filter parts, an AclBindingFilter)."""

    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


ANY_ENTRY = AccessControlEntry(None, None, ANY_OPERATION, ANY_PERMISSION)


class DeleteOutcome(NamedTuple):
    """What one DeleteAcls filter did: its error, or the bindings it matched with each one's error (None)."""

    error: Exception | None
    matched: list[tuple[AclBinding, Exception | None]]


def _server_error(code: int, message: str | None) -> ServerError:
    return ServerError(code, error_message(code, message))


class AclCalls:
    """describeAcls, createAcls, deleteAcls (a part of Admin)."""

    def describe_acls(self, pattern: ResourcePattern, entry: AccessControlEntry = ANY_ENTRY) -> list[AclBinding]:
        """Return the ACLs matching the filter, in the server's order (DescribeAcls)."""
        def attempt(conn: sc.SyncConnection) -> list[AclBinding]:
            from kraftsman.storage.protocol import codec

            body = codec.message_class("DescribeAclsRequest")(
                resource_type_filter=pattern.resource_type, resource_name_filter=pattern.name,
                pattern_type_filter=pattern.pattern_type, principal_filter=entry.principal,
                host_filter=entry.host, operation=entry.operation, permission_type=entry.permission_type)
            response = conn.request("DescribeAcls", conn.pick_version("DescribeAcls"), body, self.deadline)
            raise_for(response.error_code, response.error_message)
            return [AclBinding(ResourcePattern(r.resource_type, r.resource_name, r.pattern_type),
                               AccessControlEntry(a.principal, a.host, a.operation, a.permission_type))
                    for r in response.resources for a in r.acls]

        return self.any_node(attempt, "DescribeAcls")

    def create_acls(self, bindings: list[AclBinding]) -> list[Exception | None]:
        """Create the ACLs; return each binding's outcome in order (CreateAcls)."""
        def attempt(conn: sc.SyncConnection) -> list[Exception | None]:
            from kraftsman.storage.protocol import codec

            cls = codec.message_class("CreateAclsRequest")
            body = cls(creations=[cls.AclCreation(
                resource_type=b.pattern.resource_type, resource_name=b.pattern.name,
                resource_pattern_type=b.pattern.pattern_type, principal=b.entry.principal, host=b.entry.host,
                operation=b.entry.operation, permission_type=b.entry.permission_type) for b in bindings])
            response = conn.request("CreateAcls", conn.pick_version("CreateAcls"), body, self.deadline)
            for r in response.results:
                if r.error_code == Errors.NOT_CONTROLLER:
                    raise_for(r.error_code, r.error_message)
            outcomes = [_server_error(r.error_code, r.error_message) if r.error_code else None
                        for r in response.results[:len(bindings)]]
            return outcomes + [_server_error(Errors.UNKNOWN_SERVER_ERROR, "The broker reported no creation result "
                                             f"for the given ACL: {b}") for b in bindings[len(outcomes):]]

        return self.on_controller(attempt, "CreateAcls")

    def delete_acls(self, filters: list[AclBinding]) -> list[DeleteOutcome]:
        """Delete the ACLs matching each filter; return what each filter did, in order (DeleteAcls)."""
        def attempt(conn: sc.SyncConnection) -> list[DeleteOutcome]:
            from kraftsman.storage.protocol import codec

            cls = codec.message_class("DeleteAclsRequest")
            body = cls(filters=[cls.DeleteAclsFilter(
                resource_type_filter=f.pattern.resource_type, resource_name_filter=f.pattern.name,
                pattern_type_filter=f.pattern.pattern_type, principal_filter=f.entry.principal,
                host_filter=f.entry.host, operation=f.entry.operation, permission_type=f.entry.permission_type)
                for f in filters])
            response = conn.request("DeleteAcls", conn.pick_version("DeleteAcls"), body, self.deadline)
            for r in response.filter_results:
                if r.error_code == Errors.NOT_CONTROLLER:
                    raise_for(r.error_code, r.error_message)
            outcomes = [_delete_outcome(r) for r in response.filter_results[:len(filters)]]
            missing = DeleteOutcome(_server_error(Errors.UNKNOWN_SERVER_ERROR, "The broker reported no deletion "
                                                  "result for the given filter."), [])
            return outcomes + [missing] * (len(filters) - len(outcomes))

        return self.on_controller(attempt, "DeleteAcls")


def _delete_outcome(result) -> DeleteOutcome:
    if result.error_code:
        return DeleteOutcome(_server_error(result.error_code, result.error_message), [])
    matched = [(AclBinding(ResourcePattern(m.resource_type, m.resource_name, m.pattern_type),
                           AccessControlEntry(m.principal, m.host, m.operation, m.permission_type)),
                _server_error(m.error_code, m.error_message) if m.error_code else None)
               for m in result.matching_acls]
    return DeleteOutcome(None, matched)
