"""kafka-metadata-quorum and kafka-features on typer: --output yaml, connection profiles, KRAFTSMAN_* variables and
where the options sit (connection flags before the sub-command, as in Kafka; kraftsman's on either side).

Precedence is flag > KRAFTSMAN_<TOOL>_<FLAG> > profile > default, whichever side of the sub-command the flag is on.
"""
from __future__ import annotations

import json

import yaml

from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.quorum import tool as metadata_quorum

from ..controller.server.sync_fakes import FakeServer
from .features.test_tool import features_server
from .profile_fixtures import config_home_env, run_tool
from .quorum.test_tool import CLUSTER_ID, RANGES, handler


def mq(env, *argv):
    return run_tool(metadata_quorum.run, "kafka-metadata-quorum", env, *argv)


def kf(env, *argv):
    return run_tool(features_tool.run, "kafka-features", env, *argv)


def _profiles(home, text: str) -> None:
    path = home / "kraftsman" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def quorum_server() -> FakeServer:
    return FakeServer(handler(), ranges=RANGES)


# ---------------------------------------------------------------- --output yaml


def test_quorum_yaml_is_the_json_object(tmp_path):
    env = config_home_env(tmp_path)
    with quorum_server() as server:
        status, out, err = mq(env, "-C", server.address, "--output", "json", "describe", "--status")
        assert (status, err) == (0, "")
        as_json = json.loads(out)
        for argv in (("--output", "yaml", "describe", "--status"), ("describe", "--status", "--output", "yaml")):
            status, out, err = mq(env, "-C", server.address, *argv)
            assert (status, err) == (0, "") and yaml.safe_load(out) == as_json
        assert as_json["cluster_id"] == CLUSTER_ID
        status, out, _ = mq(env, "-C", server.address, "--output", "yaml", "describe", "--replication")
        assert status == 0 and [r["status"] for r in yaml.safe_load(out)["replicas"]][0] == "Leader"


def test_features_yaml_is_the_json_object(tmp_path):
    env = config_home_env(tmp_path)
    with features_server() as server:
        status, out, err = kf(env, "-C", server.address, "describe", "--output", "json")
        assert (status, err) == (0, "")
        as_json = json.loads(out)
        status, out, err = kf(env, "-C", server.address, "--output", "yaml", "describe")
        assert (status, err) == (0, "") and yaml.safe_load(out) == as_json
        assert [f["name"] for f in as_json["features"]] == ["kraft.version", "metadata.version"]


def test_yaml_usage_errors_are_kafkas_1_and_one_yaml_object(tmp_path):
    env = config_home_env(tmp_path)
    status, out, err = mq(env, "-C", "127.0.0.1:1", "--output", "yaml", "describe")
    assert (status, err) == (ExitStatus.ERROR, "")
    assert yaml.safe_load(out) == {"command": "describe", "status": 1, "error": "One of --status or --replication "
                                   "must be specified with describe sub-command"}
    status, out, err = kf(env, "-b", "127.0.0.1:1", "upgrade", "--output", "yaml")
    assert (status, err) == (ExitStatus.ERROR, "")
    assert yaml.safe_load(out)["error"] == "You must specify at least one feature to upgrade"
    assert mq(env, "--output", "yaml", "describe", "--status")[0] == ExitStatus.ERROR      # no bootstrap
    assert kf(env, "-b", "a:1", "--output", "yaml", "--bogus")[0] == ExitStatus.ERROR


# ---------------------------------------------------------------- profiles


def test_a_profile_gives_the_quorum_bootstrap(tmp_path):
    with quorum_server() as server:
        _profiles(tmp_path, f"current-profile: lab\nprofiles:\n  lab:\n    bootstrap-controller: {server.address}\n"
                            f"  js:\n    bootstrap-controller: {server.address}\n    output: json\n")
        status, out, err = mq(config_home_env(tmp_path), "describe", "--status")
        assert (status, err) == (0, "") and out.startswith(f"ClusterId:              {CLUSTER_ID}\n")
        status, out, _ = mq(config_home_env(tmp_path), "--profile", "js", "describe", "--status")
        assert status == 0 and json.loads(out)["leader_id"] == 2
        status, out, _ = mq(config_home_env(tmp_path), "describe", "--status", "--profile", "js")       # after the command
        assert status == 0 and json.loads(out)["leader_id"] == 2
        status, out, _ = mq(config_home_env(tmp_path, KRAFTSMAN_PROFILE="js"), "--output", "text", "describe", "--status")
        assert status == 0 and out.startswith("ClusterId:")                                  # flag over profile


