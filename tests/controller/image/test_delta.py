"""MetadataDelta and ImageBuilder: replay rules for each record type, transactions, write() round trips."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.batch_loader import ImageBuilder
from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.errors import ImageReplayError
from kraftsman.controller.image.nodes import root_node
from kraftsman.controller.image.partitions import PartitionRegistration, materialize
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record, write_metadata_record

T1 = Uuid.from_string("C_0Az8SmSdGlXfHdPNnJ0A")


def rec(record_type: str, version: int = 0, **fields) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(codec.message_class(record_type)(**fields), version)


def topic_records():
    return [rec("FeatureLevelRecord", name="metadata.version", feature_level=21),
            rec("TopicRecord", name="foo", topic_id=T1),
            rec("PartitionRecord", 0, partition_id=0, topic_id=T1, replicas=[1, 2], isr=[1, 2], leader=1,
                leader_epoch=0, partition_epoch=0)]


def leaf(image, path: str) -> str:
    node = root_node(image)
    for part in path.strip("/").split("/"):
        node = node.child(part)
    return node.text


def replay(records, image=None) -> object:
    delta = MetadataDelta() if image is None else MetadataDelta(image)
    for r in records:
        delta.replay(r)
    return delta.apply()


def test_partition_change_merges_like_kafka():
    image = replay(topic_records() + [rec("PartitionChangeRecord", partition_id=0, topic_id=T1, isr=[1], leader=2)])
    assert leaf(image, "/image/topics/byName/foo/0") == (
        "PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], "
        "isr=[1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=1)")


def test_raw_and_decoded_partition_changes_agree():
    records = topic_records() + [rec("PartitionChangeRecord", partition_id=0, topic_id=T1, replicas=[2, 3], isr=[2])]
    lazy = MetadataDelta()
    for r in records:
        lazy.replay_value(write_metadata_record(r))
    assert leaf(lazy.apply(), "/image/topics/byId/C_0Az8SmSdGlXfHdPNnJ0A/0") == leaf(
        replay(records), "/image/topics/byId/C_0Az8SmSdGlXfHdPNnJ0A/0")


def test_replay_encoded_keeps_partition_records_raw_and_agrees_with_replay():
    records = topic_records() + [rec("ConfigRecord", resource_type=2, resource_name="foo", name="a", value="1"),
                                 rec("PartitionChangeRecord", partition_id=0, topic_id=T1, replicas=[2, 3], isr=[2])]
    delta = MetadataDelta()
    for r in records:
        delta.replay_encoded(r, write_metadata_record(r))
    image = delta.apply()
    assert type(image.topics.by_name["foo"].partitions[0]) is not PartitionRegistration  # kept raw
    assert list(image.write()) == list(replay(records).write())
    assert leaf(image, "/image/topics/byName/foo/0") == leaf(replay(records), "/image/topics/byName/foo/0")


def test_write_leaves_raw_partitions_raw():
    delta = MetadataDelta()
    for r in topic_records():
        delta.replay_value(write_metadata_record(r))
    image = delta.apply()
    assert list(image.write())[-1] == topic_records()[-1]
    assert type(image.topics.by_name["foo"].partitions[0]) is bytes


def test_remove_topic_and_unknown_topic():
    image = replay(topic_records() + [rec("RemoveTopicRecord", topic_id=T1)])
    assert image.topics.is_empty()
    with pytest.raises(ImageReplayError):
        replay([rec("PartitionRecord", partition_id=0, topic_id=T1, replicas=[1], isr=[1])])


def test_broker_fencing_and_unregister():
    endpoint = codec.message_class("RegisterBrokerRecord").BrokerEndpoint(name="PLAINTEXT", host="h", port=9092)
    register = rec("RegisterBrokerRecord", 2, broker_id=1, broker_epoch=5, incarnation_id=T1, end_points=[endpoint],
                   fenced=True)
    image = replay([register, rec("BrokerRegistrationChangeRecord", broker_id=1, broker_epoch=5, fenced=-1)])
    assert "fenced=false" in leaf(image, "/image/cluster/brokers/1")
    image = replay([rec("FenceBrokerRecord", id=1, epoch=5)], image)
    assert "fenced=true" in leaf(image, "/image/cluster/brokers/1")
    with pytest.raises(ImageReplayError):
        replay([rec("UnregisterBrokerRecord", broker_id=1, broker_epoch=4)], image)
    assert replay([rec("UnregisterBrokerRecord", broker_id=1, broker_epoch=5)], image).cluster.is_empty()


def test_configs_quotas_acls_scram_tokens_and_features_print_as_kafka():
    quota = codec.message_class("ClientQuotaRecord").EntityData
    image = replay([
        rec("ConfigRecord", resource_type=4, resource_name="", name="a", value="1"),
        rec("ConfigRecord", resource_type=2, resource_name="t", name="b", value="2"),
        rec("ConfigRecord", resource_type=2, resource_name="t", name="b", value=None),
        rec("ClientQuotaRecord", entity=[quota(entity_type="user", entity_name="a(b)")], key="k", value=1e7),
        rec("AccessControlEntryRecord", id=T1, resource_type=2, resource_name="foo", pattern_type=3,
            principal="User:alice", host="*", operation=3, permission_type=3),
        rec("UserScramCredentialRecord", name="bob", mechanism=1, salt=b"\x01", stored_key=b"\x02",
            server_key=b"\xff", iterations=4096),
        rec("DelegationTokenRecord", owner="User:a", requester="User:b", renewers=["User:c", "User:d"],
            issue_timestamp=1, max_timestamp=2, expiration_timestamp=3, token_id="tok"),
        rec("FeatureLevelRecord", name="group.version", feature_level=1),
        rec("ProducerIdsRecord", broker_id=1, broker_epoch=2, next_producer_id=5000),
    ])
    assert leaf(image, "/image/configs/BROKER/a") == "1"
    assert "TOPIC:t" not in root_node(image).child("image").child("configs").child_names()
    assert leaf(image, "/image/clientQuotas/user(a\\(b\\))/k") == "1.0E7"
    assert leaf(image, "/image/acls/C_0Az8SmSdGlXfHdPNnJ0A") == (
        "StandardAcl(resourceType=TOPIC, resourceName=foo, patternType=LITERAL, principal=User:alice, host=*, "
        "operation=READ, permissionType=ALLOW)")
    assert leaf(image, "/image/scram/SCRAM-SHA-256/bob") == (
        "ScramCredentialData(salt=01, storedKey=02, serverKey=ff, iterations=4096)")
    assert leaf(image, "/image/delegationToken/tok") == (
        "DelegationTokenDatatokenId=tok(owner=User:a(tokenRequester=User:b(renewers=User:c User:d, "
        "issueTimestamp=1, maxTimestamp=2), expiryTimestamp=3")
    assert leaf(image, "/image/features/finalized_group.version") == "1"
    assert leaf(image, "/image/producerIds/nextProducerId") == "5000"
    again = replay(list(image.write()))
    assert sorted(map(write_metadata_record, again.write())) == sorted(map(write_metadata_record, image.write()))


def _batches(builder, records, offset=0):
    for i, r in enumerate(records):
        builder.load_batch([(offset + i, write_metadata_record(r))], 1, 1000)


def test_transactions_end_commits_and_abort_discards():
    begin, end, abort = rec("BeginTransactionRecord"), rec("EndTransactionRecord"), rec("AbortTransactionRecord")
    builder = ImageBuilder()
    _batches(builder, topic_records()[:1] + [begin, topic_records()[1]])
    assert builder.image().topics.is_empty()  # open transaction is invisible
    assert builder.image().provenance.offset == 0
    _batches(builder, [end], offset=3)
    assert "foo" in builder.image().topics.by_name
    builder = ImageBuilder()
    _batches(builder, topic_records()[:1] + [begin, topic_records()[1], abort])
    assert builder.image().topics.is_empty()
    assert builder.image().provenance.offset == 3


def test_stop_offset_and_snapshot_reset():
    builder = ImageBuilder()
    values = [(i, write_metadata_record(r)) for i, r in enumerate(topic_records())]
    assert builder.load_batch(values, 1, 5, stop_offset=1) is False
    assert builder.image().provenance.offset == 1 and not builder.image().topics.by_name["foo"].partitions
    builder.start_snapshot()
    assert builder.image().topics.is_empty()


def test_faults_are_reported_and_skipped():
    faults = []
    builder = ImageBuilder(on_fault=faults.append)
    bad = write_metadata_record(rec("RemoveTopicRecord", topic_id=T1))
    builder.load_batch([(0, bad), (1, write_metadata_record(topic_records()[0]))], 1, 5)
    assert faults and "offset 0" in faults[0]
    assert builder.image().features.metadata_version == 21


@pytest.mark.parametrize("version,fields,unknown", [
    (0, {}, None), (1, {"directories": [T1, T1]}, None), (1, {"directories": []}, None),
    (1, {"directories": [T1]}, None), (2, {"directories": [T1, T1], "eligible_leader_replicas": [2]}, None),
    (2, {"directories": [T1, T1], "last_known_elr": []}, None), (1, {"directories": [T1, T1]}, [(7, b"zz")]),
    (1, {"directories": [T1, T1], "leader_recovery_state": 1}, None),
])
def test_write_of_raw_partitions_equals_the_registrations_records(version, fields, unknown):
    message = codec.message_class("PartitionRecord")(partition_id=0, topic_id=T1, replicas=[1, 2], isr=[1],
                                                      leader=1, leader_epoch=3, partition_epoch=4, **fields)
    message._unknown_tagged_fields = unknown
    value = write_metadata_record(ApiMessageAndVersion(message, version))
    delta = MetadataDelta()
    for r in topic_records()[:2]:
        delta.replay(r)
    delta.replay_value(value)
    topic = delta.apply().topics.by_name["foo"]
    written = list(topic.write())[1]
    assert written == materialize(value).to_record(T1, 0)
    assert write_metadata_record(written) == write_metadata_record(materialize(value).to_record(T1, 0))
    assert type(topic.partitions[0]) is bytes


def test_write_values_equals_write_encoded_for_minimal_and_padded_values():
    partition = codec.message_class("PartitionRecord")
    values = []
    for i, (version, lrs) in enumerate([(0, 0), (1, 0), (1, 1), (2, 0), (0, 1)]):
        message = partition(partition_id=i, topic_id=T1, replicas=[1, 2], isr=[1], leader=1, leader_epoch=0,
                            partition_epoch=0, leader_recovery_state=lrs,
                            directories=[T1, T1] if version else [])
        values.append(write_metadata_record(ApiMessageAndVersion(message, version)))
    def minimal(partition_id):
        return write_metadata_record(ApiMessageAndVersion(partition(
            partition_id=partition_id, topic_id=T1, replicas=[1], isr=[1], leader=1, directories=[T1]), 1))
    values.append(minimal(5)[:-1] + b"\x01\x00\x01\x00")  # LeaderRecoveryState 0 written as a tag: not minimal
    values.append(minimal(6).replace(b"\x02\x00\x00\x00\x01", b"\x82\x00\x00\x00\x00\x01", 1))  # padded count
    delta = MetadataDelta()
    for r in topic_records()[:2]:
        delta.replay(r)
    for value in values:
        delta.replay_value(value)
    image = delta.apply()
    assert [read_metadata_record(v).message.partition_id for v in values] == list(range(7))
    assert list(image.write_values()) == [write_metadata_record(r) for r in image.write()]
    written = list(image.topics.by_name["foo"].write_values())[1:]
    assert [w is v for w, v in zip(written, values)] == [True, True, True, False, True, False, False]  # v2: encoded


def test_a_delta_builds_only_the_areas_it_replays_into_and_shares_the_others():
    base = replay(topic_records())
    delta = MetadataDelta(base)
    delta.replay(rec("ConfigRecord", resource_type=2, resource_name="foo", name="retention.ms", value="1"))
    assert set(vars(delta)) == {"image", "producer_ids", "configs"}
    after = delta.apply()
    assert after.configs is not base.configs and after.topics is base.topics and after.cluster is base.cluster
    assert after.features is base.features and delta.feature_replays() == 0
    assert replay(topic_records() + [rec("ConfigRecord", resource_type=2, resource_name="foo", name="retention.ms",
                                         value="1")]).configs.resources == after.configs.resources
