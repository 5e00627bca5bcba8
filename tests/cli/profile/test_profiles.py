"""Connection profiles: the file, `kraftsman profile`, and kafka-cluster taking what its flags leave out from one.

Precedence is flag > KRAFTSMAN_<TOOL>_<FLAG> > profile > default; -X client settings win over the profile's.
"""
from __future__ import annotations

import json
import os

import pytest
import yaml

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.common import profiles as pf
from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.profile import tool as profile_tool

from ...controller.server.sync_fakes import FakeServer
from ..cluster.test_tool import RANGES, describe_handler
from ..profile_fixtures import config_home_env, run_tool


def _profile(env, *argv):
    return run_tool(profile_tool.run, "kraftsman profile", env, *argv)


def _cluster(env, *argv):
    return run_tool(cluster_tool.run, "kafka-cluster", env, *argv)


def _write(home, text: str):
    path = home / "kraftsman" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---------------------------------------------------------------- the command


def test_create_list_show_use_delete(tmp_path):
    env = config_home_env(tmp_path)
    assert _profile(env, "create", "prod", "-C", "h1:9093,h2:9093", "-X", "sasl.password=hunter2",
                    "-X", "security.protocol=SASL_PLAINTEXT", "--timeout", "5")[0] == 0
    assert _profile(env, "create", "lab", "-b", "lab:9092", "--output", "json")[0] == 0
    path = tmp_path / "kraftsman" / "config.yaml"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert _profile(env, "list") == (0, "  lab\n* prod\n", "")
    status, out, _ = _profile(env, "show", "--output", "json")
    assert status == 0 and json.loads(out) == {
        "name": "prod", "bootstrap-controller": "h1:9093,h2:9093",
        "client": {"sasl.password": pf.MASK, "security.protocol": "SASL_PLAINTEXT"}, "timeout": 5.0}
    assert "hunter2" not in _profile(env, "show", "prod")[1] and "hunter2" in path.read_text()
    assert _profile(env, "use", "lab")[0] == 0 and _profile(env, "list")[1] == "* lab\n  prod\n"
    assert _profile(env, "create", "lab")[0] == ExitStatus.USAGE  # exists: --force replaces it
    assert _profile(env, "delete", "lab")[0] == 0 and _profile(env, "list")[1] == "  prod\n"
    status, _, err = _profile(env, "use", "nope")
    assert status == ExitStatus.USAGE and "no profile 'nope'" in err and err.count("\n") == 1


def test_show_yaml_is_the_json_object(tmp_path):
    env = config_home_env(tmp_path)
    _profile(env, "create", "prod", "-C", "h:1", "-X", "ssl.key.password=k")
    as_json = json.loads(_profile(env, "show", "--output", "json")[1])
    assert yaml.safe_load(_profile(env, "show", "--output", "yaml")[1]) == as_json
    assert as_json["client"] == {"ssl.key.password": pf.MASK}