def test_a_profile_gives_the_features_bootstrap(tmp_path):
    with features_server() as server:
        _profiles(tmp_path, f"current-profile: lab\nprofiles:\n  lab:\n    bootstrap-server: {server.address}\n")
        status, out, err = kf(config_home_env(tmp_path), "describe")
        assert (status, err) == (0, "")
        assert out.startswith("Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t")
        with FakeServer() as closed:
            pass
        env = config_home_env(tmp_path, KRAFTSMAN_FEATURES_BOOTSTRAP_SERVER=closed.address)             # variable > profile
        assert kf(env, "--timeout", "1", "describe")[0] == ExitStatus.UNAVAILABLE
        assert kf(env, "-b", server.address, "describe")[0] == 0                              # flag > variable


def test_a_profiles_client_file_is_not_the_controller_to_add(tmp_path):
    client = tmp_path / "admin.properties"
    client.write_text("client.id=admin\n")
    _profiles(tmp_path, f"current-profile: lab\nprofiles:\n  lab:\n    bootstrap-controller: 127.0.0.1:1\n"
                        f"    client-config: {client}\n")
    status, out, err = mq(config_home_env(tmp_path), "add-controller")
    assert (status, out) == (1, "") and err.startswith("You must supply the configuration file of the controller")


def test_client_properties_from_both_sides_of_the_sub_command(tmp_path):
    with quorum_server() as server:
        env = config_home_env(tmp_path)
        assert mq(env, "-C", server.address, "-X", "client.id=before", "describe", "--status")[0] == 0
        assert mq(env, "-C", server.address, "-X", "client.id=before", "describe", "--status",
                  "-X", "client.id=after")[0] == 0
        assert [h.client_id for h, _ in server.requests if h.request_api_key == 55] == ["before", "after"]
        status, _, err = mq(env, "-C", server.address, "describe", "--status", "-X", "no-equals")
        assert status == 1 and "expected KEY=VALUE" in err


# ---------------------------------------------------------------- variables


def test_variables_give_the_bootstrap(tmp_path):
    with quorum_server() as server:
        env = config_home_env(tmp_path, KRAFTSMAN_QUORUM_BOOTSTRAP_CONTROLLER=server.address)
        status, out, err = mq(env, "describe", "--status")
        assert (status, err) == (0, "") and out.startswith("ClusterId:")
    with features_server() as server:
        env = config_home_env(tmp_path, KRAFTSMAN_FEATURES_BOOTSTRAP_SERVER=server.address)
        status, out, err = kf(env, "describe")
        assert (status, err) == (0, "") and out.startswith("Feature: ")


def test_a_flag_on_either_side_wins_over_the_variable(tmp_path):
    with quorum_server() as server:
        env = config_home_env(tmp_path, KRAFTSMAN_QUORUM_OUTPUT="yaml")
        assert json.loads(mq(env, "-C", server.address, "--output", "json", "describe", "--status")[1])
        assert json.loads(mq(env, "-C", server.address, "describe", "--status", "--output", "json")[1])
        assert yaml.safe_load(mq(env, "-C", server.address, "describe", "--status")[1])["status"] == 0
    status, _, err = mq(config_home_env(tmp_path), "-b", "a:1", "-C", "b:2", "describe", "--status")
    assert status == 1 and "argument --bootstrap-controller: not allowed with argument --bootstrap-server" in err
    assert err.startswith("usage: kafka-metadata-quorum [OPTIONS] COMMAND")


# ---------------------------------------------------------------- completion


def test_completion_takes_the_profile_named_before_the_sub_command(tmp_path, monkeypatch):
    from .completion.test_complete import candidates, describe_handler

    with FakeServer(describe_handler((1, 2, 3)), ranges=RANGES) as server:
        _profiles(tmp_path, f"profiles:\n  lab:\n    bootstrap-controller: {server.address}\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        monkeypatch.delenv("KRAFTSMAN_PROFILE", raising=False)
        line = "kafka-metadata-quorum --profile lab remove-controller --controller-id "
        assert candidates(line) == ["1", "2", "3"]
