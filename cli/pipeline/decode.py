"""Decode one metadata log segment or snapshot into table rows: the pipeline's pure per-file function.

The records are kafka-dump-log's: batches come from storage's DumpBatchReader (resuming after a
corrupt region at the next valid batch, as `--output jsonl` does); each record value is decoded once by
storage's MetadataParser (storage.records.metadata_json, Kafka's cluster-metadata decoder) into its kind (type
name, api key, version) and message, rendered with storage's JSON writer, so a record row holds what
`kafka-dump-log --cluster-metadata-decoder --output jsonl` prints for it (the fields common.record_fields builds
for both), plus typed copies of the common fields taken from the same message.

Rules:
- Pure: a file (or a byte range of it) in, rows out; no Spark, no printing. Rows are tuples in the
  column order of `tables`, yielded as (table name, row) so a whole segment never sits in memory.
- Nothing raises for bad bytes: an unreadable file, a corrupt region or a record that cannot be read
  becomes an `errors` row, and decoding goes on with what can still be read.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, NamedTuple

from kraftsman.storage.log.index import DumpBatchReader, find_next_batch
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES
from kraftsman.storage.records.metadata_json import MetadataParser, RecordError, compression_name

from ..common.record_fields import b64, control_fields, metadata_fields
from .tables import RECORDS, UNKNOWN_CLUSTER, names
from .typed import NO_TYPED, extractor, typed_from_json

SUFFIXES = (".log", ".checkpoint")


class Origin(NamedTuple):
    """Where rows come from: the source as given, its kind and the log directory's identity."""

    source: str
    file_type: str
    cluster_id: str | None = None
    node_id: int | None = None


def file_type_of(name: str) -> str | None:
    """Return 'log', 'bootstrap' or 'snapshot' for a metadata file name, or None for other files."""
    if name.endswith(".log"):
        return "log"
    if name == "bootstrap.checkpoint":
        return "bootstrap"
    return "snapshot" if name.endswith(".checkpoint") else None


def identity(path) -> tuple[str, int | None]:
    """Return (cluster id, node id) from the meta.properties beside the file or one level up
    (tables.UNKNOWN_CLUSTER and None without one)."""
    from kraftsman.storage.log import meta_properties

    folder = Path(path).parent
    for candidate in (folder / "meta.properties", folder.parent / "meta.properties"):
        try:
            meta = meta_properties.read(candidate)
        except (OSError, ValueError):
            continue
        return meta.cluster_id or UNKNOWN_CLUSTER, meta.node_id
    return UNKNOWN_CLUSTER, None


ALL = frozenset({"batches", "records", "errors"})
STRUCTURE = frozenset({"batches", "errors"})
RECORDS_ONLY = frozenset({"records"})


def decode_file(path, source: str | None = None, *, start: int = 0, end: int | None = None,
                cluster_id: str | None = None, node_id: int | None = None,
                tables: frozenset = ALL) -> Iterator[tuple[str, tuple]]:
    """Yield ("batches" | "records" | "errors", row) for the batches lying in [start, end) of a file.

    `tables` selects what to yield: STRUCTURE (batches and errors; records are parsed but their
    metadata is not decoded) or RECORDS_ONLY (records; errors then live in their `error` column)
    let two passes share the work without decoding anything twice.
    """
    source = str(path) if source is None else source
    kind = file_type_of(Path(path).name)
    origin = Origin(source, kind, cluster_id, node_id)
    if kind is None:
        if "errors" in tables:
            yield "errors", (*origin, None, None, "not a metadata log segment (.log) or snapshot (.checkpoint)")
        return
    try:
        rows = _walk(Path(path), origin, start, end, "records" in tables)
        yield from rows if tables == ALL else ((t, row) for t, row in rows if t in tables)
    except OSError as e:
        if "errors" in tables:  # the records pass (RECORDS_ONLY) leaves a whole-file error to the other pass
            yield "errors", (*origin, None, None, f"cannot read the file: {e.strerror or e}")


