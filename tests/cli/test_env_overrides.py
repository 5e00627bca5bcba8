"""Environment overrides: KRAFTSMAN_<TOOL>_<FLAG> for every flag (flag > environment > default), read by every
typer tool through click (common/typer_app.py), and the KAFKA_* container conventions for server properties
(opt-in)."""
from __future__ import annotations

import io
from typing import Annotated, Literal, Optional

import pytest
import typer

from kraftsman.cli.common.env_overrides import (
    kafka_environment_properties,
    property_name,
    variable_name,
    with_kafka_environment,
)
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.status import ExitStatus, ToolError
from kraftsman.cli.common.typer_app import run_app

toy = typer.Typer(add_completion=False)


@toy.command("format")
def _format(ctx: typer.Context, config: Annotated[str, typer.Option("--config", "-c")],
            cluster_id: Annotated[Optional[str], typer.Option("--cluster-id", "-t")] = None,
            ignore_formatted: Annotated[bool, typer.Option("--ignore-formatted", "-g")] = False,
            feature: Annotated[Optional[list[str]], typer.Option("--feature", "-f")] = None,
            count: Annotated[int, typer.Option("--count")] = 1,
            output: Annotated[Literal["text", "json"], typer.Option("--output")] = "text") -> int:
    ctx.find_root().obj.seen = dict(config=config, cluster_id=cluster_id, ignore_formatted=ignore_formatted,
                                    feature=feature, count=count, output=output)
    return 0


@toy.command("other")
def _other() -> int:
    return 0


def _parse(argv, environ) -> dict:
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env=dict(environ))
    status = run_app(toy, argv, env, prog="t", tool_env_name="storage")
    assert status == 0, env.stderr.getvalue()
    return env.seen


def test_variable_names_carry_the_tool_and_the_long_flag():
    assert variable_name("storage", "--cluster-id") == "KRAFTSMAN_STORAGE_CLUSTER_ID"
    assert variable_name("dump_log", "--files") == "KRAFTSMAN_DUMP_LOG_FILES"


def test_environment_fills_flags_the_command_line_leaves_out_even_required_ones():
    seen = _parse(["format"], {"KRAFTSMAN_STORAGE_CONFIG": "/etc/kafka/server.properties",
                               "KRAFTSMAN_STORAGE_CLUSTER_ID": "abc", "KRAFTSMAN_STORAGE_IGNORE_FORMATTED": "yes",
                               "KRAFTSMAN_STORAGE_COUNT": "3", "KRAFTSMAN_STORAGE_OUTPUT": "json",
                               "KRAFTSMAN_STORAGE_FEATURE": "a=1\nb=2\n"})
    assert (seen["config"], seen["cluster_id"], seen["ignore_formatted"], seen["count"], seen["output"]) == \
        ("/etc/kafka/server.properties", "abc", True, 3, "json")
    assert seen["feature"] == ["a=1", "b=2"]


def test_the_command_line_wins_over_the_environment():
    seen = _parse(["format", "-c", "mine.properties", "--output=text"],
                  {"KRAFTSMAN_STORAGE_CONFIG": "env.properties", "KRAFTSMAN_STORAGE_OUTPUT": "json"})
    assert (seen["config"], seen["output"]) == ("mine.properties", "text")


def test_other_tools_variables_and_unset_flags_change_nothing():
    seen = _parse(["format", "-c", "x"], {"KRAFTSMAN_CLUSTER_CONFIG": "other", "KAFKA_NODE_ID": "3"})
    assert (seen["config"], seen["cluster_id"], seen["ignore_formatted"], seen["output"]) == \
        ("x", None, False, "text")


@pytest.mark.parametrize("name,value,message", [
    ("KRAFTSMAN_STORAGE_COUNT", "three", "KRAFTSMAN_STORAGE_COUNT: invalid int value: 'three'"),
    ("KRAFTSMAN_STORAGE_OUTPUT", "yaml", "KRAFTSMAN_STORAGE_OUTPUT: invalid choice: 'yaml'"),
    ("KRAFTSMAN_STORAGE_IGNORE_FORMATTED", "maybe", "KRAFTSMAN_STORAGE_IGNORE_FORMATTED: "),
])
def test_bad_values_are_usage_errors_naming_the_variable(name, value, message):
    with pytest.raises(ToolError) as e:
        _parse(["format", "-c", "x"], {name: value})
    assert e.value.status == ExitStatus.USAGE and e.value.message.startswith(message)


