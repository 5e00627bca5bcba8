"""The fields of one record as kraftsman's JSON lines show them (schema 1): kafka-dump-log --output jsonl prints them,
the metadata pipeline stores them as the columns of its records table.

Rules:
- One home for the shape both tools share: control records (type, version, data as Kafka's JSON), metadata
  records (type, api_key, version, data; start_time_ms of a RegisterBrokerRecord, kraftsman's), raw values
  (base64) where nothing decodes them, and the error a record reports instead of raising.
- The decoding itself is storage.records.metadata_json's (Kafka's cluster-metadata decoder).
"""
from __future__ import annotations

import base64

from kraftsman.storage.records import control
from kraftsman.storage.records.metadata_json import control_json


def b64(raw) -> str | None:
    """Return bytes as base64 text (None stays None)."""
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def control_fields(record) -> dict:
    """Return the fields of a control record: its type, and its data as Kafka's JSON or its raw value."""
    try:
        kind = control.parse_control_type(record.key)
        type_id = int.from_bytes(record.key[2:4], "big", signed=True)
    except (ValueError, TypeError) as e:
        return {"type": "UNKNOWN", "error": str(e), "value": b64(record.value)}
    fields = {"control_type": type_id, "type": control.NAMES.get(kind, "UNKNOWN")}
    try:
        if kind in (control.ABORT, control.COMMIT):
            version, epoch = control.decode_txn_marker(record.value)
            fields.update(version=version, data=f'{{"version":{version},"coordinatorEpoch":{epoch}}}')
        elif kind in control.SCHEMAS:
            fields.update(version=0, data=control_json(kind, record.value))
        else:
            fields["value"] = b64(record.value)
    except (ValueError, IndexError) as e:
        fields.update(error=str(e), value=b64(record.value))
    return fields


def metadata_fields(parser, record) -> dict:
    """Return the fields of a metadata record decoded by `parser` (a storage.records.metadata_json.MetadataParser);
    an unknown type or unreadable value gives its raw bytes, and the error, instead of data."""
    from kraftsman.storage.records.metadata import UnknownRecordError, read_frame

    value = record.value
    try:
        api_key, version, _ = read_frame(value)
        parser.entry(api_key, version, value)
    except UnknownRecordError as e:
        return {"type": "UNKNOWN", "api_key": e.api_key, "version": e.version, "value": b64(value)}
    except Exception as e:  # noqa: BLE001 (reported in the record, never raised)
        return {"error": str(e), "value": b64(value)}
    kind, text = parser.data(record.offset, value)
    if kind is None:  # Kafka's `Error at ...` text (the type is known: the entry above was found)
        return {"api_key": api_key, "version": version, "error": text, "value": b64(value)}
    found = {"type": kind.type_name, "api_key": api_key, "version": version, "data": text}
    if found["type"] == "REGISTER_BROKER_RECORD":
        found["start_time_ms"] = _start_time(value)
    return found


def _start_time(value: bytes) -> int:
    """Return kraftsman's broker start time (tag 10000) of a RegisterBrokerRecord value, -1 when it has none."""
    from kraftsman.controller.image.start_time import UNKNOWN, start_time_ms
    from kraftsman.storage.records.metadata import read_metadata_record

    try:
        return start_time_ms(read_metadata_record(value).message)
    except Exception:  # noqa: BLE001 (the record's error, if any, is reported by its text)
        return UNKNOWN
