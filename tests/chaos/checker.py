"""The chaos checker: reads every voter's metadata log directory after the run and checks what was promised.

Checks (all on the files the stopped voters left, through storage.log's BatchReader and the image loader):
- committed prefix: every batch below the final high watermark is byte for byte the same on every voter
  that holds it, and each voter holds every batch from its log start (newest snapshot) to that mark;
- images: the metadata image at the common offset (the smallest last offset of all voters) is the same
  on every voter (compared as the records image.write() gives, encoded, plus the provenance offset);
- no acknowledged write lost: every acknowledged create exists with its topic id on every voter (unless
  a delete of it was attempted), and every acknowledged delete is gone;
- snapshots: a snapshot id present on several voters has the same bytes on each;
- leadership: no two voters were the active controller in the same epoch (from their stderr logs);
- logs: the voters' stderr holds no traceback.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kraftsman.controller.image.loader import LoadError, load_directory
from kraftsman.storage.log.segment import BatchReader, parse_segment_offset
from kraftsman.storage.log.snapshot import list_snapshots
from kraftsman.storage.records.metadata import write_metadata_record


@dataclass
class CheckResult:
    high_watermark: int = 0
    common_offset: int = -1
    lost: list = field(default_factory=list)            # (what, voter, why)
    divergent: dict = field(default_factory=dict)       # voter -> first problem
    image_divergent: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    log_errors: dict = field(default_factory=dict)      # voter -> first lines with a traceback
    batches_compared: int = 0
    known_issues: dict = field(default_factory=dict)    # voter -> count of the known fsync-failure shutdown issue
    snapshots_compared: int = 0
    epochs_with_two_leaders: dict = field(default_factory=dict)  # epoch -> voters active in it
    leader_epochs: int = 0

    @property
    def divergent_replicas(self) -> int:
        return len(set(self.divergent) | set(self.image_divergent))


def voter_batches(pdir: Path) -> tuple[int, dict[int, tuple[int, bytes]]]:
    """Return (log start offset, {base offset: (last offset, batch bytes)}) of one partition directory."""
    snapshots = list_snapshots(pdir)
    start = snapshots[-1].end_offset if snapshots else 0
    batches: dict[int, tuple[int, bytes]] = {}
    for segment in sorted(pdir.glob("*.log"), key=parse_segment_offset):
        for batch in BatchReader(segment, strict=False):
            batches[batch.base_offset] = (batch.last_offset, bytes(batch.buffer))
    return start, batches


def check_prefix(result: CheckResult, logs: dict[int, tuple[int, dict]], hw: int) -> None:
    """Committed batches (base offset < hw) agree byte for byte; no voter has a hole before hw."""
    for voter, (start, batches) in logs.items():
        offset = start
        for base in sorted(batches):
            last = batches[base][0]
            if offset >= hw or last < offset:
                continue
            if base > offset:
                break
            offset = last + 1
        if offset < hw:
            result.divergent.setdefault(voter, f"missing committed offset {offset} (log start {start}, hw {hw})")
    bases = sorted({b for _, batches in logs.values() for b in batches if b < hw})
    for base in bases:
        versions = Counter(batches[base] for _, batches in logs.values() if base in batches)
        if len(versions) > 1:
            majority = versions.most_common(1)[0][0]
            for voter, (_, batches) in logs.items():
                if base in batches and batches[base] != majority:
                    result.divergent.setdefault(voter, f"batch at offset {base} differs from the majority's")
        result.batches_compared += 1


def image_key(image) -> tuple:
    return (image.provenance.offset, tuple(write_metadata_record(r) for r in image.write()))


def check_images(result: CheckResult, quorum, logs: dict, workload) -> dict:
    """Load each voter's image at the common offset; compare; check acknowledged writes. Return the images."""
    common = min(max((v[0] for v in batches.values()), default=start - 1) for start, batches in logs.values())
    result.common_offset = common
    images = {}
    for voter in quorum.ids:
        try:
            images[voter] = load_directory(quorum.partition_dir(voter), offset=common).image
        except LoadError as e:  # its snapshot is past the common offset: compare its full image instead
            result.notes.append(f"voter {voter}: image at {common} unavailable ({e}); compared at its end")
            images[voter] = load_directory(quorum.partition_dir(voter)).image
    keys = {voter: image_key(image) for voter, image in images.items()}
    majority = Counter(keys.values()).most_common(1)[0][0]
    for voter, key in keys.items():
        if key != majority and key[0] == majority[0]:
            result.image_divergent[voter] = f"image at offset {key[0]} differs from the majority's"
    for voter, image in images.items():
        by_name = image.topics.by_name
        for name, topic_id in workload.acked.items():
            if name in workload.deleted or name in workload.delete_unknown:
                continue
            topic = by_name.get(name)
            if topic is None:
                result.lost.append((f"create {name}", voter, "missing"))
            elif bytes(topic.topic_id) != topic_id:
                result.lost.append((f"create {name}", voter, "another topic id"))
        for name in workload.deleted:
            if name in by_name and bytes(by_name[name].topic_id) == workload.acked.get(name):
                result.lost.append((f"delete {name}", voter, "still present"))
    return images


