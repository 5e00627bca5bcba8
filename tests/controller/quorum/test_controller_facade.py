"""QuorumController: the merged handler table, read-only APIs, periodic work, and a broker's whole life.

The scenario replays every result's records through MetadataDelta, as the driver's image would, and checks
the image after each step against what Kafka 3.9 does (register fenced -> caught up -> unfenced -> silent ->
fenced after broker.session.timeout.ms -> unregistered).
"""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum import (
    acls_control,
    configuration_control,
    features_control,
    quotas_control,
    replication_control,
    scram_control,
    tokens_control,
)
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.storage.protocol import codec

from .cluster_fixtures import (
    M,
    broker_record,
    ctx,
    heartbeat,
    image_of,
    names,
    partition,
    registration_request,
    replay,
    topic,
)

CLUSTER_APIS = {"BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker", "ControllerRegistration",
                "DescribeCluster", "AllocateProducerIds"}


def test_handlers_merge_both_sides_and_unknown_apis_raise_key_error():
    q = QuorumController(QuorumConfig())
    tables = (replication_control, configuration_control, acls_control, scram_control, quotas_control,
              features_control, tokens_control)
    assert set(q.handlers) == CLUSTER_APIS.union(*(t.HANDLERS for t in tables))
    assert "UpdateFeatures" in q.handlers and "CreateDelegationToken" in q.handlers
    with pytest.raises(KeyError):
        q.handle("Produce", ctx(image_of()), None)


@pytest.mark.parametrize("api, read_only", [("DescribeCluster", True), ("Metadata", True),
                                            ("DescribeConfigs", True), ("BrokerHeartbeat", False),
                                            ("BrokerRegistration", False), ("CreateTopics", False),
                                            ("AllocateProducerIds", False)])
def test_read_only_apis(api, read_only):
    assert QuorumController().is_read_only(api) is read_only


@pytest.mark.parametrize("mv, expected", [(4, []), (5, [500, 1000, 1500])])
def test_noop_record_at_most_every_500_ms_from_3_3_iv1(mv, expected):
    q = QuorumController()
    image = image_of(mv=mv)
    q.on_activate(ctx(image, now=0))
    seen = []
    for now in range(0, 1600, 100):
        for result in q.periodic(ctx(image, now=now)):
            assert names(result.records) == ["NoOpRecord"] and result.records[0].version == 0
            seen.append(now)
    assert seen == expected


def test_noop_can_be_disabled():
    q = QuorumController(noop_interval_ms=None)
    q.on_activate(ctx(image_of(), now=0))
    assert q.periodic(ctx(image_of(), now=10_000)) == []


def test_periodic_fences_before_the_noop_and_chains_images():
    q = QuorumController()
    image = image_of(broker_record(1, 10), broker_record(2, 20), *topic(partition(0, [1, 2], leader=1)))
    q.on_activate(ctx(image, now=0))
    results = q.periodic(ctx(image, now=9001, offset=500))
    assert [names(r.records) for r in results] == [
        ["PartitionChangeRecord", "BrokerRegistrationChangeRecord"],
        ["PartitionChangeRecord", "BrokerRegistrationChangeRecord"], ["NoOpRecord"]]
    after = replay(image, [r for result in results for r in result.records])
    assert all(b.record.fenced for b in after.cluster.brokers.values())
    assert after.topics.by_name["t"].partition(0).leader == -1


def test_start_time_is_in_the_record_so_another_controller_replaying_it_reports_it():
    q = QuorumController()
    image = image_of()
    registered = q.handle("BrokerRegistration", ctx(image, now=1_700_000_000_000, offset=10),
                          registration_request(broker_id=1))
    (record,) = registered.records
    elsewhere = replay(image_of(), [record.__class__(codec.decode("RegisterBrokerRecord", record.version,
                       codec.encode("RegisterBrokerRecord", record.version, record.message)), record.version)])
    assert elsewhere.cluster.brokers[1].start_time_ms == 1_700_000_000_000


@pytest.mark.parametrize("told, before, expected", [
    (1_600_000_000_000, None, 1_600_000_000_000),        # the broker says when it started
    (-1, None, 100),                                      # not told: the registration time
    (-1, "same", 50),                                     # same incarnation again: it did not restart
    (-1, "other", 100),                                   # a new incarnation: a restart, now
])
def test_start_time_of_a_registration(told, before, expected):
    from kraftsman.controller.image.start_time import with_start_time
    from kraftsman.storage.records.metadata import ApiMessageAndVersion

    image = image_of()
    if before is not None:
        message = with_start_time(broker_record(1, 5, fenced=True).message, 50)
        if before == "other":
            message = message.replace(incarnation_id=bytes(16))
        image = image_of(ApiMessageAndVersion(message, 3))
    request = registration_request(broker_id=1, start_time_ms=told)
    result = QuorumController().handle("BrokerRegistration", ctx(image, now=100, offset=10), request)
    assert result.response.error_code == 0
    assert replay(image, result.records).cluster.brokers[1].start_time_ms == expected


def test_a_broker_life():
    q = QuorumController(QuorumConfig(session_timeout_ms=9000), noop_interval_ms=None)
    image, offset = image_of(broker_record(2, 5), *topic(partition(0, [1, 2], leader=2, isr=[2]))), 40
    q.on_activate(ctx(image, now=0, offset=offset))

    def step(api, request, now):
        nonlocal image, offset
        result = q.handle(api, ctx(image, now=now, offset=offset), request)
        image, offset = replay(image, result.records), offset + len(result.records)
        return result

    registered = step("BrokerRegistration", registration_request(broker_id=1), now=100)
    epoch = registered.response.broker_epoch
    assert epoch == 40 and image.cluster.brokers[1].record.fenced
    assert image.cluster.brokers[1].start_time_ms == 100
    behind = step("BrokerHeartbeat", heartbeat(1, epoch, 39), now=200)
    assert (behind.records, behind.response.is_caught_up, behind.response.is_fenced) == ([], False, True)
    unfenced = step("BrokerHeartbeat", heartbeat(1, epoch, 41), now=300)
    assert names(unfenced.records) == ["BrokerRegistrationChangeRecord"]          # partition 0 has a leader
    assert (unfenced.response.is_caught_up, unfenced.response.is_fenced) == (True, False)
    assert not image.cluster.brokers[1].record.fenced
    step("BrokerHeartbeat", heartbeat(2, 5, 41), now=9000)                       # broker 2 keeps heartbeating
    assert q.periodic(ctx(image, now=9300, offset=offset)) == []       # 9000 ms after its last: still alive
    (fenced,) = q.periodic(ctx(image, now=9301, offset=offset))
    assert names(fenced.records) == ["BrokerRegistrationChangeRecord"]       # broker 1 is in no ISR
    image = replay(image, fenced.records)
    assert image.cluster.brokers[1].record.fenced and not image.cluster.brokers[2].record.fenced
    gone = step("UnregisterBroker", M("UnregisterBrokerRequest", broker_id=1), now=9400)
    assert names(gone.records) == ["UnregisterBrokerRecord"] and gone.response.error_code == 0
    assert sorted(image.cluster.brokers) == [2]
    again = step("UnregisterBroker", M("UnregisterBrokerRequest", broker_id=1), now=9500)
    assert (again.records, again.response.error_code) == ([], 102)
