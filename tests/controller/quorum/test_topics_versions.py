"""Every handler's response encodes at every version of its API (fields past a version are ignorable or default),
and decodes back with the same error codes."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum import configuration_control, replication_control
from kraftsman.controller.quorum.topics import create_topics
from kraftsman.storage.protocol import framing

from .replication_fixtures import M, S, broker, cluster, context, create_request, replay, run

HANDLERS = {**replication_control.HANDLERS, **configuration_control.HANDLERS}
READ_ONLY = replication_control.READ_ONLY | configuration_control.READ_ONLY


def _image():
    image = run(create_topics, cluster(1, 2, 3), create_request(("t", 2, 2, {"retention.ms": "5"})))[1]
    return replay(image, [broker(3, fenced=True)])


def _requests(image):
    t = image.topics.by_name["t"]
    yield "CreateTopics", create_request(("n", 1, 1), ("t", 1, 1), ("x", 0, 1))
    yield "DeleteTopics", M("DeleteTopicsRequest", topic_names=["t", "zz"], topics=[
        S("DeleteTopicsRequest", "DeleteTopicState", name="t"), S("DeleteTopicsRequest", "DeleteTopicState",
                                                                  name=None, topic_id=bytes(15) + b"\x07")])
    yield "CreatePartitions", M("CreatePartitionsRequest", topics=[
        S("CreatePartitionsRequest", "CreatePartitionsTopic", name="t", count=3),
        S("CreatePartitionsRequest", "CreatePartitionsTopic", name="zz", count=3)])
    p = t.partition(0)
    yield "AlterPartition", M("AlterPartitionRequest", broker_id=p.leader, broker_epoch=10 + p.leader, topics=[
        S("AlterPartitionRequest", "TopicData", topic_name="t", topic_id=t.topic_id, partitions=[
            S("AlterPartitionRequest", "PartitionData", partition_index=0, new_isr=[p.leader],
              new_isr_with_epochs=[S("AlterPartitionRequest", "BrokerState", broker_id=p.leader)]),
            S("AlterPartitionRequest", "PartitionData", partition_index=9)])])
    yield "AlterPartitionReassignments", M("AlterPartitionReassignmentsRequest", topics=[
        S("AlterPartitionReassignmentsRequest", "ReassignableTopic", name="t", partitions=[
            S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=0, replicas=[1, 2]),
            S("AlterPartitionReassignmentsRequest", "ReassignablePartition", partition_index=1, replicas=None)])])
    yield "ListPartitionReassignments", M("ListPartitionReassignmentsRequest", topics=None)
    yield "ElectLeaders", M("ElectLeadersRequest", election_type=0, topic_partitions=[
        S("ElectLeadersRequest", "TopicPartitions", topic="t", partitions=[0, 1, 7])])
    yield "IncrementalAlterConfigs", M("IncrementalAlterConfigsRequest", resources=[
        S("IncrementalAlterConfigsRequest", "AlterConfigsResource", resource_type=2, resource_name="t", configs=[
            S("IncrementalAlterConfigsRequest", "AlterableConfig", name="segment.ms", config_operation=0,
              value="x")])])
    yield "AlterConfigs", M("AlterConfigsRequest", resources=[
        S("AlterConfigsRequest", "AlterConfigsResource", resource_type=2, resource_name="t", configs=[
            S("AlterConfigsRequest", "AlterableConfig", name="segment.ms", value="10")])])
    yield "DescribeConfigs", M("DescribeConfigsRequest", include_synonyms=True, resources=[
        S("DescribeConfigsRequest", "DescribeConfigsResource", resource_type=2, resource_name="t",
          configuration_keys=None)])
    yield "Metadata", M("MetadataRequest", topics=None)


def _cases():
    for name, _ in _requests(_image()):
        info = next(i for i in framing.api_registry().values() if i.name == name)
        for version in info.versions:
            yield name, info.api_key, version


@pytest.mark.parametrize("name,api_key,version", list(_cases()))
def test_response_encodes_at_every_version(name, api_key, version):
    image = _image()
    request = dict(_requests(image))[name]
    result = HANDLERS[name](context(image, version), request)
    frame = framing.encode_response(api_key, version, 7, result.response)
    _, again = framing.decode_response(api_key, version, framing.strip_size(frame))
    assert framing.encode_response(api_key, version, 7, again) == frame
    if name in READ_ONLY:
        assert result.records == []
