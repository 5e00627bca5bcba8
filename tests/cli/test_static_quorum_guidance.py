"""A static quorum's dead ends say what to do, on a real 3-voter static quorum: remove-controller and add-controller
get Kafka's UNSUPPORTED_VERSION message (not the bare code name) and a hint; `kafka-features upgrade
--release-version` that fails on kraft.version says how to upgrade the rest; `kafka-storage format --standalone` at a
release below 3.9-IV0 says what a dynamic quorum needs."""
from __future__ import annotations

import io
import json

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.features.tool import run as features
from kraftsman.cli.quorum.texts import STATIC_QUORUM_HINT
from kraftsman.cli.quorum.tool import run as quorum
from kraftsman.cli.storage.tool import run as storage

from ..controller.server.quorum_fixtures import loop_fixture, running_quorum
from .test_json_schemas import validator

loop = loop_fixture()
DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture(scope="module")
def static(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("static"), loop) as q:
        yield q


def call(fn, prog: str, argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(fn, list(argv), Environment(stdout=out, stderr=err, env={}), prog=prog)
    return status, out.getvalue(), err.getvalue()


def test_remove_controller_says_why_and_what_to_do(static):
    argv = ["-C", static.bootstrap(), "remove-controller", "-i", "3", "-d", DIRECTORY]
    status, out, err = call(quorum, "kafka-metadata-quorum", argv)
    assert (status, out) == (1, "")
    assert err.splitlines() == [
        "UNSUPPORTED_VERSION: Cluster doesn't support removing voter because the kraft.version feature is 0",
        f"kafka-metadata-quorum: hint: {STATIC_QUORUM_HINT}"]
    status, out, err = call(quorum, "kafka-metadata-quorum", [*argv, "--output", "json"])
    assert (status, err) == (1, "")
    assert json.loads(out)["hint"] == STATIC_QUORUM_HINT
    validator("metadata-quorum").validate(json.loads(out))     # the schema knows the hint


def test_add_controller_says_why_and_what_to_do(static, tmp_path):
    config = tmp_path / "controller.properties"
    config.write_text("process.roles=controller\nnode.id=9\ncontroller.listener.names=CONTROLLER\n"
                      f"listeners=CONTROLLER://127.0.0.1:19099\nlog.dirs={tmp_path}/meta\n"
                      f"controller.quorum.bootstrap.servers={static.bootstrap()}\n")
    assert call(storage, "kafka-storage", ["format", "-t", static.cluster_id, "-c", str(config), "-N"])[0] == 0
    status, _, err = call(quorum, "kafka-metadata-quorum", ["-C", static.bootstrap(), "--command-config", str(config),
                                                            "add-controller"])
    assert status == 1
    assert err.splitlines()[0] == ("UNSUPPORTED_VERSION: Cluster doesn't support adding voter because the "
                                   "kraft.version feature is 0")
    assert err.splitlines()[1] == f"kafka-metadata-quorum: hint: {STATIC_QUORUM_HINT}"


def test_release_version_that_fails_on_kraft_version_says_how_to_upgrade_the_rest(static):
    status, out, err = call(features, "kafka-features", ["-C", static.bootstrap(), "upgrade", "--release-version",
                                                         "3.9"])
    assert status == 1
    assert out.startswith("Could not upgrade kraft.version to 1.")
    lines = err.splitlines()
    assert lines[0] == "1 out of 2 operation(s) failed."
    assert lines[1].startswith("kafka-features: hint: kraft.version follows the quorum: a static quorum") and (
        "--metadata VERSION" in lines[1])


def test_format_standalone_below_3_9_says_what_a_dynamic_quorum_needs(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text("process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
                      f"listeners=CONTROLLER://127.0.0.1:19091\nlog.dirs={tmp_path}/d\n")
    status, out, err = call(storage, "kafka-storage", ["format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", str(config),
                                                       "--standalone", "-r", "3.8-IV0"])
    assert (status, out) == (1, "")
    kafka, hint = err.splitlines()
    assert "kraft.version" in kafka and "metadata.version" in kafka
    assert hint.startswith("kafka-storage: hint: kraft.version 1 is a dynamic quorum (--standalone, "
                           "--initial-controllers), which needs metadata.version 3.9-IV0 or later")
    assert not (tmp_path / "d").exists()
