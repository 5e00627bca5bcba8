"""FileLog recovery: torn, corrupt and zero-filled tails, stray temp files, crashes while installing a
snapshot; the files it writes read back with kraftsman's dump-log and image loader."""
from __future__ import annotations

import io
import os

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run as dump_log
from kraftsman.controller.image.loader import load_directory
from kraftsman.controller.raft import records as R
from kraftsman.storage.errors import StorageError
from kraftsman.storage.log.metadata_log import FileLog
from kraftsman.storage.log.snapshot import snapshot_bytes
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record
from kraftsman.storage.records.raft_values import Batch, Snapshot

SEGMENT = "00000000000000000000.log"


def build(directory, n=5, segment_bytes=1 << 20):
    """Write n one-record batches (epochs 1, 1, 2, 2, ...), flush and close; return the batches."""
    log = FileLog.open(directory, segment_bytes=segment_bytes)
    batches = [R.data_batch([bytes([i]) * (10 + i)], i, 1 + i // 2, timestamp=1000 + i) for i in range(n)]
    for b in batches:
        log.append(b)
    log.flush()
    log.close()
    return batches


def assert_holds(directory, batches):
    """Reopen and check the log holds exactly `batches`, and the files hold nothing after them."""
    log = FileLog.open(directory)
    end = batches[-1].next_offset if batches else 0
    assert (log.start_offset, log.end_offset) == (0, end)
    assert [b.data for b in log.read(0, 1 << 30)] == [b.data for b in batches]
    assert log.last_epoch() == (batches[-1].epoch if batches else 0)
    log.close()
    sizes = sum(p.stat().st_size for p in directory.glob("*.log"))
    assert sizes == sum(len(b.data) for b in batches)


def test_tail_cut_at_every_byte_of_the_last_batch_recovers_the_prefix(tmp_path):
    batches = build(tmp_path / "good")
    whole = (tmp_path / "good" / SEGMENT).read_bytes()
    last = len(batches[-1].data)
    for cut in range(last):
        d = tmp_path / f"cut{cut}"
        d.mkdir()
        (d / SEGMENT).write_bytes(whole[:len(whole) - last + cut])
        assert_holds(d, batches[:-1])


def test_appending_after_a_cut_tail_continues_the_log(tmp_path):
    batches = build(tmp_path)
    path = tmp_path / SEGMENT
    path.write_bytes(path.read_bytes()[:-7])
    log = FileLog.open(tmp_path)
    again = R.data_batch([b"again"], batches[-1].base_offset, 9)
    log.append(again)
    log.flush()
    log.close()
    assert_holds(tmp_path, batches[:-1] + [again])


# The batch CRC covers the bytes from `attributes` (offset 21) on; the base offset, length and magic
# are checked by the reader and the offset sequence. partitionLeaderEpoch (bytes 12-15) is covered by
# nothing in Kafka's format, so a flipped epoch byte is not detectable and is left out here.
@pytest.mark.parametrize("region", ["base_offset", "length", "magic", "crc", "body"])
def test_a_flipped_byte_in_the_tail_batch_drops_that_batch(tmp_path, region):
    batches = build(tmp_path / "good")
    whole = (tmp_path / "good" / SEGMENT).read_bytes()
    start = len(whole) - len(batches[-1].data)
    spans = {"base_offset": range(8), "length": range(8, 12), "magic": range(16, 17), "crc": range(17, 21),
             "body": range(21, len(batches[-1].data))}
    for i in spans[region]:
        for mask in (0x01, 0x80):
            d = tmp_path / f"flip{i}-{mask}"
            d.mkdir()
            data = bytearray(whole)
            data[start + i] ^= mask
            (d / SEGMENT).write_bytes(bytes(data))
            assert_holds(d, batches[:-1])


def test_zero_filled_tail_is_cut(tmp_path):
    batches = build(tmp_path)
    with open(tmp_path / SEGMENT, "ab") as f:
        f.write(bytes(4096))
    assert_holds(tmp_path, batches)


def test_torn_tail_only_in_the_last_segment_and_older_segments_kept(tmp_path):
    batches = build(tmp_path, n=6, segment_bytes=170)  # 61 + 17 + i bytes a batch: two per segment
    names = sorted(p.name for p in tmp_path.glob("*.log"))
    assert names == [f"{o:020d}.log" for o in (0, 2, 4)]
    last = tmp_path / names[-1]
    last.write_bytes(last.read_bytes()[:-1])
    assert_holds(tmp_path, batches[:-1])


def test_corruption_in_an_older_segment_is_a_one_line_storage_error(tmp_path):
    build(tmp_path, n=6, segment_bytes=170)
    first = tmp_path / SEGMENT
    data = bytearray(first.read_bytes())
    data[40] ^= 0xFF
    first.write_bytes(bytes(data))
    with pytest.raises(StorageError) as info:
        FileLog.open(tmp_path)
    message = str(info.value)
    assert "\n" not in message and SEGMENT in message and "crc" in message.lower()


def test_stray_temp_files_are_removed_and_complete_snapshots_kept(tmp_path):
    build(tmp_path)
    good = tmp_path / f"{3:020d}-{1:010d}.checkpoint"
    good.write_bytes(b"snapshot")
    strays = [f"{5:020d}-{2:010d}.checkpoint.part", "leader-epoch-checkpoint.tmp",
              f"{1:020d}-{1:010d}.checkpoint.deleted", f"{4:020d}-{2:010d}.checkpoint.1a2b3c4d.tmp"]
    for name in strays:
        (tmp_path / name).write_bytes(b"half")
    log = FileLog.open(tmp_path)
    assert not any((tmp_path / name).exists() for name in strays)
    assert log.latest_snapshot() == Snapshot.of(3, 1, b"snapshot")
    assert (log.start_offset, log.end_offset) == (0, 5)  # the restart rule: the log starts at its first segment
    assert [b.base_offset for b in log.read(0, 1 << 30)] == [0, 1, 2, 3, 4]  # the log below it is kept
    log.close()


def test_snapshot_past_the_log_end_means_a_crash_while_installing_it(tmp_path):
    build(tmp_path)
    (tmp_path / f"{40:020d}-{7:010d}.checkpoint").write_bytes(b"leader's snapshot")
    log = FileLog.open(tmp_path)
    assert (log.start_offset, log.end_offset, log.last_epoch()) == (40, 40, 7)
    assert log.read(0, 1 << 30) == [] and list(tmp_path.glob("*.log")) == []
    assert log.end_offset_for_epoch(9) == (7, 40)
    log.append(R.data_batch([b"x"], 40, 7))
    log.close()
    assert [p.name for p in tmp_path.glob("*.log")] == [f"{40:020d}.log"]


def test_snapshot_write_leaves_no_part_file_and_matches_kafka_name(tmp_path):
    log = FileLog.open(tmp_path)
    for i in range(3):
        log.append(R.data_batch([b"v"], i, 1))
    log.store_snapshot(Snapshot.of(3, 1, b"bytes"))
    assert sorted(os.listdir(tmp_path)) == [SEGMENT, "00000000000000000003-0000000001.checkpoint"]
    log.close()


def test_bad_directory_is_a_one_line_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match="cannot create the metadata log directory"):
        FileLog.open(tmp_path / "file" / "__cluster_metadata-0")


# ------------------------------------------------------------------ other readers of the files

T1 = Uuid.from_string("C_0Az8SmSdGlXfHdPNnJ0A")
T2 = Uuid.from_string("b2mD6fJ4QxGUS4gQ5jJdEg")


def rec(record_type: str, version: int = 0, **fields) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(codec.message_class(record_type)(**fields), version)


def metadata_log(directory):
    """A snapshot holding topic foo at offset 2, then a log adding topic bar, across two segments."""
    log = FileLog.open(directory, segment_bytes=200)
    first = [rec("FeatureLevelRecord", name="metadata.version", feature_level=21),
             rec("TopicRecord", name="foo", topic_id=T1)]
    for i, r in enumerate(first):
        log.append(Batch(R.data_batch([write_metadata_record(r)], i, 1).data))
    log.store_snapshot(Snapshot.of(2, 1, snapshot_bytes(first, epoch=1)))
    log.delete_before(2)
    later = [rec("TopicRecord", name="bar", topic_id=T2),
             rec("PartitionRecord", partition_id=0, topic_id=T2, replicas=[1], isr=[1], leader=1,
                 leader_epoch=0, partition_epoch=0)]
    log.append(R.control_batch([R.leader_change(1, [1], [1])], 2, 2))
    for r in later:
        log.append(Batch(R.data_batch([write_metadata_record(r)], log.end_offset, 2).data))
    log.flush()
    log.close()


def test_segments_decode_with_kafka_dump_log(tmp_path):
    metadata_log(tmp_path)
    names = sorted(p.name for p in tmp_path.glob("*.log"))
    assert len(names) >= 2
    out, err = io.StringIO(), io.StringIO()
    status = run_command(dump_log, ["--cluster-metadata-decoder", "--files", ",".join(names)],
                         Environment(stdout=out, stderr=err, cwd=str(tmp_path)), prog="kafka-dump-log")
    text = out.getvalue()
    assert (status, err.getvalue()) == (0, "")
    base_offsets = [int(line.split()[1]) for line in text.splitlines() if line.startswith("baseOffset:")]
    assert base_offsets == [0, 1, 2, 3, 4]
    assert text.count("isvalid: true") == 5 and "isvalid: false" not in text
    assert '"name":"bar"' in text and "controlType: LEADER_CHANGE(2)" in text


def test_directory_loads_with_the_image_loader(tmp_path):
    metadata_log(tmp_path / "__cluster_metadata-0")
    result = load_directory(tmp_path)
    assert sorted(result.image.topics.by_name) == ["bar", "foo"]
    assert result.faults == [] and result.warnings == []


def test_a_segment_whose_first_batch_does_not_match_its_name_is_corrupt(tmp_path):
    build(tmp_path, n=6, segment_bytes=170)  # segments 0, 2, 4
    os.rename(tmp_path / f"{2:020d}.log", tmp_path / f"{3:020d}.log")
    with pytest.raises(StorageError, match="first batch at offset 2 in a segment named for offset 3"):
        FileLog.open(tmp_path)


@pytest.mark.parametrize("victim", [0, 2, 3])
def test_a_damaged_batch_followed_by_valid_ones_is_refused_not_truncated(tmp_path, victim):
    batches = build(tmp_path)
    path = tmp_path / SEGMENT
    data = bytearray(path.read_bytes())
    start = sum(len(b.data) for b in batches[:victim])
    data[start + 30] ^= 0x40                      # inside the CRC-covered body of batch `victim`
    path.write_bytes(bytes(data))
    with pytest.raises(StorageError) as info:
        FileLog.open(tmp_path)
    message = str(info.value)
    assert "\n" not in message and SEGMENT in message
    assert f"corrupt batch at position {start} (offset {victim}:" in message
    assert f"valid batch at position {start + len(batches[victim].data)} (offset {victim + 1})" in message
    assert path.read_bytes() == bytes(data)       # nothing was cut


def test_a_voter_with_a_damaged_log_refuses_to_start_in_one_line(tmp_path):
    from kraftsman.cli.controller.tool import run as controller

    log_dir = tmp_path / "meta"
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:1\n"
                      f"listeners=CONTROLLER://127.0.0.1:0\ncontroller.listener.names=CONTROLLER\n"
                      f"log.dirs={log_dir}\n")
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err)
    from kraftsman.cli.storage.tool import run as storage

    assert storage(["format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", str(config)], env) == 0
    partition = log_dir / "__cluster_metadata-0"
    partition.mkdir(exist_ok=True)
    batches = build(partition)
    data = bytearray((partition / SEGMENT).read_bytes())
    data[30] ^= 0x40
    (partition / SEGMENT).write_bytes(bytes(data))
    err.seek(0), err.truncate()
    status = run_command(controller, ["--config", str(config)], env, prog="kafka-controller")
    lines = err.getvalue().splitlines()
    assert status == 1 and "Traceback" not in err.getvalue()
    assert any(SEGMENT in line and "refusing to truncate" in line for line in lines), lines
    assert len((partition / SEGMENT).read_bytes()) == sum(len(b.data) for b in batches)


def test_a_cut_torn_tail_is_fsynced_once_and_after_the_cut(tmp_path, monkeypatch):
    """Recovery makes the cut durable: the segment is fsynced after its ftruncate, and once (every segment is
    synced at the end of open(), the cut one with them)."""
    batches = build(tmp_path)
    with open(tmp_path / SEGMENT, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x01")  # a write torn by a crash
    events = []
    real_fsync, real_ftruncate = os.fsync, os.ftruncate

    def name(fd):
        return os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))

    def fsync(fd):
        events.append(("fsync", name(fd)))
        real_fsync(fd)

    def ftruncate(fd, size):
        events.append(("ftruncate", name(fd)))
        real_ftruncate(fd, size)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    FileLog.open(tmp_path).close()
    segment = [e for e in events if e[1] == SEGMENT]
    assert segment == [("ftruncate", SEGMENT), ("fsync", SEGMENT)]
    monkeypatch.undo()
    assert_holds(tmp_path, batches)
