"""StorageError is the one base of storage's user-facing errors, and storage/errors.py imports nothing above it."""
from __future__ import annotations

import ast
from pathlib import Path

from kraftsman.storage.errors import StorageError, known_errors
from kraftsman.storage.log.checkpoints import CheckpointError
from kraftsman.storage.log.meta_properties import MetaPropertiesError
from kraftsman.storage.log.quorum_state import QuorumStateError
from kraftsman.storage.properties import PropertiesError
from kraftsman.storage.protocol.codec import CodecError
from kraftsman.storage.protocol.schema import SchemaError
from kraftsman.storage.protocol.uuids import UuidError
from kraftsman.storage.records.batch import CorruptRecordError
from kraftsman.storage.records.compression import CompressionError
from kraftsman.storage.records.control import ControlRecordError
from kraftsman.storage.records.metadata import MetadataParseError

ERRORS = (CheckpointError, MetaPropertiesError, QuorumStateError, PropertiesError, CodecError, SchemaError,
          UuidError, CorruptRecordError, CompressionError, ControlRecordError, MetadataParseError)


def test_every_user_facing_storage_error_is_a_storage_error():
    assert [e.__name__ for e in ERRORS if not issubclass(e, StorageError)] == []
    assert all(issubclass(e, ValueError) for e in ERRORS if e is not SchemaError)  # callers still catch ValueError


def test_known_errors_are_storage_errors_and_os_errors():
    assert known_errors() == (StorageError, OSError)


def test_the_errors_module_imports_nothing_of_the_project():
    tree = ast.parse((Path(__file__).resolve().parents[2] / "storage" / "errors.py").read_text())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [ast.unparse(n) for n in imports] == ["from __future__ import annotations"]
