"""Eligible leader replicas (KIP-966) on a Kafka 4.x controller: the ISR shrinks below min.insync.replicas into the
ELR, a leader comes back from the ELR or as the last known leader, and an unclean shutdown leaves the ELR.

The first test replays what a real Kafka 4.2 controller wrote for one broker (kafka-4.2 fixture local-test-rig:
fenced, restarted uncleanly, unfenced) and compares our records field by field; the others follow Kafka 4.2's
PartitionChangeBuilder rules restated in controller/quorum/partitions.py.
"""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from kraftsman.controller.quorum import broker_fencing
from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.partition_elections import on_broker_fenced, on_broker_unfenced
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import M, S, broker_record, ctx, feature, image_of, partition, replay, topic
from .cluster_fixtures import registration_request as plain_registration_request

REAL_LOG = (Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kafka-4.2" / "dump-log-and-shell"
            / "local-test-rig" / "kafka-data" / "__cluster_metadata-0" / "dump-log.cluster-metadata-decoder.txt.gz")
MV_4_2 = 29
FIELDS = {"isr": "isr", "leader": "leader", "eligibleLeaderReplicas": "eligible_leader_replicas",
          "lastKnownElr": "last_known_elr", "leaderRecoveryState": "leader_recovery_state"}


def _elr_cluster(*records, min_isr: int = 1):
    """Return a 4.2 image with ELR on, the cluster's min.insync.replicas and `records`."""
    config = M("ConfigRecord", resource_type=4, resource_name="", name="min.insync.replicas", value=str(min_isr))
    return image_of(feature(1, "eligible.leader.replicas.version"), ApiMessageAndVersion(config, 0), *records,
                    mv=MV_4_2)


def _ctx(image, version: int = 0, offset: int = 100):
    return ctx(image, version=version, offset=offset, kafka_version="4.2")


def _registration(broker_id: int, inc: int, previous_epoch: int = -1):
    features = [S("BrokerRegistrationRequest", "Feature", name=name, min_supported_version=lo, max_supported_version=hi)
                for name, lo, hi in (("kraft.version", 0, 1), ("metadata.version", 1, MV_4_2),
                                     ("eligible.leader.replicas.version", 0, 1))]
    return plain_registration_request(broker_id, inc=inc, features=features, previous_broker_epoch=previous_epoch)


def _fields(record) -> dict:
    """Return the fields of a PartitionChangeRecord that say something (Kafka's JSON leaves the others out)."""
    m = record.message
    out = {"partitionId": m.partition_id}
    for name, attr in FIELDS.items():
        value = getattr(m, attr)
        if value is not None and value != -2 and not (attr == "leader_recovery_state" and value == -1):
            out[name] = list(value) if isinstance(value, list) else value
    return out


def _single_broker_story(version: int = 3, previous_epoch: int = -1):
    """Fence broker 1 (the only replica of t-0), register a new incarnation of it, unfence it: return the three
    record lists and the final image."""
    image = _elr_cluster(broker_record(1, 10), *topic(partition(0, [1], 1)))
    fenced = broker_fencing.fence(_ctx(image), 1)
    image = replay(image, fenced)
    control = ClusterControl(QuorumConfig(kafka_version="4.2"))
    result = control.broker_registration(_ctx(image, version=version, offset=200),
                                         _registration(1, inc=9, previous_epoch=previous_epoch))
    assert result.response.error_code == 0
    registered = result.records
    image = replay(image, registered)
    unfenced = broker_fencing.unfence(_ctx(image), 1)
    return fenced, registered, unfenced, replay(image, unfenced)


def _real_payloads(offsets) -> dict[int, dict]:
    if not REAL_LOG.is_file():
        pytest.skip(f"Kafka 4.2 fixture {REAL_LOG} not found (../shared is absent)")
    found = {}
    with gzip.open(REAL_LOG, "rt") as lines:
        for line in lines:
            m = re.match(r"\| offset: (\d+) .*payload: (\{.*\})$", line.strip())
            if m and int(m.group(1)) in offsets and int(m.group(1)) not in found:
                found[int(m.group(1))] = json.loads(m.group(2))
    return found


def test_a_fenced_uncleanly_restarted_and_unfenced_broker_writes_what_kafka_4_2_wrote():
    real = _real_payloads({3594, 3599, 3602})
    fenced, registered, unfenced, _ = _single_broker_story()
    ours = [fenced[0], registered[0], [r for r in unfenced if r.name == "PartitionChangeRecord"][0]]
    for offset, record in zip((3594, 3599, 3602), ours):
        theirs = real[offset]
        assert theirs["type"] == "PARTITION_CHANGE_RECORD" and record.version == theirs["version"] == 2
        expected = {k: v for k, v in theirs["data"].items() if k != "topicId"}
        assert _fields(record) == expected, offset


