"""DescribeCluster as a controller answers it: the real Kafka 3.9 frames, endpoint types, errors, operations."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.context import ControllerNode
from kraftsman.controller.quorum.describe_cluster import describe_cluster

from .cluster_fixtures import M, at, broker_record, ctx, heartbeat, image_of, registration_request, replay, wire


def request(endpoint_type: int = 2, ops: bool = False):
    return M("DescribeClusterRequest", endpoint_type=endpoint_type, include_cluster_authorized_operations=ops)


@pytest.mark.parametrize("req_file, resp_file, leader", [
    ("msgs/001087_c1_req_DescribeCluster_v1_c1.bin", "msgs/001088_c1_resp_DescribeCluster_v1_c1.bin", 3),
    ("msgs/004226_c1_req_DescribeCluster_v1_c1.bin", "msgs/004228_c1_resp_DescribeCluster_v1_c1.bin", 1),
])
def test_golden_controllers(req_file, resp_file, leader):
    # three controllers on 127.0.0.1:29093-29095 (README); controller 3 led first, then 1 after a failover
    _, req = wire(req_file)
    _, expected = wire(resp_file)
    result = describe_cluster(at(ctx(image_of(mv=21), version=1), leader_id=leader), req)
    assert (result.records, result.response) == ([], expected)


def test_leader_not_among_the_nodes_is_minus_one():
    result = describe_cluster(at(ctx(image_of(), version=1), leader_id=7), request())
    assert result.response.controller_id == -1


def test_brokers_are_the_unfenced_ones():
    image = image_of(broker_record(1, 10), broker_record(2, 20, fenced=True), broker_record(3, 30))
    response = describe_cluster(ctx(image, version=1), request(endpoint_type=1)).response
    assert response.endpoint_type == 1 and response.error_code == 0
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [(1, "b1", 9092), (3, "b3", 9092)]
    assert response.controller_id in (1, 3)


def test_v0_means_brokers():
    image = image_of(broker_record(1, 10))
    response = describe_cluster(ctx(image, version=0), request(endpoint_type=2)).response
    assert [b.broker_id for b in response.brokers] == [1]


@pytest.mark.parametrize("endpoint_type", [0, 3, 7])
def test_unknown_endpoint_type(endpoint_type):
    response = describe_cluster(ctx(image_of(), version=1), request(endpoint_type)).response
    assert (response.error_code, response.error_message) == (115, f"Unsupported endpoint type {endpoint_type}")


def test_needs_3_7_iv0():
    response = describe_cluster(ctx(image_of(mv=14), version=1), request()).response
    assert response.error_code == 35
    assert response.error_message == ("Direct-to-controller communication is not supported with the current "
                                      "MetadataVersion.")


@pytest.mark.parametrize("ops, expected", [(False, -2147483648), (True, 7600)])
def test_cluster_authorized_operations(ops, expected):
    # ALTER 4, CREATE 5, CLUSTER_ACTION 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12:
    # 16 + 32 + 128 + 256 + 1024 + 2048 + 4096 = 7600
    assert describe_cluster(ctx(image_of(), version=1), request(ops=ops)).response.cluster_authorized_operations \
        == expected


def test_controller_racks_pass_through():
    context = at(ctx(image_of(), version=1), controllers=(ControllerNode(1, "h", 1, "r1"),), leader_id=1)
    (node,) = describe_cluster(context, request()).response.brokers
    assert (node.broker_id, node.rack) == (1, "r1")


def test_broker_start_times_through_the_facade():
    from kraftsman.controller.quorum.controller import QuorumController

    q = QuorumController()
    image = image_of(broker_record(2, 20))
    registered = q.handle("BrokerRegistration", ctx(image, now=1_700_000_000_123, offset=30),
                          registration_request(broker_id=1))
    image = replay(image, registered.records)
    image = replay(image, q.handle("BrokerHeartbeat", ctx(image, offset=31), heartbeat(1, 30, 31)).records)
    response = q.handle("DescribeCluster", ctx(image, version=1), request(endpoint_type=1)).response
    assert [(b.broker_id, b.start_time_ms) for b in response.brokers] == [(1, 1_700_000_000_123), (2, -1)]
    controllers = q.handle("DescribeCluster", ctx(image, version=1), request(endpoint_type=2)).response.brokers
    assert {b.start_time_ms for b in controllers} == {-1}


def test_start_time_is_a_tagged_field_kafka_frames_do_not_carry():
    # hand-derived: broker tagged section = count 01, tag 10000 = varint 90 4e, size 08, then
    # int64 1700000000000 = 0x0000018bcfe56800; then ClusterAuthorizedOperations and the empty top-level tags
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeClusterResponse")
    node = cls.DescribeClusterBroker(broker_id=1, host="h", port=1, start_time_ms=1_700_000_000_000)
    body = codec.encode("DescribeClusterResponse", 1, cls(brokers=[node]))
    assert body.hex().endswith("02" "00000001" "0268" "00000001" "00" "01" "904e" "08" "0000018bcfe56800"
                               "80000000" "00")
    _, real = wire("msgs/001088_c1_resp_DescribeCluster_v1_c1.bin")
    assert {b.start_time_ms for b in real.brokers} == {-1}


def test_v2_include_fenced_brokers_lists_them_with_is_fenced_as_a_4x_broker_does():
    image = image_of(broker_record(1, 10), broker_record(2, 20, fenced=True), broker_record(3, 30))
    req = M("DescribeClusterRequest", endpoint_type=1, include_fenced_brokers=True)
    response = describe_cluster(ctx(image, version=2), req).response
    assert [(b.broker_id, b.is_fenced) for b in response.brokers] == [(1, False), (2, True), (3, False)]
    assert response.controller_id in (1, 3)                 # a random unfenced broker, never a fenced one
    without = describe_cluster(ctx(image, version=2), request(endpoint_type=1)).response
    assert [(b.broker_id, b.is_fenced) for b in without.brokers] == [(1, False), (3, False)]


def test_v1_ignores_include_fenced_brokers_and_sends_no_is_fenced():
    from kraftsman.storage.protocol import codec

    image = image_of(broker_record(1, 10), broker_record(2, 20, fenced=True))
    req = M("DescribeClusterRequest", endpoint_type=1, include_fenced_brokers=True)
    response = describe_cluster(ctx(image, version=1), req).response
    assert [b.broker_id for b in response.brokers] == [1]
    codec.encode("DescribeClusterResponse", 1, response)     # IsFenced left at its default: encodable at v1


def test_v2_controllers_are_never_fenced():
    req = M("DescribeClusterRequest", endpoint_type=2, include_fenced_brokers=True)
    response = describe_cluster(at(ctx(image_of(), version=2), leader_id=2), req).response
    assert [(b.broker_id, b.is_fenced) for b in response.brokers] == [(1, False), (2, False), (3, False)]
    assert response.controller_id == 2


def test_kraftsman_tags_carry_epoch_incarnation_and_controlled_shutdown_for_brokers_only():
    from kraftsman.storage.protocol import codec

    image = image_of(broker_record(1, 10), broker_record(2, 20, fenced=True))
    req = M("DescribeClusterRequest", endpoint_type=1, include_fenced_brokers=True)
    brokers = describe_cluster(ctx(image, version=2), req).response.brokers
    records = {r.broker_id: r for r in (image.cluster.brokers[i].record for i in (1, 2))}
    assert [(b.broker_epoch, bytes(b.incarnation_id), b.in_controlled_shutdown) for b in brokers] == \
        [(records[i].broker_epoch, bytes(records[i].incarnation_id), False) for i in (1, 2)]
    back = codec.decode("DescribeClusterResponse", 2, codec.encode("DescribeClusterResponse", 2,
                                                                    codec.message_class("DescribeClusterResponse")(
                                                                        brokers=brokers)))
    assert [b.broker_epoch for b in back.brokers] == [records[1].broker_epoch, records[2].broker_epoch]
    controllers = describe_cluster(ctx(image, version=2), request(endpoint_type=2)).response.brokers
    assert {b.broker_epoch for b in controllers} == {-1}