def _walk(path: Path, origin: Origin, start: int, end: int | None, records: bool) -> Iterator[tuple[str, tuple]]:
    """Yield the rows of every readable batch, and an error row per corrupt region."""
    parser = MetadataParser() if records else None
    limit = 2 ** 63 - 1 if end is None else end
    while start is not None:
        reader = DumpBatchReader(path, max_bytes=limit, start=start)
        for batch in reader:
            yield from _batch_rows(origin, batch, parser)
        start = None
        if reader.trailing_bytes > 0 and (end is None or reader.error):
            at = reader.error_position if reader.error else reader.valid_bytes
            yield "errors", (*origin, at, None, reader.error or
                             f"{reader.trailing_bytes} bytes at position {at} are not a whole record batch")
            start = find_next_batch(path, at + 1, reader.end)


def batch_row(origin: Origin, batch) -> tuple:
    """Return the `batches` row of one batch (raises RecordError for an unknown compression id)."""
    return (*origin, batch.position, batch.base_offset, batch.last_offset, batch.records_count,
            batch.base_sequence, batch.last_sequence, batch.producer_id, batch.producer_epoch,
            batch.partition_leader_epoch, batch.is_transactional, batch.is_control, batch.delete_horizon_ms,
            batch.timestamp_type, batch.base_timestamp, batch.max_timestamp, batch.size_in_bytes, batch.magic,
            compression_name(batch), batch.crc, batch.attributes, batch.is_valid())


def _batch_rows(origin: Origin, batch, parser) -> Iterator[tuple[str, tuple]]:
    try:
        yield "batches", batch_row(origin, batch)
    except RecordError as e:
        yield "errors", (*origin, batch.position, batch.base_offset, str(e))
        return
    if not batch.is_valid():
        yield "errors", (*origin, batch.position, batch.base_offset,
                         f"Record is corrupt (stored crc = {batch.crc}, computed crc = {batch.compute_crc()})")
    try:
        if parser is None:
            for _ in batch.records():  # parsed for their structure only
                pass
            return
        for record in batch.records():
            row = record_row(origin, batch, record, parser)
            yield "records", row
            if row[_ERROR] is not None:
                yield "errors", (*origin, batch.position, record.offset, row[_ERROR])
    except (ValueError, IndexError) as e:
        yield "errors", (*origin, batch.position, batch.base_offset, f"records cannot be read: {e}")


_EMPTY = {"control_type": None, "type": None, "api_key": None, "version": None, "data": None, "value": None,
          "error": None}
_ERROR = names(RECORDS).index("error")


def record_row(origin: Origin, batch, record, parser) -> tuple:
    """Return the `records` row of one record: dump-log jsonl's fields, then the typed columns."""
    ts = batch.max_timestamp if batch.timestamp_type == "LogAppendTime" else record.timestamp
    key, value = record.key, record.value
    head = (*origin, batch.position, batch.max_timestamp, record.offset, ts, -1 if key is None else len(key),
            -1 if value is None else len(value), record.sequence,
            [(k, b64(v)) for k, v in record.headers] if record.headers else [], b64(key), batch.is_control)
    if not batch.is_control and value is not None:
        fast = _fast_metadata(parser, value)
        if fast is not None:
            return head + fast
    return head + _slow_fields(batch, record, parser)


def _fast_metadata(parser, value) -> tuple | None:
    """Return the record's columns from control_type on, or None when the exact slow path must tell."""
    try:
        kind, message = parser.decode(value)
    except Exception:  # noqa: BLE001 (unknown types and unreadable bytes: the slow path says so)
        return None
    typed = _TYPED.get((kind.api_key, kind.version))
    if typed is None:
        typed = _TYPED[(kind.api_key, kind.version)] = extractor(METADATA_RECORD_TYPES[kind.api_key], kind.version)
    return (None, kind.type_name, kind.api_key, kind.version, kind.render(message), None, None) + typed(message)


_TYPED: dict = {}  # (api key, version) -> typed extractor


def _slow_fields(batch, record, parser) -> tuple:
    """Return the columns from control_type on through dump-log jsonl's own decoding (control records,
    unknown types, failures)."""
    fields = dict(_EMPTY)
    if batch.is_control:
        fields.update(control_fields(record))
    elif record.value is not None:
        fields.update(metadata_fields(parser, record))
    data, api_key = fields["data"], fields["api_key"]
    typed = NO_TYPED
    if data is not None and not batch.is_control and api_key in METADATA_RECORD_TYPES:
        typed = typed_from_json(METADATA_RECORD_TYPES[api_key], data)
    return (fields["control_type"], fields["type"], api_key, fields["version"], data, fields["value"],
            fields["error"]) + typed
