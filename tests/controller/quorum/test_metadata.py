"""Metadata (v0-v12) answered by a controller: controllers as brokers, topics from the image.

Golden: the Metadata v12 requests admin clients sent in the real 3.9 cluster (kafka-wire-3.9/msgs, empty and
null topic lists on a cluster without topics) get responses with the same shape (no topics).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.controller.quorum.metadata import metadata
from kraftsman.controller.quorum.partition_elections import on_broker_fenced
from kraftsman.controller.quorum.topics import create_topics
from kraftsman.storage.protocol import framing
from kraftsman.storage.protocol.uuids import Uuid

from .replication_fixtures import M, S, broker, cluster, context, create_request, replay, run

MSGS = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kafka-wire-3.9" / "msgs"


def _image():
    image = run(create_topics, cluster(1, 2, 3), create_request(("b", 2, 3), ("a", 1, 1),
                                                                ("__consumer_offsets", 1, 1)))[1]
    image = replay(image, [broker(2, fenced=True)])
    return replay(image, on_broker_fenced(context(image), 2))


def _request(names, version=12):
    topics = None if names is None else [S("MetadataRequest", "MetadataRequestTopic", name=n) for n in names]
    return run(metadata, _image(), M("MetadataRequest", topics=topics), version=version)[0].response


def test_brokers_are_the_controllers_and_the_leader_is_the_controller_id():
    response = _request([])
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(1, "127.0.0.1", 9093), (2, "127.0.0.1", 9094),
                                                                       (3, "127.0.0.1", 9095)]
    assert (response.controller_id, response.cluster_id, response.topics) == (1, "cid", [])


def test_all_topics_with_partitions_isr_and_offline_replicas():
    response = _request(None)
    assert [t.name for t in response.topics] == ["__consumer_offsets", "a", "b"]
    assert [t.is_internal for t in response.topics] == [True, False, False]
    image = _image()
    for topic in response.topics:
        assert topic.topic_id == image.topics.by_name[topic.name].topic_id
        for p in topic.partitions:
            real = image.topics.by_name[topic.name].partition(p.partition_index)
            assert (p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes) == (
                real.leader, real.leader_epoch, real.replicas, real.isr)
            assert p.offline_replicas == [r for r in real.replicas if r == 2]
            assert 2 not in p.isr_nodes or p.replica_nodes == [2]


def test_v0_empty_list_means_all_topics():
    assert len(_request([], version=0).topics) == 3


def test_missing_and_invalid_names_and_ids():
    response = _request(["a", "zz", "bad name"])
    assert [(t.name, t.error_code) for t in response.topics] == [("a", 0), ("zz", 3), ("bad name", 17)]
    missing = S("MetadataRequest", "MetadataRequestTopic", name=None, topic_id=Uuid.from_longs(9, 9))
    result, _ = run(metadata, _image(), M("MetadataRequest", topics=[missing]), version=12)
    assert [(t.name, t.error_code) for t in result.response.topics] == [(None, 100)]


def test_leaderless_partition_reports_leader_not_available():
    image = replay(_image(), [broker(1, fenced=True)])
    image = replay(image, on_broker_fenced(context(image), 1))
    result, _ = run(metadata, image, M("MetadataRequest", topics=[S("MetadataRequest", "MetadataRequestTopic",
                                                                     name="a")]), version=12)
    [p] = result.response.topics[0].partitions
    assert (p.error_code, p.leader_id) == (5, -1)


@pytest.mark.parametrize("version", range(13))
def test_every_version_encodes(version):
    request = M("MetadataRequest", topics=None if version else [])
    result, _ = run(metadata, _image(), request, version=version)
    frame = framing.encode_response(3, version, 1, result.response)
    _, again = framing.decode_response(3, version, framing.strip_size(frame))
    assert len(again.topics) == 3


def _pairs():
    """Pair each recorded Metadata v12 response with the latest earlier request of the same correlation id."""
    files = sorted(MSGS.glob("*_Metadata_v12_*.bin")) if MSGS.is_dir() else []
    pairs = []
    for i, path in enumerate(files):
        if "_resp_" in path.name:
            suffix = path.name.rsplit("_", 1)[1]
            request = [f for f in files[:i] if "_req_" in f.name and f.name.endswith("_" + suffix)][-1]
            pairs.append((request, path))
    return pairs


def test_recorded_v12_requests_get_the_same_topic_answer():
    pairs = _pairs()
    if not pairs:
        pytest.skip(f"Kafka wire fixtures not found at {MSGS} (../shared is absent)")
    assert len(pairs) >= 10
    for request_path, response_path in pairs:
        _, request = framing.decode_request(framing.strip_size(request_path.read_bytes()))
        result = metadata(context(cluster(4, 5), 12), request)
        frame = framing.encode_response(3, 12, 1, result.response)
        _, ours = framing.decode_response(3, 12, framing.strip_size(frame))
        _, real = framing.decode_response(3, 12, framing.strip_size(response_path.read_bytes()))
        assert (ours.topics, ours.throttle_time_ms, ours.cluster_authorized_operations) == (
            real.topics, real.throttle_time_ms, real.cluster_authorized_operations)