@pytest.mark.parametrize("suffix,apache,confluent", [
    ("NODE_ID", "node.id", "node.id"), ("PROCESS_ROLES", "process.roles", "process.roles"),
    ("LISTENER_SECURITY_PROTOCOL_MAP", "listener.security.protocol.map", "listener.security.protocol.map"),
    ("LISTENER_NAME_CONTROLLER_SSL_KEYSTORE_LOCATION", "listener.name.controller.ssl.keystore.location",
     "listener.name.controller.ssl.keystore.location"),
    ("ABC___DEF", "abc-def", "abc_def"), ("ABC__DEF", "abc_def", "abc-def"), ("ABC_DEF", "abc.def", "abc.def"),
    ("CONFLUENT_SUPPORT___METRICS", "confluent.support-metrics", "confluent.support_metrics"),
    ("SOME__DASHED_KEY", "some_dashed.key", "some-dashed.key"),
    ("LISTENER_NAME_SASL__SSL_SCRAM___SHA___256_SASL_JAAS_CONFIG",
     "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", "listener.name.sasl-ssl.scram_sha_256.sasl.jaas.config"),
])
def test_container_conventions_name_properties(suffix, apache, confluent):
    """apache/kafka's image: . is _, _ is __, - is ___; Confluent's: . is _, - is __, _ is ___."""
    assert property_name(suffix) == property_name(suffix, "apache") == apache
    assert property_name(suffix, "confluent") == confluent


@pytest.mark.parametrize("switch,expected", [("1", "abc-def"), ("apache", "abc-def"), ("APACHE", "abc-def"),
                                             ("true", "abc-def"), ("confluent", "abc_def"), ("0", None), ("", None)])
def test_kraftsman_kafka_env_chooses_the_convention(switch, expected):
    found = kafka_environment_properties({"KAFKA_ABC___DEF": "v", "KRAFTSMAN_KAFKA_ENV": switch})
    assert found == ({} if expected is None else {expected: "v"})


def test_an_unknown_convention_is_a_usage_error():
    with pytest.raises(ToolError) as e:
        kafka_environment_properties({"KRAFTSMAN_KAFKA_ENV": "bitnami"})
    assert e.value.status == ExitStatus.USAGE and "KRAFTSMAN_KAFKA_ENV" in e.value.message


def test_kafka_variables_apply_only_when_enabled_and_never_the_scripts_own():
    environ = {"KAFKA_NODE_ID": "7", "KAFKA_LOG_DIRS": "/data", "KAFKA_HEAP_OPTS": "-Xmx1G", "KAFKA_OPTS": "-x"}
    assert kafka_environment_properties(environ) == {}
    enabled = environ | {"KRAFTSMAN_KAFKA_ENV": "1"}
    assert kafka_environment_properties(enabled) == {"node.id": "7", "log.dirs": "/data"}
    merged = with_kafka_environment({"node.id": "1", "process.roles": "controller"}, enabled)
    assert merged == {"node.id": "7", "process.roles": "controller", "log.dirs": "/data"}


# ---------------------------------------------------------------- the tools read them


def _env(tmp_path, **variables):
    import io

    from kraftsman.cli.common.environment import Environment

    return Environment(stdout=io.StringIO(), stderr=io.StringIO(), cwd=str(tmp_path), env=dict(variables))


def _config(tmp_path, node_id=1):
    path = tmp_path / "server.properties"
    path.write_text(f"process.roles=controller\nnode.id={node_id}\ncontroller.quorum.voters=1@127.0.0.1:9093\n"
                    f"listeners=CONTROLLER://127.0.0.1:9093\ncontroller.listener.names=CONTROLLER\n"
                    f"log.dirs={tmp_path / 'meta'}\n")
    return path


def test_kafka_storage_format_takes_its_flags_from_the_environment(tmp_path):
    from kraftsman.cli.storage.tool import run

    env = _env(tmp_path, KRAFTSMAN_STORAGE_CONFIG=str(_config(tmp_path)),
               KRAFTSMAN_STORAGE_CLUSTER_ID="MkU3OEVBNTcwNTJENDM2Qg", KRAFTSMAN_STORAGE_OUTPUT="json")
    assert run(["format"], env) == 0, env.stderr.getvalue()
    import json

    (directory,) = json.loads(env.stdout.getvalue())["directories"]        # --output json from the environment
    assert (directory["state"], directory["cluster_id"]) == ("formatted_now", "MkU3OEVBNTcwNTJENDM2Qg")
    assert "cluster.id=MkU3OEVBNTcwNTJENDM2Qg" in (tmp_path / "meta" / "meta.properties").read_text()
    again = _env(tmp_path, KRAFTSMAN_STORAGE_CONFIG=str(_config(tmp_path)),
                 KRAFTSMAN_STORAGE_CLUSTER_ID="MkU3OEVBNTcwNTJENDM2Qg", KRAFTSMAN_STORAGE_IGNORE_FORMATTED="true")
    assert run(["format"], again) == 0, again.stderr.getvalue()   # -g from the environment


