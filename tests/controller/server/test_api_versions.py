"""api_versions: the controller's API table and ApiVersionsResponse, with a real Kafka 3.9 controller as oracle."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftsman.controller.image.features import FeaturesImage
from kraftsman.controller.server import api_versions as av
from kraftsman.storage.protocol import codec, framing

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"
METADATA, VOTE, DESCRIBE_CLUSTER = 3, 52, 60


def _controller_answers() -> list[dict]:
    index = WIRE / "index.jsonl"
    if not index.is_file():
        return []
    rows = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["api_name"] == "ApiVersions" and r["direction"] == "resp" and r["proxy"][0] == "c"]


ANSWERS = _controller_answers()


def _decoded(row):
    data = (WIRE / row["file"]).read_bytes()
    return data, framing.decode_response(18, row["api_version"], framing.strip_size(data))


@pytest.fixture(scope="module")
def kafka_controller():
    """Return (frame, header, body) of one Kafka 3.9 controller's ApiVersions v4 answer after bootstrap."""
    if not ANSWERS:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    row = next(r for r in ANSWERS if _decoded(r)[1][1].finalized_features_epoch >= 0)
    data, (header, body) = _decoded(row)
    return data, header, body


def _ranges(body) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


def test_every_controller_of_the_quorum_advertises_the_same_apis():
    if not ANSWERS:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    lists = {tuple(sorted(_ranges(_decoded(r)[1][1]).items())) for r in ANSWERS}
    assert len(lists) == 1 and {r["proxy"] for r in ANSWERS} == {"c1", "c2", "c3"}


def test_our_table_is_kafkas_where_both_know_the_api(kafka_controller):
    theirs = _ranges(kafka_controller[2])
    ours = av.CONTROLLER_API_VERSIONS
    for key, (lo, hi) in ours.items():
        if key == METADATA:
            assert key not in theirs  # KIP-919 style: kraftsman's controller serves Metadata, 3.9's does not
        elif key == VOTE:
            assert (lo, hi) == (0, 2) and theirs[key] == (0, 1)  # KIP-996 Vote v2 is Kafka 4.0's
        elif key == DESCRIBE_CLUSTER:
            assert (lo, hi) == (0, 2) and theirs[key] == (0, 1)  # KIP-1073 DescribeCluster v2 is Kafka 4.0's
        else:
            assert theirs[key] == (lo, hi), framing.api_info(key).name


CONTROLLED_SHUTDOWN = 7


def test_our_table_is_kafkas_but_for_the_known_differences(kafka_controller):
    """Every API Kafka 3.9's controller lists, we list at its range, but ControlledShutdown (ZooKeeper brokers only);
    we add Metadata and raise Vote and DescribeCluster (above): nothing else differs."""
    theirs, ours = _ranges(kafka_controller[2]), av.CONTROLLER_API_VERSIONS
    assert set(theirs) - set(ours) == {CONTROLLED_SHUTDOWN}
    assert set(ours) - set(theirs) == {METADATA}
    assert {k for k in ours if k in theirs and ours[k] != theirs[k]} == {VOTE, DESCRIBE_CLUSTER}


def test_table_lists_every_named_api_whose_schema_exists():
    names = {info.name for info in framing.api_registry().values()}
    expected = {framing.api_registry()[k].name for k in av.CONTROLLER_API_VERSIONS}
    assert expected == set(av.CONTROLLER_APIS) & names
    assert {"ApiVersions", "Metadata", "Vote", "Fetch", "AddRaftVoter", "CreateTopics"} <= expected
    assert av.CONTROLLER_API_VERSIONS[METADATA] == (0, 12)


def test_an_api_without_schema_is_skipped_not_fatal(monkeypatch):
    monkeypatch.setattr(av, "CONTROLLER_APIS", ("ApiVersions", "NoSuchApiYet"))
    assert av._table() == {18: (0, 4)}


def test_our_response_for_kafkas_list_is_kafkas_frame(kafka_controller):
    data, header, body = kafka_controller
    ours = av.api_versions_response(
        _ranges(body), supported_features={f.name: (f.min_version, f.max_version) for f in body.supported_features},
        finalized_features={f.name: f.max_version_level for f in body.finalized_features},
        finalized_epoch=body.finalized_features_epoch)
    assert framing.encode_response(18, 4, header.correlation_id, ours) == data


def test_default_features_are_the_ones_kafka_39_supports(kafka_controller):
    body = kafka_controller[2]
    assert av.SUPPORTED_FEATURES == {f.name: (f.min_version, f.max_version) for f in body.supported_features}


def test_controller_response_from_a_features_image():
    image = FeaturesImage(metadata_version=21, finalized={"group.version": 1, "transaction.version": 0})
    body = av.controller_api_versions(image, kraft_version=1, finalized_epoch=7)
    fin = {f.name: (f.min_version_level, f.max_version_level) for f in body.finalized_features}
    assert fin == {"metadata.version": (21, 21), "group.version": (1, 1), "kraft.version": (1, 1)}
    assert body.finalized_features_epoch == 7 and body.error_code == 0
    assert _ranges(body) == av.CONTROLLER_API_VERSIONS
    assert av.controller_api_versions(None).finalized_features == []


@pytest.mark.parametrize("version,name,software_version,code", [
    (3, "confluent-kafka-python", "2.6.0-rdkafka-2.6.0", 0),
    (4, "apache-kafka-java", "3.9.0", 0),
    (3, "bad name", "1.0", 42),
    (3, "ok", "", 42),
    (3, "-leading-dash", "1.0", 42),
    (2, "", "", 0),  # v0-v2 carry no software name
])
def test_client_software_name_is_checked_from_v3(version, name, software_version, code):
    body = codec.message_class("ApiVersionsRequest")(client_software_name=name,
                                                     client_software_version=software_version)
    assert av.check_request(body, version) == code


