"""SummaryBuilder: the partition counts kafka-cluster health reads, checked against the full image's registrations."""
from __future__ import annotations

import random

import pytest

from kraftsman.controller.image.batch_loader import ImageBuilder
from kraftsman.controller.image.summary import PartitionCounts, SummaryBuilder, read_change, read_partition
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.batch import RecordBatch, build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

M = codec.message_class
T1, T2 = bytes([1]) * 16, bytes([2]) * 16


def value(record: str, version: int = 0, **fields) -> bytes:
    return write_metadata_record(ApiMessageAndVersion(M(record)(**fields), version))


def topic(topic_id: bytes, name: str) -> bytes:
    return value("TopicRecord", name=name, topic_id=Uuid(topic_id))


def partition(topic_id: bytes, pid: int, replicas, isr, leader: int, version: int = 1) -> bytes:
    return value("PartitionRecord", version, partition_id=pid, topic_id=Uuid(topic_id), replicas=list(replicas),
                 isr=list(isr), leader=leader, leader_epoch=0, partition_epoch=0,
                 directories=[Uuid(bytes(16))] * len(replicas) if version >= 1 else [])


def change(topic_id: bytes, pid: int, **fields) -> bytes:
    return value("PartitionChangeRecord", 0, partition_id=pid, topic_id=Uuid(topic_id), **fields)


def marker(name: str) -> bytes:
    return value(name)


def feed(builder, values, base: int = 0) -> None:
    builder.load_batch(list(enumerate(values, base)), 1, 0)


def oracle(values) -> tuple[int, list[str], list[str]]:
    """Return (total, offline, under-replicated) from the full image built by ImageBuilder."""
    builder = ImageBuilder()
    feed(builder, values)
    image = builder.image()
    total, offline, under = 0, [], []
    for name in sorted(image.topics.by_name):
        t = image.topics.by_name[name]
        for pid in sorted(t.partitions):
            p, total = t.partition(pid), total + 1
            if p.leader < 0:
                offline.append(f"{name}-{pid}")
            if len(p.isr) < len(p.replicas):
                under.append(f"{name}-{pid}")
    return total, offline, under


def summary(values, **options) -> tuple[int, list[str], list[str]]:
    builder = SummaryBuilder(**options)
    feed(builder, values)
    names = {t.topic_id: t.name for t in builder.image().topics.by_id.values()}
    c = builder.counts
    assert (c.offline, c.under_replicated) == (len(c.names(names, True)), len(c.names(names, False)))
    return c.total, c.names(names, True), c.names(names, False)


def test_partition_records_are_read_in_place_at_every_version():
    for version in (0, 1, 2):
        v = partition(T1, 3, [1, 2, 3], [1, 2], 2, version)
        assert read_partition(v) == ((3 << 16) | (2 << 1) | 0)
    assert read_partition(partition(T1, 0, [1], [1], -1)) & 1 == 1
    big = partition(T1, 0, range(200), range(150), 5)           # arrays past 127 elements: two-byte lengths
    assert read_partition(big) == ((200 << 16) | (150 << 1))


def test_change_records_name_only_what_changes():
    assert read_change(change(T1, 0, isr=[1])) == (None, 1, -2)
    assert read_change(change(T1, 0, leader=-1)) == (None, None, -1)
    assert read_change(change(T1, 0, replicas=[1, 2, 3, 4], isr=[1, 2, 3, 4], leader=4)) == (4, 4, 4)
    assert read_change(value("PartitionChangeRecord", 1, partition_id=0, topic_id=Uuid(T1),
                             directories=[Uuid(bytes(16))], isr=[2])) == (None, 1, -2)


def test_counts_agree_with_the_full_image():
    values = [topic(T1, "alpha"), topic(T2, "beta")]
    values += [partition(T1, p, [1, 2, 3], [1, 2, 3], 1) for p in range(4)]
    values += [partition(T2, p, [1, 2], [1], 1) for p in range(3)]
    values += [change(T1, 1, isr=[1]), change(T1, 2, leader=-1), change(T2, 0, isr=[1, 2]),
               change(T1, 2, leader=3), change(T1, 3, replicas=[1, 2], isr=[1, 2]), change(T2, 2, leader=-1, isr=[])]
    assert summary(values) == oracle(values) == (7, ["beta-2"], ["alpha-1", "beta-1", "beta-2"])


def test_a_removed_topic_leaves_the_counts():
    values = [topic(T1, "alpha"), partition(T1, 0, [1, 2], [1], -1), topic(T2, "beta"),
              partition(T2, 0, [1], [1], 1), value("RemoveTopicRecord", topic_id=Uuid(T1))]
    assert summary(values) == oracle(values) == (1, [], [])


def test_random_histories_agree_with_the_full_image():
    rng = random.Random(7)
    for _ in range(30):
        values = [topic(T1, "a"), topic(T2, "b")]
        made = set()
        for _ in range(60):
            t, pid = rng.choice((T1, T2)), rng.randrange(6)
            replicas = rng.sample(range(1, 6), rng.randint(1, 4))
            if (t, pid) not in made or rng.random() < 0.2:
                values.append(partition(t, pid, replicas, replicas[:rng.randint(0, len(replicas))],
                                        rng.choice([-1] + replicas)))
                made.add((t, pid))
            else:
                fields = rng.choice([{"isr": replicas[:1]}, {"leader": rng.choice([-1, 1, 2])},
                                     {"replicas": replicas, "isr": replicas}])
                values.append(change(t, pid, **fields))
        assert summary(values) == oracle(values)


