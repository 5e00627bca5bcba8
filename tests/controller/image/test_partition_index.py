"""The partition index (leaderless partitions, each broker's ISRs, ELRs and leaderships) equals a scan of every
partition, whether built at once or derived image after image from an earlier index."""
from __future__ import annotations

import random

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.partition_index import leader_and_isr, roles
from kraftsman.controller.image.partitions import materialize
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

TOPIC_IDS = [bytes([n]) * 16 for n in range(1, 9)]


def _scan(topics) -> tuple[dict, dict, dict, dict, dict]:
    leaderless, isr, leaders, elr, imbalanced = {}, {}, {}, {}, {}
    for topic_id, topic in topics.by_id.items():
        for pid, entry in topic.partitions.items():
            registration = materialize(entry)
            if registration.leader == -1:
                leaderless.setdefault(topic_id, []).append(pid)
            else:
                leaders.setdefault(registration.leader, set()).add((topic_id, pid))
            for broker in registration.isr:
                isr.setdefault(broker, {}).setdefault(topic_id, []).append(pid)
            for broker in registration.elr or ():
                elr.setdefault(broker, {}).setdefault(topic_id, []).append(pid)
            if registration.leader != registration.replicas[0]:
                imbalanced.setdefault(topic_id, []).append(pid)
    return leaderless, isr, leaders, elr, imbalanced


def _check(topics) -> None:
    leaderless, isr, leaders, elr, imbalanced = _scan(topics)
    index = topics.index
    assert {t: sorted(p) for t, p in index.leaderless().items()} == {t: sorted(p) for t, p in leaderless.items()}
    assert {t: sorted(p) for t, p in index.imbalanced().items()} == {t: sorted(p) for t, p in imbalanced.items()}
    for broker in range(1, 7):
        assert {t: sorted(p) for t, p in index.in_isr(broker).items()} == \
            {t: sorted(p) for t, p in isr.get(broker, {}).items()}
        assert {t: sorted(p) for t, p in index.in_elr(broker).items()} == \
            {t: sorted(p) for t, p in elr.get(broker, {}).items()}
        assert index.leads_any(broker) == bool(leaders.get(broker))


def _partition(rng, topic_id: bytes, partition_id: int, version: int):
    replicas = rng.sample(range(1, 6), 3)
    isr = replicas[:rng.randrange(1, 4)]
    message = codec.message_class("PartitionRecord")(
        partition_id=partition_id, topic_id=topic_id, replicas=replicas, isr=isr, removing_replicas=[],
        adding_replicas=[], leader=rng.choice(isr + [-1]), leader_epoch=0, partition_epoch=0,
        directories=[bytes(16)] * 3 if version else [])
    if version >= 2 and rng.random() < 0.6:  # 4.x: an ELR beside the ISR (a tagged field)
        message.eligible_leader_replicas = rng.sample([r for r in range(1, 7) if r not in isr], rng.randrange(1, 3))
    return ApiMessageAndVersion(message, version)


def _change(rng, topic_id: bytes, partition_id: int):
    message = codec.message_class("PartitionChangeRecord")(
        partition_id=partition_id, topic_id=topic_id, leader=rng.choice([-1, 1, 2, 6]), isr=rng.sample(range(1, 7), 2))
    message.eligible_leader_replicas = rng.choice([None, [], rng.sample(range(1, 7), 2)])
    return ApiMessageAndVersion(message, 2)


def test_the_index_follows_every_image_as_a_full_scan_would():
    rng = random.Random(7)
    image = MetadataDelta().apply()
    for step in range(40):
        delta = MetadataDelta(image)
        topic_id = TOPIC_IDS[step % len(TOPIC_IDS)]
        if topic_id not in image.topics.by_id or step % 11 == 0:
            delta.replay(ApiMessageAndVersion(codec.message_class("TopicRecord")(name=f"t{step}", topic_id=topic_id), 0))
            for pid in range(rng.randrange(1, 12)):
                record = _partition(rng, topic_id, pid, step % 3)
                delta.replay_value(write_metadata_record(record)) if step % 3 else delta.replay(record)
        elif step % 7 == 0:
            delta.replay(ApiMessageAndVersion(codec.message_class("RemoveTopicRecord")(topic_id=topic_id), 0))
        else:
            for pid in list(image.topics.by_id[topic_id].partitions)[:3]:
                delta.replay_value(write_metadata_record(_change(rng, topic_id, pid)))
        image = delta.apply()
        if step % 4 == 3:
            _check(image.topics)
    _check(image.topics)


def test_leader_and_isr_of_raw_and_decoded_entries():
    rng = random.Random(3)
    for version in (0, 1, 2):
        record = _partition(rng, TOPIC_IDS[0], 5, version)
        value = write_metadata_record(record)
        registration = materialize(value)
        assert leader_and_isr(value) == (registration.leader, tuple(registration.isr))
        assert tuple(leader_and_isr(registration)[1]) == tuple(registration.isr)
        assert roles(value) == (registration.leader, tuple(registration.isr), tuple(registration.elr or ()),
                                registration.replicas[0])
        assert roles(registration)[2] == tuple(registration.elr or ())
