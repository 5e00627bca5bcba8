"""kafka-dump-log `--output jsonl` (kraftsman, beyond Kafka): one JSON object per line, schema version 1.

Objects (all carry "kind", "schema": 1 and "file", the path as given); the JSON Schema is shipped as
kraftsman/cli/schemas/dump-log-jsonl.schema.json:
    file      file_type (log | snapshot | bootstrap), base_offset / end_offset + epoch
    batch     position and every header field (base_offset ... crc, is_valid)
    record    batch_position, offset, timestamp, key_size, value_size, sequence, headers, key (base64),
              control (bool), control_type, type, api_key, version, data (Kafka's JSON), value (base64
              when `data` is not given: unknown or undecodable records, or no metadata decoder), error
    error     position, message: something unreadable; the dump resumes at the next valid batch
    skipped   message: a file kind jsonl does not cover (index, producer snapshot, txn index)
    file_end  valid_bytes, trailing_bytes, corrupt
Records whose type or version is newer than the schemas get type "UNKNOWN", data null and the raw value.
"""
from __future__ import annotations

import itertools
import json

from kraftsman.storage.protocol.javafmt import java_path
from kraftsman.storage.records.metadata_json import MetadataParser, RecordError, compression_name

from ..common.record_fields import b64, control_fields, metadata_fields

SCHEMA_VERSION = 1


def _obj(kind: str, file: str, **fields) -> str:
    return json.dumps({"kind": kind, "schema": SCHEMA_VERSION, "file": file, **fields}, separators=(",", ":"))


def unsupported_object(arg: str) -> str:
    """Return the `skipped` object for a file kind jsonl does not cover (index and producer files)."""
    return _obj("skipped", arg, message="--output jsonl dumps .log and .checkpoint files only")


def file_object(session, arg: str, name: str) -> str:
    """Return the `file` object opening a .log or .checkpoint dump."""
    if name.endswith(".log"):
        return _obj("file", arg, file_type="log", base_offset=int(name.split(".")[0]))
    if name == "bootstrap.checkpoint":
        return _obj("file", arg, file_type="bootstrap")
    from kraftsman.storage.log.snapshot import parse_snapshot_name

    sid = parse_snapshot_name(name)
    return _obj("file", arg, file_type="snapshot", end_offset=None if sid is None else sid.end_offset,
                epoch=None if sid is None else sid.epoch)


def batch_object(arg: str, batch) -> str:
    """Return the `batch` object of one batch."""
    return _obj("batch", arg, position=batch.position, base_offset=batch.base_offset,
                last_offset=batch.last_offset, count=batch.records_count, base_sequence=batch.base_sequence,
                last_sequence=batch.last_sequence, producer_id=batch.producer_id,
                producer_epoch=batch.producer_epoch, partition_leader_epoch=batch.partition_leader_epoch,
                is_transactional=batch.is_transactional, is_control=batch.is_control,
                delete_horizon_ms=batch.delete_horizon_ms, timestamp_type=batch.timestamp_type,
                base_timestamp=batch.base_timestamp, max_timestamp=batch.max_timestamp,
                size=batch.size_in_bytes, magic=batch.magic, compression=compression_name(batch), crc=batch.crc,
                attributes=batch.attributes, is_valid=batch.is_valid())


def record_object(arg: str, batch, record, parser) -> tuple[str, bool]:
    """Return the `record` object of one record (metadata decoded when `parser` is given) and whether
    it reports an error."""
    ts = batch.max_timestamp if batch.timestamp_type == "LogAppendTime" else record.timestamp
    fields = {"control_type": None, "type": None, "api_key": None, "version": None, "data": None,
              "value": None, "error": None}
    if batch.is_control:
        fields.update(control_fields(record))
    elif parser is not None and record.value is not None:
        fields.update(metadata_fields(parser, record))
    else:
        fields["value"] = b64(record.value)
    data = fields.pop("data")
    failed = fields["error"] is not None
    head = _obj("record", arg, batch_position=batch.position, offset=record.offset, timestamp=ts,
                key_size=-1 if record.key is None else len(record.key),
                value_size=-1 if record.value is None else len(record.value), sequence=record.sequence,
                headers=[{"key": k, "value": b64(v)} for k, v in record.headers], key=b64(record.key),
                control=batch.is_control, **fields)
    return head[:-1] + ',"data":' + ("null" if data is None else data) + "}", failed