def test_the_same_story_step_by_step():
    fenced, registered, unfenced, image = _single_broker_story()
    assert [r.name for r in fenced] == ["PartitionChangeRecord", "BrokerRegistrationChangeRecord"]
    assert _fields(fenced[0]) == {"partitionId": 0, "isr": [], "leader": -1, "eligibleLeaderReplicas": [1],
                                  "lastKnownElr": [1]}
    assert [r.name for r in registered] == ["PartitionChangeRecord", "RegisterBrokerRecord"]
    assert _fields(registered[0]) == {"partitionId": 0, "eligibleLeaderReplicas": []}
    assert registered[1].message.broker_epoch == 200  # the first record's offset, as Kafka's 3599 shows
    assert _fields(unfenced[1]) == {"partitionId": 0, "isr": [1], "leader": 1, "leaderRecoveryState": 1,
                                    "lastKnownElr": []}
    p = image.topics.by_name["t"].partition(0)
    assert (p.leader, p.isr, p.elr, p.last_known_elr, p.leader_recovery_state) == (1, [1], [], [], 1)


def test_a_clean_restart_keeps_the_broker_in_the_elr_and_it_leads_again_without_recovery():
    fenced, registered, unfenced, image = _single_broker_story(version=3, previous_epoch=10)
    assert [r.name for r in registered] == ["RegisterBrokerRecord"]
    assert _fields(unfenced[1]) == {"partitionId": 0, "isr": [1], "leader": 1, "eligibleLeaderReplicas": [],
                                    "lastKnownElr": []}
    assert image.topics.by_name["t"].partition(0).leader_recovery_state == 0


def test_a_v2_registration_cannot_tell_a_clean_shutdown():
    _, registered, _, _ = _single_broker_story(version=2, previous_epoch=10)
    assert [r.name for r in registered] == ["PartitionChangeRecord", "RegisterBrokerRecord"]


def test_the_isr_shrinks_into_the_elr_below_min_isr_and_a_leader_comes_back_from_it():
    image = _elr_cluster(*[broker_record(b, 10 + b) for b in (1, 2, 3)], *topic(partition(0, [1, 2, 3], 1)),
                         min_isr=2)
    steps = []
    for broker_id in (3, 2, 1):
        records = broker_fencing.fence(_ctx(image), broker_id)
        steps.append([_fields(r) for r in records if r.name == "PartitionChangeRecord"])
        image = replay(image, records)
    assert steps == [
        [{"partitionId": 0, "isr": [1, 2]}],                                       # still at min ISR: no ELR
        [{"partitionId": 0, "isr": [1], "eligibleLeaderReplicas": [2]}],           # below: 2 joins the ELR
        [{"partitionId": 0, "isr": [], "leader": -1, "eligibleLeaderReplicas": [1, 2], "lastKnownElr": [1]}],
    ]
    records = broker_fencing.unfence(_ctx(image), 2)
    assert [_fields(r) for r in records if r.name == "PartitionChangeRecord"] == [
        {"partitionId": 0, "isr": [2], "leader": 2, "eligibleLeaderReplicas": [1], "lastKnownElr": []}]
    image = replay(image, records)
    records = broker_fencing.unfence(_ctx(image), 3)
    assert records[1:] == []  # 3 is in neither ISR nor ELR: nothing to elect
    p = image.topics.by_name["t"].partition(0)
    assert (p.leader, p.isr, p.elr, p.leader_recovery_state) == (2, [2], [1], 0)


def test_without_elr_the_last_isr_member_stays_in_the_isr():
    image = image_of(broker_record(1, 11), *topic(partition(0, [1], 1)), mv=MV_4_2)
    records = on_broker_fenced(_ctx(image), 1)
    assert [_fields(r) for r in records] == [{"partitionId": 0, "leader": -1}]


def test_an_elr_member_that_restarts_uncleanly_leaves_the_elr_of_every_partition():
    image = _elr_cluster(*[broker_record(b, 10 + b) for b in (1, 2)],
                         *topic(partition(0, [1, 2], 1), partition(1, [2, 1], 2)), min_isr=2)
    image = replay(image, broker_fencing.fence(_ctx(image), 2))
    assert list(image.topics.index.in_elr(2).values()) == [[0, 1]]
    control = ClusterControl(QuorumConfig(kafka_version="4.2"))
    result = control.broker_registration(_ctx(image, version=3, offset=300), _registration(2, inc=7))
    assert [_fields(r) for r in result.records if r.name == "PartitionChangeRecord"] == [
        {"partitionId": 0, "eligibleLeaderReplicas": []}, {"partitionId": 1, "eligibleLeaderReplicas": []}]
    image = replay(image, result.records)
    assert image.topics.index.in_elr(2) == {}
    assert on_broker_unfenced(_ctx(image), 1) == []  # 1 still leads both: nothing leaderless


