"""DescribeCluster v2 (Kafka 4.0, KIP-1073): our spec against Kafka 4.x's, and the v2 fields on the wire."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftsman.storage.protocol import codec, schema

from . import test_schema_conformance as conformance

KAFKA_4X = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "kafka-4x" / "schemas"


@pytest.mark.parametrize("name", ["DescribeClusterRequest", "DescribeClusterResponse"])
def test_spec_is_kafka_4x_apart_from_kraftsmans_tags(name, monkeypatch):
    path = KAFKA_4X / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared is absent)")
    raw = json.loads(conformance.strip_comments(path.read_text()))
    ours = schema.load(name)
    assert str(ours.valid_versions) == raw["validVersions"] == "0-2"
    monkeypatch.setattr(conformance, "ADDED_FIELDS", conformance.KRAFTSMAN_TAGS)   # only kraftsman's tags differ
    conformance._compare_fields(name, raw["fields"], ours.fields)


def test_v2_fields_travel_and_older_versions_leave_them_out():
    request = codec.message_class("DescribeClusterRequest")(endpoint_type=1, include_fenced_brokers=True)
    assert codec.encode("DescribeClusterRequest", 2, request) == bytes([0, 1, 1, 0])
    assert codec.encode("DescribeClusterRequest", 1, request.replace(include_fenced_brokers=False)) == bytes([0, 1, 0])
    with pytest.raises(codec.CodecError):       # not ignorable: a v1 server cannot be asked for fenced brokers
        codec.encode("DescribeClusterRequest", 1, request)
    cls = codec.message_class("DescribeClusterResponse")
    broker = cls.DescribeClusterBroker(broker_id=4, host="h", port=9092, is_fenced=True)
    body = cls(cluster_id="c", controller_id=-1, brokers=[broker])
    assert codec.decode("DescribeClusterResponse", 2, codec.encode("DescribeClusterResponse", 2, body)) \
        .brokers[0].is_fenced is True
    with pytest.raises(codec.CodecError):
        codec.encode("DescribeClusterResponse", 1, body)


def test_kraftsman_tags_are_left_out_at_their_defaults():
    cls = codec.message_class("DescribeClusterResponse")
    plain = cls.DescribeClusterBroker(broker_id=4, host="h", port=9092)
    tagged = cls.DescribeClusterBroker(broker_id=4, host="h", port=9092, start_time_ms=5, broker_epoch=7,
                                       in_controlled_shutdown=True)
    frames = [codec.encode("DescribeClusterResponse", 2, cls(cluster_id="c", brokers=[b])) for b in (plain, tagged)]
    assert len(frames[1]) > len(frames[0])
    back = codec.decode("DescribeClusterResponse", 2, frames[1]).brokers[0]
    assert (back.start_time_ms, back.broker_epoch, back.in_controlled_shutdown) == (5, 7, True)
