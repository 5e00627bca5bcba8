"""The simulated broker's answers (controller/client/broker_apis) checked against real Kafka 3.9 broker frames
(shared/fixtures/kafka-wire-3.9) and Kafka 3.9's rules, without a quorum."""
from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from kraftsman.controller.client.broker_apis import admin_reads, api_table, config_writes, metadata_reads
from kraftsman.controller.client.broker_apis.forwarding import serialize_principal
from kraftsman.controller.client.broker_apis.listener import BrokerRequest
from kraftsman.controller.image.producer_ids import Provenance
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from ..quorum.replication_fixtures import M, S, feature, replay

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"


def _frames(target: str, direction: str, api: str) -> list[tuple[dict, bytes]]:
    index = WIRE / "index.jsonl"
    if not index.is_file():
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    return [(r, (WIRE / r["file"]).read_bytes()) for r in rows
            if r["proxy"] == target and r["direction"] == direction and r["api_name"] == api and r["file"]]


def registration(broker_id: int, *, fenced: bool = False, port: int = 9092, listener: str = "PLAINTEXT",
                 shutdown: bool = False, epoch: int = 100):
    endpoint = S("RegisterBrokerRecord", "BrokerEndpoint", name=listener, host="127.0.0.1", port=port,
                 security_protocol=0)
    return ApiMessageAndVersion(M("RegisterBrokerRecord", broker_id=broker_id, broker_epoch=epoch + broker_id,
                                  fenced=fenced, in_controlled_shutdown=shutdown, end_points=[endpoint]), 3)


def topic(name: str, topic_id: bytes, *partitions):
    """Return a TopicRecord and one PartitionRecord per (replicas, isr, leader)."""
    records = [ApiMessageAndVersion(M("TopicRecord", name=name, topic_id=topic_id), 0)]
    for index, (replicas, isr, leader) in enumerate(partitions):
        records.append(ApiMessageAndVersion(M("PartitionRecord", partition_id=index, topic_id=topic_id,
                                              replicas=replicas, isr=isr, leader=leader, leader_epoch=3), 0))
    return records


def image(*records, mv: int = 21):
    from kraftsman.controller.image.image import EMPTY

    return replay(EMPTY, [feature(mv), *records])


# ---------------------------------------------------------------- ApiVersions


def test_the_advertised_table_is_a_real_39_brokers_answer_byte_for_byte():
    """With a controller that serves every forwardable API at 3.9's ranges, the broker's ApiVersionsResponse is the
    one a real 3.9 broker sent (its features epoch being its image's offset)."""
    frames = _frames("b4", "resp", "ApiVersions")
    for row, frame in frames:
        _, recorded = framing.decode_response(18, row["api_version"], frame[4:])
        broker_image = image().__class__(provenance=Provenance(recorded.finalized_features_epoch, 1, 0),
                                         features=image().features)
        controller = {k: v for k, v in api_table.BROKER_APIS.items() if k in api_table.FORWARDABLE}
        answer = api_table.api_versions_response(api_table.advertised(controller), broker_image)
        assert framing.encode_response(18, row["api_version"], row["correlation_id"], answer) == frame
    assert len(frames) == 12


def test_forwardable_apis_follow_the_active_controller():
    assert all(k not in api_table.advertised(None) for k in api_table.FORWARDABLE)
    table = api_table.advertised({19: (0, 5), 20: (7, 9)})
    assert table[19] == (0, 5) and 20 not in table and 37 not in table       # cut, no overlap, not served
    assert table[3] == (0, 12) and table[75] == (0, 0)                        # answered by the broker itself


def test_a_bad_client_software_name_is_invalid_request():
    body = M("ApiVersionsRequest", client_software_name="-bad", client_software_version="1.0")
    assert api_table.request_error(body, 3) == E.INVALID_REQUEST and api_table.request_error(body, 2) == 0


# ---------------------------------------------------------------- forwarding


