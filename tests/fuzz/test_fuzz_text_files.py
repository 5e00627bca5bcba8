"""Fuzz the small files of a log directory: .properties, meta.properties, quorum-state, checkpoints, indexes.

Oracle: each reader returns or raises its own error type (PropertiesError, MetaPropertiesError,
QuorumStateError, CheckpointError, CorruptIndexError); the index readers never raise on any length
(Kafka's read-only view rounds down) except through sanity checks and the producer snapshot's checks.
"""
from __future__ import annotations

import struct

import pytest
from fuzzkit import (
    SMALL_ALLOCATION,
    check,
    corpus,
    fuzz_inputs,
    fuzz_settings,
    peak_bytes,
    real_files,
    regressions,
    single_mutations,
)
from hypothesis import given
from hypothesis import strategies as st

from kraftsman.storage import properties
from kraftsman.storage.log import checkpoints, meta_properties, quorum_state
from kraftsman.storage.log.index import (
    CorruptIndexError,
    OffsetIndex,
    TimeIndex,
    read_producer_snapshot,
    read_txn_index,
)
from kraftsman.storage.records.crc import crc32c

PROPERTIES_SEEDS = corpus("properties") + corpus("meta_properties") + real_files("meta.properties", limit=6)
QUORUM_SEEDS = corpus("quorum_state") + real_files("quorum-state", limit=6)
CHECKPOINT_SEEDS = corpus("checkpoints") + real_files("*checkpoint", "partition.metadata", limit=12)
INDEX_SEEDS = corpus("index") + real_files("*.index", "*.timeindex", "*.snapshot", limit=12)
CHECKPOINT_PARSERS = (checkpoints.parse_partition_metadata, checkpoints.parse_leader_epoch_checkpoint,
                      checkpoints.parse_offset_checkpoint)


def read_properties(path, data: bytes):
    """Write `data` to `path`, then read it as properties and as meta.properties."""
    path.write_bytes(data)
    props = check(properties.load, path, (properties.PropertiesError,))
    return props, check(meta_properties.read, path, (meta_properties.MetaPropertiesError,))


def read_indexes(folder, data: bytes):
    """Read `data` as every kind of segment side file, with sanity checks and lookups."""
    for suffix, cls in ((".index", OffsetIndex), (".timeindex", TimeIndex)):
        path = folder / f"00000000000000000100{suffix}"
        path.write_bytes(data)
        index = cls(path)
        index.last_entry()
        if cls is OffsetIndex:
            index.lookup(150)
        check(lambda _: index.sanity_check(), data, (CorruptIndexError,))
    path = folder / "00000000000000000100.txnindex"
    path.write_bytes(data)
    read_txn_index(path)
    path = path.with_suffix(".snapshot")
    path.write_bytes(data)
    return check(read_producer_snapshot, path, (CorruptIndexError,))


def test_corpus_is_present():
    assert all(corpus(t) for t in ("properties", "meta_properties", "quorum_state", "checkpoints", "index"))


@fuzz_settings(300)
@given(fuzz_inputs(PROPERTIES_SEEDS, max_size=200))
def test_properties_and_meta_properties_text(data):
    text = data.decode("iso-8859-1")
    check(properties.loads, text, (properties.PropertiesError,))
    check(meta_properties.parse, text, (meta_properties.MetaPropertiesError,))


@fuzz_settings(100)
@given(data=fuzz_inputs(PROPERTIES_SEEDS, max_size=200))
def test_properties_files(tmp_path_factory, data):
    read_properties(tmp_path_factory.getbasetemp() / "meta.properties", data)


@fuzz_settings(100)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4))
def test_properties_roundtrip(mapping):
    assert properties.loads(properties.dumps(mapping)) == mapping


@fuzz_settings(300)
@given(fuzz_inputs(QUORUM_SEEDS, max_size=200))
def test_quorum_state(data):
    state = check(quorum_state.parse, data, (quorum_state.QuorumStateError,))
    if state is not None and state.data_version in (0, 1):
        check(quorum_state.serialize, state, (quorum_state.QuorumStateError,))


@fuzz_settings(300)
@given(st.sampled_from(CHECKPOINT_PARSERS), fuzz_inputs(CHECKPOINT_SEEDS, max_size=120))
def test_checkpoint_files(parse, data):
    check(parse, data, (checkpoints.CheckpointError,))
    check(parse, data.decode("utf-8", "replace"), (checkpoints.CheckpointError,))


@pytest.mark.parametrize("seed", range(len(corpus("checkpoints") + corpus("quorum_state"))))
def test_single_byte_mutations_of_json_and_checkpoints(seed):
    data = (corpus("checkpoints") + corpus("quorum_state"))[seed]
    for mutant in single_mutations(data):
        check(quorum_state.parse, mutant, (quorum_state.QuorumStateError,))
        for parse in CHECKPOINT_PARSERS:
            check(parse, mutant, (checkpoints.CheckpointError,))


@fuzz_settings(200)
@given(data=fuzz_inputs(INDEX_SEEDS, max_size=120))
def test_index_files(tmp_path_factory, data):
    check(lambda d: read_indexes(tmp_path_factory.getbasetemp(), d), data, ())


REGRESSIONS = [(t, n, d) for t in ("properties", "quorum_state", "checkpoints", "index") for n, d in regressions(t)]


@pytest.mark.parametrize("target,name,data", REGRESSIONS, ids=[f"{t}/{n}" for t, n, _ in REGRESSIONS])
def test_regressions(target, name, data, tmp_path):
    read_properties(tmp_path / "meta.properties", data)
    check(quorum_state.parse, data, (quorum_state.QuorumStateError,))
    for parse in CHECKPOINT_PARSERS:
        check(parse, data, (checkpoints.CheckpointError,))
    check(lambda d: read_indexes(tmp_path, d), data, ())


@pytest.mark.parametrize("count", [2 ** 31 - 1, 2 ** 26, -1])
def test_producer_snapshot_with_a_huge_count_allocates_little(tmp_path, count):
    body = struct.pack(">i", count) + bytes(32)
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)
    assert peak_bytes(lambda: check(read_producer_snapshot, path, (CorruptIndexError,))) < SMALL_ALLOCATION
    with pytest.raises(CorruptIndexError):
        read_producer_snapshot(path)


def test_deeply_nested_quorum_state_json_is_refused():
    with pytest.raises(quorum_state.QuorumStateError):
        quorum_state.parse(b"[" * 100_000 + b"]" * 100_000)
