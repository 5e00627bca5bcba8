"""Cluster-metadata records as JSON, the way Kafka's DumpLogSegments --cluster-metadata-decoder prints them:
`{"type":..,"version":..,"data":{..}}` payloads, control record values, codec names and the errors of a batch
that cannot be read. kafka-dump-log prints them; the metadata pipeline stores them.

Rules:
- Pure: bytes in, text out; no file access, no printing.
- Each (record type, version) is compiled once per MetadataParser: the codec's decoder, the JSON writer and,
  where the spec allows, a fused writer from bytes straight to the whole payload (the fast path).
- A value that cannot be read becomes Kafka's payload text `Error at <offset>, skipping. <message>` (counted in
  `errors`); a type or version newer than the schemas renders generically (UNKNOWN_METADATA_RECORD, raw bytes).
- A record or batch that cannot be read at all raises RecordError (its callers report it and go on).
"""
from __future__ import annotations

import base64
from typing import NamedTuple

from ..errors import StorageError
from ..protocol import codec
from ..protocol.layout import Layouts
from ..protocol.render import fused_json_writer, json_writer
from . import control
from .batch import COMPRESSION_MASK
from .compression import NAMES as COMPRESSION_NAMES
from .metadata import (
    METADATA_RECORD_TYPES,
    MetadataParseError,
    UnknownRecordError,
    read_frame,
    read_metadata_record,
    type_enum_name,
)


class RecordError(StorageError, ValueError):
    """A record or control record of a batch cannot be read; `position` is the batch position."""


def compression_name(batch) -> str:
    """Return Kafka's codec name, or raise RecordError for ids Kafka rejects."""
    name = COMPRESSION_NAMES.get(batch.attributes & COMPRESSION_MASK)
    if name is None:
        raise RecordError(f"Unknown compression type id: {batch.attributes & COMPRESSION_MASK}")
    return name


def control_json(kind: int, value) -> str:
    """Return the JSON of a control record value with a schema (SnapshotHeader, KRaftVoters, ...)."""
    return json_writer(control.SCHEMAS[kind], 0)(control.decode_control(kind, value if value is not None else b""))


def unknown_metadata_json(error: UnknownRecordError, value: bytes) -> str:
    """Render a record whose type or version is newer than the schemas, generically."""
    raw = base64.b64encode(value).decode("ascii")
    return (f'{{"type":"UNKNOWN_METADATA_RECORD","apiKey":{error.api_key},"version":{error.version},'
            f'"raw":"{raw}"}}')


class RecordKind(NamedTuple):
    """What MetadataParser knows of one record type at one version, compiled once."""

    type_name: str          # MetadataRecordType's enum name, as the payload's "type" shows it
    api_key: int
    version: int
    prefix: str             # '{"type":"<type_name>","version":<version>,"data":'
    decode: object          # codec's unguarded decoder fn(buf, pos, end) -> (message, pos)
    render: object          # render.json_writer: fn(message) -> data JSON
    fused: object           # render.fused_json_writer: fn(buf, pos, end) -> (the whole payload, pos), or None


class MetadataParser:
    """Kafka's cluster-metadata parser: payload = `{"type":..,"version":..,"data":{..}}` or `Error at ...`."""

    def __init__(self):
        self.cache: dict = {}
        self.fused: dict = {}  # api key << 8 | version (both under 128) -> fused writer of the whole payload
        self.layouts = Layouts()  # the value layouts of runs of records (storage.protocol.layout, records.runs)
        self.errors = 0

    def entry(self, api_key: int, version: int, value: bytes) -> RecordKind:
        """Return the RecordKind of a type and version (raise what reading `value` raises for unknown ones)."""
        found = self.cache.get((api_key, version))
        if found is None:
            read_metadata_record(value)  # raises UnknownRecordError / MetadataParseError with Kafka's text
            name = METADATA_RECORD_TYPES[api_key]
            type_name = type_enum_name(name)
            prefix = f'{{"type":"{type_name}","version":{version},"data":'
            found = self.cache[(api_key, version)] = RecordKind(
                type_name, api_key, version, prefix, codec.raw_decoder(name, version), json_writer(name, version),
                fused_json_writer(name, version, prefix, "}"))
            if found.fused is not None and api_key < 128 and version < 128:
                self.fused[api_key << 8 | version] = found.fused
        return found

    def decode(self, value) -> tuple[RecordKind, object]:
        """Return (kind, message) of one metadata record value; raise on unknown types and unreadable bytes."""
        if value is not None and len(value) >= 3 and value[0] == 1 and value[1] < 128 and value[2] < 128:
            api_key, version, pos = value[1], value[2], 3
        else:
            api_key, version, pos = read_frame(value)
        kind = self.entry(api_key, version, value)
        message, stop = kind.decode(value, pos, len(value))
        if stop != len(value):
            raise MetadataParseError(f"Found {len(value) - stop} byte(s) of garbage after {api_key}")
        return kind, message

    def data(self, offset: int, value) -> tuple[RecordKind | None, str]:
        """Return (kind, data JSON) of one record value, or (None, the whole payload text) when its type is
        unknown (generic JSON) or it cannot be read (Kafka's `Error at ...`, counted in `errors`)."""
        try:
            kind, message = self.decode(value)
            return kind, kind.render(message)
        except UnknownRecordError as e:
            return None, unknown_metadata_json(e, value)
        except Exception as e:  # Kafka prints any failure as the payload and goes on
            self.errors += 1
            return None, f"Error at {offset}, skipping. {_kafka_message(e, value)}"

    def json(self, offset: int, value) -> str:
        """Return the payload text of one metadata record value."""
        kind, text = self.data(offset, value)
        return text if kind is None else kind.prefix + text + "}"

    def json_at(self, offset: int, buf: bytes, start: int, end: int) -> str:
        """Return the payload text of the record value buf[start:end] (no copy on the fast path)."""
        if end - start >= 3 and buf[start] == 1:
            fused = self.fused.get(buf[start + 1] << 8 | buf[start + 2])
            if fused is not None:
                try:
                    text, stop = fused(buf, start + 3, end)
                except Exception:  # the exact slice below reports it as Kafka does
                    stop = -1
                if stop == end:
                    return text
        return self.json(offset, buf[start:end])

    def __call__(self, offset: int, key, value):
        return None, self.json(offset, value)


def _kafka_message(e: Exception, value) -> str:
    text = str(e)
    if text.startswith("Failed to deserialize record with type"):
        return text.split(":")[0]
    if isinstance(e, MetadataParseError):
        return text
    if value and len(value) >= 2:
        return f"Failed to deserialize record with type {value[1]}"
    return text
