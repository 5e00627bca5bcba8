"""Fuzz the metadata record decoder, every codec schema and version, control records and snapshots.

Oracle: read_metadata_record and decode_data_batch raise only MetadataParseError (CorruptRecordError
for the batch itself); codec.decode raises only CodecError, and whatever it decodes renders as JSON
(dump-log prints it); control records raise ControlRecordError or CodecError; SnapshotReader raises
only the storage layer's known errors.
"""
from __future__ import annotations

import pytest
from fuzzkit import (
    CORPUS,
    SMALL_ALLOCATION,
    check,
    codec_cases,
    corpus,
    fuzz_inputs,
    fuzz_settings,
    mutated,
    peak_bytes,
    real_files,
    regressions,
    single_mutations,
)
from hypothesis import given
from hypothesis import strategies as st

from kraftsman.storage.errors import known_errors
from kraftsman.storage.log.snapshot import SnapshotReader
from kraftsman.storage.protocol import codec, schema
from kraftsman.storage.records import control
from kraftsman.storage.records.batch import CorruptRecordError, RecordBatch
from kraftsman.storage.records.control import ControlRecordError
from kraftsman.storage.records.metadata import (
    MetadataParseError,
    decode_data_batch,
    read_metadata_record,
    record_to_json,
)

CODEC_CASES = codec_cases()
RECORD_SEEDS = corpus("metadata_record")
BATCH_SEEDS = corpus("batch")[:2] + corpus("compression") + corpus("metadata_batch")
SNAPSHOT_SEEDS = corpus("snapshot") + real_files("*.checkpoint", limit=8)
STORAGE_ERRORS = tuple(e for e in known_errors() if e is not OSError)


def decode_json(name: str, version: int, data: bytes):
    """Decode `data` as `name` at `version` and render what it got as JSON."""
    return codec.to_json(name, version, codec.decode(name, version, data))


def read_record(value: bytes):
    """Decode one metadata record value and render it as dump-log does."""
    return record_to_json(read_metadata_record(value))


def decode_batch(data: bytes):
    """Decode a data batch both ways (fast raft path, general path) and check they agree."""
    batch = RecordBatch(data, 0)
    try:
        fast = decode_data_batch(batch)
    except (CorruptRecordError, MetadataParseError):
        return None
    try:
        general = [(r.offset, read_metadata_record(r.value)) for r in batch.records()]
    except (CorruptRecordError, MetadataParseError) as e:
        raise AssertionError(f"decode_data_batch accepted a batch the general parser refuses ({e})") from None
    assert fast == general
    return fast


def read_snapshot(path, data: bytes):
    """Write `data` as a snapshot file and read every record of it."""
    path.write_bytes(data)
    reader = SnapshotReader(path)
    return [record_to_json(amv) for _, _, amv in reader.metadata_records()]


def test_codec_corpus_files_name_a_known_schema_and_version():
    known = {f"{n}-v{v}" for n in schema.names() for v in schema.load(n).versions}
    names = {p.stem for p in (CORPUS / "codec").glob("*.bin")}
    assert len(names) >= 240 and names <= known, names - known


@pytest.mark.parametrize("name,version,seed", CODEC_CASES, ids=[f"{n}-v{v}" for n, v, _ in CODEC_CASES])
def test_single_byte_mutations_of_every_schema_and_version(name, version, seed):
    assert decode_json(name, version, seed)
    for data in single_mutations(seed, max_positions=48):
        check(lambda d: decode_json(name, version, d), data, (codec.CodecError,))


@fuzz_settings(400)
@given(st.data())
def test_codec_decode_any_schema(data):
    name, version, seed = data.draw(st.sampled_from(CODEC_CASES))
    version = data.draw(st.sampled_from([version, *schema.load(name).versions]))
    raw = data.draw(mutated([seed]) | st.binary(max_size=64))
    check(lambda d: decode_json(name, version, d), raw, (codec.CodecError,))


@fuzz_settings(300)
@given(fuzz_inputs(RECORD_SEEDS, max_size=64))
def test_metadata_record_decoder(value):
    check(read_record, value, (MetadataParseError,))


@pytest.mark.parametrize("seed", range(len(RECORD_SEEDS)))
def test_single_byte_mutations_of_metadata_records(seed):
    for value in single_mutations(RECORD_SEEDS[seed], max_positions=48):
        check(read_record, value, (MetadataParseError,))


@fuzz_settings(200)
@given(fuzz_inputs(BATCH_SEEDS, max_size=200))
def test_decode_data_batch(data):
    check(decode_batch, data, (CorruptRecordError, MetadataParseError))


@fuzz_settings(200)
@given(st.sampled_from(sorted(control.SCHEMAS) + [0, 1, 7, -1]), fuzz_inputs(corpus("control"), max_size=48),
       st.binary(max_size=6))
def test_control_records(kind, value, key):
    check(control.parse_control_type, key, (ControlRecordError,))
    check(lambda v: control.decode_control(kind, v), value, (ControlRecordError, codec.CodecError))
    check(control.decode_txn_marker, value, (ControlRecordError,))


@fuzz_settings(150)
@given(data=fuzz_inputs(SNAPSHOT_SEEDS, max_size=300))
def test_snapshot_reader(tmp_path_factory, data):
    path = tmp_path_factory.getbasetemp() / "00000000000000000010-0000000002.checkpoint"
    check(lambda d: read_snapshot(path, d), data, STORAGE_ERRORS)


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in regressions("metadata_batch")])
def test_metadata_batch_regressions(name, data):
    check(decode_batch, data, (CorruptRecordError, MetadataParseError))


def test_bytes_after_the_last_raft_shaped_record_are_refused():
    data = dict(regressions("metadata_batch"))["trailing-bytes-after-last-record.bin"]
    with pytest.raises(CorruptRecordError, match="Incorrect declared batch size, records still remaining in file"):
        decode_data_batch(RecordBatch(data, 0))


@pytest.mark.parametrize("name,version", [("RegisterBrokerRecord", 3), ("CreateTopicsRequest", 7),
                                          ("FetchResponse", 17), ("VotersRecord", 0)])
def test_huge_declared_counts_and_lengths_allocate_little(name, version):
    seed = next(s for n, v, s in CODEC_CASES if (n, v) == (name, version))
    for at in range(len(seed) - 3):
        for big in (b"\x7f\xff\xff\xff", b"\xff\xff\xff\x0f"):
            data = seed[:at] + big + seed[at + 4:]
            assert peak_bytes(lambda: check(lambda d: decode_json(name, version, d), data,
                                            (codec.CodecError,))) < SMALL_ALLOCATION


def test_a_null_record_value_is_a_metadata_parse_error():
    with pytest.raises(MetadataParseError, match="Null metadata record value"):
        read_metadata_record(None)
    data = dict(regressions("metadata_batch"))["null-record-value-minimal.bin"]
    with pytest.raises(MetadataParseError, match="Null metadata record value"):
        decode_data_batch(RecordBatch(data, 0))