@pytest.mark.parametrize("text,line,words", [
    ("profiles: [", 1, "not valid YAML"),
    ("current-profile: a\nprofiles:\n  a:\n    bootstrap-controler: h:1\n", 4, "unknown key 'bootstrap-controler'"),
    ("profiles:\n  a:\n    timeout: soon\n", 3, "timeout must be a number"),
    ("profiles:\n  a:\n    output: xml\n", 3, "output must be one of text, json, yaml"),
    ("colour: blue\n", 1, "unknown key 'colour'"),
])
def test_a_broken_file_is_one_line_naming_file_and_line_exit_64(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    status, out, err = _cluster(config_home_env(tmp_path, KRAFTSMAN_PROFILE="a"), "cluster-id")
    assert (status, out) == (ExitStatus.USAGE, "") and err.count("\n") == 1, err
    assert f"{path}:{line}:" in err and words in err


# ---------------------------------------------------------------- kafka-cluster with a profile


def test_the_current_profile_gives_bootstrap_and_output(tmp_path):
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        _write(tmp_path, f"current-profile: dev\nprofiles:\n  dev:\n    bootstrap-server: {server.address}\n"
                         f"    output: json\n")
        status, out, err = _cluster(config_home_env(tmp_path), "cluster-id")
        assert (status, err) == (0, "") and json.loads(out)["cluster_id"] == "abcdefghijklmnopqrstuv"


def test_flag_over_variable_over_profile_over_default(tmp_path):
    with FakeServer(describe_handler(), ranges=RANGES) as good:
        _write(tmp_path, "current-profile: a\nprofiles:\n  a:\n    bootstrap-server: 127.0.0.1:1\n    timeout: 1\n"
                         f"  b:\n    bootstrap-server: {good.address}\n    output: yaml\n")
        env = config_home_env(tmp_path)
        assert _cluster(env, "cluster-id")[0] == ExitStatus.UNAVAILABLE          # profile a: closed port
        assert _cluster(env, "cluster-id", "-b", good.address)[0] == 0          # the flag wins
        status, out, _ = _cluster(env, "cluster-id", "--profile", "b")
        assert status == 0 and yaml.safe_load(out)["cluster_id"] == "abcdefghijklmnopqrstuv"  # --profile, yaml
        env = config_home_env(tmp_path, KRAFTSMAN_PROFILE="b")
        assert yaml.safe_load(_cluster(env, "cluster-id")[1])["status"] == 0                  # KRAFTSMAN_PROFILE
        assert _cluster(env, "cluster-id", "--output", "text")[1] == "Cluster ID: abcdefghijklmnopqrstuv\n"
        env = config_home_env(tmp_path, KRAFTSMAN_CLUSTER_BOOTSTRAP_SERVER=good.address)                 # variable > profile
        assert _cluster(env, "cluster-id")[0] == 0


def test_client_property_overrides_win_over_the_profile(tmp_path):
    from kraftsman.cli.common.admin import Context

    seen = {}
    real = Context.__init__

    def spy(self, args, env):
        real(self, args, env)
        seen.update(client_id=self.config.client_id, timeout=self.config.request_timeout_ms)
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        _write(tmp_path, f"current-profile: a\nprofiles:\n  a:\n    bootstrap-server: {server.address}\n"
                         "    client: {client.id: from-profile, request.timeout.ms: '700'}\n")
        try:
            Context.__init__ = spy
            assert _cluster(config_home_env(tmp_path), "cluster-id")[0] == 0
            assert seen == {"client_id": "from-profile", "timeout": 700}
            assert _cluster(config_home_env(tmp_path), "cluster-id", "-X", "client.id=from-flag")[0] == 0
            assert seen["client_id"] == "from-flag"
        finally:
            Context.__init__ = real


def test_no_profile_and_no_bootstrap_is_kafkas_usage_error(tmp_path):
    status, _, err = _cluster(config_home_env(tmp_path), "cluster-id")
    assert status == 1 and "one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required" in err


def test_a_named_profile_that_is_not_there(tmp_path):
    _write(tmp_path, "profiles:\n  a: {bootstrap-server: 'h:1'}\n")
    status, _, err = _cluster(config_home_env(tmp_path), "cluster-id", "--profile", "b")
    assert status == ExitStatus.USAGE and "no profile 'b' (profiles: a)" in err


def test_yaml_renders_enum_values_as_json_does():
    """An IntEnum (an exit status) in the object is a plain number in YAML as in JSON (health's status was not)."""
    from kraftsman.cli.common.output import render

    obj = {"status": ExitStatus.UNHEALTHY,
           "nested": [ExitStatus.OK], "name": "x"}
    assert yaml.safe_load(render(obj, "yaml")) == json.loads(render(obj, "json"))


def test_key_values_is_the_one_key_value_parser():
    """-X (profiles, admin tools, the shell), --override and --conf all read KEY=VALUE words through key_values."""
    from kraftsman.cli.common.key_values import BadPair, key_values

    assert key_values([" a = 1 ", "b=x=y", "a=2"]) == {"a": "2", "b": "x=y"}
    assert key_values(["k= v "], strip_values=False) == {"k": " v "}
    assert key_values(["ok=1", "bad", "=x"], lenient=True) == {"ok": "1"}
    for bad in ("bad", "=x", " =x"):
        try:
            key_values(["ok=1", bad])
            raise AssertionError(bad)
        except BadPair as e:
            assert e.pair == bad