def dump_log_jsonl(session, arg: str) -> None:
    """Dump a .log or .checkpoint file as JSON lines, resuming after corrupt regions."""
    from pathlib import Path

    from kraftsman.storage.log.index import DumpBatchReader, find_next_batch
    from kraftsman.storage.records.metadata_json import MetadataParser

    name = Path(java_path(arg)).name
    path = session.resolve(arg)
    if not path.is_file():
        from ..common.status import ToolError
        raise ToolError(f"{path.absolute()} (No such file or directory)")
    session.emit(file_object(session, arg, name))
    parser = MetadataParser() if session.opts.decoder == "cluster-metadata" else None
    start, valid, corrupt = 0, 0, False
    while start is not None:
        reader = DumpBatchReader(path, max_bytes=session.opts.max_bytes, start=start)
        for batch in reader:
            if _emit_batch(session, arg, batch, parser):
                session.fail(arg, batch.position)
                corrupt = True
            valid += batch.size_in_bytes
        start = None
        if reader.trailing_bytes > 0 and (session.opts.max_bytes == 2 ** 31 - 1 or reader.error):
            at = reader.error_position if reader.error else reader.valid_bytes
            session.emit(_obj("error", arg, position=at, message=reader.error or
                              f"{reader.trailing_bytes} bytes at position {at} are not a whole record batch"))
            corrupt = True
            session.fail(arg, at, None if reader.error else f"{reader.trailing_bytes} invalid bytes")
            start = find_next_batch(path, at + 1, reader.end)
    end = min(path.stat().st_size, session.opts.max_bytes)
    session.emit(_obj("file_end", arg, valid_bytes=valid, trailing_bytes=end - valid, corrupt=corrupt))
    session.corrupt |= corrupt


def _emit_batch(session, arg: str, batch, parser) -> bool:
    """Emit one batch and its records; return True if anything in it was corrupt."""
    try:
        session.emit(batch_object(arg, batch))
    except RecordError as e:
        session.emit(_obj("error", arg, position=batch.position, message=str(e)))
        return True
    corrupt = not batch.is_valid()
    try:
        done = _emit_runs(session, arg, batch, parser) if _raft_written(batch, parser) else 0
        rest = itertools.islice(batch.records(), done, None) if done < batch.records_count else ()
        for record in rest:
            line, failed = record_object(arg, batch, record, parser)
            corrupt |= failed
            session.emit(line)
    except (ValueError, IndexError) as e:
        session.emit(_obj("error", arg, position=batch.position, message=f"records cannot be read: {e}"))
        corrupt = True
    return corrupt


def _raft_written(batch, parser) -> bool:
    """Tell whether the batch may hold records as the raft writes them (metadata decoded, not control, no
    producer sequence, CreateTime): their lines are then written a run of one layout at a time."""
    return (isinstance(parser, MetadataParser) and not batch.is_control and batch.base_sequence == -1
            and batch.timestamp_type == "CreateTime")


def _emit_runs(session, arg: str, batch, parser) -> int:
    """Emit the `record` lines of the batch's leading raft-shaped records, a run of one value layout at a time
    (the same text record_object gives); return how many records were emitted."""
    from kraftsman.storage.protocol.render_runs import json_run_writer
    from kraftsman.storage.records.runs import FRAME_HEAD, metadata_runs

    data, done = batch.buffer, 0
    before = (f'{{"kind":"record","schema":{SCHEMA_VERSION},"file":{json.dumps(arg)},'
              f'"batch_position":{batch.position},"offset":')
    for run in metadata_runs(batch, parser.layouts):
        if run.layout is None:
            break
        value = data[run.pos + run.head - FRAME_HEAD:run.pos + run.size - 1]
        try:
            kind = parser.entry(run.api_key, run.version, value)
            if kind.type_name == "REGISTER_BROKER_RECORD":  # carries start_time_ms: record_object writes it
                break
            middle = (f',"timestamp":{batch.base_timestamp},"key_size":-1,"value_size":{len(value)},"sequence":-1,'
                      f'"headers":[],"key":null,"control":false,"control_type":null,"type":"{kind.type_name}",'
                      f'"api_key":{run.api_key},"version":{run.version},"value":null,"error":null,"data":')
            lines = json_run_writer(run.layout, run.head)(data, run.pos, run.stop, batch.base_offset + run.index,
                                                          before, middle, "}")
        except Exception:  # noqa: BLE001 (record_object reports what a run cannot render)
            break
        session.emit_lines(lines)
        done += run.count
    return done
