"""KRAFTSMAN_KAFKA_VERSION (and a profile's kafka-version): one setting switches the defaults and texts where Kafka
3.9 and 4.x differ, in every tool; unset, every tool speaks 3.9 as before."""
from __future__ import annotations

import io

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.quorum.tool import format_status
from kraftsman.cli.storage import tool as storage_tool
from kraftsman.storage.protocol.uuids import ZERO_UUID

from ..controller.server.sync_fakes import FakeServer
from .features.test_tool import features_server, update_server

CID = "MkU3OEVBNTcwNTJENDM2Qg"


def tool(run, prog: str, argv, release: str | None = None, **env):
    out, err = io.StringIO(), io.StringIO()
    variables = dict(env) | ({"KRAFTSMAN_KAFKA_VERSION": release} if release else {})
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env=variables), prog=prog)
    return status, out.getvalue(), err.getvalue()


def storage(*argv, release=None, **env):
    return tool(storage_tool.run, "kafka-storage", argv, release, **env)


def kf(*argv, release=None, **env):
    return tool(features_tool.run, "kafka-features", argv, release, **env)


def config(tmp_path, voters: bool = True) -> str:
    quorum = "controller.quorum.voters=1@localhost:9093\n" if voters else \
        "controller.quorum.bootstrap.servers=localhost:9093\n"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "server.properties"
    path.write_text(f"process.roles=controller\nnode.id=1\n{quorum}listeners=CONTROLLER://localhost:9093\n"
                    f"controller.listener.names=CONTROLLER\nlog.dirs={tmp_path}/data\n")
    return str(path)


@pytest.mark.parametrize("release,first", [(None, "metadata.version=21 (3.9-IV0)"),
                                           ("4.0", "metadata.version=25 (4.0-IV3)"),
                                           ("4.1", "metadata.version=27 (4.1-IV1)"),
                                           ("4.2", "metadata.version=29 (4.2-IV1)")])
def test_version_mapping_defaults_to_the_releases_latest(release, first):
    status, out, _ = storage("version-mapping", release=release)
    assert status == 0 and out.splitlines()[0] == first
    assert kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", release=release)[1] == out


@pytest.mark.parametrize("release,version", [(None, "3.9-IV0"), ("4.0", "4.0-IV3"), ("4.1", "4.1-IV1"),
                                             ("4.2", "4.2-IV1")])
def test_format_never_writes_a_version_newer_than_the_named_release(tmp_path, release, version):
    status, out, err = storage("format", "-c", config(tmp_path), "-t", CID, release=release)
    assert (status, err) == (0, "") and out.endswith(f"with metadata.version {version}.\n")
    newer = {None: "4.0-IV3", "4.0": "4.1-IV0", "4.1": "4.2-IV1"}.get(release)
    if newer is not None:                               # a release past the named one is not yet stable
        status, out, err = storage("format", "-c", config(tmp_path / "n"), "-t", CID, "-r", newer, release=release)
        assert status == 1 and ("not yet stable" in err or "Unknown metadata.version" in err), err


def test_the_dynamic_quorum_rules_change_with_the_release(tmp_path):
    refused = ("You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
               "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify "
               "controller.quorum.bootstrap.servers instead.\n")
    assert storage("format", "-c", config(tmp_path / "a"), "-t", CID, "--standalone", release="4.2")[2] == refused
    assert storage("format", "-c", config(tmp_path / "b"), "-t", CID, "--standalone")[0] == 0       # 3.9 took it
    status, out, _ = storage("format", "-c", config(tmp_path / "c", voters=False), "-t", CID, "-N", release="4.2")
    assert status == 0 and "Formatting metadata directory" in out
    dumped = storage("info", "-c", config(tmp_path / "c", voters=False), release="4.2")
    assert dumped[0] == 0


