"""Generate a realistic `__cluster_metadata` log segment for benchmarks.

`generate(path, topics=10000, partitions=100)` writes one batch per topic: a TopicRecord followed by
`partitions` PartitionRecords (v1: 3 replicas, isr, leader, epochs, directories), i.e.
topics * (partitions + 1) records (1,010,000 with the defaults), like a controller creating topics.

Run: python tests/bench/gen_metadata_log.py OUT.log [--topics N --partitions M]
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

BROKERS = (1, 2, 3, 4, 5)
BASE_TIME = 1_730_000_000_000


def _uuid(rng: random.Random) -> Uuid:
    return Uuid(rng.getrandbits(128).to_bytes(16, "big"))


def _topic_batch(rng, topic_cls, partition_cls, index: int, partitions: int, base_offset: int, dirs) -> bytes:
    topic_id = _uuid(rng)
    values = [(None, write_metadata_record(ApiMessageAndVersion(
        topic_cls(name=f"bench-topic-{index:05d}", topic_id=topic_id), 0)))]
    for p in range(partitions):
        start = (index + p) % len(BROKERS)
        replicas = [BROKERS[(start + k) % len(BROKERS)] for k in range(3)]
        message = partition_cls(partition_id=p, topic_id=topic_id, replicas=replicas, isr=list(replicas),
                                removing_replicas=[], adding_replicas=[], leader=replicas[0],
                                leader_epoch=rng.randrange(0, 5), partition_epoch=rng.randrange(0, 9),
                                directories=[dirs[b] for b in replicas])
        values.append((None, write_metadata_record(ApiMessageAndVersion(message, 1))))
    return build_batch(values, base_offset, timestamp=BASE_TIME + index, partition_leader_epoch=1)


def generate(path, topics: int = 10000, partitions: int = 100, seed: int = 42) -> Path:
    """Write the log to `path` and return it; topics * (partitions + 1) records in `topics` batches."""
    rng = random.Random(seed)
    topic_cls = codec.message_class("TopicRecord")
    partition_cls = codec.message_class("PartitionRecord")
    dirs = {b: _uuid(rng) for b in BROKERS}
    path = Path(path)
    offset = 0
    with open(path, "wb") as f:
        for i in range(topics):
            f.write(_topic_batch(rng, topic_cls, partition_cls, i, partitions, offset, dirs))
            offset += partitions + 1
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--topics", type=int, default=10000)
    parser.add_argument("--partitions", type=int, default=100)
    args = parser.parse_args()
    path = generate(args.out, args.topics, args.partitions)
    print(f"wrote {path} ({path.stat().st_size} bytes, {args.topics * (args.partitions + 1)} records)")


if __name__ == "__main__":
    main()
