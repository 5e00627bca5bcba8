"""kafka-dump-log's text: batch lines, record lines, control records and payload parsers (DumpLogSegments).

Batch line (magic 2):
    baseOffset: B lastOffset: L count: N baseSequence: S lastSequence: S producerId: P producerEpoch: E
    partitionLeaderEpoch: PLE isTransactional: b isControl: b deleteHorizonMs: OptionalLong.empty
    position: POS CreateTime: MAXTS size: SZ magic: 2 compresscodec: none crc: C isvalid: b
Record line (deep iteration): `| offset: O CreateTime: TS keySize: K valueSize: V sequence: S headerKeys: [..]`
then the control part (control batches) or ` key: k` / ` payload: p` (data batches, when printing data).
With --skip-record-metadata only `| key: k payload: p` (or ` payload: p`) is printed, so a control
record gives an empty line.

Rules:
- Pure string building: no I/O. Lines are appended to a list the caller writes in large chunks.
- Raft-shaped metadata records take a fused fast path; every other shape takes Kafka's general path.
- A record that cannot be parsed raises RecordError (the caller reports it and moves to the next batch).
"""
from __future__ import annotations

import base64
import itertools

from kraftsman.storage.protocol import codec
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import COMPRESSION_MASK, TIMESTAMP_TYPE_MASK
from kraftsman.storage.records.compression import NAMES as COMPRESSION_NAMES
from kraftsman.storage.records.metadata import (
    METADATA_RECORD_TYPES, MetadataParseError, UnknownRecordError, read_frame, read_metadata_record,
    type_enum_name)

from .fused import fused_renderer
from .json import fast_renderer

RECORD_INDENT = "|"
_CONTROL_LABELS = {control.SNAPSHOT_HEADER: "SnapshotHeader", control.SNAPSHOT_FOOTER: "SnapshotFooter",
                   control.KRAFT_VERSION: "KRaftVersion", control.KRAFT_VOTERS: "KRaftVoters"}


class RecordError(ValueError):
    """A record or control record of a batch cannot be read; `position` is the batch position."""


def compression_name(batch) -> str:
    """Return Kafka's codec name, or raise RecordError for ids Kafka rejects."""
    name = COMPRESSION_NAMES.get(batch.attributes & COMPRESSION_MASK)
    if name is None:
        raise RecordError(f"Unknown compression type id: {batch.attributes & COMPRESSION_MASK}")
    return name


def batch_line(batch, position: int) -> str:
    """Return the batch line printed for every batch (printBatchLevel)."""
    if batch.magic < 2:
        return (f"offset: {batch.last_offset} position: {position} {batch.timestamp_type}: {batch.max_timestamp} "
                f"size: {batch.size_in_bytes} magic: {batch.magic} compresscodec: {compression_name(batch)} "
                f"crc: {batch.crc} isvalid: {'true' if batch.is_valid() else 'false'}")
    horizon = batch.delete_horizon_ms
    horizon_text = "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]"
    return (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.records_count} "
            f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
            f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
            f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {'true' if batch.is_transactional else 'false'} "
            f"isControl: {'true' if batch.is_control else 'false'} deleteHorizonMs: {horizon_text} "
            f"position: {position} {batch.timestamp_type}: {batch.max_timestamp} size: {batch.size_in_bytes} "
            f"magic: {batch.magic} compresscodec: {compression_name(batch)} crc: {batch.crc} "
            f"isvalid: {'true' if batch.is_valid() else 'false'}")


def control_part(record) -> str:
    """Return the control-record part of a record line (` SnapshotHeader {...}`, ` controlType: ...`)."""
    try:
        kind = control.parse_control_type(record.key)
        type_id = int.from_bytes(record.key[2:4], "big", signed=True)
        if kind in (control.ABORT, control.COMMIT):
            _, epoch = control.decode_txn_marker(record.value)
            return f" endTxnMarker: {control.NAMES[kind]} coordinatorEpoch: {epoch}"
        label = _CONTROL_LABELS.get(kind)
        if label is None:
            return f" controlType: {control.NAMES.get(kind, 'UNKNOWN')}({type_id})"
        name = control.SCHEMAS[kind]
        message = control.decode_control(kind, record.value if record.value is not None else b"")
        return f" {label} {codec.json_renderer(name, 0)(message)}"
    except (ValueError, IndexError, TypeError) as e:
        raise RecordError(f"cannot read control record at offset {record.offset}: {e}") from None


