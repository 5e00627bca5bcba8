"""Record batch v2 (magic 2): lazy reader and builder (DefaultRecordBatch / DefaultRecord).

Layout (big-endian; offsets from the batch start):
    0 baseOffset int64 | 8 batchLength int32 (bytes after this field) | 12 partitionLeaderEpoch int32
   16 magic int8 | 17 crc uint32 = CRC-32C of [21, end) | 21 attributes int16 | 23 lastOffsetDelta int32
   27 baseTimestamp int64 | 35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16
   53 baseSequence int32 | 57 recordsCount int32 | 61 records (one compressed stream when compressed)
Record: length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
        | keyLength varint, key | valueLength varint, value | headersCount varint, headers

Rules:
- A RecordBatch keeps its bytes and file position; the header is parsed once, records only on demand.
- Varints use inline 1-byte fast paths; the rare long forms go through `primitives`.
- Malformed records raise CorruptRecordError with the absolute byte position when known.
- raft_value_runs() checks every byte that decides a record's shape; runs of equal-length records are compared
  with their first record as integers under a mask, so bulk loads do no Python work per record of a run.
"""
from __future__ import annotations

import functools
import re
import struct
from typing import NamedTuple

from ..errors import StorageError
from ..protocol.primitives import VarintError, read_uvarint, varint_bytes, varlong_bytes
from .compression import NAMES as COMPRESSION_NAMES
from .compression import CompressionError, compress, decompress
from .crc import crc32c

HEADER = struct.Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = 61
LOG_OVERHEAD = 12
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40
NO_TIMESTAMP = -1


