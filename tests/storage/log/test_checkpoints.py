"""partition.metadata, leader-epoch-checkpoint and offset checkpoints: Kafka's format and messages."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftsman.storage.log import checkpoints as cp
from kraftsman.storage.log.atomic import FileSystem
from kraftsman.storage.log.checkpoints import CheckpointError, EpochEntry, PartitionMetadata, TopicPartition
from kraftsman.storage.protocol.uuids import METADATA_TOPIC_ID, ZERO_UUID

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "kraft-real" / "data"
LOC = "/data/__cluster_metadata-0/file"
PM_TEXT = "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"


def _require_real_data() -> None:
    if not DATA.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")


def _real(*names: str) -> list:
    if not DATA.is_dir():
        return [None]
    return sorted(p for name in names for p in DATA.rglob(name))


def _id(path) -> str:
    return "absent" if path is None else str(path.relative_to(DATA))


def _error(fn, *args) -> str:
    with pytest.raises(CheckpointError) as info:
        fn(*args)
    return str(info.value)


# ---------------------------------------------------------------- partition.metadata

@pytest.mark.parametrize("text", [
    PM_TEXT, PM_TEXT + "\n", PM_TEXT.replace("\n", "\r\n"), "version:\t 0\ntopic_id:  AAAAAAAAAAAAAAAAAAAAAQ",
    "anything: 0\nelse: AAAAAAAAAAAAAAAAAAAAAQ", PM_TEXT + "\nextra lines are not read",
    ": 0\n: AAAAAAAAAAAAAAAAAAAAAQ",
])
def test_partition_metadata_parses(text):
    assert cp.parse_partition_metadata(text, LOC) == PartitionMetadata(0, METADATA_TOPIC_ID)


def test_partition_metadata_serializes_exactly():
    assert cp.serialize_partition_metadata(METADATA_TOPIC_ID) == PM_TEXT


@pytest.mark.parametrize("text,message", [
    ("", f"Malformed line in checkpoint file [{LOC}]: null"),
    ("version: 0", f"Malformed line in checkpoint file [{LOC}]: null"),
    ("version 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Malformed line in checkpoint file [{LOC}]: version 0"),
    ("version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Malformed line in checkpoint file [{LOC}]: version:0"),
    ("version: x\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Malformed line in checkpoint file [{LOC}]: version: x"),
    ("version: 0 \ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Malformed line in checkpoint file [{LOC}]: version: 0 "),
    ("version: 0: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Malformed line in checkpoint file [{LOC}]: version: 0: 1"),
    ("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", f"Unrecognized version of partition metadata file + ({LOC}): 1"),
    ("version: 0\ntopic_id AAAAAAAAAAAAAAAAAAAAAQ",
     f"Malformed line in checkpoint file [{LOC}]: topic_id AAAAAAAAAAAAAAAAAAAAAQ"),
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", f"Invalid topic ID in partition metadata file ({LOC})"),
    ("version: 0\ntopic_id: abc", "Input string `abc` decoded as 2 bytes, which is not equal to the expected "
     "16 bytes of a base64-encoded UUID"),
    (b"version: 0\ntopic_id: \xff", f"Malformed input in checkpoint file [{LOC}]: not valid UTF-8 at byte 21"),
])
def test_partition_metadata_errors(text, message):
    assert _error(cp.parse_partition_metadata, text, LOC) == message


# ---------------------------------------------------------------- leader-epoch-checkpoint

@pytest.mark.parametrize("text,entries", [
    ("0\n2\n1 0\n3 354\n", [EpochEntry(1, 0), EpochEntry(3, 354)]),
    ("0\r\n1\r\n1\t0\r\n", [EpochEntry(1, 0)]),
    ("0\n1\n1 0 \n", [EpochEntry(1, 0)]),
    ("0\n1\n1 9223372036854775807", [EpochEntry(1, 2**63 - 1)]),
    ("0\n0\n", []), ("0\n", []), ("0", []), ("", []), (b"", []),
])
def test_leader_epoch_checkpoint_parses(text, entries):
    assert cp.parse_leader_epoch_checkpoint(text, LOC) == entries


@pytest.mark.parametrize("text,message", [
    ("1\n0\n", f"Unrecognised version:1, expected version: 0 in checkpoint file at: {LOC}"),
    ("x\n", f"Malformed line in checkpoint file [{LOC}]: x"),
    ("\n", f"Malformed line in checkpoint file [{LOC}]: "),
    ("0\nx\n", f"Malformed line in checkpoint file [{LOC}]: x"),
    ("0\n-1\n", f"Malformed line in checkpoint file [{LOC}]: -1"),
    ("0\n2\n1 0\n", f"Expected [2] entries in checkpoint file [{LOC}], but found only [1]"),
    ("0\n0\n1 0\n", f"Expected [0] entries in checkpoint file [{LOC}], but found only [1]"),
    ("0\n1\n1 0 5\n", f"Malformed line in checkpoint file [{LOC}]: 1 0 5"),
    ("0\n1\n 1 0\n", f"Malformed line in checkpoint file [{LOC}]:  1 0"),
    ("0\n1\n1 x\n", f"Malformed line in checkpoint file [{LOC}]: 1 x"),
    ("0\n1\n2147483648 0\n", f"Malformed line in checkpoint file [{LOC}]: 2147483648 0"),
    ("0\n1\n\n", f"Malformed line in checkpoint file [{LOC}]: "),
    (b"0\n1\n1 \xc3\n", f"Malformed input in checkpoint file [{LOC}]: not valid UTF-8 at byte 6"),
])
def test_leader_epoch_checkpoint_errors(text, message):
    assert _error(cp.parse_leader_epoch_checkpoint, text, LOC) == message


def test_leader_epoch_checkpoint_serializes_exactly():
    entries = [EpochEntry(1, 0), EpochEntry(2, 298)]
    assert cp.serialize_leader_epoch_checkpoint(entries) == "0\n2\n1 0\n2 298\n"
    assert cp.serialize_leader_epoch_checkpoint([]) == "0\n0\n"
    assert _error(cp.serialize_leader_epoch_checkpoint, [EpochEntry(2**31, 0)]) == \
        "Invalid leader epoch entry 2147483648 0"


# ---------------------------------------------------------------- offset checkpoints

def test_offset_checkpoint_parses_and_serializes():
    text = "0\n3\n__consumer_offsets 13 53\nconnect-offsets 8 0\n__consumer_offsets 13 60\n"
    offsets = cp.parse_offset_checkpoint(text, LOC)
    assert offsets == {TopicPartition("__consumer_offsets", 13): 60, TopicPartition("connect-offsets", 8): 0}
    assert cp.serialize_offset_checkpoint(offsets) == "0\n2\n__consumer_offsets 13 60\nconnect-offsets 8 0\n"
    assert str(TopicPartition("coffee", 0)) == "coffee-0"


@pytest.mark.parametrize("text,message", [
    ("0\n1\ntopic 0\n", f"Malformed line in checkpoint file [{LOC}]: topic 0"),
    ("0\n1\ntopic x 0\n", f"Malformed line in checkpoint file [{LOC}]: topic x 0"),
    ("0\n1\ntopic 0 1.5\n", f"Malformed line in checkpoint file [{LOC}]: topic 0 1.5"),
    ("0\n2\ntopic 0 1\n", f"Expected [2] entries in checkpoint file [{LOC}], but found only [1]"),
    ("2\n", f"Unrecognised version:2, expected version: 0 in checkpoint file at: {LOC}"),
])
def test_offset_checkpoint_errors(text, message):
    assert _error(cp.parse_offset_checkpoint, text, LOC) == message


@pytest.mark.parametrize("offsets,message", [
    ({TopicPartition("a b", 0): 1}, "Invalid topic partition for an offset checkpoint: a b-0"),
    ({TopicPartition("", 0): 1}, "Invalid topic partition for an offset checkpoint: -0"),
    ({TopicPartition("t", 2**31): 1}, "Invalid topic partition for an offset checkpoint: t-2147483648"),
    ({TopicPartition("t", 0): 2**63}, "Invalid offset 9223372036854775808 for t-0"),
])
def test_offset_checkpoint_write_refusals(offsets, message):
    assert _error(cp.serialize_offset_checkpoint, offsets) == message


# ---------------------------------------------------------------- files

class RecordingFileSystem(FileSystem):
    def __init__(self):
        self.opened = []

    def open_write(self, path):
        self.opened.append(Path(path).name)
        return super().open_write(path)


def test_writes_go_through_tmp_files(tmp_path):
    fs = RecordingFileSystem()
    (tmp_path / "partition.metadata.tmp").write_bytes(b"stale")
    cp.write_partition_metadata(tmp_path, METADATA_TOPIC_ID, fs=fs)
    cp.write_leader_epoch_checkpoint(tmp_path, [EpochEntry(1, 0)], fs=fs)
    offsets = {TopicPartition("t", 0): 5}
    cp.write_offset_checkpoint(tmp_path / cp.RECOVERY_POINT_OFFSET_CHECKPOINT_NAME, offsets, fs=fs)
    assert fs.opened == ["partition.metadata.tmp", "leader-epoch-checkpoint.tmp",
                         "recovery-point-offset-checkpoint.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "leader-epoch-checkpoint", "partition.metadata", "recovery-point-offset-checkpoint"]
    assert (tmp_path / "partition.metadata").read_bytes() == PM_TEXT.encode()
    assert cp.read_partition_metadata(tmp_path) == PartitionMetadata(0, METADATA_TOPIC_ID)
    assert cp.read_leader_epoch_checkpoint(tmp_path) == [EpochEntry(1, 0)]
    assert cp.read_offset_checkpoint(tmp_path / "recovery-point-offset-checkpoint") == offsets


def test_read_errors_name_the_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("leader-epoch-checkpoint").write_text("7\n")
    assert _error(cp.read_leader_epoch_checkpoint, "leader-epoch-checkpoint") == (
        f"Unrecognised version:7, expected version: 0 in checkpoint file at: {tmp_path / 'leader-epoch-checkpoint'}")
    Path("partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")
    assert _error(cp.read_partition_metadata, "partition.metadata") == (
        f"Invalid topic ID in partition metadata file ({tmp_path / 'partition.metadata'})")


def test_zero_topic_id_is_never_written(tmp_path):
    assert _error(cp.write_partition_metadata, tmp_path, ZERO_UUID).startswith("Invalid topic ID")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- properties

epochs = st.builds(EpochEntry, st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1))
topics = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\n\x0b\f\r"),
                 min_size=1, max_size=10)
offset_maps = st.dictionaries(st.builds(TopicPartition, topics, st.integers(-2**31, 2**31 - 1)),
                              st.integers(-2**63, 2**63 - 1), max_size=6)


@settings(max_examples=200)
@given(st.lists(epochs, max_size=8), offset_maps)
def test_serialize_then_parse_round_trips(entries, offsets):
    assert cp.parse_leader_epoch_checkpoint(cp.serialize_leader_epoch_checkpoint(entries).encode()) == entries
    assert cp.parse_offset_checkpoint(cp.serialize_offset_checkpoint(offsets).encode()) == offsets


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from("0123 -x:\n\r\tversion_topicidAQ") | st.characters(), max_size=60)
       | st.binary(max_size=60))
def test_random_input_raises_only_checkpoint_error(data):
    for parse in (cp.parse_partition_metadata, cp.parse_leader_epoch_checkpoint, cp.parse_offset_checkpoint):
        try:
            parse(data)
        except CheckpointError as e:
            assert "\n" not in str(e) and "\r" not in str(e)


# ---------------------------------------------------------------- real files written by Kafka

@pytest.mark.parametrize("path", _real("partition.metadata"), ids=_id)
def test_every_real_partition_metadata(path):
    _require_real_data()
    meta = cp.read_partition_metadata(path)
    assert meta == PartitionMetadata(0, METADATA_TOPIC_ID)
    assert cp.serialize_partition_metadata(meta.topic_id).encode() == path.read_bytes()


@pytest.mark.parametrize("path", _real("leader-epoch-checkpoint"), ids=_id)
def test_every_real_leader_epoch_checkpoint(path):
    _require_real_data()
    entries = cp.read_leader_epoch_checkpoint(path.parent)
    assert entries and entries == sorted(entries)
    assert cp.serialize_leader_epoch_checkpoint(entries).encode() == path.read_bytes()


@pytest.mark.parametrize("path", _real(*cp.OFFSET_CHECKPOINT_NAMES), ids=_id)
def test_every_real_offset_checkpoint(path):
    _require_real_data()
    raw = path.read_bytes()
    offsets = cp.read_offset_checkpoint(path)
    if raw:
        assert cp.serialize_offset_checkpoint(offsets).encode() == raw
    else:
        assert offsets == {}


def test_real_file_counts():
    _require_real_data()
    assert len(_real("partition.metadata")) >= 23
    assert len(_real("leader-epoch-checkpoint")) >= 23
    assert len(_real(*cp.OFFSET_CHECKPOINT_NAMES)) >= 70
