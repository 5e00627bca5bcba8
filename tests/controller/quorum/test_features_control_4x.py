"""UpdateFeatures, registration and activation at Kafka 4.x's rules (QuorumConfig.kafka_version 4.0-4.2)."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum import activation
from kraftsman.controller.quorum.cluster_control import ClusterControl
from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.features_control import ALL_FAILED, update_features
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import M, S, ctx, feature, image_of, incarnation, names, registration_request, replay

INVALID = 95
FEATURES_42 = (("metadata.version", 7, 29), ("kraft.version", 0, 1), ("transaction.version", 0, 2),
               ("group.version", 0, 1), ("eligible.leader.replicas.version", 0, 1), ("share.version", 0, 1),
               ("streams.version", 0, 1))


def controller_record(controller_id: int, features=FEATURES_42):
    items = [S("RegisterControllerRecord", "ControllerFeature", name=n, min_supported_version=lo,
               max_supported_version=hi) for n, lo, hi in features]
    return ApiMessageAndVersion(M("RegisterControllerRecord", controller_id=controller_id,
                                  incarnation_id=incarnation(controller_id), zk_migration_ready=False,
                                  end_points=[], features=items), 0)


def update(*changes, validate_only: bool = False):
    keys = [S("UpdateFeaturesRequest", "FeatureUpdateKey", feature=c[0], max_version_level=c[1],
              upgrade_type=c[2] if len(c) > 2 else 1) for c in changes]
    return M("UpdateFeaturesRequest", feature_updates=keys, validate_only=validate_only)


def answer(image, request, version: int = 1, release: str = "4.2", kraft_version: int = 0, kraft_upgrade=None):
    context = ctx(image, version=version, kafka_version=release)
    context.kraft_version, context.kraft_upgrade = kraft_version, kraft_upgrade
    return update_features(context, request)


def test_kraft_version_is_upgraded_by_the_raft_layer_once_every_feature_passed():
    calls = []
    image = upgraded_from_3_9()
    result = answer(image, update(("kraft.version", 1), ("group.version", 1)),
                    kraft_upgrade=lambda level, validate_only: calls.append((level, validate_only)))
    assert result.response.error_code == 0 and calls == [(1, True), (1, False)]
    assert names(result.records) == ["FeatureLevelRecord", "NoOpRecord"]
    calls.clear()
    failed = answer(image, update(("kraft.version", 1), ("eligible.leader.replicas.version", 1)),
                    kraft_upgrade=lambda level, validate_only: calls.append((level, validate_only)))
    assert failed.response.error_code == INVALID and calls == [(1, True)]        # checked, never applied
    refused = answer(image, update(("kraft.version", 1)), kraft_upgrade=lambda level, v: "Directory id must be known")
    assert refused.response.error_message == ALL_FAILED + (
        "Invalid update version 1 for feature kraft.version. Directory id must be known")


def upgraded_from_3_9():
    return image_of(controller_record(1), controller_record(2), mv=21)


RELEASE_4_2 = (("metadata.version", 29), ("transaction.version", 2), ("group.version", 1),
               ("eligible.leader.replicas.version", 1), ("share.version", 1), ("streams.version", 1),
               ("kraft.version", 1))


def test_upgrade_to_4_2_iv1_finalizes_every_feature_with_the_elr_safety_record():
    image = upgraded_from_3_9()
    result = answer(image, update(*RELEASE_4_2), kraft_version=1)
    assert result.response.error_code == 0
    assert [(r.feature, r.error_code, r.error_message) for r in result.response.results][0][1:] == (0, "NONE")
    assert names(result.records)[0] == "ConfigRecord"             # min.insync.replicas first
    assert result.records[0].message.resource_name == "" and result.records[0].message.value == "1"
    after = replay(image, result.records)
    assert after.features.metadata_version == 29
    assert after.features.finalized == {"transaction.version": 2, "group.version": 1,
                                        "eligible.leader.replicas.version": 1, "share.version": 1,
                                        "streams.version": 1}


def test_version_2_answers_without_results_and_validate_only_writes_nothing():
    result = answer(upgraded_from_3_9(), update(("group.version", 1)), version=2)
    assert (result.response.error_code, result.response.results) == (0, [])
    assert names(result.records) == ["FeatureLevelRecord"]
    result = answer(upgraded_from_3_9(), update(("eligible.leader.replicas.version", 1), ("metadata.version", 23),
                                                validate_only=True))
    assert result.records == [] and result.response.error_code == 0


def test_one_bad_feature_fails_the_whole_request():
    result = answer(upgraded_from_3_9(), update(("group.version", 1), ("eligible.leader.replicas.version", 1)))
    assert result.records == [] and result.response.results == []
    assert result.response.error_code == INVALID
    assert result.response.error_message == ALL_FAILED + (
        "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version "
        "could not be set to 1 because it depends on metadata.version level 23")


def test_the_first_error_in_hash_map_order_is_reported():
    """kraft.version sits before metadata.version in a Java HashMap: its refusal is the one reported (the real 4.2
    answered `downgrade --release-version 4.0-IV3` on a static quorum this way)."""
    image = image_of(controller_record(1), controller_record(2), feature(2, "transaction.version"), mv=29)
    result = answer(image, update(("metadata.version", 3, 2), ("kraft.version", 1, 2), ("transaction.version", 2, 2)))
    assert result.response.error_message == ALL_FAILED + (
        "Invalid update version 1 for feature kraft.version. Can't downgrade to a newer version.")


@pytest.mark.parametrize("change,reason", [
    (("metadata.version", 21, 2), "Unsupported metadata.version downgrade from 29 to 21. Refusing to perform the "
                                  "requested downgrade because it might delete metadata information."),
    (("metadata.version", 21, 3), "Unsupported metadata.version downgrade from 29 to 21. Unsafe metadata downgrade "
                                  "is not supported in this version."),
    (("metadata.version", 30), "Invalid update version 30 for feature metadata.version. Local controller 3 only "
                               "supports versions 7-29"),
    (("share.version", 2), "Invalid update version 2 for feature share.version. Local controller 3 only supports "
                           "versions 0-1"),
    (("kraft.version", 0, 2), "Invalid update version 0 for feature kraft.version. Can't downgrade the version of "
                              "this feature."),
])
def test_4x_refusal_texts(change, reason):
    image = image_of(controller_record(1), controller_record(2), mv=29)
    result = answer(image, update(change), kraft_version=1)
    assert result.response.error_message == ALL_FAILED + reason


def test_safe_downgrade_within_4x_passes():
    image = image_of(controller_record(1), controller_record(2), mv=29)
    result = answer(image, update(("metadata.version", 23, 2)))
    assert result.response.error_code == 0 and replay(image, result.records).features.metadata_version == 23


def test_4_0_does_not_know_share_version_and_4_1_stops_streams_at_0():
    image = image_of(controller_record(1), controller_record(2), mv=25)
    assert "Local controller 3 does not support this feature." in answer(
        image, update(("share.version", 1)), release="4.0").response.error_message
    assert "Local controller 3 does not support this feature." in answer(
        image, update(("streams.version", 1)), release="4.1").response.error_message


def test_3_9_keeps_its_per_feature_answers():
    image = image_of(mv=21)
    result = answer(image, update(("metadata.version", 25)), release="3.9")
    assert [(r.feature, r.error_code) for r in result.response.results] == [("metadata.version", INVALID)]
    assert result.response.results[0].error_message.endswith("Local controller 3 only supports versions 1-21")


# ---------------------------------------------------------------- registration


def _broker_features(mv_range=(7, 29)):
    return [S("BrokerRegistrationRequest", "Feature", name=n, min_supported_version=lo, max_supported_version=hi)
            for n, lo, hi in (("metadata.version", *mv_range), *FEATURES_42[1:])]


def test_4x_registration_needs_metadata_version_and_checks_unlisted_features():
    control = ClusterControl(QuorumConfig(kafka_version="4.2"))
    image = image_of(feature(1, "share.version"), mv=29)
    refused = control.broker_registration(ctx(image, version=4, kafka_version="4.2"),
                                          registration_request(mv_range=None))
    assert refused.response.error_code == 119                     # INVALID_REGISTRATION
    no_share = [f for f in _broker_features() if f.name != "share.version"]
    refused = control.broker_registration(ctx(image, version=4, kafka_version="4.2"),
                                          registration_request(features=no_share))
    assert refused.response.error_code == 35                      # UNSUPPORTED_VERSION
    accepted = control.broker_registration(ctx(image, version=4, kafka_version="4.2"),
                                           registration_request(features=_broker_features()))
    assert accepted.response.error_code == 0 and names(accepted.records) == ["RegisterBrokerRecord"]


def test_a_4x_broker_cannot_join_below_3_3_iv3():
    control = ClusterControl(QuorumConfig(kafka_version="4.2"))
    result = control.broker_registration(ctx(image_of(mv=6), version=4, kafka_version="4.2"),
                                         registration_request(features=_broker_features()))
    assert result.response.error_code == 35


# ---------------------------------------------------------------- activation


def _bootstrap(*levels):
    return [feature(level, name) for name, level in levels]


def test_activation_3_9_writes_the_zk_migration_state_in_the_transaction():
    records = activation.records_for_empty_log(_bootstrap(("metadata.version", 21)), "3.9", 2)
    assert names(records) == ["BeginTransactionRecord", "FeatureLevelRecord", "ZkMigrationStateRecord",
                              "EndTransactionRecord"]
    assert records[2].message.zk_migration_state == 0


def test_activation_below_3_6_iv1_has_no_transaction_and_no_zk_state():
    assert names(activation.records_for_empty_log(_bootstrap(("metadata.version", 12)), "3.9", 1)) == [
        "FeatureLevelRecord"]


def test_activation_4_2_writes_the_elr_min_insync_replicas():
    bootstrap = _bootstrap(("metadata.version", 29), ("eligible.leader.replicas.version", 1), ("group.version", 1))
    records = activation.records_for_empty_log(bootstrap, "4.2", 2)
    assert names(records) == ["BeginTransactionRecord", "FeatureLevelRecord", "FeatureLevelRecord",
                              "FeatureLevelRecord", "ConfigRecord", "EndTransactionRecord"]
    config = records[4].message
    assert (config.resource_type, config.resource_name, config.name, config.value) == (4, "", "min.insync.replicas",
                                                                                        "2")
    assert "ConfigRecord" not in names(activation.records_for_empty_log(_bootstrap(("metadata.version", 25)), "4.0", 1))
