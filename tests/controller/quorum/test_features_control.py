"""UpdateFeatures on the controller: Kafka 3.9's FeatureControlManager rules, texts and records."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.features_control import metadata_changed, update_features

from .cluster_fixtures import M, S, at, broker_record, ctx, feature, image_of, incarnation, names, replay

INVALID = 95


def update(*changes, validate_only: bool = False):
    """Return an UpdateFeaturesRequest of (feature, level[, upgrade type]) changes."""
    keys = [S("UpdateFeaturesRequest", "FeatureUpdateKey", feature=c[0], max_version_level=c[1],
              upgrade_type=c[2] if len(c) > 2 else 1) for c in changes]
    return M("UpdateFeaturesRequest", feature_updates=keys, validate_only=validate_only)


def controller_record(controller_id: int, mv_range=(1, 21)):
    """Return a RegisterControllerRecord supporting metadata.version `mv_range` and kraft.version 0-1."""
    features = [S("RegisterControllerRecord", "ControllerFeature", name="kraft.version", min_supported_version=0,
                  max_supported_version=1),
                S("RegisterControllerRecord", "ControllerFeature", name="metadata.version",
                  min_supported_version=mv_range[0], max_supported_version=mv_range[1])]
    from kraftsman.storage.records.metadata import ApiMessageAndVersion
    return ApiMessageAndVersion(M("RegisterControllerRecord", controller_id=controller_id,
                                  incarnation_id=incarnation(controller_id), zk_migration_ready=False,
                                  end_points=[], features=features), 0)


def registered(mv: int = 21, *records):
    """Return an image at `mv` where controllers 1 and 2 (the voters other than node 3) have registered."""
    return image_of(controller_record(1), controller_record(2), *records, mv=mv)


def answer(image, request, version: int = 1):
    result = update_features(ctx(image, version=version), request)
    return result, [(r.feature, r.error_code, r.error_message) for r in result.response.results]


def test_upgrade_writes_one_feature_level_record_and_answers_per_feature():
    image = registered(17)
    result, results = answer(image, update(("metadata.version", 21)))
    assert results == [("metadata.version", 0, None)]
    assert names(result.records) == ["FeatureLevelRecord"]
    assert replay(image, result.records).features.metadata_version == 21
    assert result.response.error_code == 0


def test_validate_only_checks_but_writes_nothing():
    result, results = answer(registered(17), update(("metadata.version", 21), validate_only=True))
    assert results == [("metadata.version", 0, None)] and result.records == []


def test_version_0_has_no_validate_only_and_allow_downgrade_means_safe_downgrade():
    request = update(("metadata.version", 20))
    request.feature_updates[0].allow_downgrade = True
    request.validate_only = True  # not part of v0: ignored
    result, results = answer(registered(21), request, version=0)
    assert results == [("metadata.version", 0, None)] and len(result.records) == 1
    request.feature_updates[0].allow_downgrade = False
    assert answer(registered(21), request, version=0)[1][0][1] == INVALID


@pytest.mark.parametrize("change, message", [
    (("metadata.version", 21, 0), "Invalid update version 21 for feature metadata.version. The controller does not "
                                  "support the given upgrade type."),
    (("metadata.version", 21, 4), "Invalid update version 21 for feature metadata.version. The controller does not "
                                  "support the given upgrade type."),
    (("metadata.version", -1), "Invalid update version -1 for feature metadata.version. A feature version cannot "
                               "be less than 0."),
    (("metadata.version", 22), "Invalid update version 22 for feature metadata.version. Local controller 3 only "
                               "supports versions 1-21"),
    (("group.version", 1), "Invalid update version 1 for feature group.version. Local controller 3 does not "
                           "support this feature."),
    (("metadata.version", 19), "Invalid update version 19 for feature metadata.version. Can't downgrade the "
                               "version of this feature without setting the upgrade type to either safe or unsafe "
                               "downgrade."),
    (("metadata.version", 21, 2), "Invalid update version 21 for feature metadata.version. Can't downgrade to a "
                                  "newer version."),
    (("metadata.version", 3, 2), "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"),
    (("metadata.version", 16, 2), "Invalid metadata.version 16. Refusing to perform the requested downgrade "
                                  "because it might delete metadata information."),
    (("metadata.version", 16, 3), "Invalid metadata.version 16. Unsafe metadata downgrade is not supported in "
                                  "this version."),
])
def test_refused_updates_carry_kafkas_texts(change, message):
    result, results = answer(registered(20), update(change))
    assert results == [(change[0], INVALID, message)] and result.records == []


def test_safe_downgrade_across_versions_that_changed_no_metadata_is_allowed():
    result, results = answer(registered(21), update(("metadata.version", 17, 2)))
    assert results == [("metadata.version", 0, None)]
    assert replay(registered(21), result.records).features.metadata_version == 17
    assert metadata_changed(16, 21) and not metadata_changed(17, 21) and not metadata_changed(20, 21)


def test_a_registered_broker_or_controller_that_cannot_run_the_level_refuses_it():
    narrow = broker_record(4, 10)
    narrow.message.features = [S("RegisterBrokerRecord", "BrokerFeature", name="metadata.version",
                                 min_supported_version=1, max_supported_version=20)]
    _, results = answer(registered(17, narrow), update(("metadata.version", 21)))
    assert results[0][2] == ("Invalid update version 21 for feature metadata.version. Broker 4 only supports "
                             "versions 1-20")
    image = image_of(controller_record(1), controller_record(2, (1, 19)), mv=17)
    _, results = answer(image, update(("metadata.version", 21)))
    assert results[0][2] == ("Invalid update version 21 for feature metadata.version. Controller 2 only supports "
                             "versions 1-19")


def test_a_voter_that_has_not_registered_refuses_every_change_from_3_7_iv0():
    image = image_of(controller_record(1), mv=17)
    _, results = answer(image, update(("metadata.version", 21)))
    assert results[0][2] == ("Invalid update version 21 for feature metadata.version. controller 2 has not "
                             "registered, and may not support this feature")
    # before 3.7-IV0 controllers do not register: only this controller and the brokers are checked
    assert answer(image_of(mv=14), update(("metadata.version", 17)))[1] == [("metadata.version", 0, None)]


def test_dependencies_are_checked_against_the_levels_the_request_leaves():
    image = registered(21, feature(1, "transaction.version"))
    # kraft.version is the Raft layer's: the level it has is accepted without a record, another one refused
    _, results = answer(image, update(("kraft.version", 1)))
    assert results[0][1] == INVALID and "KRaftVersionRecord" in results[0][2]
    result, results = answer(image, update(("kraft.version", 0, 2)))
    assert results == [("kraft.version", 0, None)] and result.records == []
    result = update_features(at(ctx(image, version=1), kraft_version=1), update(("kraft.version", 1)))
    assert result.response.results[0].error_code == 0 and result.records == []
    # removing a feature (level 0) this controller does not run is allowed; an unknown one is not found
    result, results = answer(image, update(("transaction.version", 0, 2), ("no.such.feature", 0, 2)))
    assert results == [("no.such.feature", INVALID, "Invalid update version 0 for feature no.such.feature. "
                                                    "Unknown feature: no.such.feature"),
                       ("transaction.version", 0, None)]
    assert replay(image, result.records).features.finalized == {}


def test_results_are_sorted_and_only_passing_features_write_records():
    result, results = answer(registered(17), update(("metadata.version", 21), ("group.version", 1)))
    assert [r[0] for r in results] == ["group.version", "metadata.version"]
    assert [r[1] for r in results] == [INVALID, 0]
    assert [r.message.name for r in result.records] == ["metadata.version"]


def test_the_controller_serves_update_features_as_a_write():
    quorum = QuorumController()
    assert "UpdateFeatures" in quorum.handlers and not quorum.is_read_only("UpdateFeatures")
    result = quorum.handle("UpdateFeatures", at(ctx(registered(17)), api_version=1), update(("metadata.version", 18)))
    assert result.response.results[0].error_code == 0