def test_kafka_variables_override_the_server_properties_only_when_enabled(tmp_path):
    from kraftsman.cli.storage.tool import run

    config = str(_config(tmp_path, node_id=1))
    plain = _env(tmp_path, KAFKA_NODE_ID="5")
    assert run(["format", "-c", config, "-t", "MkU3OEVBNTcwNTJENDM2Qg"], plain) == 0, plain.stderr.getvalue()
    assert "node.id=1" in (tmp_path / "meta" / "meta.properties").read_text()
    (tmp_path / "meta").rename(tmp_path / "meta-1")
    enabled = _env(tmp_path, KAFKA_NODE_ID="5", KAFKA_CONTROLLER_QUORUM_VOTERS="5@127.0.0.1:9093",
                   KRAFTSMAN_KAFKA_ENV="1")
    assert run(["format", "-c", config, "-t", "MkU3OEVBNTcwNTJENDM2Qg"], enabled) == 0, enabled.stderr.getvalue()
    assert "node.id=5" in (tmp_path / "meta" / "meta.properties").read_text()


def test_kafka_dump_log_and_a_bad_variable(tmp_path):
    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.dump_log.tool import run
    from kraftsman.cli.storage.tool import run as storage

    assert storage(["format", "-c", str(_config(tmp_path)), "-t", "MkU3OEVBNTcwNTJENDM2Qg"], _env(tmp_path)) == 0
    bootstrap = str(tmp_path / "meta" / "bootstrap.checkpoint")
    env = _env(tmp_path, KRAFTSMAN_DUMP_LOG_FILES=bootstrap, KRAFTSMAN_DUMP_LOG_CLUSTER_METADATA_DECODER="1")
    assert run(["--skip-record-metadata"], env) == 0, env.stderr.getvalue()
    assert f"Dumping {bootstrap}" in env.stdout.getvalue() and "FEATURE_LEVEL_RECORD" in env.stdout.getvalue()
    bad = _env(tmp_path, KRAFTSMAN_DUMP_LOG_MAX_MESSAGE_SIZE="lots")
    assert run_command(run, ["--files", bootstrap], bad, prog="kafka-dump-log") == ExitStatus.USAGE
    assert bad.stderr.getvalue().count("\n") == 1 and "KRAFTSMAN_DUMP_LOG_MAX_MESSAGE_SIZE" in bad.stderr.getvalue()


@pytest.mark.parametrize("script,variable,argv", [
    ("kafka-storage", "KRAFTSMAN_STORAGE_OUTPUT", ["info", "-c", "x.properties"]),
    ("kafka-cluster", "KRAFTSMAN_CLUSTER_OUTPUT", ["cluster-id", "-b", "127.0.0.1:1"]),
    ("kafka-dump-log", "KRAFTSMAN_DUMP_LOG_MAX_MESSAGE_SIZE", ["--files", "x.log"]),
    ("kafka-metadata-shell", "KRAFTSMAN_SHELL_OFFSET", ["--snapshot", "x.checkpoint", "ls"]),
    ("kafka-controller", "KRAFTSMAN_CONTROLLER_LOG_LEVEL", ["--config", "x.properties"]),
    ("kafka-metadata-quorum", "KRAFTSMAN_QUORUM_OUTPUT", ["--bootstrap-server", "127.0.0.1:1", "describe",
                                                         "--status"]),
    ("kafka-metadata-export", "KRAFTSMAN_PIPELINE_FORMAT", ["-o", "out", "x.log"]),
    ("kraftsman-demo", "KRAFTSMAN_DEMO_VOTERS", []),
])
def test_every_console_script_reads_its_variables(tmp_path, script, variable, argv):
    """A bad value in the tool's variable is refused before anything runs: the tool read it."""
    import importlib

    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.common.env_overrides import TOOLS
    from kraftsman.cli.docs import pages as docs

    assert variable.startswith(f"KRAFTSMAN_{TOOLS[script].upper()}_")
    module = importlib.import_module(next(c.module for c in docs.commands() if c.name == script))
    env = _env(tmp_path, **{variable: "not-a-valid-value"})
    assert run_command(module.run, argv, env, prog=script) == ExitStatus.USAGE
    assert variable in env.stderr.getvalue() and env.stderr.getvalue().count("\n") == 1
    assert set(TOOLS) == {c.name for c in docs.commands()} - {"kraftsman"}


