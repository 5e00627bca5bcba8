"""Malformed input: `codec.decoder(...)` raises only CodecError, always with a byte position.

Rules:
- Every spec at every version: every proper prefix of a fully populated message fails cleanly,
  and seeded random mutations never raise anything but CodecError.
- Hand-made cases cover negative lengths, huge counts, overlong varints, invalid UTF-8, tagged
  sections that lie about their size, and decoding bounded by `end` inside a larger buffer.
"""
from __future__ import annotations

import random
import re

import pytest

from kraftsman.storage.protocol import codec, schema
from kraftsman.storage.protocol.schema import snake_name
from kraftsman.storage.protocol.uuids import Uuid

CASES = [(name, v) for name in schema.names() for v in schema.load(name).versions]
IDS = [f"{n}-v{v}" for n, v in CASES]
FILLERS = {"bool": True, "float64": 1.5, "uuid": Uuid(b"\x11" * 16), "string": "ab", "bytes": b"xy",
           "records": b"xy"}


def hexb(text: str) -> bytes:
    """Return the bytes of commented hex: '#' starts a comment, whitespace is ignored."""
    return bytes.fromhex(re.sub(r"#[^\n]*", "", text))


def filled(name: str, version: int):
    """Build a message of `name` with every field present at `version` set (arrays hold one element)."""
    spec, top = schema.load(name), codec.message_class(name)

    def value(t: str):
        if t in FILLERS:
            return FILLERS[t]
        if t in schema.PRIMITIVES:
            return 7
        return build(getattr(top, t), spec.struct(t).fields)

    def build(cls, fields):
        present = [f for f in fields if version in f.versions]
        return cls(**{snake_name(f.name): [value(f.element_type)] if f.is_array else value(f.type) for f in present})

    return build(top, spec.fields)


def assert_codec_error(name: str, version: int, data: bytes, end: int | None = None):
    """Decode `data` and require a CodecError with a position inside the buffer."""
    with pytest.raises(codec.CodecError) as e:
        codec.decoder(name, version)(data, 0, end)
    assert isinstance(e.value.position, int) and 0 <= e.value.position <= len(data)
    assert "\n" not in str(e.value)
    return e.value


@pytest.mark.parametrize("name,version", CASES, ids=IDS)
def test_every_truncation_is_a_codec_error(name, version):
    data = codec.encode(name, version, filled(name, version))
    assert codec.decode(name, version, data) == filled(name, version)
    for cut in range(len(data)):
        assert_codec_error(name, version, data[:cut])


@pytest.mark.parametrize("name,version", CASES, ids=IDS)
def test_random_mutations_raise_only_codec_errors(name, version):
    rng = random.Random(f"{name}-{version}")
    data = codec.encode(name, version, filled(name, version)) or b"\x00"
    decode = codec.decoder(name, version)
    for _ in range(40):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(len(mutated))] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        try:
            decode(bytes(mutated))
        except codec.CodecError as e:
            assert isinstance(e.position, int)


@pytest.mark.parametrize("name,version,hex_text", [
    ("MetadataRequest", 0, "00000001 fffe"),                # non-nullable string with length -2
    ("MetadataRequest", 0, "fffffff9"),                     # non-nullable array with count -7 (nullable 1+)
    ("MetadataRequest", 0, "7fffffff 0001 74"),             # array count far beyond the buffer
    ("MetadataRequest", 0, "00000002 0001 74 7fff 74"),     # string length far beyond the buffer
    ("TopicRecord", 0, "00"),                               # compact non-nullable string is null
    ("TopicRecord", 0, "03 fffe" + "11" * 16 + "00"),       # invalid UTF-8
    ("TopicRecord", 0, "80 80 80 80 80 80"),                # uvarint longer than 5 bytes
    ("TopicRecord", 0, "02 74" + "11" * 15),                # uuid cut short
    ("VotersRecord", 0, "0000 ffffffff0f"),                 # compact count 2^32-2 elements
    ("UserScramCredentialRecord", 0, "02 61 01 00 01 01 00000001 00"),   # compact bytes null, not nullable
    ("NoOpRecord", 0, "01 05 09 00"),                       # tagged field claims 9 bytes, 1 left
    ("NoOpRecord", 0, "05 00 00"),                          # 5 tagged fields announced, 1 present
    ("BrokerRegistrationChangeRecord", 0, "00000001 0000000000000001 01 00 04 01"),  # Fenced: size 4, int8
    ("BrokerRegistrationChangeRecord", 0, "00000001 0000000000000001 01 00 02 01 00"),  # int8 in a 2-byte tag
    ("BrokerRegistrationChangeRecord", 2,
     "00000001 0000000000000001 01 02 01 03" + "11" * 16),  # LogDirs: size 1, holds an array of 2 uuids
    ("FetchRequest", 17, "01 01 05"),                       # tagged struct runs past the end
    ("FetchSnapshotResponse", 1, "00000000 0000 02 02 74 02 00000000 0000 ff"),  # struct where a field was due
])
def test_crafted_malformed_input(name, version, hex_text):
    assert_codec_error(name, version, hexb(hex_text))


def test_any_negative_length_reads_as_null_when_nullable():
    # like Kafka's generated readers: a length < 0 means null, not only -1
    data = hexb("0000000a 00000001 0001 74 0025 fffb")  # ErrorMessage length -5
    assert codec.decode("CreatePartitionsResponse", 0, data).results[0].error_message is None
    data = hexb("00000001 0001 74 00000001 00000000 0000 0000000000000000 fffffffd")  # Records length -3
    assert codec.decode("FetchResponse", 0, data).responses[0].partitions[0].records is None


def test_end_bounds_the_decoder_inside_a_larger_buffer():
    body = hexb("00000001 0000000000000002 00")  # FenceBrokerRecord, 13 bytes
    decode = codec.decoder("FenceBrokerRecord", 0)
    assert decode(body + b"\xff" * 8, 0, 13)[1] == 13
    for end in range(13):
        error = assert_codec_error("FenceBrokerRecord", 0, body + b"\x00" * 8, end)
        assert error.position <= 13


def test_bad_values_do_not_encode():
    cls = codec.message_class("FenceBrokerRecord")
    for bad in (cls(id=2 ** 31, epoch=0), cls(id="1", epoch=0), cls(id=None, epoch=0)):
        with pytest.raises(codec.CodecError):
            codec.encode("FenceBrokerRecord", 0, bad)
    with pytest.raises(codec.CodecError):
        codec.encode("TopicRecord", 0, codec.message_class("TopicRecord")(name=None))
    with pytest.raises(codec.CodecError):  # a non-ignorable field absent at v0 must stay default
        codec.encode("LeaderChangeMessage", 0, codec.message_class("LeaderChangeMessage")(
            voters=[codec.message_class("LeaderChangeMessage").Voter(voter_directory_id=Uuid(b"\x01" * 16))]))
