"""The typed errors the storage layer raises for bad input; the cli turns each into one line.

Rules:
- Importing this module is free: the error classes of other modules are gathered only when asked.
"""
from __future__ import annotations


class StorageError(Exception):
    """A storage operation failed for a reason the user can act on (one-line message)."""


def known_errors() -> tuple[type, ...]:
    """Return every error type whose message is fit to show a user as it is."""
    from .log.checkpoints import CheckpointError
    from .log.meta_properties import MetaPropertiesError
    from .log.quorum_state import QuorumStateError
    from .log.segment import CorruptRecordError
    from .properties import PropertiesError
    from .protocol.codec import CodecError
    from .protocol.schema import SchemaError
    from .protocol.uuids import UuidError
    from .records.compression import CompressionError
    from .records.control import ControlRecordError
    from .records.metadata import MetadataParseError

    return (StorageError, CorruptRecordError, CodecError, SchemaError, UuidError, CompressionError,
            ControlRecordError, MetadataParseError, PropertiesError, MetaPropertiesError, QuorumStateError,
            CheckpointError, OSError)