def test_4x_config_checks_need_process_roles(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(f"node.id=1\nzookeeper.connect=localhost:2181\nlog.dirs={tmp_path}/d\n")
    assert storage("info", "-c", str(path), release="4.2")[2] == (
        'Missing required configuration "process.roles" which has no default value.\n')
    assert storage("info", "-c", str(path))[2] != storage("info", "-c", str(path), release="4.2")[2]


def test_kafka_features_4x_texts():
    with update_server() as server:
        status, out, err = kf("--bootstrap-controller", server.address, "upgrade", "--metadata", "3.9-IV0",
                              "--dry-run", release="4.2")
        assert (status, out, err) == (0, " `metadata` flag is deprecated and may be removed in a future release.\n"
                                         "metadata.version can be upgraded to 21.\n", "")
        assert kf("--bootstrap-controller", server.address, "upgrade", "--metadata", "3.9-IV0", "--dry-run")[1] == (
            "metadata.version can be upgraded to 21.\n")
    status, _, err = kf("--bootstrap-server", "127.0.0.1:1", "upgrade", "--release-version", "9.9", release="4.2")
    assert status == 1 and err.startswith("Unknown metadata.version '9.9'. Supported metadata.version are: 3.3-IV3, ")
    assert err.rstrip().endswith("4.2-IV1, 4.3-IV0")
    status, _, err = kf("--bootstrap-server", "127.0.0.1:1", "upgrade", "--release-version", "9.9", release="4.1")
    assert err == ("Unknown metadata.version 9.9. Supported metadata.version are 3.3-IV3, 3.4-IV0, 3.5-IV0, "
                   "3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, "
                   "3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1\n")


def test_kafka_features_describe_names_levels_as_the_release_does():
    supported = (("metadata.version", 1, 21), ("kraft.version", 0, 1))
    with features_server(supported=supported) as server:
        three_nine = kf("--bootstrap-controller", server.address, "describe")[1]
        four_two = kf("--bootstrap-controller", server.address, "describe", release="4.2")[1]
    assert "SupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0" in three_nine
    assert "SupportedMinVersion: UNKNOWN 1\tSupportedMaxVersion: 3.9-IV0" in four_two   # 4.2 knows no level 1


def test_a_profile_names_the_release_and_the_variable_wins(tmp_path):
    (tmp_path / "kraftsman").mkdir()
    (tmp_path / "kraftsman" / "config.yaml").write_text(
        "current-profile: k42\nprofiles:\n  k42:\n    kafka-version: '4.2'\n")
    home = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", **home)[1].startswith("metadata.version=29")
    assert kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", release="4.0",
              **home)[1].startswith("metadata.version=25")
    (tmp_path / "kraftsman" / "config.yaml").write_text("current-profile: x\nprofiles:\n  x:\n    kafka-version: '5.0'\n")
    status, out, err = kf("--bootstrap-server", "127.0.0.1:1", "version-mapping", **home)
    # a bad profile is a warning when the command line names the cluster (the release falls back to 3.9)
    assert status == 0 and out.startswith("metadata.version=21") and "kafka-version must be one of 3.9, 4.0, 4.1, " \
        "4.2; no profile is used" in err


def test_a_bad_release_is_a_usage_error():
    status, out, err = storage("version-mapping", release="4.3")
    assert (status, out) == (64, "") and "KRAFTSMAN_KAFKA_VERSION: Unknown Kafka release '4.3'" in err


class _Replica:
    def __init__(self, replica_id, directory_id=ZERO_UUID, leo=10):
        self.replica_id, self.directory_id, self.log_end_offset = replica_id, directory_id, leo
        self.last_caught_up_timestamp = 0


class _Info:
    leader_id, leader_epoch, high_watermark = 1, 1, 10
    voters = [_Replica(1)]
    observers: list = []
    nodes = {1: [("CONTROLLER", "127.0.0.1", 9093)]}


def test_quorum_status_drops_a_null_directory_id_from_4_1():
    assert '[{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://127.0.0.1:9093"]}]' in format_status(
        CID, _Info())
    assert '[{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:9093"]}]' in format_status(CID, _Info(), "4.1")
    assert '"directoryId": null' in format_status(CID, _Info(), "4.0")


def test_list_endpoints_flag_rule_text():
    from kraftsman.cli.cluster import tool as cluster_tool

    argv = ("list-endpoints", "--bootstrap-controller", "127.0.0.1:1", "--include-fenced-brokers")
    assert tool(cluster_tool.run, "kafka-cluster", argv, "4.2")[1:] == (
        "", "The option --include-fenced-brokers is only supported with --bootstrap-server option\n")


__all__ = ["FakeServer"]


def test_help_texts_follow_the_release():
    four = kf("-b", "x:1", "downgrade", "-h", release="4.2")[1]
    three = kf("-b", "x:1", "downgrade", "-h")[1]
    assert "Downgrade one or more feature flags." in four and "DEPRECATED -- The level" in " ".join(four.split())
    assert "Upgrade one or more feature flags." in three and "DEPRECATED" not in three
    mapping = " ".join(storage("version-mapping", "-h", release="4.1")[1].split())
    assert "The minimum is 3.3-IV3; the default is 4.1-IV1" in mapping
    assert "The minimum is 3.0-IV0; the default is 3.9-IV0" in " ".join(storage("format", "-h")[1].split())


