"""kafka-dump-log's `--offsets-decoder` and `--transaction-log-decoder` (DumpLogSegments, Kafka 3.9).

`__consumer_offsets` (OffsetsMessageParser over GroupCoordinatorRecordSerde): the key is an int16
record type then the key message read at that version; the value is an int16 version then the value
message. Printed as
    key: {"type":"<record type>","data":<key JSON>} payload: {"version":"<v>","data":<value JSON>}
with `<DELETE>` for a tombstone. For a classic group whose protocolType is "consumer", each member's
subscription and assignment bytes are replaced by their ConsumerProtocolSubscription/Assignment JSON
(the base64 bytes are kept when they do not parse). An unknown record type gives the key
`Unknown record type <t> at offset <o>, skipping.` and any other failure the key
`Error at offset <o>, skipping. <message>`, both with no payload. The classic records (types 0-2)
and the consumer-group metadata record (type 3) are decoded; the other KIP-848 consumer-group records of
Kafka 3.9 (types 4-8) have no spec here yet (their 3.9 field lists could not be pinned down from the
sources), so they print as unknown record types.

`__transaction_state` (TransactionLog.formatRecordKeyAndValue): key
`transaction_metadata::transactionalId=<id>`, payload `producerId:<p>,producerEpoch:<e>,state=<State>,
partitions=[<topic-partition>,...],txnLastUpdateTimestamp=<t>,txnTimeoutMs=<ms>` (or `<DELETE>`), and
`unknown::version=<v>` with no payload for a key version other than 0. The partitions are printed in
the iteration order of the Scala 2.13 mutable.HashSet Kafka collects them in.

Rules:
- Generated message readers take no version check at the top level: a version past the spec is read
  as the nearest valid one (as Kafka's generated `read` does) and printed with its own number.
- Kafka aborts the whole dump where its decoder throws (a missing key, a bad transaction state);
  kraftsman reports that record as unreadable (RecordError: one stderr line, exit code 2) and goes on.
- Error texts for malformed bytes follow Kafka's wrappers, with the inner message Kafka's generated
  reader would throw (java_reader.py; an underflow has none: `null`).
"""
from __future__ import annotations

import struct

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.schema import load
from kraftsman.storage.records.metadata_json import RecordError

