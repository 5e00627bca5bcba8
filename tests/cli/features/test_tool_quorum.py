"""kafka-features against a real 3-voter kraftsman quorum on 127.0.0.1: describe, a dry-run and a real safe
downgrade of metadata.version, refused downgrades, and the upgrade back with --release-version.

One quorum serves the module; tests run in file order (they move metadata.version down and up).
"""
from __future__ import annotations

import io

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.features.commands import KRAFT_VERSION_HINT

from ...controller.server.quorum_fixtures import finalized_features, loop_fixture, running_quorum, wait_for

loop = loop_fixture()
KRAFT_REFUSAL = ("Invalid update version 1 for feature kraft.version. kraft.version is kept by the Raft layer "
                 "(KRaftVersionRecord), not by FeatureLevelRecords; kraftsman does not change it through "
                 "UpdateFeatures.")
LOSSY = "Invalid metadata.version 16. Refusing to perform the requested downgrade because it might delete metadata " \
        "information."


def kf(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(features_tool.run, list(argv), Environment(stdout=out, stderr=err, env={}),
                         prog="kafka-features")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("features-tool"), loop) as q:
        yield q


def on_every_controller(quorum, loop, level: int) -> None:
    for address in quorum.addresses().values():
        wait_for(lambda: finalized_features(address, loop)["metadata.version"] == level, timeout=15)


def describe_rows(quorum, flag: str = "--bootstrap-controller") -> dict[str, dict[str, str]]:
    status, out, err = kf(flag, quorum.bootstrap(), "describe")
    assert (status, err) == (0, ""), err
    rows = {}
    for line in out.splitlines():
        fields = dict(part.split(": ", 1) for part in line.split("\t"))
        rows[fields.pop("Feature")] = fields
    assert list(rows) == sorted(rows)
    return rows


def test_describe_shows_metadata_version_and_kraft_version(quorum):
    epochs = set()
    for flag in ("--bootstrap-controller", "--bootstrap-server"):
        rows = describe_rows(quorum, flag)
        # the epoch is the offset of the batch that last set a feature (the bootstrap records): on every node
        epoch = rows["metadata.version"].pop("Epoch")
        assert epoch.isdigit() and int(epoch) > 0
        epochs.add(epoch)
        assert rows["metadata.version"] == {"SupportedMinVersion": "3.0-IV1", "SupportedMaxVersion": "3.9-IV0",
                                            "FinalizedVersionLevel": "3.9-IV0"}
        kraft = rows["kraft.version"]
        assert (kraft["SupportedMinVersion"], kraft["SupportedMaxVersion"]) == ("0", "1")
        assert kraft["FinalizedVersionLevel"] == "0"       # a static quorum (controller.quorum.voters)
    assert len(epochs) == 1


def test_every_controller_registered_so_a_dry_run_passes(quorum):
    # Kafka refuses feature changes until every voter registered (from 3.7-IV0); ours register at start
    wait_for(lambda: kf("--bootstrap-controller", quorum.bootstrap(), "upgrade", "--metadata", "3.9-IV0",
                        "--dry-run")[0] == 0, timeout=30)


def test_a_dry_run_downgrade_changes_nothing_then_the_real_one_reaches_every_controller(quorum, loop):
    c = ("--bootstrap-controller", quorum.bootstrap())
    assert kf(*c, "downgrade", "--metadata", "3.8-IV0", "--dry-run") == (
        0, "metadata.version can be downgraded to 20.\n", "")
    assert describe_rows(quorum)["metadata.version"]["FinalizedVersionLevel"] == "3.9-IV0"
    assert kf(*c, "downgrade", "--feature", "metadata.version=20") == (0, "metadata.version was downgraded to 20.\n",
                                                                       "")
    on_every_controller(quorum, loop, 20)
    assert describe_rows(quorum)["metadata.version"]["FinalizedVersionLevel"] == "3.8-IV0"


def test_lossy_and_unsafe_downgrades_print_the_controllers_refusal(quorum):
    c = ("--bootstrap-controller", quorum.bootstrap())
    assert kf(*c, "downgrade", "--feature", "metadata.version=16") == (
        1, f"Could not downgrade metadata.version to 16. {LOSSY}\n", "1 out of 1 operation(s) failed.\n")
    assert kf(*c, "downgrade", "--metadata", "3.6-IV2", "--unsafe", "--dry-run") == (
        1, "Can not downgrade metadata.version to 14. Invalid metadata.version 14. Unsafe metadata downgrade is not "
           "supported in this version.\n", "1 out of 1 operation(s) failed.\n")
    assert describe_rows(quorum)["metadata.version"]["FinalizedVersionLevel"] == "3.8-IV0"


def test_upgrade_to_the_release_restores_3_9_and_reports_the_refused_kraft_version(quorum, loop):
    # Kafka's --release-version 3.9-IV0 asks metadata.version=21 and kraft.version=1 (its non-zero defaults);
    # kraftsman's controller leaves kraft.version to Raft and refuses it, so one of the two fails (exit 1)
    status, out, err = kf("--bootstrap-controller", quorum.bootstrap(), "upgrade", "--release-version", "3.9-IV0")
    assert (status, out, err) == (1, f"Could not upgrade kraft.version to 1. {KRAFT_REFUSAL}\n"
                                     "metadata.version was upgraded to 21.\n",
                                 f"1 out of 2 operation(s) failed.\nkafka-features: hint: {KRAFT_VERSION_HINT}\n")
    on_every_controller(quorum, loop, 21)
    rows = describe_rows(quorum)
    assert (rows["metadata.version"]["FinalizedVersionLevel"], rows["kraft.version"]["FinalizedVersionLevel"]) == (
        "3.9-IV0", "0")
