"""cli/common/jopt.py, the layer Kafka's jopt-simple admin tools share, on a small tool of its own: Kafka's option
table (kraftsman's additions apart), no arguments / --help / --version, usage failures, failures in Kafka's forms
(text, json), jopt-simple's parse errors, variables and profiles, --command-config apart from a tool's --config."""
from __future__ import annotations

import io
import json
import re

import pytest
import typer

from kraftsman.cli.common import jopt
from kraftsman.cli.common.environment import Environment

Name = jopt.valued("--name", "A name, required.", "String: name")
Count = jopt.valued("--count", "How many.", "Integer: count")
Config = jopt.valued("--config", "A tool setting; names:\n\tone\n\ttwo\nThe end.", "String: k=v", multiple=True)
Server = jopt.valued("--bootstrap-server", "REQUIRED: the server.", "String: server")
CommandConfig = jopt.valued("--command-config", "Client properties.", "String: file")
Go = jopt.flag("--go", "Do it.")
Stop = jopt.flag("--stop", "Stop it.")

SEEN = {}


def implementation(r: jopt.Run) -> int:
    SEEN["args"] = r.args
    jopt.exactly_one(r, ["go", "stop"], "Command must include exactly one action: --go, --stop")
    if not r.has("name"):
        raise jopt.missing_argument("name")
    if r.has("stop") and r.has("count"):
        raise jopt.cannot_combine("count", "stop")
    count = 1 if r.args.count is None else jopt.java_int(r.args.count, "count")
    if r.args.name == "boom":
        raise jopt.KafkaError("it broke", cause=jopt.KafkaError("underneath", "java.io.IOException"))
    if r.args.name == "server":
        raise jopt.KafkaError("Topic 'x' already exists.", "org.apache.kafka.common.errors.TopicExistsException",
                              traced=False)
    r.emit(f"done {r.args.name} x{count}", name=r.args.name, count=count)
    return 0


TOOL = jopt.Tool("kafka-toy", "This tool helps to test the layer.",
                 form=jopt.logged("Error while executing toy command : ", "org.apache.kafka.tools.ToyCommand"),
                 no_args="Test the layer.")
app = jopt.app(TOOL.prog)


@app.command(help=TOOL.help, context_settings=jopt.SETTINGS)
def toy(ctx: typer.Context, bootstrap_server: Server = None, command_config: CommandConfig = None,
        config: Config = None, count: Count = None, go: Go = False, show_help: jopt.HelpFlag = False,
        name: Name = None, stop: Stop = False, show_version: jopt.VersionFlag = False,
        output: jopt.Output = "text", timeout: jopt.Timeout = None, profile: jopt.Profile = None,
        client_property: jopt.ClientProperty = None) -> int:
    return jopt.run(ctx, locals(), implementation, TOOL)


def toy_run(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = jopt.run_tool(app, list(argv), Environment(stdout=out, stderr=err, env=env or {}), TOOL, "toy")
    return status, out.getvalue(), err.getvalue()


def table() -> str:
    from kraftsman.cli.common.typer_app import click_command

    return jopt.table(click_command(app, "toy"))


def test_the_table_is_kafkas_options_only_with_tabs_kept():
    lines = table().split("\n")
    assert lines[0].startswith("Option") and lines[1].startswith("------")
    flags = [line.split()[0] for line in lines[2:] if line.startswith("--")]
    assert flags == ["--bootstrap-server", "--command-config", "--config", "--count", "--go", "--help", "--name",
                     "--stop", "--version"]                   # sorted, kraftsman's --output & co. left out
    assert any(line.strip(" ") == "\tone" for line in (row[row.index("\t"):] for row in lines if "\t" in row))


def test_no_arguments_help_and_version():
    assert toy_run() == (1, "", f"Test the layer.\n{table()}\n")
    status, out, err = toy_run("--help")
    assert (status, out) == (1, "") and err.startswith(f"This tool helps to test the layer.\n{table()}\n\n")
    assert all(f in err for f in ("--output", "--timeout", "--profile", "--client-property", "--quiet"))
    assert toy_run("--version") == (0, "3.9.0\n", "")


def test_usage_failures_in_text_and_json():
    assert toy_run("--go", "--stop") == (1, "", f"Command must include exactly one action: --go, --stop\n{table()}\n")
    assert toy_run("--go")[2].startswith('Missing required argument "[name]"\nOption ')
    assert toy_run("--stop", "--name", "a", "--count", "2")[2].startswith(
        'Option "[count]" can\'t be used with option "[stop]"\n')
    status, out, err = toy_run("--go", "--output", "json")
    assert (status, json.loads(out), err) == (1, {"command": "kafka-toy", "status": 1,
                                                   "error": 'Missing required argument "[name]"'}, "")


def test_failures_in_the_tools_form_with_java_traces():
    status, out, err = toy_run("--go", "--name", "a", "--count", "x")
    assert (status, out) == (1, "Error while executing toy command : Cannot parse argument 'x' of option count\n")
    assert re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ERROR joptsimple.OptionArgumentConversionException: "
                    r"Cannot parse argument 'x' of option count\n\tat kraftsman\.cli\.common\.jopt\.java_int\(jopt\.py:"
                    r"\d+\)\n", err)
    assert err.endswith("\n (org.apache.kafka.tools.ToyCommand)\n")
    status, out, err = toy_run("--go", "--name", "server")
    assert err.endswith("] ERROR org.apache.kafka.common.errors.TopicExistsException: Topic 'x' already exists.\n"
                        " (org.apache.kafka.tools.ToyCommand)\n")          # a server's error: no frames
    status, out, err = toy_run("--go", "--name", "boom")
    assert "\nCaused by: java.io.IOException: underneath\n\tat " in err
    status, out, _ = toy_run("--go", "--name", "boom", "--output", "yaml")
    assert status == 1 and "error: it broke" in out


