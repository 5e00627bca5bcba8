"""Time CreateTopics through the pure quorum controller logic, in one process, split by stage.

Run: python tests/bench/bench_create_topics.py [--brokers 3] [--rf 1] [--topics 1000] [--partitions 100]
     [--per-request 100] [--repeat 3] [--profile STAGE]

No sockets, no disk: an image with N registered, unfenced brokers (one log directory each, metadata.version
3.9-IV0), then CreateTopics requests of `--per-request` topics. Each stage is what one of the three voters
does per partition in a real quorum (bench_quorum.py):

- place:    replica placement alone (placement.place, once per topic), for reference (inside `handler`);
- handler:  the whole CreateTopics handler (placement, topic ids, PartitionRecords, the response);
- encode:   the leader's record values (write_metadata_records, as RaftDriver.propose);
- replay:   the leader's replay into its pending image and the image apply at flush (MetadataState);
- batch:    the leader's raft batch (records.data_batch: record framing + CRC);
- validate: each follower's split_batches (size and CRC check of what Fetch brought);
- follow:   each follower's apply of the committed batch (values, lazy replay, image apply).

Prints microseconds per partition for each stage, the best of `--repeat` runs, and the leader and follower sums.
The garbage collector stays on (its passes are part of the cost) unless --no-gc.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import random
import sys
import time

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.image import EMPTY
from kraftsman.controller.quorum import placement
from kraftsman.controller.quorum.context import ControllerContext, QuorumConfig
from kraftsman.controller.quorum.topics import create_topics
from kraftsman.controller.raft import records as R
from kraftsman.controller.server.metadata_state import MetadataState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_records

Create = codec.message_class("CreateTopicsRequest")
METADATA_VERSION_LEVEL = 21  # 3.9-IV0: PartitionRecord v1 (directories)
STAGES = ("place", "handler", "encode", "replay", "batch", "validate", "follow")


def base_image(brokers: int, racks: int = 0):
    """Return an image with metadata.version 3.9-IV0 and `brokers` unfenced brokers (ids 1..N)."""
    delta = MetadataDelta(EMPTY)
    delta.replay(ApiMessageAndVersion(codec.message_class("FeatureLevelRecord")(
        name="metadata.version", feature_level=METADATA_VERSION_LEVEL), 0))
    reg = codec.message_class("RegisterBrokerRecord")
    for b in range(1, brokers + 1):
        endpoint = reg.BrokerEndpoint(name="PLAINTEXT", host=f"b{b}", port=9092, security_protocol=0)
        delta.replay(ApiMessageAndVersion(reg(
            broker_id=b, broker_epoch=b, fenced=False, incarnation_id=Uuid.from_longs(0xABC0 + b, b),
            end_points=[endpoint], in_controlled_shutdown=False, log_dirs=[Uuid.from_longs(0x1000 + b, b)],
            rack=f"r{b % racks}" if racks else None), 3))
    return delta.apply()


def requests(topics: int, partitions: int, rf: int, per_request: int) -> list:
    """Return the CreateTopics requests (v7) creating `topics` topics of `partitions` partitions."""
    names = [f"t{i}" for i in range(topics)]
    return [Create(topics=[Create.CreatableTopic(name=n, num_partitions=partitions, replication_factor=rf)
                           for n in names[i:i + per_request]], timeout_ms=60_000, validate_only=False)
            for i in range(0, topics, per_request)]


def run(args, times: dict) -> None:
    """Create every topic once, from a fresh image, adding each stage's seconds to `times`."""
    config = QuorumConfig(max_partitions_per_request=max(10_000, args.per_request * args.partitions))
    image, rng = base_image(args.brokers, args.racks), random.Random(1)
    leader, follower = MetadataState(), MetadataState()
    leader._committed = type(leader._committed)(image)
    follower._committed = type(follower._committed)(image)
    leader.reset_pending()
    offset, clock = 0, time.perf_counter
    for request in requests(args.topics, args.partitions, args.rf, args.per_request):
        t0 = clock()
        for topic in request.topics:
            placement.place(leader.pending, random.Random(0), topic.num_partitions, topic.replication_factor)
        t1 = clock()
        ctx = ControllerContext(image=leader.pending, api_version=7, next_offset=offset, config=config, rng=rng)
        result = create_topics(ctx, request)
        t2 = clock()
        values = write_metadata_records(result.records)
        t3 = clock()
        if args.decoded_replay:
            leader.propose(result.records)
        else:
            leader.propose(result.records, values)
        leader.mark_proposed(offset + len(result.records))
        t4 = clock()
        batch = R.data_batch(values, offset, 1)
        t5 = clock()
        fetched = R.split_batches(batch.data)
        t6 = clock()
        for b in fetched:
            follower.apply_batch(b)
        follower.committed  # noqa: B018 - the image apply a reader triggers
        t7 = clock()
        leader.apply_batch(batch)
        offset = batch.next_offset
        for stage, dt in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6)):
            times[stage] += dt
    assert len(follower.committed.topics.by_id) == args.topics
    assert leader.committed is not None


def main(argv) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--racks", type=int, default=0, help="spread brokers over this many racks (0: no rack)")
    parser.add_argument("--rf", type=int, default=1)
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--per-request", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one run instead")
    parser.add_argument("--decoded-replay", action="store_true",
                        help="replay decoded records on the leader (as before it replayed encoded values)")
    parser.add_argument("--no-gc", action="store_true", help="disable the garbage collector while timing")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() what is alive before timing")
    parser.add_argument("--gc-threshold", type=int, nargs=3, metavar=("G0", "G1", "G2"),
                        help="gc.set_threshold while timing (default: the interpreter's)")
    args = parser.parse_args(argv)
    if args.profile:
        times = dict.fromkeys(STAGES, 0.0)
        profiler = cProfile.Profile()
        profiler.runcall(run, args, times)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return
    total = args.topics * args.partitions
    if args.gc_threshold:
        gc.set_threshold(*args.gc_threshold)
    best = dict.fromkeys(STAGES, float("inf"))
    for _ in range(args.repeat):
        times = dict.fromkeys(STAGES, 0.0)
        gc.collect()
        if args.freeze:
            gc.freeze()
        if args.no_gc:
            gc.disable()
        run(args, times)
        gc.enable()
        for stage in STAGES:
            best[stage] = min(best[stage], times[stage])
    us = {stage: best[stage] / total * 1e6 for stage in STAGES}
    print(f"{args.topics} topics x {args.partitions} partitions, rf {args.rf}, {args.brokers} brokers, "
          f"{args.per_request} topics per request: us per partition (best of {args.repeat})")
    for stage in STAGES:
        print(f"  {stage:9s} {us[stage]:6.2f}")
    lead = us["handler"] + us["encode"] + us["replay"] + us["batch"]
    follow = us["validate"] + us["follow"]
    print(f"  leader   {lead:6.2f}  (handler + encode + replay + batch; place is inside handler)")
    print(f"  follower {follow:6.2f}  (validate + follow)")


if __name__ == "__main__":
    main(sys.argv[1:])
