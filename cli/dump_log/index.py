"""kafka-dump-log for segment side files: .index, .timeindex, producer .snapshot and .txnindex.

Rules (DumpLogSegments.dumpIndex / dumpTimeIndex / dumpProducerIdSnapshot / dumpTxnIndex):
- The segment's .log must exist next to an index (Kafka aborts otherwise); a time index also needs
  the .index. A zero entry after the first one ends the dump (preallocated, zero-filled files).
- --index-sanity-check runs the broker's start-up check; --verify-index-only checks without printing.
- Mismatches are collected and printed on stderr after all files (see DumpSession.print_deferred).
"""
from __future__ import annotations

from pathlib import Path

from kraftsman.storage.log import index as idx
from kraftsman.storage.protocol.javafmt import java_path

from ..common.status import ToolError


class TimeIndexErrors:
    """The three kinds of time-index problems, printed after all files in Kafka's words."""

    def __init__(self):
        self.mismatches: dict[str, list] = {}
        self.out_of_order: dict[str, list] = {}
        self.not_found: dict[str, list] = {}

    def print(self, err) -> None:
        """Write every collected problem to `err`."""
        for name, pairs in self.mismatches.items():
            err.write(f"Found timestamp mismatch in :{name}\n")
            err.writelines(f"  Index timestamp: {a}, log timestamp: {b}\n" for a, b in pairs)
        for name, pairs in self.out_of_order.items():
            err.write(f"Found out of order timestamp in :{name}\n")
            err.writelines(f"  Index timestamp: {a}, Previously indexed timestamp: {b}\n" for a, b in pairs)
        for pairs in self.not_found.values():
            err.write("The following indexed offsets are not found in the log.\n")
            err.writelines(f"Indexed offset: {a}, found log offset: {b}\n" for a, b in pairs)


def _side_file(path: Path, suffix: str) -> Path:
    return path.parent / (path.name.split(".")[0] + suffix)


def _open_index(session, arg: str, cls, needs_offset_index: bool):
    path = session.resolve(arg)
    log = _side_file(path, ".log")
    for required in [log] + ([_side_file(path, ".index")] if needs_offset_index else []) + [path]:
        if not required.is_file():
            raise ToolError(f"{required.absolute()} (No such file or directory)")
    return path, log, cls(path)


def _first_batch(log: Path, position: int, end: int):
    reader = idx.DumpBatchReader(log, start=position, max_bytes=end, legacy=True)
    return next(iter(reader), None)


def _sanity(session, file: str, index) -> None:
    try:
        index.sanity_check()
    except idx.CorruptIndexError as e:
        session.report(f"kafka-dump-log: {e}")
        session.fail(file, None, "index sanity check failed")
        return
    session.emit(f"{file} passed sanity check.")


def dump_index(session, arg: str) -> None:
    """Print (or verify, or sanity-check) an offset index against its log."""
    file = java_path(arg)
    path, log, index = _open_index(session, arg, idx.OffsetIndex, needs_offset_index=False)
    if index.entries == 0:
        session.emit(f"{file} is empty.")
        return
    if session.opts.index_sanity_check:
        _sanity(session, file, index)
        return
    size = log.stat().st_size
    for i in range(index.entries):
        entry = index.entry(i)
        if entry.offset == index.base_offset and i > 0:
            return
        batch = _first_batch(log, entry.position, entry.position + session.opts.max_message_size) \
            if 0 <= entry.position <= size else None
        if batch is None:
            session.report(f"kafka-dump-log: {file}: no batch at position {entry.position} for index offset "
                           f"{entry.offset}")
            session.fail(arg, None, f"no batch for index offset {entry.offset}")
        elif batch.last_offset != entry.offset:
            session.index_mismatches.setdefault(session.absolute(arg), []).append((entry.offset, batch.last_offset))
            session.fail(arg, None, f"index offset {entry.offset} is log offset {batch.last_offset}")
        if not session.opts.verify_index_only:
            session.emit(f"offset: {entry.offset} position: {entry.position}")


def dump_time_index(session, arg: str) -> None:
    """Print (or verify, or sanity-check) a time index against its log."""
    file = java_path(arg)
    path, log, index = _open_index(session, arg, idx.TimeIndex, needs_offset_index=True)
    if session.opts.index_sanity_check:
        _sanity(session, file, index)
        return
    offsets = idx.OffsetIndex(_side_file(path, ".index"))
    previous = idx.NO_TIMESTAMP
    for i in range(index.entries):
        entry = index.entry(i)
        if entry.offset == index.base_offset and i > 0:
            return
        _check_time_entry(session, arg, log, offsets, entry, previous)
        if not session.opts.verify_index_only:
            session.emit(f"timestamp: {entry.timestamp} offset: {entry.offset}")
        previous = entry.timestamp


def _check_time_entry(session, arg: str, log: Path, offsets, entry, previous: int) -> None:
    errors, name = session.time_errors, session.absolute(arg)
    position = offsets.lookup(entry.offset).position
    batch = None
    if 0 <= position <= log.stat().st_size:
        batches = idx.DumpBatchReader(log, start=position, legacy=True)
        batch = next((b for b in batches if b.last_offset >= entry.offset), None)
    if batch is None or batch.last_offset != entry.offset:
        errors.not_found.setdefault(name, []).append((entry.offset, -1 if batch is None else batch.last_offset))
        session.fail(arg, None, f"time index offset {entry.offset} not in the log")
        return
    log_append = batch.timestamp_type == "LogAppendTime"
    max_ts = idx.NO_TIMESTAMP
    for record in batch.records():
        max_ts = max(max_ts, batch.max_timestamp if log_append else record.timestamp)
    if max_ts != entry.timestamp:
        errors.mismatches.setdefault(name, []).append((entry.timestamp, max_ts))
        session.fail(arg, None, f"timestamp {entry.timestamp} of offset {entry.offset} is not the log's")
    if previous >= entry.timestamp:
        errors.out_of_order.setdefault(name, []).append((entry.timestamp, previous))
        session.fail(arg, None, f"timestamp {entry.timestamp} out of order")


def _decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return 2 ** 31 - 1 - (decrement - sequence) + 1
    return sequence - decrement


def producer_line(e) -> str:
    """Return the line of one producer of a producer-state snapshot."""
    first = "OptionalLong.empty" if e.current_txn_first_offset < 0 else f"OptionalLong[{e.current_txn_first_offset}]"
    line = (f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: "
            f"{e.coordinator_epoch} currentTxnFirstOffset: {first} lastTimestamp: {e.timestamp} ")
    if e.last_offset >= 0:
        line += (f"firstSequence: {_decrement_sequence(e.last_sequence, e.offset_delta)} lastSequence: "
                 f"{e.last_sequence} lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} "
                 f"timestamp: {e.timestamp}")
    return line


def dump_producer_snapshot(session, arg: str) -> None:
    """Print the producers of a producer-state `.snapshot` file (errors go to stderr)."""
    path = session.resolve(arg)
    if not path.is_file():
        raise ToolError(f"{path.absolute()} (No such file or directory)")
    try:
        entries = idx.read_producer_snapshot(path)
    except idx.CorruptIndexError as e:
        session.report(str(e))
        session.fail(arg, None, "unreadable producer snapshot")
        return
    for entry in entries:
        session.emit(producer_line(entry))


def dump_txn_index(session, arg: str) -> None:
    """Print the aborted transactions of a `.txnindex` file."""
    path = session.resolve(arg)
    if not path.is_file():
        raise ToolError(f"{path.absolute()} (No such file or directory)")
    for t in idx.read_txn_index(path):
        session.emit(f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
                     f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}")
