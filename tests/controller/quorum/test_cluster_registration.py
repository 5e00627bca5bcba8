"""BrokerRegistration, UnregisterBroker and ControllerRegistration against Kafka 3.9's rules and real frames/logs.

Expectations come from the reference (error codes §5.4, record fields §1.4), Kafka 3.9's ClusterControlManager
rules restated in cluster_control.py, the real metadata logs (record versions per metadata.version, a
re-registration of one incarnation at offsets 8 and 11) and the recorded Kafka 3.9 frames.
"""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.storage.protocol.uuids import Uuid

from .cluster_fixtures import (
    M,
    S,
    broker_record,
    ctx,
    feature,
    image_of,
    log_dir,
    names,
    partition,
    registration_request,
    replay,
    topic,
    wire,
)


def control() -> ClusterControl:
    return ClusterControl(QuorumConfig())


# ---------------------------------------------------------------- BrokerRegistration


@pytest.mark.parametrize("mv, version", [(1, 0), (4, 0), (6, 0), (7, 1), (8, 2), (11, 2), (14, 2), (16, 2),
                                         (17, 3), (19, 3), (21, 3)])
def test_record_version_follows_metadata_version(mv, version):
    # real logs: MV 7 -> v1, MV 11 and 14 -> v2, MV 19-21 -> v3; the gates are 3.3-IV3, 3.4-IV0, 3.7-IV2
    result = control().broker_registration(ctx(image_of(mv=mv), offset=40), registration_request(mv_range=(1, 21)))
    assert result.response.error_code == 0
    (record,) = result.records
    assert record.version == version
    assert list(record.message.log_dirs) == ([log_dir(1)] if mv >= 17 else [])


def test_new_registration_is_fenced_and_its_epoch_is_its_offset():
    result = control().broker_registration(ctx(image_of(), offset=57), registration_request(broker_id=4, rack="r1"))
    (record,) = result.records
    r = record.message
    assert (result.response.error_code, result.response.broker_epoch) == (0, 57)
    assert (r.broker_id, r.broker_epoch, r.fenced, r.in_controlled_shutdown, r.rack) == (4, 57, True, False, "r1")
    assert [(e.name, e.host, e.port, e.security_protocol) for e in r.end_points] == [("PLAINTEXT", "b4", 9092, 0)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in r.features] == [
        ("kraft.version", 0, 1), ("metadata.version", 1, 21)]
    image = replay(image_of(), result.records)
    assert image.cluster.brokers[4].record.fenced


@pytest.mark.parametrize("mutate, code", [
    (dict(cluster_id="other"), 104),                       # INCONSISTENT_CLUSTER_ID
    (dict(mv_range=(1, 20)), 35),                          # UNSUPPORTED_VERSION: finalized 21 not in 1-20
    (dict(mv_range=(22, 25)), 35),
    (dict(mv_range=None), 35),                             # no range -> supports only 3.0-IV1 (level 1)
    (dict(is_migrating_zk_broker=True), 102),              # ZK brokers refused
    (dict(dirs=[]), 119),                                  # INVALID_REGISTRATION: no directories
    (dict(dirs=[Uuid.from_longs(0, 1)]), 119),             # reserved (LOST)
    (dict(dirs=[Uuid.from_longs(0, 99)]), 119),            # reserved (msb 0, lsb < 100)
    (dict(dirs=[log_dir(1), log_dir(1)]), 119),            # duplicate
    (dict(dirs=[log_dir(2)]), 119),                        # broker 2's directory
])
def test_refused_registrations(mutate, code):
    image = image_of(broker_record(2, 20, fenced=True))
    result = control().broker_registration(ctx(image), registration_request(**mutate))
    assert (result.records, result.response.error_code, result.response.broker_epoch) == ([], code, -1)


def test_directories_are_not_checked_before_directory_assignment():
    result = control().broker_registration(ctx(image_of(mv=16)), registration_request(dirs=[]))
    assert result.response.error_code == 0 and list(result.records[0].message.log_dirs) == []


def test_without_metadata_version_range_at_level_1_the_record_gets_1_to_1():
    result = control().broker_registration(ctx(image_of(mv=1)), registration_request(mv_range=None, dirs=[]))
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in result.records[0].message.features] \
        == [("kraft.version", 0, 1), ("metadata.version", 1, 1)]


def test_other_finalized_features_must_be_in_range_too():
    image = image_of(feature(2, "group.version"))
    request = registration_request()
    request.features.append(S("BrokerRegistrationRequest", "Feature", name="group.version",
                              min_supported_version=0, max_supported_version=1))
    assert control().broker_registration(ctx(image), request).response.error_code == 35
    request.features[-1].max_supported_version = 2
    assert control().broker_registration(ctx(image), request).response.error_code == 0


