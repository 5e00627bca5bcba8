"""Profiles and -X where a new user met a dead end: a broken config.yaml is a warning for a command that names its
cluster on its line (and still an error, exit 64, for one that uses a profile); -X refuses a key the client does not
honour, naming the nearest known ones; `-X list` and `-X help` show the keys, in every tool that takes -X."""
from __future__ import annotations

import importlib
import io
import socket

import pytest

from kraftsman.cli import app
from kraftsman.cli.common import client_settings
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.controller.client.sync_client import CLIENT_PROPERTIES, ClientConfig

BROKEN = "profiles:\n  a:\n    bootstrap-controler: x\n"     # a misspelt key: the file is refused


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def run(script: str, argv: list[str], environ: dict) -> tuple[int, str, str]:
    module = importlib.import_module(app.by_script(script).module if script in {t.script for t in app.TOOLS}
                                     else "kraftsman.cli.profile.tool")
    out, err = io.StringIO(), io.StringIO()
    status = run_command(module.run, list(argv), Environment(stdout=out, stderr=err, env=dict(environ)), prog=script)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def broken(tmp_path) -> dict:
    (tmp_path / "kraftsman").mkdir()
    (tmp_path / "kraftsman" / "config.yaml").write_text(BROKEN)
    return {"XDG_CONFIG_HOME": str(tmp_path)}


# ---------------------------------------------------------------- a broken profile file

NAMES_ITS_CLUSTER = [
    ("kafka-cluster", ["cluster-id", "-C", "PORT"]),
    ("kafka-metadata-quorum", ["-C", "PORT", "describe", "--status"]),
    ("kafka-features", ["--bootstrap-server", "PORT", "describe"]),
]


@pytest.mark.parametrize("script, argv", NAMES_ITS_CLUSTER, ids=[s for s, _ in NAMES_ITS_CLUSTER])
def test_a_broken_profile_file_is_a_warning_when_the_line_names_the_cluster(broken, script, argv):
    status, _, err = run(script, [a.replace("PORT", closed_port()) for a in argv], broken)
    assert status == 69                      # it went on and tried the (closed) cluster
    warning, failure = err.splitlines()
    assert warning.startswith(f"{script}: warning: {broken['XDG_CONFIG_HOME']}/kraftsman/config.yaml:3: profile 'a': "
                              "unknown key 'bootstrap-controler'")
    assert warning.endswith("; no profile is used (the command line names the cluster)")
    assert "cannot connect" in failure


@pytest.mark.parametrize("argv, environ", [
    (["cluster-id"], {}),                                      # the bootstrap was left to the profile
    (["cluster-id", "-C", "PORT", "--profile", "a"], {}),      # a profile asked for by name
    (["cluster-id", "-C", "PORT"], {"KRAFTSMAN_PROFILE": "a"}),
], ids=["no-bootstrap", "--profile", "KRAFTSMAN_PROFILE"])
def test_a_broken_profile_file_is_still_an_error_for_a_command_that_uses_a_profile(broken, argv, environ):
    status, out, err = run("kafka-cluster", [a.replace("PORT", closed_port()) for a in argv], {**broken, **environ})
    assert (status, out) == (64, "")
    assert err.startswith("kafka-cluster: ") and "unknown key 'bootstrap-controler'" in err and err.count("\n") == 1


# ---------------------------------------------------------------- -X keys


def test_every_listed_key_is_one_the_client_reads():
    """The list is the client's: each key changes what ClientConfig.from_properties builds (or is a PEM check)."""
    samples = {"security.protocol": "SSL", "request.timeout.ms": "7", "client.id": "x", "sasl.mechanism": "PLAIN",
               "ssl.endpoint.identification.algorithm": "", "ssl.truststore.type": "PEM", "ssl.keystore.type": "PEM"}
    default = vars(ClientConfig.from_properties({}))
    for key in CLIENT_PROPERTIES:
        value = samples.get(key, "v" if "sasl" not in key else 'username="u" password="p"')
        props = {key: value} if not key.startswith("sasl.") else {key: value, "sasl.username": "u"}
        changed = vars(ClientConfig.from_properties(props)) != default
        assert changed or key.endswith(".type"), key


@pytest.mark.parametrize("key, nearest", [
    ("request.timout.ms", "request.timeout.ms"), ("sasl.mechanisms", "sasl.mechanism"),
    ("securty.protocol", "security.protocol"), ("bogus", None),
])
def test_an_unknown_key_is_refused_naming_the_nearest(key, nearest):
    with pytest.raises(client_settings.UnknownSetting) as caught:
        client_settings.overrides([f"{key}=1"])
    assert repr(key) in str(caught.value)
    assert (f"did you mean {nearest}?" in str(caught.value)) if nearest else "did you mean" not in str(caught.value)


TAKES_X = [
    ("kafka-cluster", ["cluster-id", "-C", "h:1", "X"]),
    ("kafka-metadata-quorum", ["-C", "h:1", "describe", "--status", "X"]),
    ("kafka-features", ["-C", "h:1", "describe", "X"]),
    ("kafka-metadata-shell", ["-C", "h:1", "X", "ls"]),      # the shell's command words end its options
]


@pytest.mark.parametrize("script, argv", TAKES_X, ids=[s for s, _ in TAKES_X])
def test_every_tool_refuses_a_misspelt_key_before_connecting(script, argv, tmp_path):
    at = argv.index("X")
    argv = [*argv[:at], "-X", "request.timout.ms=100", *argv[at + 1:]]
    status, out, err = run(script, argv, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert (status, out) == (1, "")
    assert "unknown client setting 'request.timout.ms' (did you mean request.timeout.ms?" in err
    assert "cannot connect" not in err


@pytest.mark.parametrize("script", ["kafka-cluster", "kafka-metadata-quorum", "kafka-features", "kafka-metadata-shell"])
@pytest.mark.parametrize("spelling", [["-X", "list"], ["--client-property", "list"], ["-Xlist"]])
def test_x_list_shows_the_keys_with_nothing_else_needed(script, spelling, tmp_path):
    assert run(script, spelling, {"XDG_CONFIG_HOME": str(tmp_path)}) == (0, "".join(f"{k}\n" for k in CLIENT_PROPERTIES),
                                                                         "")


def test_x_help_shows_each_key_with_what_it_does(tmp_path):
    status, out, err = run("kafka-cluster", ["cluster-id", "-X", "help"], {"XDG_CONFIG_HOME": str(tmp_path)})
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(CLIENT_PROPERTIES)
    assert all(text in line for line, text in zip(lines, CLIENT_PROPERTIES.values()))


def test_a_profile_refuses_an_unknown_key_too(tmp_path):
    status, _, err = run("kraftsman profile", ["create", "p", "-C", "h:1", "-X", "securty.protocol=SSL"],
                         {"XDG_CONFIG_HOME": str(tmp_path)})
    assert status == 64 and "did you mean security.protocol?" in err
    assert not (tmp_path / "kraftsman" / "config.yaml").exists()
