"""Property: random create / grow / delete / AlterPartition / reassign / elect / fence / unfence / shutdown sequences
keep the partition invariants after every step (checked on the image the records build):
leader in ISR (or -1), ISR non-empty, inactive brokers out of every ISR
they do not hold alone without a leader, and a subset of the replicas, no fenced or shutting-down leader,
adding/removing inside the replicas, leader and partition epochs never decreasing, partition epoch rising on
every change record.
"""
from __future__ import annotations

import random

import pytest

from kraftsman.controller.quorum.partition_elections import (
    elect_leaders,
    on_broker_fenced,
    on_broker_unfenced,
    on_controlled_shutdown,
)
from kraftsman.controller.quorum.partitions import is_active
from kraftsman.controller.quorum.reassignment import alter_partition, alter_partition_reassignments
from kraftsman.controller.quorum.topics import create_partitions, create_topics, delete_topics
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .replication_fixtures import M, S, cluster, context, create_request, replay

BROKERS = (1, 2, 3, 4, 5)


def _change_broker(image, broker_id, fenced=None, shutdown=False):
    record = image.cluster.brokers[broker_id].record
    message = M("BrokerRegistrationChangeRecord", broker_id=broker_id, broker_epoch=record.broker_epoch,
                fenced={True: 1, False: -1, None: 0}[fenced], in_controlled_shutdown=1 if shutdown else 0)
    return replay(image, [ApiMessageAndVersion(message, 1)])


def _pick_partition(rng, image):
    if not image.topics.by_name:
        return None
    topic = image.topics.by_name[rng.choice(sorted(image.topics.by_name))]
    pid = rng.choice(sorted(topic.partitions))
    return topic, pid, topic.partition(pid)


def _alter_isr(rng, image, ctx):
    picked = _pick_partition(rng, image)
    if picked is None or picked[2].leader == -1:
        return []
    topic, pid, p = picked
    others = [r for r in p.replicas if r != p.leader and rng.random() < 0.6]
    data = S("AlterPartitionRequest", "PartitionData", partition_index=pid, leader_epoch=p.leader_epoch,
             partition_epoch=p.partition_epoch, new_isr_with_epochs=[
                 S("AlterPartitionRequest", "BrokerState", broker_id=b) for b in [p.leader] + others])
    epoch = image.cluster.brokers[p.leader].record.broker_epoch
    request = M("AlterPartitionRequest", broker_id=p.leader, broker_epoch=epoch, topics=[
        S("AlterPartitionRequest", "TopicData", topic_id=topic.topic_id, partitions=[data])])
    ctx.api_version = 3
    return alter_partition(ctx, request).records


def _reassign(rng, image, ctx):
    picked = _pick_partition(rng, image)
    if picked is None:
        return []
    topic, pid, p = picked
    replicas = None if rng.random() < 0.3 else rng.sample(BROKERS, rng.randint(1, 3))
    request = M("AlterPartitionReassignmentsRequest", topics=[S(
        "AlterPartitionReassignmentsRequest", "ReassignableTopic", name=topic.name, partitions=[S(
            "AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=pid, replicas=replicas)])])
    return alter_partition_reassignments(ctx, request).records


def _step(rng, image):
    ctx = context(image, 7, seed=rng.randrange(1 << 30))
    action = rng.choice(["create", "create", "grow", "delete", "isr", "isr", "isr", "reassign", "elect", "fence",
                         "unfence", "shutdown"])
    if action == "create":
        request = create_request((f"t{rng.randrange(8)}", rng.randint(1, 4), rng.randint(1, 3)))
        return image, create_topics(ctx, request).records
    if action == "grow":
        request = M("CreatePartitionsRequest", topics=[S("CreatePartitionsRequest", "CreatePartitionsTopic",
                                                         name=f"t{rng.randrange(8)}", count=rng.randint(1, 6))])
        return image, create_partitions(ctx, request).records
    if action == "delete":
        ctx.api_version = 5
        return image, delete_topics(ctx, M("DeleteTopicsRequest", topic_names=[f"t{rng.randrange(8)}"])).records
    if action == "isr":
        return image, _alter_isr(rng, image, ctx)
    if action == "reassign":
        return image, _reassign(rng, image, ctx)
    if action == "elect":
        ctx.api_version = 2
        return image, elect_leaders(ctx, M("ElectLeadersRequest", election_type=rng.choice([0, 1]),
                                           topic_partitions=None)).records
    broker_id = rng.choice(BROKERS)
    if action == "fence" and is_active(image, broker_id):
        image = _change_broker(image, broker_id, fenced=True)
        return image, on_broker_fenced(context(image), broker_id)
    if action == "shutdown" and is_active(image, broker_id):
        image = _change_broker(image, broker_id, shutdown=True)
        return image, on_controlled_shutdown(context(image), broker_id)
    if action == "unfence" and image.cluster.brokers[broker_id].record.fenced:
        image = _change_broker(image, broker_id, fenced=False)
        return image, on_broker_unfenced(context(image), broker_id)
    return image, []


def _states(image) -> dict:
    return {(t.topic_id, pid): t.partition(pid) for t in image.topics.by_id.values() for pid in t.partitions}


def _check(image, before: dict, records) -> None:
    changed = {(bytes(r.message.topic_id), r.message.partition_id) for r in records if r.api_key == 5}
    for key, p in _states(image).items():
        assert p.isr and set(p.isr) <= set(p.replicas) and len(set(p.replicas)) == len(p.replicas), p
        assert p.leader == -1 or p.leader in p.isr, p
        assert p.leader == -1 or is_active(image, p.leader), p
        inactive = [r for r in p.isr if not is_active(image, r)]
        assert not inactive or (p.isr == inactive and len(inactive) == 1 and p.leader == -1), p
        assert set(p.adding_replicas) | set(p.removing_replicas) <= set(p.replicas), p
        old = before.get(key)
        if old is not None:
            assert p.leader_epoch >= old.leader_epoch and p.partition_epoch >= old.partition_epoch
            if key in changed:
                assert p.partition_epoch > old.partition_epoch
            if p.leader != old.leader:
                assert p.leader_epoch > old.leader_epoch


@pytest.mark.parametrize("seed", range(30))
def test_random_sequences_keep_partition_invariants(seed):
    rng = random.Random(seed)
    image = cluster(*BROKERS)
    for _ in range(60):
        before = _states(image)
        image, records = _step(rng, image)
        image = replay(image, records)
        _check(image, before, records)