def test_live_registration_of_another_incarnation_is_a_duplicate():
    c = control()
    image = image_of(broker_record(1, 10, fenced=False, inc=1))
    c.on_activate(ctx(image, now=1000))
    result = c.broker_registration(ctx(image, now=5000), registration_request(inc=2))
    assert (result.records, result.response.error_code) == ([], 101)
    # the session expires after broker.session.timeout.ms (9000): the new incarnation may then register
    result = c.broker_registration(ctx(image, now=10_001, offset=70), registration_request(inc=2))
    assert (result.response.error_code, result.response.broker_epoch) == (0, 70)


def test_fenced_registration_of_another_incarnation_is_replaced_at_once():
    c = control()
    image = image_of(broker_record(1, 10, fenced=True, inc=1))
    c.on_activate(ctx(image, now=1000))
    assert c.broker_registration(ctx(image, now=1001), registration_request(inc=2)).response.error_code == 0


def test_same_incarnation_registers_again_with_a_new_epoch():
    # cdc-lakehouse-pipeline's real log: incarnation 32z70OS8... registered at offset 8 (epoch 8), then 11 (epoch 11)
    c = control()
    first = c.broker_registration(ctx(image_of(), offset=8), registration_request())
    image = replay(image_of(), first.records)
    second = c.broker_registration(ctx(image, offset=11), registration_request())
    assert (first.response.broker_epoch, second.response.broker_epoch) == (8, 11)
    assert replay(image, second.records).cluster.brokers[1].record.broker_epoch == 11


def test_golden_broker_registration_v4():
    # broker 5 registered with a Kafka 3.9 controller (MV 3.9-IV0) and got epoch 32
    _, request = wire("msgs/000173_c3_req_BrokerRegistration_v4_c0.bin")
    _, expected = wire("msgs/000186_c3_resp_BrokerRegistration_v4_c0.bin")
    result = control().broker_registration(ctx(image_of(mv=21), version=4, offset=32), request)
    assert result.response == expected
    (record,) = result.records
    assert (record.version, list(record.message.log_dirs)) == (3, list(request.log_dirs))


# ---------------------------------------------------------------- UnregisterBroker


def test_unregister_unknown_broker_matches_the_real_answer():
    _, request = wire("envelope-inner/002935_inner_req_api64_v0_c3.bin")      # broker 99
    _, expected = wire("envelope-inner/002936_inner_resp_api64_v0_c3.bin")
    result = control().unregister_broker(ctx(image_of(broker_record(4, 36))), request)
    assert (result.records, result.response) == ([], expected)
    assert expected.error_code == 102 and expected.error_message == ""


def test_unregister_success_matches_the_real_answer_and_moves_leadership_first():
    _, request = wire("envelope-inner/002793_inner_req_api64_v0_c3.bin")      # broker 5
    _, expected = wire("envelope-inner/002798_inner_resp_api64_v0_c3.bin")
    image = image_of(broker_record(4, 36), broker_record(5, 32), *topic(partition(0, [5, 4], leader=5)))
    result = control().unregister_broker(ctx(image), request)
    assert result.response == expected
    assert names(result.records) == ["PartitionChangeRecord", "UnregisterBrokerRecord"]
    assert (result.records[-1].message.broker_id, result.records[-1].message.broker_epoch) == (5, 32)
    after = replay(image, result.records)
    assert 5 not in after.cluster.brokers
    p = after.topics.by_name["t"].partition(0)
    assert (p.leader, list(p.isr)) == (4, [4])


# ---------------------------------------------------------------- ControllerRegistration


def test_golden_controller_registration_v0():
    _, request = wire("msgs/000044_c3_req_ControllerRegistration_v0_c0.bin")
    _, expected = wire("msgs/000055_c3_resp_ControllerRegistration_v0_c0.bin")
    result = control().controller_registration(ctx(image_of(mv=21)), request)
    assert result.response == expected
    (record,) = result.records
    r = record.message
    assert (record.version, r.controller_id, bytes(r.incarnation_id), r.zk_migration_ready) == (
        0, 3, bytes(request.incarnation_id), False)
    assert [(e.name, e.host, e.port) for e in r.end_points] == [("CONTROLLER", "127.0.0.1", 29095)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in r.features] == [
        ("kraft.version", 0, 1), ("metadata.version", 1, 21)]
    assert replay(image_of(), result.records).cluster.controllers[3].record == r


def test_controller_registration_needs_3_7_iv0():
    request = M("ControllerRegistrationRequest", controller_id=1, listeners=[], features=[])
    result = control().controller_registration(ctx(image_of(mv=14)), request)
    assert result.records == [] and result.response.error_code == 35
    assert result.response.error_message == "The current MetadataVersion is too old to support controller " \
                                            "registrations."
    assert control().controller_registration(ctx(image_of(mv=15)), request).response.error_code == 0

