"""ACLs by id (AccessControlEntryRecord / RemoveAccessControlEntryRecord), printed as StandardAcl.

Rules:
- Enum names follow Kafka's ResourceType, PatternType, AclOperation and AclPermissionType.
- Removing an unknown ACL id raises ImageReplayError, as Kafka's AclsDelta does.
"""
from __future__ import annotations

from kraftsman.storage.protocol.uuids import uuid_str

from .errors import ImageReplayError
from .keyed import KeyedDelta, KeyedImage

RESOURCE_TYPES = ["UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"]
PATTERN_TYPES = ["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"]
OPERATIONS = ["UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
              "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
              "TWO_PHASE_COMMIT"]
PERMISSION_TYPES = ["UNKNOWN", "ANY", "DENY", "ALLOW"]


def _name(table: list, code: int) -> str:
    return table[code] if 0 <= code < len(table) else "UNKNOWN"


def standard_acl(record) -> str:
    """Render an AccessControlEntryRecord as StandardAcl.toString()."""
    return (f"StandardAcl(resourceType={_name(RESOURCE_TYPES, record.resource_type)}, "
            f"resourceName={record.resource_name}, patternType={_name(PATTERN_TYPES, record.pattern_type)}, "
            f"principal={record.principal}, host={record.host}, operation={_name(OPERATIONS, record.operation)}, "
            f"permissionType={_name(PERMISSION_TYPES, record.permission_type)})")


class AclsImage(KeyedImage):
    """ACL id (16 bytes) -> (AccessControlEntryRecord, version)."""

    __slots__ = ()


class AclsDelta(KeyedDelta):
    """Collect ACL changes."""

    def replay_acl(self, message, version: int) -> None:
        """Apply AccessControlEntryRecord."""
        self.put(bytes(message.id), message, version)

    def replay_remove(self, message) -> None:
        """Apply RemoveAccessControlEntryRecord."""
        if not self.remove(bytes(message.id)):
            raise ImageReplayError(f"Failed to remove ACL with id {uuid_str(message.id)}: not found")
