"""Benchmark the replication handlers: CreateTopics of 1,000 topics x 100 partitions on 5 brokers.

Prints PartitionRecords generated per second by the handler alone, then with every result replayed into the
image (as the controller does before the next request), then with the records also encoded to metadata frames.
Each request creates one topic (100 partitions + 1 TopicRecord, well under the 10,000 records per request).

Run: python tests/bench/bench_quorum_replication.py [--topics N] [--partitions P] [--brokers B] [--rf R]
"""
from __future__ import annotations

import argparse
import gc
import random
import time

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.quorum.context import ControllerContext
from kraftsman.controller.quorum.topics import create_topics
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record


def _cluster(brokers: int):
    delta = MetadataDelta(EMPTY)
    feature = codec.message_class("FeatureLevelRecord")(name="metadata.version", feature_level=21)
    delta.replay(ApiMessageAndVersion(feature, 0))
    register = codec.message_class("RegisterBrokerRecord")
    for b in range(1, brokers + 1):
        delta.replay(ApiMessageAndVersion(register(broker_id=b, broker_epoch=b, fenced=False, rack=f"r{b % 3}",
                                                   log_dirs=[bytes([b]) * 16]), 3))
    return delta.apply()


def _request(name: str, partitions: int, rf: int):
    cls = codec.message_class("CreateTopicsRequest")
    return cls(topics=[cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf)])


def run(topics: int, partitions: int, brokers: int, rf: int, replay: bool, encode: bool) -> tuple[float, int]:
    """Create the topics one request at a time; return (seconds, partition records)."""
    image, rng, count = _cluster(brokers), random.Random(1), 0
    requests = [_request(f"topic-{i:05d}", partitions, rf) for i in range(topics)]
    gc.collect()
    start = time.perf_counter()
    for request in requests:
        result = create_topics(ControllerContext(image=image, api_version=7, rng=rng), request)
        count += len(result.records) - 1
        if encode:
            for record in result.records:
                write_metadata_record(record)
        if replay:
            delta = MetadataDelta(image)
            for record in result.records:
                delta.replay(record)
            image = delta.apply()
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--brokers", type=int, default=5)
    parser.add_argument("--rf", type=int, default=3)
    args = parser.parse_args()
    base = None
    for label, replay, encode in (("handler only", False, False), ("handler + image replay", True, False),
                                  ("handler + replay + encode", True, True)):
        seconds, count = run(args.topics, args.partitions, args.brokers, args.rf, replay, encode)
        rate = count / seconds
        base = base or rate
        print(f"{label:28s} {count:>9,} PartitionRecords in {seconds:6.2f} s = {rate:>10,.0f}/s "
              f"({rate / base:.2f}x of handler only)")


if __name__ == "__main__":
    main()