def test_the_principal_is_serialized_as_a_39_broker_does_in_its_envelopes():
    frames = _frames("c3", "req", "Envelope")
    assert frames
    for _, frame in frames:
        _, envelope = framing.decode_request(frame[4:])
        assert bytes(envelope.request_principal) == serialize_principal("User:ANONYMOUS")
    assert serialize_principal("User:alice", True) == b"\x00\x00\x05User\x06alice\x01\x00"


# ---------------------------------------------------------------- Metadata and DescribeTopicPartitions

T1, T2 = bytes([1]) * 16, bytes([2]) * 16


def _image_two_brokers():
    return image(registration(4, port=31014), registration(5, port=31015, fenced=True),
                 *topic("t", T1, ([4, 5], [4], 4), ([5], [5], -1)), *topic("u", T2, ([4, 6], [4], 4)))


def test_metadata_lists_alive_brokers_and_partition_states_as_kraft_metadata_cache():
    response = metadata_reads.metadata(_image_two_brokers(), M("MetadataRequest", topics=None), version=12,
                                       listener="PLAINTEXT", cluster_id="c", rng=random.Random(0))
    assert [(b.node_id, b.port) for b in response.brokers] == [(4, 31014)] and response.controller_id == 4
    parts = {(t.name, p.partition_index): p for t in response.topics for p in t.partitions}
    assert (parts["t", 0].error_code, parts["t", 0].leader_id, parts["t", 0].offline_replicas) == (0, 4, [5])
    assert (parts["t", 1].error_code, parts["t", 1].leader_id, parts["t", 1].isr_nodes) == (E.LEADER_NOT_AVAILABLE, -1,
                                                                                           [5])
    assert parts["u", 0].offline_replicas == [6]  # not registered
    v0 = metadata_reads.metadata(_image_two_brokers(), M("MetadataRequest", topics=[]), version=0,
                                 listener="PLAINTEXT", cluster_id="c", rng=random.Random(0))
    t0 = {(t.name, p.partition_index): p for t in v0.topics for p in t.partitions}["t", 0]
    assert (t0.error_code, t0.replica_nodes) == (E.REPLICA_NOT_AVAILABLE, [4])  # v0 hides fenced replicas


def test_metadata_answers_missing_and_illegal_names_without_creating_them():
    request = M("MetadataRequest", topics=[S("MetadataRequest", "MetadataRequestTopic", name=n)
                                           for n in ("nope", "bad name!")])
    response = metadata_reads.metadata(_image_two_brokers(), request, version=12, listener="PLAINTEXT",
                                       cluster_id="c", rng=random.Random(0))
    assert [(t.name, t.error_code) for t in response.topics] == [("nope", E.UNKNOWN_TOPIC_OR_PARTITION),
                                                                 ("bad name!", E.INVALID_TOPIC_EXCEPTION)]


def _describe_tp(names, limit=2000, cursor=None):
    cls = codec.message_class("DescribeTopicPartitionsRequest")
    request = cls(topics=[cls.TopicRequest(name=n) for n in names], response_partition_limit=limit,
                  cursor=None if cursor is None else cls.Cursor(topic_name=cursor[0], partition_index=cursor[1]))
    return metadata_reads.describe_topic_partitions(_image_two_brokers(), request, listener="PLAINTEXT")


def test_describe_topic_partitions_pages_sorted_topics_with_a_cursor():
    first = _describe_tp([], limit=1)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [("t", [0])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("t", 1)
    rest = _describe_tp([], limit=5, cursor=("t", 1))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in rest.topics] == [("t", [1]), ("u", [0])]
    assert rest.next_cursor is None
    p = rest.topics[0].partitions[0]
    assert (p.leader_id, p.eligible_leader_replicas, p.last_known_elr) == (-1, [], [])