def test_a_3_9_controller_writes_nothing_for_a_new_incarnation():
    image = image_of(broker_record(1, 11, fenced=True), *topic(partition(0, [1], -1)), mv=21)
    control = ClusterControl(QuorumConfig())
    result = control.broker_registration(ctx(image, version=3, offset=50), plain_registration_request(1, inc=5))
    assert [r.name for r in result.records] == ["RegisterBrokerRecord"]


SYSTEMS_LOG = REAL_LOG.parents[3] / "Systems@f962029" / "kafka" / "data" / "__cluster_metadata-0" / \
    "dump-log.cluster-metadata-decoder.txt.gz"


def _real_partition_changes(path: Path) -> list[dict]:
    if not path.is_file():
        pytest.skip(f"Kafka 4.2 fixture {path} not found (../shared is absent)")
    with gzip.open(path, "rt") as lines:
        payloads = [json.loads(m.group(1)) for line in lines
                    if (m := re.search(r"payload: (\{\"type\":\"PARTITION_CHANGE_RECORD\".*\})$", line.strip()))]
    return [p["data"] for p in payloads]


def test_fencing_visits_topics_in_kafkas_brokers_to_isrs_order_as_a_real_4_2_log_shows():
    """Kafka 4.2 fenced broker 1 of a one-broker cluster: test_topic's partition first, then __consumer_offsets'
    50 (its BrokersToIsrs map order, not the names' order)."""
    from kraftsman.storage.protocol.uuids import Uuid, uuid_str
    real = _real_partition_changes(SYSTEMS_LOG)
    offsets_id, test_id = Uuid.from_string("Odo0yB8cTZmQ-QaTlq8qtQ"), Uuid.from_string("a-S6QsBCTaeTub90cnoEUA")
    created = []
    for name, topic_id, count in (("__consumer_offsets", offsets_id, 50), ("test_topic", test_id, 1)):
        created.append(ApiMessageAndVersion(M("TopicRecord", name=name, topic_id=topic_id), 0))
        created += [ApiMessageAndVersion(M("PartitionRecord", partition_id=p, topic_id=topic_id, replicas=[1], isr=[1],
                                           leader=1, leader_epoch=0, partition_epoch=0, directories=[bytes(16)]), 2)
                    for p in range(count)]
    image = _elr_cluster(broker_record(1, 9), *created)
    ours = [dict(_fields(r), topicId=uuid_str(bytes(r.message.topic_id)))
            for r in broker_fencing.fence(_ctx(image), 1) if r.name == "PartitionChangeRecord"]
    assert len(real) == len(ours) == 51
    assert ours == real


def _alter_isr(image, isr: list[int], partition_epoch: int):
    """Run AlterPartition v3 from the leader (broker 1) of t-0 asking for `isr`; return (record fields, image)."""
    from kraftsman.controller.quorum.reassignment import alter_partition

    data = S("AlterPartitionRequest", "PartitionData", partition_index=0, leader_epoch=0,
             partition_epoch=partition_epoch, leader_recovery_state=0, new_isr_with_epochs=[
                 S("AlterPartitionRequest", "BrokerState", broker_id=b, broker_epoch=10 + b) for b in isr])
    topic_data = S("AlterPartitionRequest", "TopicData", topic_id=image.topics.by_name["t"].topic_id, partitions=[data])
    request = M("AlterPartitionRequest", broker_id=1, broker_epoch=11, topics=[topic_data])
    result = alter_partition(_ctx(image, version=3), request)
    assert result.response.topics[0].partitions[0].error_code == 0
    return [_fields(r) for r in result.records], replay(image, result.records)


def test_alter_partition_shrinks_the_isr_into_the_elr_and_an_expansion_to_min_isr_empties_it():
    """KIP-966 through AlterPartition: below min ISR the members a leader drops stay eligible (the high watermark
    cannot move), and once the ISR is back at min ISR the ELR goes, members that did not rejoin included."""
    image = _elr_cluster(*[broker_record(b, 10 + b) for b in (1, 2, 3)], *topic(partition(0, [1, 2, 3], 1)),
                         min_isr=2)
    fields, image = _alter_isr(image, [1], partition_epoch=0)
    assert fields == [{"partitionId": 0, "isr": [1], "eligibleLeaderReplicas": [2, 3]}]
    assert list(image.topics.index.in_elr(3).values()) == [[0]]
    fields, image = _alter_isr(image, [1, 2], partition_epoch=1)
    assert fields == [{"partitionId": 0, "isr": [1, 2], "eligibleLeaderReplicas": []}]
    p = image.topics.by_name["t"].partition(0)
    assert (p.isr, p.elr, p.last_known_elr or []) == ([1, 2], [], [])     # LastKnownElr never written
    assert image.topics.index.in_elr(2) == {} and image.topics.index.in_elr(3) == {}
