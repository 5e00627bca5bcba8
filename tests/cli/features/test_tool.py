"""kafka-features in-process against in-test servers: Kafka 3.9 FeatureCommand's texts, requests and exit codes
(Kafka 4.0's for --release-version, version-mapping and feature-dependencies)."""
from __future__ import annotations

import io
import json

import pytest

from kraftsman.cli import main
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.features.commands import KRAFT_VERSION_HINT
from kraftsman.cli.storage import tool as storage_tool
from kraftsman.storage.protocol import codec

from ...controller.server.sync_fakes import FakeServer, api_versions_body, body

RANGES = {18: (0, 4), 57: (0, 1)}
DEPRECATION_OF_4_0 = "`metadata` flag is deprecated"
SUPPORTED_MVS = ("3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, "
                 "3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0")
API_VERSIONS = codec.message_class("ApiVersionsResponse")
RESULT = codec.message_class("UpdateFeaturesResponse").UpdatableFeatureResult


def kf(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(features_tool.run, list(argv), Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-features")
    return status, out.getvalue(), err.getvalue()


def features_server(supported=(("metadata.version", 1, 21), ("kraft.version", 0, 1)),
                    finalized=(("metadata.version", 21),), epoch=7, ranges=RANGES) -> FakeServer:
    """A server whose ApiVersions answers list features (the negotiation's too)."""
    def handler(header, request):
        response = api_versions_body(ranges)
        response.supported_features = [API_VERSIONS.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                       for n, lo, hi in supported]
        response.finalized_features = [API_VERSIONS.FinalizedFeatureKey(name=n, max_version_level=level,
                                                                        min_version_level=level)
                                       for n, level in finalized]
        response.finalized_features_epoch = epoch
        return response
    server = FakeServer(handler)
    server.ranges = None                     # the handler answers ApiVersions
    return server


def update_server(errors=None, top_level=(0, None), ranges=RANGES, omit=()) -> FakeServer:
    """A server answering UpdateFeatures: `errors` maps features to (code, message); the others pass."""
    errors = errors or {}

    def handler(header, request):
        results = [RESULT(feature=u.feature, error_code=errors.get(u.feature, (0, None))[0],
                          error_message=errors.get(u.feature, (0, None))[1])
                   for u in request.feature_updates if u.feature not in omit]
        return body("UpdateFeaturesResponse", error_code=top_level[0], error_message=top_level[1],
                    results=[] if top_level[0] else results)
    return FakeServer(handler, ranges=ranges)


def sent(server) -> list:
    """Return the UpdateFeatures requests a server received as (version, validate_only, {feature: (level, type)})."""
    found = []
    for header, request in server.requests:
        if header.request_api_key == 57:
            updates = {u.feature: (u.max_version_level, u.upgrade_type if header.request_api_version else
                                   ("allow_downgrade", u.allow_downgrade)) for u in request.feature_updates}
            validate_only = request.validate_only if header.request_api_version else None   # v1+ only
            found.append((header.request_api_version, validate_only, updates))
    return found


# ---------------------------------------------------------------- arguments


def test_a_bootstrap_flag_is_required_even_for_the_lookups():
    status, out, err = kf("version-mapping")
    assert (status, out) == (1, "") and err.startswith("usage: kafka-features")
    assert "one of the arguments --bootstrap-server --bootstrap-controller is required" in err
    assert kf("version-mapping", "--output", "json")[0] == 1          # whatever --output asks
    status, _, err = kf("--bootstrap-server", "a:1", "--bootstrap-controller", "b:2", "describe")
    assert status == 1 and "not allowed with argument" in err
    status, _, err = kf("--bootstrap-server", "a:1", "feature-dependencies")
    assert status == 1 and "the following arguments are required: --feature" in err


def test_the_command_config_file_is_read_first_as_in_kafka(tmp_path):
    missing = tmp_path / "admin.properties"
    status, out, err = kf("--bootstrap-server", "a:1", "--command-config", str(missing), "version-mapping")
    assert (status, out, err) == (1, "", f"{missing} (No such file or directory)\n")
    status, out, err = kf("--bootstrap-server", "nohost", "version-mapping")
    assert (status, out, err) == (1, "", "Invalid url in bootstrap.servers: nohost\n")


ARGUMENT_ERRORS = [
    (("upgrade", "--release-version", "3.9-IV0", "--feature", "group.version=1"),
     "Can not specify `release-version` with other feature flags."),
    (("downgrade", "--release-version", "3.8", "--metadata", "3.8"),
     "Can not specify `release-version` with other feature flags."),
    (("upgrade", "--release-version", "9.9"), f"Unknown metadata.version 9.9. Supported metadata.version are "
                                              f"{SUPPORTED_MVS}"),
    (("upgrade", "--release-version", "2.8"), f"Unknown metadata.version 2.8. Supported metadata.version are "
                                              f"{SUPPORTED_MVS}"),
    (("upgrade", "--feature", "group.version"), "Can't parse feature=level string group.version: equals sign not "
                                                "found."),
    (("upgrade", "--feature", "group.version=x"), "Can't parse feature=level string group.version=x: unable to "
                                                  "parse x as a short."),
    (("downgrade", "--feature", "group.version=40000"), "Can't parse feature=level string group.version=40000: "
                                                        "unable to parse 40000 as a short."),
    (("upgrade", "--feature", "group.version=1", "--feature", "group.version=2"),
     "Feature group.version was specified more than once."),
    (("upgrade", "--feature", "group.version=0"), "The upgradeType flag should be set to SAFE_DOWNGRADE or "
                                                  "UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."),
    (("downgrade", "--feature", "group.version=-1"), "Cannot specify a negative version level."),
    (("upgrade",), "You must specify at least one feature to upgrade"),
    (("downgrade", "--unsafe"), "You must specify at least one feature to downgrade"),
    (("disable", "--dry-run"), "You must specify at least one feature to disable"),
    (("disable", "--feature", "group.version", "--feature", "group.version"),
     "Feature group.version was specified more than once."),
    (("upgrade", "--feature", " =1"), "Provided feature can not be empty."),
    (("version-mapping", "--release-version", "2.9"), "Unknown release version '2.9'. Supported versions are: "
                                                      "3.3-IV0 to 3.9-IV0"),
    (("feature-dependencies", "--feature", "kraft.version"), "Can't parse feature=level string kraft.version: "
                                                             "equals sign not found."),
    (("feature-dependencies", "--feature", "metadata.version=99"), "Unknown metadata.version 99"),
    (("feature-dependencies", "--feature", "nope.version=1"), "Unknown feature: nope.version"),
    (("feature-dependencies", "--feature", "group.version=7"), "No feature:group.version with feature level 7"),
]


@pytest.mark.parametrize("argv,message", ARGUMENT_ERRORS, ids=[" ".join(a) for a, _ in ARGUMENT_ERRORS])
def test_argument_errors_are_kafkas_one_line_and_send_nothing(argv, message):
    with update_server() as server:
        assert kf("--bootstrap-controller", server.address, *argv) == (1, "", message + "\n")
        status, out, err = kf("--bootstrap-controller", server.address, *argv, "--output", "json")
        assert (status, err) == (1, "")   # the same code whatever --output asks
        assert json.loads(out) == {"command": argv[0], "status": 1, "error": message}
        assert server.requests == []


def test_the_metadata_flag_prints_no_deprecation_line_as_in_kafka_3_9():
    # Kafka 4.0 prints " `metadata` flag is deprecated ..." first; Kafka 3.9's FeatureCommand prints nothing, and
    # its unknown-version error says "Unsupported" where 4.0 says "Unknown".
    with update_server() as server:
        c = ("--bootstrap-controller", server.address)
        assert kf(*c, "upgrade", "--metadata", "9.9") == (
            1, "", f"Unsupported metadata.version 9.9. Supported metadata.version are {SUPPORTED_MVS}\n")
        assert kf(*c, "upgrade", "--metadata", "2.8") == (1, "", "Cannot specify a negative version level.\n")
        assert kf(*c, "upgrade", "--metadata", "3.8-IV0", "--feature", "metadata.version=20") == (
            1, "", "Feature metadata.version was specified more than once.\n")
        assert server.requests == []
        assert kf(*c, "downgrade", "--metadata", "3.8-IV0") == (0, "metadata.version was downgraded to 20.\n", "")
        assert sent(server) == [(1, False, {"metadata.version": (20, 2)})]
        status, out, err = kf(*c, "upgrade", "--metadata", "3.9", "--dry-run", "--output", "json")
        assert (status, err, json.loads(out)["warnings"]) == (0, "", [])
        assert DEPRECATION_OF_4_0 not in out


def test_help_marks_kafka_4_0_additions_and_keeps_3_9_texts():
    _, upgrade_help, _ = kf("--bootstrap-server", "a:1", "upgrade", "--help")
    _, top_help, _ = kf("--help")
    flat = " ".join(upgrade_help.split())
    assert "--metadata METADATA The level to which we should upgrade the metadata. For example, 3.3-IV3." in flat
    assert "DEPRECATED" not in flat
    assert "(Kafka 4.0) The release version to update all features to." in flat
    assert "(Kafka 4.0) Look up the corresponding features" in " ".join(top_help.split())
    assert "(Kafka 4.0) Look up dependencies" in " ".join(top_help.split())


# ---------------------------------------------------------------- describe


def test_describe_prints_kafkas_lines_sorted_by_feature():
    supported = (("metadata.version", 1, 21), ("kraft.version", 0, 1), ("group.version", 0, 1))
    with features_server(supported, (("metadata.version", 21), ("kraft.version", 1)), epoch=12) as server:
        status, out, err = kf("--bootstrap-server", server.address, "describe")
    assert (status, err) == (0, "")
    assert out == ("Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0"
                   "\tEpoch: 12\n"
                   "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1"
                   "\tEpoch: 12\n"
                   "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0\t"
                   "FinalizedVersionLevel: 3.9-IV0\tEpoch: 12\n")


def test_describe_unknown_levels_and_no_epoch():
    with features_server((("metadata.version", 1, 99),), (), epoch=-1) as server:
        status, out, _ = kf("--bootstrap-controller", server.address, "describe")
    assert (status, out) == (0, "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: "
                                "UNKNOWN 99\tFinalizedVersionLevel: UNKNOWN 0\tEpoch: -\n")


def test_describe_in_json():
    with features_server() as server:
        status, out, _ = kf("--bootstrap-controller", server.address, "describe", "--output", "json")
    assert status == 0
    assert json.loads(out) == {"command": "describe", "status": 0, "finalized_features_epoch": 7, "features": [
        {"name": "kraft.version", "supported_min_version": 0, "supported_max_version": 1, "finalized_version_level": 0},
        {"name": "metadata.version", "supported_min_version": 1, "supported_max_version": 21,
         "finalized_version_level": 21}]}


def test_describe_of_a_server_without_features_prints_nothing():
    with FakeServer(ranges={18: (0, 2)}) as server:
        assert kf("--bootstrap-server", server.address, "describe") == (0, "", "")


# ---------------------------------------------------------------- upgrade, downgrade, disable


def test_upgrade_to_a_release_sends_its_nonzero_features_in_one_v1_request():
    with update_server() as server:
        status, out, err = kf("--bootstrap-controller", server.address, "upgrade", "--release-version", "3.9-IV0")
        (version, validate_only, updates), = sent(server)
    assert (status, err) == (0, "")
    assert out == "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 21.\n"
    assert (version, validate_only, updates) == (1, False, {"metadata.version": (21, 1), "kraft.version": (1, 1)})
    request = next(r for h, r in server.requests if h.request_api_key == 57)
    assert 0 < request.timeout_ms <= 30_000


def test_downgrade_to_a_release_sends_every_production_feature_even_at_level_0():
    with update_server() as server:
        status, out, _ = kf("--bootstrap-controller", server.address, "downgrade", "--release-version", "3.8",
                            "--unsafe", "--dry-run")
        assert sent(server) == [(1, True, {"metadata.version": (20, 3), "kraft.version": (0, 3),
                                           "transaction.version": (0, 3), "group.version": (0, 3)})]
    assert status == 0
    assert out == ("group.version can be downgraded to 0.\nkraft.version can be downgraded to 0.\n"
                   "metadata.version can be downgraded to 20.\ntransaction.version can be downgraded to 0.\n")


def test_feature_flags_and_disable():
    with update_server() as server:
        c = ("--bootstrap-controller", server.address)
        assert kf(*c, "upgrade", "--feature", "group.version=1", "--feature", "metadata.version = 21") == (
            0, "group.version was upgraded to 1.\nmetadata.version was upgraded to 21.\n", "")
        assert kf(*c, "disable", "--feature", "group.version", "--dry-run") == (0, "group.version can be disabled.\n",
                                                                                 "")
        assert kf(*c, "disable", "--feature", "group.version", "--unsafe") == (0, "group.version was disabled.\n", "")
        assert sent(server) == [(1, False, {"group.version": (1, 1), "metadata.version": (21, 1)}),
                                (1, True, {"group.version": (0, 2)}), (1, False, {"group.version": (0, 3)})]


def test_a_refused_feature_is_reported_and_the_command_fails():
    refusal = "Invalid update version 1 for feature kraft.version. Local controller 1 does not support this feature."
    with update_server({"kraft.version": (95, refusal)}) as server:
        c = ("--bootstrap-controller", server.address)
        assert kf(*c, "upgrade", "--release-version", "3.9-IV0") == (
            1, f"Could not upgrade kraft.version to 1. {refusal}\nmetadata.version was upgraded to 21.\n",
            f"1 out of 2 operation(s) failed.\nkafka-features: hint: {KRAFT_VERSION_HINT}\n")
        assert kf(*c, "upgrade", "--release-version", "3.9-IV0", "--dry-run") == (
            1, f"Can not upgrade kraft.version to 1. {refusal}\nmetadata.version can be upgraded to 21.\n",
            f"1 out of 2 operation(s) failed.\nkafka-features: hint: {KRAFT_VERSION_HINT}\n")
    with update_server({"group.version": (95, None)}) as server:
        assert kf("--bootstrap-controller", server.address, "disable", "--feature", "group.version") == (
            1, "Could not disable group.version. The given update version was invalid.\n",
            "1 out of 1 operation(s) failed.\n")
    with update_server(omit=("group.version",)) as server:
        assert kf("--bootstrap-controller", server.address, "upgrade", "--feature", "group.version=1") == (
            1, "Could not upgrade group.version to 1. The controller response did not contain a result for feature "
               "group.version\n", "1 out of 1 operation(s) failed.\n")


def test_a_top_level_error_fails_every_feature():
    with update_server(top_level=(31, None)) as server:
        status, out, err = kf("--bootstrap-controller", server.address, "downgrade", "--metadata", "3.8-IV0",
                              "--feature", "group.version=0")
    assert (status, err) == (1, "2 out of 2 operation(s) failed.\n")
    assert out == ("Could not downgrade group.version to 0. Cluster authorization failed.\n"
                   "Could not downgrade metadata.version to 20. Cluster authorization failed.\n")
    with update_server(top_level=(42, "bad")) as server:
        status, out, _ = kf("--bootstrap-controller", server.address, "disable", "--feature", "a", "--dry-run",
                            "--output", "json")
    assert status == 1
    assert json.loads(out) == {"command": "disable", "status": 1, "dry_run": True, "warnings": [], "results": [
        {"feature": "a", "level": 0, "upgrade_type": "safe_downgrade", "error": "bad"}]}


def test_not_controller_moves_on_to_the_next_address():
    with update_server(top_level=(41, None)) as standby, update_server() as active:
        status, out, _ = kf("--bootstrap-controller", f"{standby.address},{active.address}", "upgrade", "--feature",
                            "group.version=1")
        assert (status, out) == (0, "group.version was upgraded to 1.\n")
        assert len(sent(standby)) == len(sent(active)) == 1


def test_a_controller_that_never_leads_times_out_with_69():
    with update_server(top_level=(41, None)) as standby:
        status, out, err = kf("--bootstrap-controller", standby.address, "--timeout", "1", "upgrade", "--feature",
                              "group.version=1")
    assert (status, out) == (69, "")
    assert err == ("every controller answered NOT_CONTROLLER to UpdateFeatures and none named the active controller "
                   f"within 1 s (last answer from {standby.address})\n")


def test_a_v0_server_gets_allow_downgrade_and_cannot_validate_only():
    ranges = {18: (0, 4), 57: (0, 0)}
    with update_server(ranges=ranges) as server:
        c = ("--bootstrap-controller", server.address)
        assert kf(*c, "upgrade", "--feature", "group.version=1")[0] == 0
        assert kf(*c, "downgrade", "--feature", "group.version=0")[0] == 0
        assert sent(server) == [(0, None, {"group.version": (1, ("allow_downgrade", False))}),
                                (0, None, {"group.version": (0, ("allow_downgrade", True))})]
        status, out, err = kf(*c, "upgrade", "--feature", "group.version=1", "--dry-run")
        assert (status, err) == (1, "1 out of 1 operation(s) failed.\n")
        assert out == (f"Can not upgrade group.version to 1. {server.address} speaks UpdateFeatures v0 only, which "
                       f"has no validate-only mode\n")
    with FakeServer(ranges={18: (0, 4)}) as old:
        status, out, _ = kf("--bootstrap-server", old.address, "disable", "--feature", "group.version")
        assert (status, out) == (1, f"Could not disable group.version. {old.address} does not support the "
                                    f"UpdateFeatures API\n")


def test_an_unreachable_cluster_exits_69_in_one_line():
    with FakeServer() as gone:
        closed = gone.address
    for argv in (("describe",), ("upgrade", "--feature", "group.version=1")):
        status, out, err = kf("--bootstrap-controller", closed, "--timeout", "3", *argv)
        assert (status, out) == (69, "") and err.count("\n") == 1 and "cannot connect" in err
        status, out, err = kf("--bootstrap-controller", closed, "--timeout", "3", *argv, "--output", "json")
        assert (status, err, json.loads(out)["status"]) == (69, "", 69)


# ---------------------------------------------------------------- version-mapping, feature-dependencies


def storage(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = storage_tool.run(list(argv), Environment(stdout=out, stderr=err, env={}))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [("version-mapping",), ("version-mapping", "--release-version", "3.3-IV0"),
                                  ("version-mapping", "--release-version", "3.9"),
                                  ("version-mapping", "--release-version", "4.0-IV3"),
                                  ("feature-dependencies", "--feature", "kraft.version=1", "--feature",
                                   "metadata.version=21", "--feature", "transaction.version=2", "--feature",
                                   "group.version=0")])
def test_lookups_print_kafka_storages_texts(argv):
    expected = storage(*argv)
    assert expected[0] == 0 and expected[1]
    assert kf("--bootstrap-server", "127.0.0.1:1", *argv) == expected


def test_feature_dependencies_prints_until_the_first_bad_feature():
    assert kf("--bootstrap-server", "127.0.0.1:1", "feature-dependencies", "--feature", "metadata.version=5",
              "--feature", "group.version=9") == (1, "metadata.version=5 (3.3-IV1) has no dependencies.\n",
                                                  "No feature:group.version with feature level 9\n")


def test_lookups_in_json():
    status, out, _ = kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", "--output", "json")
    assert (status, json.loads(out)) == (0, {
        "command": "version-mapping", "status": 0, "release_version": "3.9-IV0", "metadata_version_level": 21,
        "features": {"kraft.version": 1, "transaction.version": 0, "group.version": 0}})
    status, out, _ = kf("--bootstrap-server", "127.0.0.1:1", "--output", "json", "feature-dependencies", "--feature",
                        "kraft.version=1")
    assert (status, json.loads(out)) == (0, {"command": "feature-dependencies", "status": 0, "features": [
        {"feature": "kraft.version", "level": 1, "dependencies": [{"feature": "metadata.version", "level": 21}]}]})


def test_the_umbrella_runs_the_same_tool():
    out, err = io.StringIO(), io.StringIO()
    status = main.run(["features", "--bootstrap-server", "127.0.0.1:1", "version-mapping"],
                      Environment(stdout=out, stderr=err, env={}))
    assert (status, out.getvalue()) == (0, storage("version-mapping")[1])
