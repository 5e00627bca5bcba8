"""kafka-dump-log's text: batch lines, record lines, control records and payload parsers (DumpLogSegments); the
metadata payloads themselves are storage.records.metadata_json's (the pipeline stores the same).

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

import itertools

from kraftsman.storage.protocol.render_runs import json_run_writer
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import TIMESTAMP_TYPE_MASK
from kraftsman.storage.records.metadata_json import MetadataParser, RecordError, compression_name, control_json
from kraftsman.storage.records.runs import FRAME_HEAD, metadata_runs

RECORD_INDENT = "|"
_CONTROL_LABELS = {control.SNAPSHOT_HEADER: "SnapshotHeader", control.SNAPSHOT_FOOTER: "SnapshotFooter",
                   control.KRAFT_VERSION: "KRaftVersion", control.KRAFT_VOTERS: "KRaftVoters"}


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
        return f" {label} {control_json(kind, record.value)}"
    except (ValueError, IndexError, TypeError) as e:
        raise RecordError(f"cannot read control record at offset {record.offset}: {e}") from None


# ---------------------------------------------------------------- payload parsers (key, payload)


def string_parser(offset: int, key, value):
    """Kafka's default StringDecoder for keys and values."""
    return (None if key is None else key.decode("utf-8", "replace"),
            None if value is None else value.decode("utf-8", "replace"))


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
            self._parsed(record, prefix, parts)
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
            self._parsed(record, prefix, parts)
        return "".join(parts)

    def _parsed(self, record, prefix: str, parts: list) -> None:
        """Append the parser's `key: ..` and ` payload: ..` parts of a record line (`prefix` leads the key)."""
        key, payload = self.parser(record.offset, record.key, record.value)
        if key is not None:
            parts.append(f"{prefix}key: {key}")
        if payload is not None:
            parts.append(f" payload: {payload}")

    def _metadata_batch(self, batch, records, out: list) -> None:
        """Metadata records of a non-transactional CreateTime batch: raft-shaped ones take the fast path."""
        done = self._raft_shaped(batch, out)
        if done < batch.records_count:
            for record in itertools.islice(records, done, None):
                out.append(self.line(batch, record))

    def _raft_shaped(self, batch, out: list) -> int:
        """Print the leading records shaped as the raft writes them straight from the batch buffer, a run of one
        value layout at a time (storage's metadata_runs and render_runs: null key, no headers, timestamp delta 0,
        offsets base + index); return how many."""
        runs = metadata_runs(batch, self.parser.layouts)
        if not runs:
            return 0
        for run in runs:
            lines = self._run_lines(batch, run) if run.layout is not None else None
            out += lines if lines is not None else self._record_lines(batch, run)
        self._track(batch.base_offset)  # the runs' offsets follow each other: only the first may leave a gap
        last = runs[-1]
        self.last_offset = batch.base_offset + last.index + last.count - 1
        return last.index + last.count

    def _run_lines(self, batch, run) -> list | None:
        """Return the lines of a run of one layout in one go, or None when it must go record by record."""
        data, size = batch.buffer, run.size
        value_at = run.pos + run.head - FRAME_HEAD
        try:
            kind = self.parser.entry(run.api_key, run.version, data[value_at:run.pos + size - 1])
            if self.skip_metadata:
                return json_run_writer(run.layout, run.head, False)(
                    data, run.pos, run.stop, 0, "", " payload: " + kind.prefix, "}")
            middle = (f" CreateTime: {batch.base_timestamp} keySize: -1 valueSize: {run.pos + size - 1 - value_at} "
                      f"sequence: -1 headerKeys: [] payload: {kind.prefix}")
            return json_run_writer(run.layout, run.head)(data, run.pos, run.stop, batch.base_offset + run.index,
                                                         "| offset: ", middle, "}")
        except Exception:  # a value the run writer cannot render: the record path reports it as Kafka does
            return None

    def _record_lines(self, batch, run) -> list:
        """Return the lines of a run's records one by one (the parser's fused writer or its general path)."""
        data, size, json_at = batch.buffer, run.size, self.parser.json_at
        spans = [(batch.base_offset + run.index + k, run.pos + k * size + run.head - FRAME_HEAD,
                  run.pos + (k + 1) * size - 1) for k in range(run.count)]
        if self.skip_metadata:
            return [" payload: " + json_at(offset, data, start, end) for offset, start, end in spans]
        mid = f" CreateTime: {batch.base_timestamp} keySize: -1 valueSize: "
        return [f"| offset: {offset}{mid}{end - start} sequence: -1 headerKeys: [] payload: "
                + json_at(offset, data, start, end) for offset, start, end in spans]