def test_the_served_api_list_is_what_the_handler_tables_answer():
    """CONTROLLER_APIS (what ApiVersions advertises) names exactly the APIs someone answers: the listener itself
    (ApiVersions, Envelope, SaslHandshake, SaslAuthenticate), the Raft core (the dispatcher's RAFT_APIS) and the
    quorum controller's handler tables, but DescribeDelegationToken, which Kafka's controllers list and refuse
    (test_network_dispatch). An API added to one side only fails here."""
    from kraftsman.controller.quorum.controller import QuorumController
    from kraftsman.controller.server import dispatch, network

    name = {info.api_key: info.name for info in framing.api_registry().values()}
    listener = {name[key] for key in network.LISTENER_APIS}
    answered = [listener, set(dispatch.RAFT_APIS), set(QuorumController().handlers)]
    assert not (answered[0] & answered[1]) and not (answered[0] & answered[2]) and not (answered[1] & answered[2])
    assert set(av.CONTROLLER_APIS) - set().union(*answered) == {"DescribeDelegationToken"}
    assert set().union(*answered) <= set(av.CONTROLLER_APIS)
    assert len(av.CONTROLLER_API_VERSIONS) == len(av.CONTROLLER_APIS)     # every name has a schema here


# ---------------------------------------------------------------- Kafka 4.x controllers

# The raw ApiVersions a real Kafka 4.2.0 controller listener answered (reference/kafka-4x/brokers-4x.md section 7),
# for the APIs kraftsman's controller serves.
KAFKA_42_CONTROLLER = {
    "Fetch": (4, 18), "ApiVersions": (0, 4), "CreateTopics": (2, 7), "DeleteTopics": (1, 6), "DescribeAcls": (1, 3),
    "CreateAcls": (1, 3), "DeleteAcls": (1, 3), "DescribeConfigs": (1, 4), "AlterConfigs": (0, 2),
    "CreatePartitions": (0, 3), "CreateDelegationToken": (1, 3), "RenewDelegationToken": (1, 2),
    "ExpireDelegationToken": (1, 2), "ElectLeaders": (0, 2), "IncrementalAlterConfigs": (0, 1),
    "AlterPartitionReassignments": (0, 1), "ListPartitionReassignments": (0, 0), "AlterClientQuotas": (0, 1),
    "DescribeUserScramCredentials": (0, 0), "AlterUserScramCredentials": (0, 0), "Vote": (0, 2),
    "BeginQuorumEpoch": (0, 1), "EndQuorumEpoch": (0, 1), "DescribeQuorum": (0, 2), "AlterPartition": (2, 3),
    "UpdateFeatures": (0, 2), "Envelope": (0, 0), "FetchSnapshot": (0, 1), "DescribeCluster": (0, 2),
    "BrokerRegistration": (0, 4), "BrokerHeartbeat": (0, 1), "UnregisterBroker": (0, 0),
    "AllocateProducerIds": (0, 0), "ControllerRegistration": (0, 0), "AssignReplicasToDirs": (0, 0),
    "AddRaftVoter": (0, 1), "RemoveRaftVoter": (0, 0), "UpdateRaftVoter": (0, 0), "SaslHandshake": (0, 1),
    "SaslAuthenticate": (0, 2), "DescribeDelegationToken": (1, 3)}


def test_a_4_2_controller_advertises_what_kafka_4_2_advertises():
    ours = {framing.api_info(k).name: r for k, r in av.release_apis("4.2").items()}
    for name, kafka in KAFKA_42_CONTROLLER.items():
        assert ours[name] == kafka, name
    assert ours["Metadata"] == (0, 13)     # kraftsman's controller also serves Metadata (4.2's does not)
    assert set(ours) == set(KAFKA_42_CONTROLLER) | {"Metadata"}


@pytest.mark.parametrize("release,fetch,reassign,voter", [("3.9", (0, 17), (0, 0), (0, 0)),
                                                          ("4.0", (4, 17), (0, 0), (0, 0)),
                                                          ("4.1", (4, 18), (0, 1), (0, 0)),
                                                          ("4.2", (4, 18), (0, 1), (0, 1))])
def test_each_release_has_its_own_maxima(release, fetch, reassign, voter):
    ours = {framing.api_info(k).name: r for k, r in av.release_apis(release).items()}
    assert (ours["Fetch"], ours["AlterPartitionReassignments"], ours["AddRaftVoter"]) == (fetch, reassign, voter)


def test_4_2_features_and_the_min_0_rule_below_v4():
    image = FeaturesImage(metadata_version=29, finalized={"group.version": 1, "streams.version": 1,
                                                          "transaction.version": 2,
                                                          "eligible.leader.replicas.version": 1, "share.version": 1})
    body = av.controller_api_versions(image, release="4.2", finalized_epoch=9)
    assert [(f.name, f.min_version, f.max_version) for f in body.supported_features] == [
        ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 29), ("share.version", 0, 1),
        ("streams.version", 0, 1), ("transaction.version", 0, 2), ("eligible.leader.replicas.version", 0, 1)]
    assert [f.name for f in body.finalized_features] == [       # the order Kafka 4.2's answer had
        "group.version", "streams.version", "transaction.version", "eligible.leader.replicas.version",
        "share.version", "metadata.version"]
    v3 = av.for_request_version(body, 3)
    assert [(f.name, f.min_version, f.max_version) for f in v3.supported_features] == [("metadata.version", 7, 29)]
    assert av.for_request_version(body, 4) is body
    three_nine = av.for_request_version(av.controller_api_versions(image), 3)
    assert [f.name for f in three_nine.supported_features] == ["metadata.version"]   # kraft.version 0-1 left out
