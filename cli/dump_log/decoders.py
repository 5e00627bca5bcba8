"""Payload parsers for kafka-dump-log besides the cluster-metadata one: key/value decoder classes and the
`__consumer_offsets` / `__transaction_state` decoders.

Rules:
- A parser is fn(offset, key, value) -> (key text or None, payload text or None), as Kafka's MessageParser.
- Decoder classes: Kafka's StringDecoder (default), IntegerDecoder and LongDecoder are known by name.
- The offsets and transaction-log decoders live in coordinator.py.
"""
from __future__ import annotations

import struct

from ..common.status import ToolError

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


def _string(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _integer(raw: bytes) -> str:
    return str(_INT.unpack(raw)[0]) if len(raw) == 4 else f"Error: {len(raw)} bytes is not an int"


def _long(raw: bytes) -> str:
    return str(_LONG.unpack(raw)[0]) if len(raw) == 8 else f"Error: {len(raw)} bytes is not a long"


DECODERS = {
    "org.apache.kafka.tools.api.StringDecoder": _string, "kafka.serializer.StringDecoder": _string,
    "org.apache.kafka.tools.api.IntegerDecoder": _integer, "kafka.serializer.IntegerDecoder": _integer,
    "org.apache.kafka.tools.api.LongDecoder": _long, "kafka.serializer.LongDecoder": _long,
}


def _decoder(name: str):
    try:
        return DECODERS[name]
    except KeyError:
        raise ToolError(f"java.lang.ClassNotFoundException: {name} (known decoders: "
                        f"{', '.join(sorted(DECODERS))})") from None


def class_decoder_parser(key_class: str, value_class: str):
    """Return Kafka's DecoderMessageParser for the named key and value decoder classes."""
    key_decoder, value_decoder = _decoder(key_class), _decoder(value_class)

    def parse(offset: int, key, value):
        return (None if key is None else key_decoder(key), None if value is None else value_decoder(value))

    return parse


def parser_for(kind: str):
    """Return the parser of `--offsets-decoder` ("offsets") or `--transaction-log-decoder`."""
    from . import coordinator

    return coordinator.OffsetsParser() if kind == "offsets" else coordinator.transaction_log_parser