# ---------------------------------------------------------------- payload parsers (key, payload)


def string_parser(offset: int, key, value):
    """Kafka's default StringDecoder for keys and values."""
    return (None if key is None else key.decode("utf-8", "replace"),
            None if value is None else value.decode("utf-8", "replace"))


def unknown_metadata_json(error: UnknownRecordError, value: bytes) -> str:
    """Render a record whose type or version is newer than the schemas, generically."""
    raw = base64.b64encode(value).decode("ascii")
    return (f'{{"type":"UNKNOWN_METADATA_RECORD","apiKey":{error.api_key},"version":{error.version},'
            f'"raw":"{raw}"}}')


class MetadataParser:
    """Kafka's cluster-metadata parser: payload = `{"type":..,"version":..,"data":{..}}` or `Error at ...`."""

    def __init__(self):
        self.cache: dict = {}
        self.errors = 0

    def entry(self, api_key: int, version: int, value: bytes):
        """Return (json prefix, raw decoder, renderer, fused renderer or None) for a type and version."""
        found = self.cache.get((api_key, version))
        if found is None:
            read_metadata_record(value)  # raises UnknownRecordError / MetadataParseError with Kafka's text
            name = METADATA_RECORD_TYPES[api_key]
            found = self.cache[(api_key, version)] = (
                f'{{"type":"{type_enum_name(name)}","version":{version},"data":',
                codec.raw_decoder(name, version), fast_renderer(name, version), fused_renderer(name, version))
        return found

    def json(self, offset: int, value) -> str:
        """Return the payload text of one metadata record value."""
        try:
            if value is not None and len(value) >= 3 and value[0] == 1 and value[1] < 128 and value[2] < 128:
                api_key, version, pos = value[1], value[2], 3
            else:
                api_key, version, pos = read_frame(value)
            prefix, decode, render, _ = self.entry(api_key, version, value)
            message, stop = decode(value, pos, len(value))
            if stop != len(value):
                raise MetadataParseError(f"Found {len(value) - stop} byte(s) of garbage after {api_key}")
            return prefix + render(message) + "}"
        except UnknownRecordError as e:
            return unknown_metadata_json(e, value)
        except Exception as e:  # Kafka prints any failure as the payload and goes on
            self.errors += 1
            return f"Error at {offset}, skipping. {_kafka_message(e, value)}"

    def json_at(self, offset: int, buf: bytes, start: int, end: int) -> str:
        """Return the payload text of the record value buf[start:end] (no copy on the fast path)."""
        if end - start >= 3 and buf[start] == 1:
            found = self.cache.get((buf[start + 1], buf[start + 2]))
            if found is not None and found[3] is not None:
                try:
                    text, stop = found[3](buf, start + 3, end)
                except Exception:  # the exact slice below reports it as Kafka does
                    stop = -1
                if stop == end:
                    return found[0] + text + "}"
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


# ---------------------------------------------------------------- records of one batch