def test_a_transaction_counts_at_its_end_and_not_at_all_when_aborted():
    base = [topic(T1, "alpha")]
    inside = [partition(T1, 0, [1, 2], [1], 1)]
    committed = base + [marker("BeginTransactionRecord"), *inside, marker("EndTransactionRecord")]
    aborted = base + [marker("BeginTransactionRecord"), *inside, marker("AbortTransactionRecord")]
    assert summary(committed) == oracle(committed) == (1, [], ["alpha-0"])
    assert summary(aborted)[0] == 0
    builder = SummaryBuilder()
    feed(builder, base + [marker("BeginTransactionRecord"), *inside])
    assert builder.counts.total == 0                # still open: nothing counted yet


def test_without_partitions_it_reads_no_partition_record():
    values = [topic(T1, "alpha"), partition(T1, 0, [1], [1], 1), b"\x01\x03\x01 not a record"]
    builder = SummaryBuilder(partitions=False)
    feed(builder, values)
    assert builder.counts.total == 0 and builder.faults == [] and "alpha" in builder.image().topics.by_name


def test_unreadable_partition_records_are_faults_and_skipped():
    faults = []
    builder = SummaryBuilder(on_fault=faults.append)
    feed(builder, [topic(T1, "alpha"), partition(T1, 0, [1], [1], 1)[:30], change(T1, 5, isr=[1]),
                   partition(T1, 1, [1], [1], 1)])
    assert builder.counts.total == 1 and len(faults) == 2 and "offset 1" in faults[0]


def test_a_record_batch_feeds_the_same_counts():
    values = [topic(T1, "alpha")] + [partition(T1, p, [1, 2], [1], 1) for p in range(50)]
    batch = RecordBatch(build_batch([(None, v) for v in values], 100, timestamp=5))
    builder = SummaryBuilder()
    builder.load_record_batch(batch, 3)
    assert (builder.counts.total, builder.counts.under_replicated) == (50, 50)
    assert builder.last.offset == 150


def test_counts_reject_partition_ids_out_of_range():
    counts = PartitionCounts()
    with pytest.raises(ValueError):
        counts.set(T1, 1 << 21, 1)


# ---------------------------------------------------------------- counting runs by columns (summary_bulk)


def both_ways(batches) -> tuple[SummaryBuilder, SummaryBuilder]:
    """Feed the same batches whole (runs by columns) and record by record; return both builders."""
    bulk, each = SummaryBuilder(), SummaryBuilder()
    for batch in batches:
        bulk.load_record_batch(batch, 1)
        each.load_batch(batch.raft_values(), 1, 0)
    return bulk, each


def batch_of(values, base: int = 0) -> RecordBatch:
    return RecordBatch(build_batch([(None, v) for v in values], base, timestamp=5))


def agree(batches, values) -> None:
    bulk, each = both_ways(batches)
    assert bulk.counts.topics == each.counts.topics
    names = {t.topic_id: t.name for t in bulk.image().topics.by_id.values()}
    c = bulk.counts
    assert (c.total, c.names(names, True), c.names(names, False)) == oracle(values)


def test_a_topic_created_in_one_batch_is_counted_by_columns_as_record_by_record():
    from kraftsman.controller.image import summary_bulk

    values = [topic(T1, "alpha")] + [partition(T1, p, [1, 2, 3], [1, 2, 3], -1 if p in (3, 70, 149) else 1)
                                     for p in range(150)]          # offset deltas past 63 take two bytes
    batch = batch_of(values, 1000)
    walked = summary_bulk.walk(batch.buffer, batch.records_count, 61)
    assert [(i, run.k) for i, _, _, run in walked if run is not None] == [(1, 63), (64, 87)]
    agree([batch], values)


def test_layouts_ids_and_known_partitions_that_break_runs_fall_back_record_by_record():
    values = [topic(T1, "alpha"), topic(T2, "beta")]
    values += [partition(T1, p, [1, 2, 3], [1, 2] if p % 7 == 0 else [1, 2, 3], 2) for p in range(40)]
    values += [partition(T2, p, [1, 2], [1, 2], 1) for p in (0, 1, 5, 6, 7)]          # ids that skip
    again = [partition(T1, p, [1, 2, 3], [1], 1) for p in range(10)] + [change(T1, 3, leader=-1)]
    agree([batch_of(values), batch_of(again, len(values))], values + again)


def test_a_run_inside_a_transaction_waits_for_its_end():
    values = [topic(T1, "alpha"), marker("BeginTransactionRecord")] + \
             [partition(T1, p, [1, 2], [1], 1) for p in range(20)]
    bulk = SummaryBuilder()
    bulk.load_record_batch(batch_of(values), 1)
    assert bulk.counts.total == 0
    bulk.load_record_batch(batch_of([marker("EndTransactionRecord")], len(values)), 1)
    assert (bulk.counts.total, bulk.counts.under_replicated) == (20, 20)


def test_a_batch_not_shaped_as_the_raft_writes_it_is_read_record_by_record():
    from kraftsman.controller.image import summary_bulk

    values = [topic(T1, "alpha")] + [partition(T1, p, [1], [1], 1) for p in range(5)]
    raw = bytearray(batch_of(values).buffer)
    assert summary_bulk.walk(bytes(raw[:-1]), 6, 61) is None                  # truncated: not walked
    agree([batch_of(values)], values)