def test_the_other_forms():
    class Fake:
        def __init__(self):
            self.env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={})
    error = jopt.KafkaError("Missing required option(s): election-type", jopt.COMMAND_FAILED)
    try:
        raise error
    except jopt.KafkaError:
        pass
    for form, stream, expected in ((jopt.uncaught, "stderr", "Missing required option(s): election-type\n"
                                                            f"{jopt.COMMAND_FAILED}: Missing required option(s)"),
                                   (jopt.thread, "stderr", f'Exception in thread "main" {jopt.COMMAND_FAILED}: '),
                                   (jopt.stdout_error, "stdout", "Error: Missing required option(s): election-type\n"
                                                                 f"{jopt.COMMAND_FAILED}: ")):
        fake = Fake()
        form(fake, error)
        text = getattr(fake.env, stream).getvalue()
        assert text.startswith(expected) and "\n\tat " in text, (form, text)


def test_jopt_simple_parse_errors_read_as_kafkas():
    status, out, err = toy_run("--bogus")
    assert (status, out) == (1, "") and err.startswith("bogus is not a recognized option\n"
                                                       "joptsimple.UnrecognizedOptionException: bogus is not a "
                                                       "recognized option\n\tat ")
    assert toy_run("--go", "--name")[2].startswith("Option name requires an argument\n")
    assert toy_run("--go", "--name", "a", "extra", "words")[:2] == (0, "done a x1\n")   # jopt collects them
    assert toy_run("--bogus", "--output", "json")[0] == 1      # one code for a bad command line


def test_variables_profiles_and_the_two_configs(tmp_path):
    env = {"KRAFTSMAN_TOY_NAME": "from-variable", "XDG_CONFIG_HOME": str(tmp_path)}
    assert toy_run("--go", env=env)[:2] == (0, "done from-variable x1\n")
    assert toy_run("--go", "--name", "flag", env=env)[1] == "done flag x1\n"
    (tmp_path / "kraftsman").mkdir()
    (tmp_path / "kraftsman" / "config.yaml").write_text(
        "current-profile: p\nprofiles:\n  p:\n    bootstrap-server: h:9092\n    client-config: /c.properties\n"
        "    client: {client.id: x}\n    output: json\n")
    status, out, _ = toy_run("--go", "--name", "a", "--config", "k=v", "-X", "request.timeout.ms=5", env=env)
    args = SEEN["args"]
    assert (status, json.loads(out)) == (0, {"command": "kafka-toy", "status": 0, "name": "a", "count": 1})
    assert (args.bootstrap_server, args.command_config, args.config) == ("h:9092", "/c.properties", ["k=v"])
    assert args.client == {"client.id": "x", "request.timeout.ms": "5"}


def test_java_strings():
    assert jopt.java_int("+7", "x") == 7 and jopt.java_split("a,,b,,") == ["a", "", "b"]
    for bad in ("3.5", "2147483648", " 1", ""):
        with pytest.raises(jopt.KafkaError, match=f"Cannot parse argument '{re.escape(bad)}' of option x"):
            jopt.java_int(bad, "x")