def test_no_color_flag_and_variable(tmp_path, monkeypatch):
    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.dump_log.session import rich_console

    monkeypatch.delenv("NO_COLOR", raising=False)
    seen = {}

    def tool(argv, env):
        seen.update(argv=argv, color=env.color, console=rich_console(env).no_color)
        return 0

    class Terminal:
        def __init__(self):
            import io
            self.buffer = io.StringIO()

        def isatty(self):
            return True

        def write(self, text):
            return self.buffer.write(text)

        def flush(self):
            pass

    env = _env(tmp_path)
    env.stderr = Terminal()
    assert run_command(tool, ["x"], env) == 0 and seen == {"argv": ["x"], "color": True, "console": False}
    assert run_command(tool, ["--no-color", "x"], env) == 0
    assert seen == {"argv": ["x"], "color": False, "console": True}
    import os
    assert os.environ["NO_COLOR"] == "1"                         # prompt-toolkit and rich read the process's
    piped = _env(tmp_path)
    assert run_command(tool, ["x"], piped) == 0 and seen["color"] is False   # never colour into a pipe


def test_quiet_and_verbose(tmp_path, monkeypatch):
    """--quiet leaves stdout empty (the exit code tells); --verbose traces each request a client sends."""
    from kraftsman.cli.cluster import tool as cluster_tool
    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.storage.tool import run as storage
    from kraftsman.controller.client import sync_client

    from ..controller.server.sync_fakes import FakeServer
    from .cluster.test_tool import RANGES, describe_handler

    config = str(_config(tmp_path))
    env = _env(tmp_path)
    out = env.stdout
    assert run_command(storage, ["format", "-c", config, "-t", "MkU3OEVBNTcwNTJENDM2Qg", "--quiet"], env) == 0
    assert (out.getvalue(), env.stderr.getvalue()) == ("", "")
    assert (tmp_path / "meta" / "meta.properties").exists()
    monkeypatch.setattr(sync_client, "TRACE", None)
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        env = _env(tmp_path)
        status = run_command(cluster_tool.run, ["cluster-id", "-b", server.address, "--verbose"], env,
                             prog="kafka-cluster")
    assert status == 0 and env.stdout.getvalue() == "Cluster ID: abcdefghijklmnopqrstuv\n"
    lines = env.stderr.getvalue().splitlines()
    assert lines[0] == f"kafka-cluster: connected to {server.address} (PLAINTEXT)"
    assert any(line.startswith(f"kafka-cluster: DescribeCluster v1 to {server.address} (correlation id ")
               and " bytes back in " in line for line in lines), lines


@pytest.mark.parametrize("script,variable,argv", [
    ("kafka-cluster", "KRAFTSMAN_CLUSTER_BOOTSTRAP_CONTROLLER", ["cluster-id"]),
    ("kafka-cluster", "KRAFTSMAN_CLUSTER_BOOTSTRAP_SERVER", ["unregister", "--id", "1"]),
    ("kafka-metadata-quorum", "KRAFTSMAN_QUORUM_BOOTSTRAP_CONTROLLER", ["describe", "--status"]),
    ("kafka-features", "KRAFTSMAN_FEATURES_BOOTSTRAP_SERVER", ["describe"]),
])
def test_a_variable_answers_a_required_group(tmp_path, script, variable, argv):
    """--bootstrap-server | --bootstrap-controller is required; its variable satisfies it (the tool goes on to
    connect, and a closed port is then 'cannot reach', exit 69, not a usage error)."""
    import importlib
    import socket

    from kraftsman.cli import app
    from kraftsman.cli.common.boundary import run_command

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env(tmp_path, **{variable: f"127.0.0.1:{port}"})
    module = importlib.import_module(app.by_script(script).module)
    status = run_command(module.run, [*argv, "--timeout", "1"], env, prog=script)
    assert status == ExitStatus.UNAVAILABLE, env.stderr.getvalue()
    assert "required" not in env.stderr.getvalue()


def test_a_repeatable_flag_takes_one_value_a_line_with_spaces_kept(tmp_path):
    """KRAFTSMAN_STORAGE_ADD_SCRAM holds one SCRAM spec a line; a password with a space stays whole."""
    from kraftsman.cli.storage.tool import run

    config = str(_config(tmp_path, node_id=1))
    specs = "SCRAM-SHA-256=[name=alice,password=two words]\nSCRAM-SHA-512=[name=bob,password=x]\n"
    env = _env(tmp_path, KRAFTSMAN_STORAGE_ADD_SCRAM=specs)
    assert run(["format", "-c", config, "-t", "MkU3OEVBNTcwNTJENDM2Qg"], env) == 0, env.stderr.getvalue()
    from kraftsman.controller.image.loader import load

    image = load(str(tmp_path / "meta" / "bootstrap.checkpoint")).image
    assert set(image.scram.users(1)) == {"alice"} and set(image.scram.users(2)) == {"bob"}