_SHORT = struct.Struct(">h")
# record type (the key version) -> (key message, value message), GroupCoordinatorRecordSerde in 3.9
OFFSETS_RECORD_TYPES = {
    0: ("OffsetCommitKey", "OffsetCommitValue"),
    1: ("OffsetCommitKey", "OffsetCommitValue"),
    2: ("GroupMetadataKey", "GroupMetadataValue"),
    3: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue"),
}
TRANSACTION_STATES = {0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
                      5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence"}
_CONSUMER_PROTOCOL = "consumer"


class _DecodeError(Exception):
    """A coordinator record cannot be read; the text is what Kafka's serde says."""


def _version(buf: bytes, what: str) -> int:
    if len(buf) < 2:
        raise _DecodeError(f"Could not read version from {what}'s buffer.")
    return _SHORT.unpack_from(buf, 0)[0]


def read_message(name: str, version: int, buf: bytes, what: str = "value"):
    """Read message `name` at `version` from buf[2:] as Kafka's generated `read` does; return it."""
    spec = load(name)
    clamped = min(max(version, spec.valid_versions.lo), spec.valid_versions.hi)
    try:
        message, stop = codec.raw_decoder(name, clamped)(buf, 2, len(buf))
        if stop <= len(buf):
            return message
    except Exception:  # any failure: ask the Java-faithful walker what Kafka would have said
        pass
    from .java_reader import java_read_error

    detail = java_read_error(name, clamped, buf) or "null"
    raise _DecodeError(f"Could not read record with version {version} from {what}'s buffer due to: {detail}.")


def render(name: str, version: int, message) -> str:
    """Return Kafka's JsonConverter text of `message` written at `version` (clamped like the reader)."""
    spec = load(name)
    return codec.json_renderer(name, min(max(version, spec.valid_versions.lo), spec.valid_versions.hi))(message)


# ---------------------------------------------------------------- --offsets-decoder


def _embedded(name: str, raw: bytes) -> str | None:
    """Return the JSON of consumer-protocol bytes (leading int16 version), or None when they do not parse."""
    try:
        version = _version(raw, "value")
        return render(name, version, read_message(name, version, raw))
    except _DecodeError:
        return None


def group_metadata_json(version: int, message) -> str:
    """Render a GroupMetadataValue, with consumer-protocol subscriptions and assignments expanded."""
    text = render("GroupMetadataValue", version, message)
    if message.protocol_type != _CONSUMER_PROTOCOL or not message.members:
        return text
    head = render("GroupMetadataValue", version, message.replace(members=[]))[:-3]  # strip `[]}`
    members = []
    for m in message.members:
        one = render("GroupMetadataValue", version, message.replace(members=[m.replace(subscription=b"",
                                                                                      assignment=b"")]))
        body = one[len(head) + 1:-2]  # the member object alone
        tail = ',"subscription":"","assignment":""}'
        sub = _embedded("ConsumerProtocolSubscription", m.subscription)
        assign = _embedded("ConsumerProtocolAssignment", m.assignment)
        members.append(body[:-len(tail)] + ',"subscription":'
                       + (sub if sub is not None else codec_b64(m.subscription)) + ',"assignment":'
                       + (assign if assign is not None else codec_b64(m.assignment)) + "}")
    return head + "[" + ",".join(members) + "]}"


def codec_b64(raw: bytes) -> str:
    """Return bytes as Kafka's JSON prints them (a base64 string)."""
    import base64

    return '"' + base64.b64encode(raw).decode("ascii") + '"'


def _value_json(value_name: str, version: int, message) -> str:
    if value_name == "GroupMetadataValue":
        return group_metadata_json(version, message)
    return render(value_name, version, message)


class OffsetsParser:
    """Parse `__consumer_offsets` records as Kafka 3.9's OffsetsMessageParser; count the unreadable ones."""

    def __init__(self):
        self.errors = 0

    def __call__(self, offset: int, key, value):
        key_text, payload = offsets_record(offset, key, value)
        if payload is None and key_text.startswith("Error at offset"):
            self.errors += 1
        return key_text, payload


def offsets_record(offset: int, key, value):
    """Return (key text, payload text or None) of one `__consumer_offsets` record."""
    if key is None:
        raise RecordError(f"Failed to decode message at offset {offset} using offset topic decoder "
                          "(message had a missing key)")
    try:
        record_type = _version(key, "key")
        names = OFFSETS_RECORD_TYPES.get(record_type)
        if names is None:
            return f"Unknown record type {record_type} at offset {offset}, skipping.", None
        key_message = read_message(names[0], record_type, key, "key")
        key_text = f'{{"type":"{record_type}","data":{render(names[0], record_type, key_message)}}}'
        if value is None:
            return key_text, "<DELETE>"
        version = _version(value, "value")
        value_message = read_message(names[1], version, value, "value")
        return key_text, f'{{"version":"{version}","data":{_value_json(names[1], version, value_message)}}}'
    except _DecodeError as e:
        return f"Error at offset {offset}, skipping. {e}", None


# ---------------------------------------------------------------- --transaction-log-decoder


def java_string_hash(text: str) -> int:
    """Return Java's String.hashCode (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def topic_partition_hash(topic: str, partition: int) -> int:
    """Return TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _improve(h: int) -> int:
    u = h & 0xFFFFFFFF
    return _int32(u ^ (u >> 16))


def _table_size_for(capacity: int) -> int:
    n = max(capacity - 1, 4)
    return min((1 << (n.bit_length() - 1)) * 2, 1 << 30)


def scala_hash_set_order(groups) -> list[tuple[str, int]]:
    """Return (topic, partition) pairs in the order Scala 2.13's mutable.HashSet iterates them.

    `groups` are the successive `++=` calls (one per TransactionLogValue topic entry). The set starts
    with 16 buckets (load factor 0.75), is pre-sized by each `++=` and doubled by single adds; it
    iterates bucket by bucket (improved hash & (buckets - 1)) and, inside a bucket, by ascending hash.
    """
    length, size, seq, items = 16, 0, 0, {}
    for group in groups:
        distinct = list(dict.fromkeys(group))
        target = _table_size_for(int((size + len(distinct) + 1) / 0.75))
        length = max(length, target)
        for element in distinct:
            if len(distinct) <= 4 and size + 1 >= int(length * 0.75):
                length *= 2
            if element not in items:
                items[element] = (_improve(topic_partition_hash(*element)), seq)
                seq += 1
                size += 1
    mask = length - 1
    return sorted(items, key=lambda e: (items[e][0] & mask, items[e][0], items[e][1]))


def transaction_log_parser(offset: int, key, value):
    """Return (key text, payload text or None) of a `__transaction_state` record (TransactionLogMessageParser)."""
    if key is None or len(key) < 2:
        raise RecordError(f"transaction log record at offset {offset} has {'no' if key is None else 'a short'} key")
    version = _SHORT.unpack_from(key, 0)[0]
    if version != 0:
        return f"unknown::version={version}", None
    try:
        txn_id = read_message("TransactionLogKey", 0, key, "key").transactional_id
        key_text = f"transaction_metadata::transactionalId={txn_id}"
        if value is None:
            return key_text, "<DELETE>"
        if len(value) < 2:
            raise _DecodeError("the value is shorter than its version")
        value_version = _SHORT.unpack_from(value, 0)[0]
        if value_version not in (0, 1):
            raise _DecodeError(f"Unknown version {value_version} from the transaction log message value")
        txn = read_message("TransactionLogValue", value_version, value, "value")
    except _DecodeError as e:
        raise RecordError(f"transaction log record at offset {offset}: {e}") from None
    state = TRANSACTION_STATES.get(txn.transaction_status)
    if state is None:
        raise RecordError(f"Unknown transaction state id {txn.transaction_status} from the transaction status message")
    partitions = []
    if state != "Empty":
        if txn.transaction_partitions is None:
            raise RecordError(f"transaction log record at offset {offset}: state {state} with null partitions")
        partitions = scala_hash_set_order(
            [[(p.topic, i) for i in p.partition_ids] for p in txn.transaction_partitions])
    listed = ",".join(f"{t}-{p}" for t, p in partitions)
    return key_text, (f"producerId:{txn.producer_id},producerEpoch:{txn.producer_epoch},state={state},"
                      f"partitions=[{listed}],txnLastUpdateTimestamp={txn.transaction_last_update_timestamp_ms},"
                      f"txnTimeoutMs={txn.transaction_timeout_ms}")