class RecordFormatter:
    """Append the record lines of a batch to a list, as DumpLogSegments prints them."""

    def __init__(self, parser=None, skip_metadata: bool = False):
        self.parser = parser
        self.skip_metadata = skip_metadata
        self.last_offset = -1
        self.gaps: list[tuple[int, int]] = []

    def _track(self, offset: int) -> None:
        if self.last_offset != -1 and offset != self.last_offset + 1:
            self.gaps.append((self.last_offset, offset))
        self.last_offset = offset

    def batch(self, batch, out: list) -> None:
        """Append one line per record of `batch` to `out`; raise RecordError on unreadable records."""
        try:
            if batch.magic < 2:
                out.extend(self.legacy_line(batch, record) for record in batch.records())
                return
            records = batch.records()
            if (isinstance(self.parser, MetadataParser) and not batch.is_control
                    and batch.base_sequence == -1 and not batch.attributes & TIMESTAMP_TYPE_MASK):
                self._metadata_batch(batch, records, out)
                return
            for record in records:
                out.append(self.line(batch, record))
        except RecordError:
            raise
        except (ValueError, IndexError) as e:
            raise RecordError(str(e)) from None

    def line(self, batch, record) -> str:
        """Return the line of one record (the general path: any batch, any parser)."""
        self._track(record.offset)
        prefix = RECORD_INDENT + " "
        parts = []
        if not self.skip_metadata:
            ts = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else record.timestamp
            key_size = -1 if record.key is None else len(record.key)
            value_size = -1 if record.value is None else len(record.value)
            keys = ",".join(h[0] for h in record.headers)
            parts.append(f"{prefix}offset: {record.offset} {batch.timestamp_type}: {ts} keySize: {key_size} "
                         f"valueSize: {value_size} sequence: {record.sequence} headerKeys: [{keys}]")
            prefix = " "
            if batch.is_control:
                parts.append(control_part(record))
        if self.parser is not None and not batch.is_control:
            key, payload = self.parser(record.offset, record.key, record.value)
            if key is not None:
                parts.append(f"{prefix}key: {key}")
            if payload is not None:
                parts.append(f" payload: {payload}")
        return "".join(parts)

    def legacy_line(self, batch, record) -> str:
        """Return the line of one v0/v1 record: no sequence or header keys; Kafka's ` isValid: .. crc: ..}`."""
        self._track(record.offset)
        prefix = RECORD_INDENT + " "
        parts = []
        if not self.skip_metadata:
            parts.append(f"{prefix}offset: {record.offset} {batch.timestamp_type}: {record.timestamp} "
                         f"keySize: {record.key_size} valueSize: {record.value_size} "
                         f"isValid: {'true' if record.valid else 'false'} crc: {record.crc}}}")
            prefix = " "
        if self.parser is not None:
            key, payload = self.parser(record.offset, record.key, record.value)
            if key is not None:
                parts.append(f"{prefix}key: {key}")
            if payload is not None:
                parts.append(f" payload: {payload}")
        return "".join(parts)

    def _metadata_batch(self, batch, records, out: list) -> None:
        """Metadata records of a non-transactional CreateTime batch: raft-shaped ones take the fast path."""
        done = self._raft_shaped(batch, out) if not batch.compression else 0
        if done < batch.records_count:
            for record in itertools.islice(records, done, None):
                out.append(self.line(batch, record))

    def _raft_shaped(self, batch, out: list) -> int:
        """Print records shaped as the raft writes them straight from the batch buffer; return how many.

        Shape: attributes 0, timestamp delta 0, offset delta and lengths in 1-2 byte varints, null key,
        no headers. The first record of any other shape ends the fast path.
        """
        data, pos, end = batch.buffer, 61, len(batch.buffer)
        base, json_at, append, gaps, last = batch.base_offset, self.parser.json_at, out.append, self.gaps, self.last_offset
        head = " payload: " if self.skip_metadata else None
        mid = f" CreateTime: {batch.base_timestamp} keySize: -1 valueSize: "
        i = 0
        for i in range(batch.records_count):  # noqa: B007 (i is the count done when the shape breaks)
            b = data[pos]
            if b < 128:
                length, body = b >> 1, pos + 1
            elif data[pos + 1] < 128:
                length, body = ((b & 0x7F) | (data[pos + 1] << 7)) >> 1, pos + 2
            else:
                break
            od = data[body + 2]
            if od < 128:
                delta, k = od >> 1, body + 3
            elif data[body + 3] < 128:
                delta, k = ((od & 0x7F) | (data[body + 3] << 7)) >> 1, body + 4
            else:
                break
            vb = data[k + 1]
            if vb < 128:
                vlen, vstart = vb >> 1, k + 2
            elif data[k + 2] < 128:
                vlen, vstart = ((vb & 0x7F) | (data[k + 2] << 7)) >> 1, k + 3
            else:
                break
            vend = vstart + vlen
            stop = body + length
            if b & 1 or od & 1 or vb & 1 or data[body] or data[body + 1] or data[k] != 1 or vend + 1 != stop \
                    or stop > end or data[vend]:
                break
            offset = base + delta
            if last != -1 and offset != last + 1:
                gaps.append((last, offset))
            last = offset
            if head is None:
                append(f"| offset: {offset}{mid}{vlen} sequence: -1 headerKeys: [] payload: "
                       + json_at(offset, data, vstart, vend))
            else:
                append(head + json_at(offset, data, vstart, vend))
            pos = stop
        else:
            i = batch.records_count
        self.last_offset = last
        return i