def test_format_quorum_flags_say_what_kafka_4_2_says_only_for_4_2():
    """Kafka 4.2 rewrote the help of -s/-N/-I (StorageTool, 4.2.0) to say controller.quorum.voters must not be set;
    3.9 to 4.1 keep the older words. In-process runs one after the other must not carry one release's words over."""
    for release in ("4.2", None, "4.1", "4.2"):
        text = "".join(storage("format", "-h", release=release)[1].split())  # click wraps inside words too
        new = ("Used to initialize a controller as a single-node dynamic quorum. When setting this flag, the "
               "controller.quorum.voters config must not be set, and controller.quorum.bootstrap.servers is set "
               "instead.")
        assert (_bare(new) in text) == (release == "4.2"), release
        assert (_bare("Used to initialize a server without specifying a dynamic quorum. When setting this flag, the "
                      "controller.quorum.voters config should not be set") in text) == (release == "4.2"), release
        assert (_bare("Used to initialize a server with the specified dynamic quorum.") in text) == (release == "4.2")
        if release != "4.2":
            assert _bare("Used to initialize a controller as a single-node dynamic quorum. [env var") in text, release
            assert _bare("Used to initialize a server without a dynamic quorum topology.") in text, release
            assert _bare("Used to initialize a server with a specific dynamic quorum topology.") in text, release


def _bare(text: str) -> str:
    return "".join(text.split())


def test_the_shell_says_metadata_snapshot_from_4_1():
    """Kafka 4.1's MetadataShell calls --snapshot "The metadata snapshot file to read." (3.9 and 4.0: "The snapshot
    file to read.")."""
    from kraftsman.cli.shell import tool as shell_tool

    for release, text in ((None, "The snapshot file to read."), ("4.0", "The snapshot file to read."),
                          ("4.1", "The metadata snapshot file to read."),
                          ("4.2", "The metadata snapshot file to read.")):
        status, out, _ = tool(shell_tool.run, "kafka-metadata-shell", ["--help"], release)
        assert status == 0 and _bare(text + " [env var") in "".join(out.split()), release


def test_kafka_cluster_calls_config_deprecated_in_4_2_words():
    """Kafka 4.2's ClusterTool: '(DEPRECATED) A property file ... Use --command-config instead.' on --config."""
    from kraftsman.cli.cluster import tool as cluster_tool

    deprecated = _bare("(DEPRECATED) A property file containing configurations for the Admin client. This option "
                       "will be removed in a future version. Use --command-config instead.")
    for release in ("4.2", None, "4.1"):
        for sub in ("cluster-id", "unregister", "list-endpoints"):
            status, out, _ = tool(cluster_tool.run, "kafka-cluster", [sub, "--help"], release)
            assert status == 0 and (deprecated in "".join(out.split())) == (release == "4.2"), (release, sub)


def test_kafka_metadata_quorum_names_add_controller_in_command_config_from_4_0():
    """Kafka 4.0's MetadataQuorumCommand added 'For add-controller, the file is used to specify the controller
    properties as well.' to --command-config; 3.9's help stops before it."""
    from kraftsman.cli.quorum import tool as quorum_tool

    extra = _bare("For add-controller, the file is used to specify the controller properties as well.")
    for release in ("4.0", None, "4.2"):
        status, out, _ = tool(quorum_tool.run, "kafka-metadata-quorum", ["--help"], release)
        flat = "".join(out.split())
        assert status == 0 and _bare("Property file containing configs to be passed to Admin Client.") in flat
        assert (extra in flat) == (release is not None), release


def test_a_run_for_4x_leaves_the_declared_help_for_the_man_pages():
    """The man pages and completions are built in-process from the same click commands: a run speaking for 4.2
    must leave them Kafka 3.9's texts (they document the default release)."""
    from kraftsman.cli.common.typer_app import click_command

    storage("format", "-h", release="4.2")
    kf("-b", "x:1", "downgrade", "-h", release="4.2")
    fmt = click_command(storage_tool.app, "storage").commands["format"]
    helps = {p.name: p.help for p in fmt.params}
    assert helps["standalone"] == "Used to initialize a controller as a single-node dynamic quorum."
    assert "the default is 3.9-IV0" in helps["release_version"]
    downgrade = click_command(features_tool.app, "features").commands["downgrade"]
    assert "DEPRECATED" not in " ".join(p.help or "" for p in downgrade.params)
    assert downgrade.help == downgrade.short_help == "Upgrade one or more feature flags."  # 3.9 declared it
    from kraftsman.cli.shell import tool as shell_tool

    tool(shell_tool.run, "kafka-metadata-shell", ["--help"], "4.2")
    shell = click_command(shell_tool.app, "shell")
    assert {p.name: p.help for p in shell.params}["snapshot"] == "The snapshot file to read."