class CorruptRecordError(StorageError, ValueError):
    """Bytes that should hold a record batch or record do not; carries file and position."""

    def __init__(self, message: str, position: int | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.path = path

    def __str__(self) -> str:
        where = []
        if self.path:
            where.append(str(self.path))
        if self.position is not None:
            where.append(f"position {self.position}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class Record(NamedTuple):
    """One record of a v2 batch, with absolute offset and timestamp (a tuple: cheap to build)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    attributes: int = 0
    sequence: int = -1
    size_in_bytes: int = 0


_new_record = tuple.__new__


def _varint(buf, pos):
    b = buf[pos]
    if b < 128:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = read_uvarint(buf, pos, 5)
    return (raw >> 1) ^ -(raw & 1), pos


def _varlong(buf, pos):
    b = buf[pos]
    if b < 128:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw, pos = read_uvarint(buf, pos, 10)
    return (raw >> 1) ^ -(raw & 1), pos


class RecordBatch:
    """A v2 record batch over its own bytes; `position` is where it starts in its file."""

    __slots__ = ("buffer", "position", "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
                 "attributes", "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id",
                 "producer_epoch", "base_sequence", "records_count")

    def __init__(self, buffer: bytes, position: int = 0):
        if len(buffer) < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(f"record batch of {len(buffer)} bytes is smaller than the "
                                     f"{RECORD_BATCH_OVERHEAD}-byte header", position)
        (self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic, self.crc,
         self.attributes, self.last_offset_delta, self.base_timestamp, self.max_timestamp, self.producer_id,
         self.producer_epoch, self.base_sequence, self.records_count) = HEADER.unpack_from(buffer, 0)
        self.buffer = buffer
        self.position = position

    # -- header properties
    @property
    def last_offset(self) -> int:
        """Return the offset of the last record (base offset + last offset delta)."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """Return the offset after this batch."""
        return self.last_offset + 1

    @property
    def size_in_bytes(self) -> int:
        """Return the whole batch size, log overhead included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> int:
        """Return the compression codec id (attributes bits 0-2)."""
        return self.attributes & COMPRESSION_MASK

    @property
    def compression_name(self) -> str:
        """Return Kafka's name of the compression codec ('none', 'gzip', ...)."""
        return COMPRESSION_NAMES.get(self.compression, f"unknown({self.compression})")

    @property
    def timestamp_type(self) -> str:
        """Return 'CreateTime' or 'LogAppendTime' as Kafka's tools print it."""
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        """Tell whether the transactional bit is set."""
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        """Tell whether this is a control batch."""
        return bool(self.attributes & CONTROL_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """Return the delete horizon when bit 6 is set, else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def last_sequence(self) -> int:
        """Return the last sequence number, or -1 when the batch has none."""
        if self.base_sequence == -1:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    def compute_crc(self) -> int:
        """Compute the CRC-32C over attributes through the last record."""
        return crc32c(memoryview(self.buffer)[ATTRIBUTES_OFFSET:])

    def is_valid(self) -> bool:
        """Tell whether the stored CRC matches the bytes."""
        return self.compute_crc() == self.crc

    def records_data(self) -> bytes:
        """Return the (decompressed) records section."""
        data = self.buffer[RECORD_BATCH_OVERHEAD:]
        codec = self.compression
        if codec == 0:
            return data
        try:
            return decompress(codec, data)
        except CompressionError as e:
            raise CorruptRecordError(str(e), self.position + RECORD_BATCH_OVERHEAD) from None

    # -- records
    def __iter__(self):
        return self.records()

    def records(self):
        """Yield every Record of the batch."""
        data = self.records_data()
        base_pos = self.position + RECORD_BATCH_OVERHEAD if self.compression == 0 else None
        try:
            yield from _parse_records(data, self.records_count, self.base_offset, self.base_timestamp,
                                      self.base_sequence, base_pos)
        except (IndexError, ValueError, struct.error) as e:
            if isinstance(e, CorruptRecordError):
                raise
            raise CorruptRecordError(f"malformed record in batch at offset {self.base_offset}: {e}",
                                     self.position) from None

    def raft_values(self):
        """Yield (offset, value) of records shaped as the raft writes them, falling back to records().

        Raft records have attributes 0, timestamp delta 0, a null key and no headers; the fast path
        checks exactly that and hands any other shape to the general parser.
        """
        if self.compression:
            for record in self.records():
                yield record.offset, record.value
            return
        data, base, n = self.buffer, self.base_offset, self.records_count
        pos, end, i = RECORD_BATCH_OVERHEAD, len(data), 0
        for i in range(n):  # noqa: B007 (after a break, i is where the general parser takes over)
            try:  # a record that runs off the buffer is left to the general parser's error
                b, b2 = data[pos], data[pos + 1]
                if b < 128:
                    length, body = b >> 1, pos + 1
                elif b2 < 128:
                    length, body = ((b & 0x7F) | (b2 << 7)) >> 1, pos + 2
                else:
                    break
                stop = body + length
                delta, key = data[body + 2], body + 3
                if delta >= 128:  # offset deltas of 64 and more take two bytes, of 8192 and more three
                    d2 = data[body + 3]
                    if d2 < 128:
                        delta, key = (delta & 0x7F) | (d2 << 7), body + 4
                    else:
                        d3 = data[body + 4]
                        if d3 >= 128:
                            break
                        delta, key = (delta & 0x7F) | ((d2 & 0x7F) << 7) | (d3 << 14), body + 5
                if (stop > end or b & 1 or data[body] or data[body + 1] or delta & 1 or data[key] != 1
                        or data[stop - 1]):
                    break
                value, vend = _read_blob(data, key + 1)
            except (IndexError, ValueError):
                break
            if vend != stop - 1 or value is None:
                break
            yield base + (delta >> 1), value
            pos = stop
        else:
            if pos == end:
                return
        for record in list(self.records())[i:]:
            yield record.offset, record.value

    def raft_value_spans(self) -> list[tuple[int, int, int]]:
        """Return [(offset, value start, value end) in `buffer`] of the leading records shaped as the raft writes
        them, without copying a value; the first other record ends the list (a compressed batch gives none).

        A caller that got k spans reads the records from the k-th on with records(), which also reports bytes left
        after the last record: a batch with such bytes gives no span for its last record. A list, not a generator:
        kafka-dump-log walks 1M records through it, and a list is the cheaper of the two per record.
        """
        spans: list[tuple[int, int, int]] = []
        if self.compression:
            return spans
        data, base, end, pos = self.buffer, self.base_offset, len(self.buffer), RECORD_BATCH_OVERHEAD
        append, last = spans.append, self.records_count - 1
        for i in range(min(self.records_count, 8192)):  # 3-byte offset deltas are left to records()
            try:
                at, stop = raft_value_at(data, pos, i)
            except IndexError:
                break
            if at is None or stop > end or (i == last and stop != end):
                break
            append((base + i, at, stop - 1))
            pos = stop
        return spans

    def raft_value_runs(self, head: bytes, key_at: int, key_size: int):
        """Group the records into runs of consecutive values keyed by `value[key_at:key_at + key_size]`, or return
        None when the batch is not exactly as the raft writes it (uncompressed, offset deltas 0..n-1).

        A value is keyed when it starts with `head`, then a one-byte varint, and is longer than the key's end; the
        others form runs with the key None. Each run is [first index, stop index, key, [(offset, value)] of the
        unkeyed records]; keyed values are not sliced out, so a run of them costs one walk over their lengths.
        """
        if self.compression or self.records_count > 8192:
            return None
        data, base, key_end = self.buffer, self.base_offset, key_at + key_size
        pos, end, runs, run = RECORD_BATCH_OVERHEAD, len(data), [], None
        head_size = len(head)
        count, strided, i = self.records_count, True, 0
        try:
            while i < count:
                value_at, stop = raft_value_at(data, pos, i)
                if value_at is None or stop > end:
                    return None
                if stop - value_at > key_end and data.startswith(head, value_at) and data[value_at + head_size] < 128:
                    key = data[value_at + key_at:value_at + key_end]
                else:
                    key = None
                if run is None or key != run[2]:
                    run = [i, i, key, None if key is not None else []]
                    runs.append(run)
                if key is None:
                    run[3].append((base + i, data[value_at:stop - 1]))
                    same = 1
                elif strided:
                    same = _same_records(data, pos, stop - pos, value_at - pos, (head_size + 1, key_at, key_end), i,
                                         count)
                    strided = same >= MIN_STRIDED_RUN
                else:
                    same = 1
                i += same
                run[1] = i
                pos += same * (stop - pos)
        except IndexError:
            return None
        return runs if pos == end else None

    def __repr__(self) -> str:
        return (f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
                f"count={self.records_count}, position={self.position}, control={self.is_control})")


MIN_STRIDED_RUN = 2
_DELTA_1 = bytes(range(0, 128, 2))                                           # zigzag of offset deltas 0..63
_DELTA_2_LOW = bytes(((d << 1) & 0x7F) | 0x80 for d in range(64, 8192))     # two-byte ones, 64..8191
_DELTA_2_HIGH = bytes((d << 1) >> 7 for d in range(64, 8192))


def _same_records(data, pos, size, value_at, fields, index, count):
    """Return how many records from `pos` (the first already checked, of `size` bytes, its value at `value_at`)
    have the same bytes as the first except their offset delta (which must be their index) and their value's
    bytes outside `fields` (head size, key start, key end): one regular expression of the layout matches the
    first record and then repeats it through back-references, so that Python does no work per record."""
    width = 1 if index < 64 else 2
    limit = min(count, 64 if width == 1 else 8192) - index
    same = min(limit, (len(data) - pos) // size)
    if same <= 1:
        return 1
    delta_at = 2 + (1 if data[pos] < 128 else 2)
    match = _run_pattern(size, delta_at, width, value_at, fields).match(data, pos, pos + same * size)
    same = 0 if match is None else (match.end() - pos) // size
    if same <= 1:
        return 1
    return same if offset_deltas_are_indexes(data, pos, size, delta_at, index, same) else 1


def offset_deltas_are_indexes(data, pos: int, size: int, delta_at: int, index: int, count: int) -> bool:
    """Tell whether the `count` records of `size` bytes from `pos`, the first at index `index` of its batch, hold
    their index as offset delta (a one-byte zigzag varint below 64, two bytes from 64) at `delta_at` each."""
    stop = pos + count * size
    if index + count <= 64:
        return data[pos + delta_at:stop:size] == _DELTA_1[index:index + count]
    if index < 64:
        return False
    at = index - 64
    return (data[pos + delta_at:stop:size] == _DELTA_2_LOW[at:at + count]
            and data[pos + delta_at + 1:stop:size] == _DELTA_2_HIGH[at:at + count])


@functools.lru_cache(maxsize=256)
def _run_pattern(size, delta_at, width, value_at, fields):
    """Return the pattern of a run of records of this layout: the first record's bytes that must be equal are
    captured (before the offset delta, from it to the value's key head, the key, the last byte) and every
    following record must repeat them, the other bytes being free."""
    head, key_at, key_end = fields
    gaps = (width, value_at + key_at - (value_at + head), size - 1 - (value_at + key_end))
    spans = (delta_at, value_at + head - delta_at - width, key_end - key_at, 1)
    first = b"(.{%d}).{%d}(.{%d}).{%d}(.{%d}).{%d}(.)" % (spans[0], gaps[0], spans[1], gaps[1], spans[2], gaps[2])
    again = b"\\1.{%d}\\2.{%d}\\3.{%d}\\4" % gaps
    return re.compile(b"(?s)" + first + b"(?:" + again + b")*")


def raft_value_at(data, pos, index):
    """Return (where the value starts, where the record ends) of a record at `pos` shaped as the raft writes it
    (attributes 0, timestamp delta 0, offset delta `index`, null key, no headers, a value whose length ends right
    before the headers count), or (None, None)."""
    b = data[pos]
    if b < 128:
        body, stop = pos + 1, pos + 1 + (b >> 1)
    elif data[pos + 1] < 128:
        body = pos + 2
        stop = body + (((b & 0x7F) | (data[pos + 1] << 7)) >> 1)
    else:
        return None, None
    zigzag = index << 1
    if zigzag < 128:
        key = body + 3 if data[body + 2] == zigzag else 0
    else:
        key = body + 4 if data[body + 2] == (zigzag & 0x7F) | 0x80 and data[body + 3] == zigzag >> 7 else 0
    if not key or b & 1 or data[body] or data[body + 1] or data[key] != 1 or data[stop - 1]:
        return None, None
    n = data[key + 1]
    if n < 128:
        at, size = key + 2, n
    elif data[key + 2] < 128:
        at, size = key + 3, (n & 0x7F) | (data[key + 2] << 7)
    else:
        return None, None
    if size & 1 or at + (size >> 1) != stop - 1:
        return None, None
    return at, stop


def _parse_records(data, count, base_offset, base_timestamp, base_sequence, base_pos):
    """Parse `count` DefaultRecords with DefaultRecord.readFrom's checks and InvalidRecordException texts."""
    pos = 0
    for index in range(count):
        start = pos
        try:
            record, pos = _parse_record(data, pos, base_offset, base_timestamp, base_sequence)
        except (IndexError, VarintError):               # Kafka: a BufferUnderflowException or a too-long varint
            raise CorruptRecordError("Found invalid record structure", _at(base_pos, start)) from None
        except CorruptRecordError as e:
            raise CorruptRecordError(e.message, _at(base_pos, start)) from None
        if index == count - 1 and pos != len(data):     # checked before the last record is handed out
            raise CorruptRecordError("Incorrect declared batch size, records still remaining in file", base_pos)
        yield record


def _at(base_pos, start):
    return None if base_pos is None else base_pos + start


def _parse_record(data, pos, base_offset, base_timestamp, base_sequence):
    """Return (one DefaultRecord, the position after it); one-byte varints (the usual case) inline."""
    start = pos
    b = data[pos]
    if b < 128:
        length, pos = (b >> 1) ^ -(b & 1), pos + 1
    elif data[pos + 1] < 128:
        raw = (b & 0x7F) | (data[pos + 1] << 7)
        length, pos = (raw >> 1) ^ -(raw & 1), pos + 2
    else:
        length, pos = _varint(data, pos)
    body = pos
    if pos + length > len(data):
        raise CorruptRecordError(f"Invalid record size: expected {length} bytes in record payload, but instead "
                                 f"the buffer has only {len(data) - pos} remaining bytes.")
    attributes = data[pos]
    b = data[pos + 1]
    if b < 128:
        ts_delta, pos = (b >> 1) ^ -(b & 1), pos + 2
    else:
        ts_delta, pos = _varlong(data, pos + 1)
    b = data[pos]
    if b < 128:
        off_delta, pos = (b >> 1) ^ -(b & 1), pos + 1
    else:
        off_delta, pos = _varint(data, pos)
    key, pos = _read_blob(data, pos)
    value, pos = _read_blob(data, pos)
    if data[pos] == 0:
        headers, pos = (), pos + 1
    else:
        hcount, pos = _varint(data, pos)
        headers, pos = _parse_headers(data, pos, hcount)
    if pos != body + length:
        raise CorruptRecordError(f"Invalid record size: expected to read {length} bytes in record payload, but "
                                 f"instead read {pos - body}")
    seq = -1 if base_sequence == -1 else (base_sequence + off_delta) & 0x7FFFFFFF
    return _new_record(Record, (base_offset + off_delta, base_timestamp + ts_delta, key, value, headers,
                                attributes, seq, pos - start)), pos


def _read_blob(data, pos):
    """Read a varint-length-prefixed key or value (-1 = null)."""
    b = data[pos]
    if b == 1:
        return None, pos + 1
    if b < 128 and not b & 1:
        n = b >> 1
        return data[pos + 1:pos + 1 + n], pos + 1 + n
    b2 = data[pos + 1] if b >= 128 else 255
    if b2 < 128 and not b & 1:
        n = ((b & 0x7F) | (b2 << 7)) >> 1
        return data[pos + 2:pos + 2 + n], pos + 2 + n
    n, pos = _varint(data, pos)
    if n < 0:                                       # any negative size is a null key or value, as in Kafka
        return None, pos
    if pos + n > len(data):
        raise IndexError("key or value runs past the records")    # Kafka's slice.limit() fails the same way
    return data[pos:pos + n], pos + n


def _parse_headers(data, pos, count):
    if count < 0:
        raise CorruptRecordError(f"Found invalid number of record headers {count}")
    headers = []
    for _ in range(count):
        klen, pos = _varint(data, pos)
        if klen < 0:
            raise CorruptRecordError(f"Invalid negative header key size {klen}")
        key = data[pos:pos + klen].decode("utf-8")
        pos += klen
        vlen, pos = _varint(data, pos)
        value = None
        if vlen >= 0:
            value = data[pos:pos + vlen]
            pos += vlen
        headers.append((key, value))
    return tuple(headers), pos


# ---------------------------------------------------------------- building


def encode_record(offset_delta: int, key: bytes | None, value: bytes | None, headers=(),
                  timestamp_delta: int = 0, attributes: int = 0) -> bytes:
    """Encode one DefaultRecord (length prefix included)."""
    body = bytearray((attributes,))
    body += varlong_bytes(timestamp_delta)
    body += varint_bytes(offset_delta)
    for blob in (key, value):
        if blob is None:
            body += b"\x01"
        else:
            body += varint_bytes(len(blob))
            body += blob
    body += varint_bytes(len(headers))
    for hkey, hval in headers:
        raw = hkey.encode("utf-8")
        body += varint_bytes(len(raw)) + raw
        body += b"\x01" if hval is None else varint_bytes(len(hval)) + hval
    return varint_bytes(len(body)) + bytes(body)


def build_batch(records, base_offset: int = 0, *, timestamp: int = 0, partition_leader_epoch: int = 0,
                control: bool = False, transactional: bool = False, compression: int = 0,
                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                log_append_time: bool = False, max_timestamp: int | None = None) -> bytes:
    """Build a v2 batch from (key, value) pairs or (key, value, headers, timestamp) tuples.

    Records get consecutive offsets from `base_offset`; their timestamps default to `timestamp`.
    """
    body = bytearray()
    timestamps = []
    count = 0
    for i, rec in enumerate(records):
        key, value = rec[0], rec[1]
        headers = rec[2] if len(rec) > 2 else ()
        ts = rec[3] if len(rec) > 3 and rec[3] is not None else timestamp
        timestamps.append(ts)
        body += encode_record(i, key, value, headers, ts - timestamp)
        count += 1
    if not count:
        raise ValueError("a record batch needs at least one record")
    attributes = compression | (TIMESTAMP_TYPE_MASK if log_append_time else 0)
    attributes |= (TRANSACTIONAL_MASK if transactional else 0) | (CONTROL_MASK if control else 0)
    payload = compress(compression, bytes(body)) if compression else bytes(body)
    max_ts = max(timestamps) if max_timestamp is None else max_timestamp
    return assemble_batch(payload, base_offset, count - 1, count, attributes, timestamp, max_ts,
                          partition_leader_epoch, producer_id, producer_epoch, base_sequence)


def assemble_batch(payload: bytes, base_offset: int, last_offset_delta: int, count: int, attributes: int,
                   base_timestamp: int, max_timestamp: int, partition_leader_epoch: int = 0,
                   producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1) -> bytes:
    """Put a header (with CRC) in front of an already encoded records section."""
    length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload)
    header = bytearray(HEADER.pack(base_offset, length, partition_leader_epoch, 2, 0, attributes,
                                   last_offset_delta, base_timestamp, max_timestamp, producer_id,
                                   producer_epoch, base_sequence, count))
    crc = crc32c(payload, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    struct.pack_into(">I", header, CRC_OFFSET, crc)
    return bytes(header) + payload


def rebuild_batch(batch: RecordBatch, records, compression: int | None = None) -> bytes:
    """Re-encode a batch's records with its own header fields (used to prove byte-exact round trips)."""
    body = bytearray()
    for rec in records:
        body += encode_record(rec.offset - batch.base_offset, rec.key, rec.value, rec.headers,
                              rec.timestamp - batch.base_timestamp, rec.attributes)
    codec = batch.compression if compression is None else compression
    payload = compress(codec, bytes(body)) if codec else bytes(body)
    attributes = (batch.attributes & ~COMPRESSION_MASK) | codec
    return assemble_batch(payload, batch.base_offset, batch.last_offset_delta, batch.records_count, attributes,
                          batch.base_timestamp, batch.max_timestamp, batch.partition_leader_epoch,
                          batch.producer_id, batch.producer_epoch, batch.base_sequence)
