"""kraftsman-demo: write a small KRaft metadata log and snapshot with the library, then decode them back.

This is the README's main job on embedded defaults: no flags needed. With `--directory DIR` the files
are kept in DIR (`__cluster_metadata-0/`) so that `kafka-dump-log` or the metadata shell can open them.
"""
from __future__ import annotations

import argparse
import tempfile
import zlib
from pathlib import Path

from .common import Environment, exit_with

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
APPEND_TIME = 1_700_000_000_000


def _records(kind: str, **fields):
    from kraftsman.storage.protocol import codec
    from kraftsman.storage.records.metadata import ApiMessageAndVersion

    version = fields.pop("_version", 0)
    return ApiMessageAndVersion(codec.message_class(kind)(**fields), version)


def _brokers():
    from kraftsman.storage.protocol import codec
    from kraftsman.storage.protocol.uuids import Uuid

    cls = codec.message_class("RegisterBrokerRecord")
    out = []
    for broker_id in (1, 2, 3):
        ep = cls.BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9091 + broker_id, security_protocol=0)
        out.append(_records("RegisterBrokerRecord", broker_id=broker_id, broker_epoch=10 + broker_id,
                            incarnation_id=Uuid.from_longs(broker_id, broker_id), end_points=[ep], rack=None,
                            fenced=False, _version=3))
    return out


def _topic(name: str, partitions: int):
    from kraftsman.storage.protocol.uuids import Uuid

    topic_id = Uuid.from_longs(0x1234, zlib.crc32(name.encode()))
    out = [_records("TopicRecord", name=name, topic_id=topic_id)]
    for p in range(partitions):
        replicas = [(p + i) % 3 + 1 for i in range(3)]
        out.append(_records("PartitionRecord", partition_id=p, topic_id=topic_id, replicas=replicas,
                            isr=replicas, leader=replicas[0], leader_epoch=0, partition_epoch=0))
    return out


def metadata_history():
    """Return the demo's batches of metadata records, in log order."""
    return [
        [_records("FeatureLevelRecord", name="metadata.version", feature_level=21)],
        _brokers(),
        _topic("orders", 3) + _topic("payments", 2),
        [_records("ConfigRecord", resource_type=2, resource_name="orders", name="retention.ms", value="86400000")],
        [_records("BrokerRegistrationChangeRecord", broker_id=3, broker_epoch=13, fenced=1, _version=0)],
    ]


def write_log(directory: Path) -> tuple[Path, Path]:
    """Write a segment (leader change + metadata batches) and a snapshot of the same records."""
    from kraftsman.storage.log.snapshot import SnapshotId, write_snapshot
    from kraftsman.storage.protocol import codec
    from kraftsman.storage.records import control
    from kraftsman.storage.records.batch import build_batch
    from kraftsman.storage.records.metadata import write_metadata_record

    directory.mkdir(parents=True, exist_ok=True)
    leader_change = codec.message_class("LeaderChangeMessage")
    voter = leader_change.Voter
    lcm = leader_change(version=0, leader_id=1, voters=[voter(voter_id=1)], granting_voters=[voter(voter_id=1)])
    parts = [build_batch([control.encode_control(control.LEADER_CHANGE, lcm)], 0, timestamp=APPEND_TIME,
                         partition_leader_epoch=1, control=True)]
    offset, history = 1, metadata_history()
    for i, batch in enumerate(history):
        values = [(None, write_metadata_record(r)) for r in batch]
        parts.append(build_batch(values, offset, timestamp=APPEND_TIME + i + 1, partition_leader_epoch=1))
        offset += len(values)
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(b"".join(parts))
    snapshot = directory / SnapshotId(offset, 1).file_name
    write_snapshot(snapshot, [r for batch in history for r in batch], epoch=1, append_time=APPEND_TIME + 10,
                   last_contained_log_timestamp=APPEND_TIME + len(history))
    return segment, snapshot


def describe(path: Path, env: Environment) -> int:
    """Decode a segment or snapshot back and print every record in kafka-dump-log's JSON form."""
    from kraftsman.storage.log.segment import read_batches
    from kraftsman.storage.records import control
    from kraftsman.storage.records.metadata import decode_data_batch, record_to_json

    count = 0
    env.stdout.write(f"== {path.name}\n")
    for batch in read_batches(path):
        env.stdout.write(f"batch offsets {batch.base_offset}-{batch.last_offset} epoch "
                         f"{batch.partition_leader_epoch} crc-valid={batch.is_valid()}\n")
        if batch.is_control:
            for record in batch.records():
                kind = control.parse_control_type(record.key)
                env.stdout.write(f"  {record.offset}: control {control.NAMES.get(kind, kind)}\n")
                count += 1
            continue
        for offset, amv in decode_data_batch(batch):
            env.stdout.write(f"  {offset}: {record_to_json(amv)}\n")
            count += 1
    return count


def run(argv: list[str], env: Environment) -> int:
    """Run the demo: write, then read back, and check the counts agree."""
    parser = argparse.ArgumentParser(prog="kraftsman-demo", description=__doc__)
    parser.add_argument("--directory", help="keep the files in DIR instead of a temporary directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.directory) if args.directory else Path(tmp)
        segment, snapshot = write_log(root / "__cluster_metadata-0")
        in_log = describe(segment, env)
        in_snapshot = describe(snapshot, env)
    written = sum(len(b) for b in metadata_history())
    env.stdout.write(f"wrote and decoded {written} metadata records: {in_log} log records "
                     f"(with 1 leader change), {in_snapshot} snapshot records (with header and footer)\n")
    return 0 if in_log == written + 1 and in_snapshot == written + 2 else 1


def main() -> None:
    """Console entry point."""
    exit_with(run, "kraftsman-demo")
