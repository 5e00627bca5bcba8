"""The typed errors the storage layer raises for bad input; the cli turns each into one line."""
from __future__ import annotations

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


class StorageError(Exception):
    """A storage operation failed for a reason the user can act on (one-line message)."""


KNOWN_ERRORS: tuple[type, ...] = (StorageError, CorruptRecordError, CodecError, SchemaError, UuidError,
                                  CompressionError, ControlRecordError, MetadataParseError, PropertiesError,
                                  MetaPropertiesError, QuorumStateError, CheckpointError, OSError)
