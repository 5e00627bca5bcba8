"""FileLog opens metadata log directories written by real Kafka (3.3 - 4.x): every batch Kafka 3.9's own
kafka-dump-log printed is indexed at the same offset, epoch and size, nothing is cut, and the epoch cache
agrees with the leader-epoch-checkpoint Kafka wrote."""
from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from kraftsman.controller.raft import records as R
from kraftsman.storage.log.checkpoints import read_leader_epoch_checkpoint
from kraftsman.storage.log.metadata_log import FileLog

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kraft-real"
EXPECTED = FIXTURES / "expected-kafka-3.9"
LINE = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .* partitionLeaderEpoch: (-?\d+) .* size: (\d+) ")


def folders() -> list[str]:
    """Partition folders holding a .log whose Kafka 3.9 dump is recorded (none when ../shared is absent)."""
    found = []
    for dump in sorted(EXPECTED.glob("**/__cluster_metadata-0/dump-log.cluster-metadata-decoder.txt.gz")):
        rel = dump.parent.relative_to(EXPECTED)
        if list((FIXTURES / "data" / rel).glob("*.log")):
            found.append(str(rel))
    return found or ["(absent)"]


def kafka_batches(rel: str) -> list[tuple[int, int, int, int]]:
    """Return (base offset, last offset, epoch, size) of each .log batch in Kafka's dump."""
    out, in_log = [], False
    with gzip.open(EXPECTED / rel / "dump-log.cluster-metadata-decoder.txt.gz", "rt") as f:
        for line in f:
            if line.startswith("Dumping "):
                in_log = line.rstrip().endswith(".log")
            elif in_log and line.startswith("baseOffset: "):
                out.append(tuple(int(g) for g in LINE.match(line).groups()))
    return out


def expected_epochs(rel: str, start: int, end: int) -> list[tuple[int, int]]:
    """Kafka's leader-epoch-checkpoint entries seen from a log holding [start, end)."""
    entries = [(e.epoch, e.start_offset) for e in read_leader_epoch_checkpoint(FIXTURES / "data" / rel)]
    entries = [(e, s) for e, s in entries if s < end]
    return [(e, start) for e, s in entries if s <= start][-1:] + [(e, s) for e, s in entries if s > start]


@pytest.mark.parametrize("rel", folders())
def test_real_kafka_directory_opens_as_kafka_dumped_it(tmp_path, kraft_real, rel):
    src = FIXTURES / "data" / rel
    copy = tmp_path / "__cluster_metadata-0"
    shutil.copytree(src, copy)  # recovery may write: never open the shared files themselves
    sizes = {p.name: p.stat().st_size for p in copy.glob("*.log")}
    dumped = kafka_batches(rel)
    with FileLog.open(copy) as log:
        assert {p.name: p.stat().st_size for p in copy.glob("*.log")} == sizes  # nothing was cut
        assert log.end_offset == dumped[-1][1] + 1
        got = [(b.base_offset, b.next_offset - 1, b.epoch, len(b.data)) for b in log.read(0, 1 << 62)]
        assert got == [b for b in dumped if b[0] >= log.start_offset]
        assert [(e.epoch, e.start_offset) for e in log.epochs.entries()] == \
            expected_epochs(rel, log.start_offset, log.end_offset)


def test_a_kafka_written_log_continues_after_reopen(tmp_path, kraft_real):
    copy = tmp_path / "__cluster_metadata-0"
    shutil.copytree(FIXTURES / "data" / "kafka-raft" / "data" / "kafka1" / "__cluster_metadata-0", copy)
    with FileLog.open(copy) as log:
        end, epoch = log.end_offset, log.last_epoch()
        log.append(R.data_batch([b"after kafka"], end, epoch + 1))
        log.flush()
    with FileLog.open(copy) as log:
        assert (log.end_offset, log.last_epoch()) == (end + 1, epoch + 1)
        assert log.read(end, 1)[0].data == R.data_batch([b"after kafka"], end, epoch + 1).data
        assert log.end_offset_for_epoch(epoch) == (epoch, end)


def test_kafka_index_files_go_with_their_segment_or_when_it_is_cut(tmp_path, kraft_real):
    copy = tmp_path / "__cluster_metadata-0"
    shutil.copytree(FIXTURES / "data" / "kafka-temp" / "data" / "kafka" / "__cluster_metadata-0", copy)
    index, timeindex = copy / "00000000000000000000.index", copy / "00000000000000000000.timeindex"
    assert index.exists() and timeindex.exists()
    with FileLog.open(copy) as log:
        assert index.exists()  # opening alone changes nothing
        log.truncate_to(log.end_offset - 1)
        assert not index.exists() and not timeindex.exists()
        assert (copy / "00000000000000000000.log").exists()