ERROR_MARKERS = ("Traceback", "raft driver failed", "on_response failed", "Task exception was never retrieved")
ALWAYS_ERRORS = ("was never awaited",)  # a bug however the process came to stop
INJECTED = "chaos: injected fsync failure"
STARTED = "serving CONTROLLER"          # the first line of each run of a voter's process
# Found by chaos and fixed (tests/controller/server/test_chaos.py::test_a_failing_disk_makes_the_controller_exit):
# after an fsync failure, ControllerServer.stop() flushed the log again, the second failure escaped the stop() task
# and the process never exited. Still counted, should it ever come back.
KNOWN_AFTER_INJECTED = "Task exception was never retrieved"


def _runs(lines: list[str]) -> list[list[str]]:
    """Split a voter's stderr into the runs of its process (each restart starts a run)."""
    runs: list[list[str]] = [[]]
    for line in lines:
        if STARTED in line and runs[-1]:
            runs.append([])
        runs[-1].append(line)
    return runs


def check_logs(result: CheckResult, quorum) -> None:
    """Record the first unexpected error of each voter's stderr: errors in a run of the process that an injected
    fsync failure ended are expected, an unawaited coroutine never is."""
    for voter in quorum.ids:
        path = quorum.node_dir(voter) / "controller.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        for run in _runs(lines):
            injected = any(INJECTED in line for line in run)
            for i, line in enumerate(run):
                always = any(m in line for m in ALWAYS_ERRORS)
                if not always and not any(m in line for m in ERROR_MARKERS):
                    continue
                if injected and not always:
                    if KNOWN_AFTER_INJECTED in line:
                        result.known_issues[voter] = result.known_issues.get(voter, 0) + 1
                    continue
                result.log_errors.setdefault(voter, " | ".join(run[max(i - 2, 0):i + 25])[:1500])


def check_snapshots(result: CheckResult, quorum) -> None:
    """Snapshots with the same id on several voters hold the same bytes."""
    by_id: dict[tuple, dict[int, bytes]] = {}
    for voter in quorum.ids:
        pdir = quorum.partition_dir(voter)
        for sid in list_snapshots(pdir):
            by_id.setdefault((sid.end_offset, sid.epoch), {})[voter] = (pdir / sid.file_name).read_bytes()
    for sid, copies in sorted(by_id.items()):
        if len(copies) < 2:
            continue
        result.snapshots_compared += 1
        majority = Counter(copies.values()).most_common(1)[0][0]
        for voter, data in copies.items():
            if data != majority:
                result.divergent.setdefault(voter, f"snapshot {sid} differs from the other voters' copy")


ACTIVE = re.compile(r"node (\d+) is the active controller in epoch (\d+)")


def check_leadership(result: CheckResult, quorum) -> None:
    """At most one voter became the active controller in each epoch."""
    epochs: dict[int, set] = {}
    for voter in quorum.ids:
        path = quorum.node_dir(voter) / "controller.log"
        for match in ACTIVE.finditer(path.read_text(errors="replace") if path.exists() else ""):
            epochs.setdefault(int(match.group(2)), set()).add(int(match.group(1)))
    result.leader_epochs = len(epochs)
    result.epochs_with_two_leaders = {e: sorted(v) for e, v in epochs.items() if len(v) > 1}


def check(quorum, workload, hw: int) -> CheckResult:
    """Run every check on the stopped quorum's directories."""
    result = CheckResult(high_watermark=hw)
    logs = {voter: voter_batches(quorum.partition_dir(voter)) for voter in quorum.ids}
    check_prefix(result, logs, hw)
    check_images(result, quorum, logs, workload)
    check_snapshots(result, quorum)
    check_leadership(result, quorum)
    check_logs(result, quorum)
    return result