def test_describe_topic_partitions_errors_as_kafka():
    answer = _describe_tp(["u", "nope", "bad name!"])
    assert [(t.name, t.error_code) for t in answer.topics] == [("bad name!", E.INVALID_TOPIC_EXCEPTION),
                                                               ("nope", E.UNKNOWN_TOPIC_OR_PARTITION), ("u", 0)]
    bad = _describe_tp(["u"], cursor=("t", 0))   # the cursor topic must be asked for
    assert [(t.name, t.error_code, t.partitions) for t in bad.topics] == [("u", E.INVALID_REQUEST, [])]


def test_describe_cluster_as_a_broker():
    cls = codec.message_class("DescribeClusterRequest")
    kw = dict(listener="PLAINTEXT", cluster_id="c", rng=random.Random(0))
    ok = metadata_reads.describe_cluster(_image_two_brokers(), cls(endpoint_type=1), version=1, **kw)
    assert [(b.broker_id, b.port) for b in ok.brokers] == [(4, 31014)] and ok.controller_id == 4
    wrong = metadata_reads.describe_cluster(_image_two_brokers(), cls(endpoint_type=2), version=1, **kw)
    assert (wrong.error_code, wrong.error_message) == (
        E.MISMATCHED_ENDPOINT_TYPE, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                                    "of type CONTROLLER")


# ---------------------------------------------------------------- configs, quotas, ACLs


def test_describe_configs_uses_the_brokers_own_layers():
    properties = {"node.id": "4", "log.dirs": "/data", "min.insync.replicas": "1"}
    cls = codec.message_class("DescribeConfigsRequest")
    request = cls(resources=[cls.DescribeConfigsResource(resource_type=4, resource_name=n, configuration_keys=None)
                             for n in ("4", "5")], include_synonyms=True)
    own, other = admin_reads.describe_configs_answer(image(), request, version=4, node_id=4,
                                                     config=admin_reads.broker_config(properties)).results
    entry = {c.name: c for c in own.configs}["log.dirs"]
    assert (entry.value, entry.config_source) == ("/data", 4)  # STATIC_BROKER_CONFIG
    assert (other.error_code, other.error_message) == (E.INVALID_REQUEST, "Unexpected broker id, expected 4 or "
                                                                          "empty string, but received 5")


def test_describe_acls_needs_the_standard_authorizer():
    request = M("DescribeAclsRequest", resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                principal_filter=None, host_filter=None, operation=1, permission_type=1)
    off = admin_reads.describe_acls_answer(image(), request, version=3, properties={})
    assert (off.error_code, off.error_message) == (E.SECURITY_DISABLED, "No Authorizer is configured on the broker")
    on = admin_reads.describe_acls_answer(image(), request, version=3,
                                          properties={"authorizer.class.name": admin_reads.STANDARD_AUTHORIZERS[0]})
    assert (on.error_code, on.resources) == (0, [])


def _quota(entity, key, value):
    data = [S("ClientQuotaRecord", "EntityData", entity_type=k, entity_name=v) for k, v in entity]
    return ApiMessageAndVersion(M("ClientQuotaRecord", entity=data, key=key, value=value, remove=False), 0)


def _quotas(*components, strict=False):
    cls = codec.message_class("DescribeClientQuotasRequest")
    request = cls(components=[cls.ComponentData(entity_type=t, match_type=m, match=v) for t, m, v in components],
                  strict=strict)
    quotas = image(_quota([("user", "alice")], "request_percentage", 50.0),
                   _quota([("user", None)], "producer_byte_rate", 4096.0),
                   _quota([("client-id", "c1"), ("user", "alice")], "consumer_byte_rate", 1.0))
    return admin_reads.describe_client_quotas_answer(quotas, request)


def _entities(response):
    return sorted((tuple((e.entity_type, e.entity_name) for e in entry.entity) for entry in response.entries),
                  key=repr)


