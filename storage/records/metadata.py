"""The metadata record frame (MetadataRecordSerde): uvarint frameVersion=1, apiKey, version, then body.

Rules:
- Frame version 1 only; frame 0 (2.8 preview) and others are rejected with Kafka's messages.
- frameVersion, apiKey and version are unsigned varints, rejected above 32767; a null, empty or cut header
  fails with Kafka's "Error while reading <frame version|type|version>".
- The body is decoded by the compiled codec; leftover bytes are an error.
- A type or version newer than the schemas raises UnknownRecordError, which tools may show generically.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import StorageError
from ..protocol import codec
from ..protocol.primitives import read_uvarint, uvarint_bytes
from ..protocol.schema import SchemaError, load
from .partition_writer import PARTITION_RECORD, write_partition_record

FRAME_VERSION = 1

# apiKey -> record name (metadata/src/main/resources/common/metadata); ids 6, 13 and 16 are unused.
METADATA_RECORD_TYPES = {
    0: "RegisterBrokerRecord", 1: "UnregisterBrokerRecord", 2: "TopicRecord", 3: "PartitionRecord",
    4: "ConfigRecord", 5: "PartitionChangeRecord", 7: "FenceBrokerRecord", 8: "UnfenceBrokerRecord",
    9: "RemoveTopicRecord", 10: "DelegationTokenRecord", 11: "UserScramCredentialRecord",
    12: "FeatureLevelRecord", 14: "ClientQuotaRecord", 15: "ProducerIdsRecord",
    17: "BrokerRegistrationChangeRecord", 18: "AccessControlEntryRecord", 19: "RemoveAccessControlEntryRecord",
    20: "NoOpRecord", 21: "ZkMigrationStateRecord", 22: "RemoveUserScramCredentialRecord",
    23: "BeginTransactionRecord", 24: "EndTransactionRecord", 25: "AbortTransactionRecord",
    26: "RemoveDelegationTokenRecord", 27: "RegisterControllerRecord", 28: "ClearElrRecord",
}
RECORD_API_KEYS = {name: key for key, name in METADATA_RECORD_TYPES.items()}


class MetadataParseError(StorageError, ValueError):
    """A metadata record value is not a valid frame (Kafka's MetadataParseException)."""


class UnknownRecordError(MetadataParseError):
    """The record's type or version is not in the schemas; api_key/version/body say what it was."""

    def __init__(self, message: str, api_key: int, version: int, body: bytes):
        super().__init__(message)
        self.api_key, self.version, self.body = api_key, version, body


class _MessageAndVersion(NamedTuple):
    message: object
    version: int
    api_key: int


class ApiMessageAndVersion(_MessageAndVersion):
    """A decoded metadata record: the message, its schema version and its api key."""

    __slots__ = ()

    def __new__(cls, message, version: int, api_key: int | None = None):
        return tuple.__new__(cls, (message, version, message.api_key if api_key is None else api_key))

    @classmethod
    def of(cls, message, version: int) -> "ApiMessageAndVersion":
        """Wrap a generated record message with its version (the api key comes from its class)."""
        return cls(message, version, message.api_key)

    @property
    def name(self) -> str:
        """Return the record's schema name ('TopicRecord')."""
        return METADATA_RECORD_TYPES[self.api_key]


_new_amv = tuple.__new__


_ENUM = re.compile(r"(?<=[a-z])(?=[A-Z])")


def type_enum_name(name: str) -> str:
    """Return MetadataRecordType's enum name: '_' only before an upper-case letter after a lower-case one."""
    return _ENUM.sub("_", name).upper()


_decoders: dict[tuple[int, int], object] = {}


def _decoder(api_key: int, version: int, body: bytes):
    fn = _decoders.get((api_key, version))
    if fn is not None:
        return fn
    name = METADATA_RECORD_TYPES.get(api_key)
    try:
        spec = load(name) if name else None
    except SchemaError:
        spec = None
    if spec is None:
        raise UnknownRecordError(f"Unknown metadata id {api_key}", api_key, version, body)
    if version not in spec.valid_versions:
        raise UnknownRecordError(f"{name} has no version {version} (known: {spec.valid_versions})",
                                 api_key, version, body)
    fn = _decoders[(api_key, version)] = codec.raw_decoder(name, version)
    return fn


def read_frame(value: bytes) -> tuple[int, int, int]:
    """Read the frame header as AbstractApiMessageSerde.read does; return (api_key, version, body position).
    A null, empty or cut frame fails with Kafka's "Error while reading frame version" (or type, version)."""
    frame, pos = _frame_field(value, 0, "frame version")
    if frame != FRAME_VERSION:
        if frame == 0:
            raise MetadataParseError(
                "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                "preview release of KRaft in 2.8 to newer versions are not supported.")
        raise MetadataParseError(f"Could not deserialize metadata record due to unknown frame version "
                                 f"{frame}(only frame version 1 is supported)")
    api_key, pos = _frame_field(value, pos, "type")
    version, pos = _frame_field(value, pos, "version")
    return api_key, version, pos


def _frame_field(value: bytes, pos: int, entity: str) -> tuple[int, int]:
    """Read one unsigned varint of the frame header with unsignedIntToShort's checks and messages."""
    try:
        number, pos = read_uvarint(value, pos)
    except (ValueError, IndexError, TypeError):      # TypeError: a null value (Kafka's caught NPE)
        raise MetadataParseError(f"Error while reading {entity}") from None
    if number > 32767:
        raise MetadataParseError(f"Value for {entity} was too large.")
    return number, pos


def _read_frame_checked(value: bytes) -> tuple[int, int, int]:
    if value is None:
        raise MetadataParseError("Null metadata record value")
    if not value:
        raise MetadataParseError("Empty metadata record value")
    try:
        return read_frame(value)
    except (IndexError, ValueError) as e:
        if isinstance(e, MetadataParseError):
            raise
        raise MetadataParseError(f"Failed to read metadata record frame: {e}") from None


def read_metadata_record(value: bytes) -> ApiMessageAndVersion:
    """Decode one metadata record value into an ApiMessageAndVersion."""
    if value is not None and len(value) >= 3 and value[0] == 1 and value[1] < 128 and value[2] < 128:
        api_key, version, pos = value[1], value[2], 3  # the common one-byte frame
    else:
        api_key, version, pos = _read_frame_checked(value)
    decode = _decoders.get((api_key, version)) or _decoder(api_key, version, value[pos:])
    end = len(value)
    try:
        message, stop = decode(value, pos, end)
    except Exception as e:  # the generated decoders raise CodecError, struct.error, IndexError...
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}: {e}") from None
    if stop != end:
        raise MetadataParseError(f"Found {end - stop} byte(s) of garbage after {api_key}")
    return _new_amv(ApiMessageAndVersion, (message, version, api_key))


_writers: dict[tuple[int, int], tuple[bytes, object]] = {}


def _writer(api_key: int, version: int) -> tuple[bytes, object]:
    """Return (frame header bytes, generated body encoder) of a record type at a version, cached."""
    writer = _writers.get((api_key, version))
    if writer is None:
        header = uvarint_bytes(FRAME_VERSION) + uvarint_bytes(api_key) + uvarint_bytes(version)
        writer = (header, codec.encoder(METADATA_RECORD_TYPES[api_key], version))
        _writers[(api_key, version)] = writer
    return writer


def write_metadata_record(record: ApiMessageAndVersion) -> bytes:
    """Encode an ApiMessageAndVersion into a frame-version-1 record value."""
    message, version, api_key = record
    header, encode = _writers.get((api_key, version)) or _writer(api_key, version)
    return bytes(encode(message, bytearray(header)))


def write_metadata_records(records) -> list[bytes]:
    """Return write_metadata_record() of every record, in order (new partitions' records by the faster
    partition_writer, which gives the same bytes)."""
    writers, out = _writers, []
    append = out.append
    for message, version, api_key in records:
        if api_key == PARTITION_RECORD:
            value = write_partition_record(message, version)
            if value is not None:
                append(value)
                continue
        header, encode = writers.get((api_key, version)) or _writer(api_key, version)
        append(bytes(encode(message, bytearray(header))))
    return out


def record_to_json(record: ApiMessageAndVersion) -> str:
    """Render as kafka-dump-log does: {"type":"<ENUM>","version":N,"data":{...}}."""
    name = METADATA_RECORD_TYPES[record.api_key]
    data = codec.json_renderer(name, record.version)(record.message)
    return f'{{"type":"{type_enum_name(name)}","version":{record.version},"data":{data}}}'


def decode_data_batch(batch) -> list[tuple[int, ApiMessageAndVersion]]:
    """Decode every record of a non-control batch into (offset, ApiMessageAndVersion), in order.

    The fast path reads records shaped as the raft writes them (attributes 0, timestamp delta 0,
    null key, no headers, one-byte frame) straight from the batch buffer; any other shape, and
    compressed batches, go through the general record parser.
    """
    if batch.compression:
        return [(r.offset, read_metadata_record(r.value)) for r in batch.records()]
    out: list[tuple[int, ApiMessageAndVersion]] = []
    try:
        done = _decode_raft_shaped(batch, out)
    except MetadataParseError:
        raise
    except Exception as e:  # struct.error / IndexError / CodecError from a malformed body
        offset = out[-1][0] + 1 if out else batch.base_offset
        raise MetadataParseError(f"Failed to deserialize record at offset {offset}: {e}") from None
    if done < 0 or done < batch.records_count:
        rest = list(batch.records())[max(done, 0):]
        out.extend((r.offset, read_metadata_record(r.value)) for r in rest)
    return out


def _decode_raft_shaped(batch, out: list) -> int:
    data, base, end = batch.buffer, batch.base_offset, len(batch.buffer)
    decoders, append, new, amv = _decoders, out.append, _new_amv, ApiMessageAndVersion
    pos = 61
    for i in range(batch.records_count):
        b = data[pos]
        if b < 128:
            length, body = b >> 1, pos + 1
        else:
            length, body = ((b & 0x7F) | (data[pos + 1] << 7)) >> 1, pos + 2
        od = data[body + 2]
        if od < 128:
            delta, k = od >> 1, body + 3
        else:
            delta, k = ((od & 0x7F) | (data[body + 3] << 7)) >> 1, body + 4
        vb = data[k + 1]
        if vb < 128:
            vstart = k + 2
            vend = vstart + (vb >> 1)
        else:
            vstart = k + 3
            vend = vstart + (((vb & 0x7F) | (data[k + 2] << 7)) >> 1)
        stop = body + length
        if (b & 1 or data[body] or data[body + 1] or od & 1 or data[k] != 1 or vb & 1
                or vend + 1 != stop or stop > end or data[vend] or data[vstart] != 1
                or data[vstart + 1] >= 128 or data[vstart + 2] >= 128
                or b >= 128 and data[pos + 1] >= 128 or od >= 128 and data[body + 3] >= 128
                or vb >= 128 and data[k + 2] >= 128):
            return i
        key = (data[vstart + 1], data[vstart + 2])
        fn = decoders.get(key) or _decoder(key[0], key[1], data[vstart + 3:vend])
        message, mend = fn(data, vstart + 3, vend)
        if mend != vend:
            raise MetadataParseError(f"Found {vend - mend} byte(s) of garbage after {key[0]}")
        append((base + delta, new(amv, (message, key[1], key[0]))))
        pos = stop
    if pos != end:  # bytes after the last record: the general parser reports them as it does for records()
        out.clear()
        return -1
    return batch.records_count