def test_describe_client_quotas_matches_as_client_quotas_image():
    assert _entities(_quotas(("user", 2, None))) == [(("client-id", "c1"), ("user", "alice")), (("user", "alice"),),
                                                     (("user", None),)]
    assert _entities(_quotas(("user", 2, None), strict=True)) == [(("user", "alice"),), (("user", None),)]
    assert _entities(_quotas(("user", 1, None))) == [(("user", None),)]
    assert _entities(_quotas(("user", 0, "alice"), strict=True)) == [(("user", "alice"),)]


@pytest.mark.parametrize("components,code,message", [
    ((("user", 0, None),), E.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ((("user", 2, None), ("user", 1, None)), E.INVALID_REQUEST, "Entity type user cannot appear more than once in "
                                                                "the filter."),
    ((("group", 2, None),), E.UNSUPPORTED_VERSION, "Unsupported entity type group"),
    ((("ip", 2, None), ("user", 2, None)), E.INVALID_REQUEST, "Invalid entity filter component combination. IP "
                                                              "filter component should not be used with user or "
                                                              "clientId filter component."),
])
def test_a_bad_quota_filter_fails_the_whole_request(components, code, message):
    response = _quotas(*components)
    assert (response.error_code, response.error_message, response.entries) == (code, message, None)


# ---------------------------------------------------------------- (Incremental)AlterConfigs on the broker


def _alter(api: str, resources):
    cls = codec.message_class(f"{api}Request")
    body = cls(resources=resources, validate_only=False)
    request = BrokerRequest(44 if api.startswith("Incr") else 33, 1 if api.startswith("Incr") else 2, api, 7,
                            "admin", b"", ("127.0.0.1", 1), "PLAINTEXT")
    forwarded = []

    async def forward(req, rest):
        forwarded.append((req, rest))
        reply = codec.message_class(f"{api}Response")
        return reply(responses=[reply.AlterConfigsResourceResponse(resource_type=r.resource_type,
                                                                   resource_name=r.resource_name, error_code=0)
                                for r in rest.resources])
    answer = asyncio.run(config_writes.alter_configs(request, body, node_id=4, forward=forward))
    return answer, forwarded


def test_alter_configs_checks_on_the_broker_and_forwards_the_rest_in_order():
    cls = codec.message_class("IncrementalAlterConfigsRequest")

    def res(kind, name, *configs):
        return cls.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
            cls.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in configs])
    answer, forwarded = _alter("IncrementalAlterConfigs", [
        res(2, "t", ("retention.ms", 0, "1")), res(4, "5", ("log.cleaner.threads", 0, "2")),
        res(4, "x", ("a", 0, "1")), res(2, "dup", ("a", 0, "1"), ("a", 1, None)), res(4, "4", ("b", 0, None)),
        res(4, "", ("c", 1, None)), res(8, "4", ("kafka", 0, "INFO"))])
    assert [(r.resource_name, r.error_code, r.error_message) for r in answer.responses] == [
        ("t", 0, ""), ("5", 42, "Unexpected broker id, expected 4, but received 5"),
        ("x", 42, "Node id must be an integer, but it is: x"), ("dup", 42, "Error due to duplicate config keys"),
        ("4", 42, "Null value not supported for : b"), ("", 0, ""),
        ("4", 42, "The simulated broker has no log4j loggers to alter")]
    (request, rest), = forwarded
    assert [r.resource_name for r in rest.resources] == ["t", ""]
    header, body = framing.decode_request(request.frame)
    assert (header.correlation_id, header.client_id, body) == (7, "admin", rest)


def test_a_resource_named_twice_fails_both_and_nothing_is_forwarded():
    cls = codec.message_class("AlterConfigsRequest")
    resource = cls.AlterConfigsResource(resource_type=2, resource_name="t", configs=[])
    answer, forwarded = _alter("AlterConfigs", [resource, resource])
    assert [(r.error_code, r.error_message) for r in answer.responses] == [
        (42, "Each resource must appear at most once.")] * 2 and forwarded == []
