"""One command surface across the tools: global flags before or after the sub-command mean the same, a usage error
has one exit code whatever --output asks, dump-log speaks YAML too, YAML is never folded at 80 columns, and the
umbrella's --help is rendered as the tools' are."""
from __future__ import annotations

import importlib
import io
import json
import socket

import click
import pytest
import yaml

from kraftsman.cli import app
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.option_order import hoist
from kraftsman.cli.common.output import render, yaml_document
from kraftsman.storage.records.batch import build_batch


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def run(script: str, argv: list[str], cwd: str = ".") -> tuple[int, str, str]:
    module = importlib.import_module(app.by_script(script).module if script != app.UMBRELLA else "kraftsman.cli.main")
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=io.StringIO(), env={}, cwd=cwd)
    return run_command(module.run, list(argv), env, prog=script), out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- global flags on either side of the sub-command

SIDES = [
    ("kafka-cluster", ["cluster-id"], ["-C", "PORT", "--timeout", "2"]),            # Kafka: after the sub-command
    ("kafka-cluster", ["list-endpoints"], ["--bootstrap-controller=PORT", "--output", "json"]),
    ("kafka-metadata-quorum", ["describe", "--status"], ["-C", "PORT", "--timeout", "2"]),   # Kafka: before it
    ("kafka-metadata-quorum", ["describe", "--replication"], ["--bootstrap-controller", "PORT", "--output", "yaml"]),
    ("kafka-features", ["describe"], ["-C", "PORT", "--timeout", "2"]),
    ("kafka-features", ["describe"], ["--bootstrap-server", "PORT", "--output", "json"]),
]


@pytest.mark.parametrize("script, sub, flags", SIDES, ids=[f"{s} {' '.join(f[:1])} {c[0]}" for s, c, f in SIDES])
def test_global_flags_before_or_after_the_sub_command_mean_the_same(script, sub, flags):
    port = closed_port()
    flags = [f.replace("PORT", port) for f in flags]
    before, after = run(script, [*flags, *sub]), run(script, [*sub, *flags])
    assert before == after
    assert before[0] == 69, before     # both reached the (closed) cluster: neither was refused as a bad flag


def _group() -> click.Group:
    @click.group()
    @click.option("-C", "--bootstrap-controller")
    @click.option("--verbose", is_flag=True)
    def root(**_):
        pass

    @root.command()
    @click.option("--status", is_flag=True)
    @click.option("-o", "--output")
    @click.argument("words", nargs=-1)
    def describe(**_):
        pass
    return root


@pytest.mark.parametrize("argv, expected", [
    (["describe", "--status", "-C", "h:1"], ["-C", "h:1", "describe", "--status"]),
    (["-o", "json", "describe"], ["describe", "-o", "json"]),
    (["--output=json", "-C", "h:1", "describe"], ["-C", "h:1", "describe", "--output=json"]),
    (["describe", "--bootstrap-controller=h:1", "w1", "w2"], ["--bootstrap-controller=h:1", "describe", "w1", "w2"]),
    (["describe", "--", "-C", "h:1"], ["describe", "--", "-C", "h:1"]),          # after --: words, not options
    (["describe", "--bogus", "-C", "h:1"], ["-C", "h:1", "describe", "--bogus"]),  # unknown: refused where written
    (["-C", "describe", "describe"], ["-C", "describe", "describe"]),              # a value is not the sub-command
    (["--verbose"], ["--verbose"]),                                                # no sub-command: unchanged
])
def test_hoist_moves_each_option_to_the_side_that_takes_it(argv, expected):
    assert hoist(_group(), argv) == expected


# ---------------------------------------------------------------- one usage exit code whatever --output asks

USAGE = [
    ("kafka-cluster", ["cluster-id", "--bogus", "-b", "h:1"], 1),
    ("kafka-metadata-quorum", ["-C", "h:1", "describe"], 1),
    ("kafka-features", ["-C", "h:1", "disable"], 1),
    ("kafka-storage", ["info"], 1),
    ("kafka-metadata-shell", ["ls"], 1),
    ("kafka-dump-log", ["--files", "x.log", "--bogus"], 1),
]


@pytest.mark.parametrize("script, argv, status", USAGE, ids=[s for s, _, _ in USAGE])
@pytest.mark.parametrize("output", [[], ["--output", "json"], ["--output", "yaml"], ["--output=json"]],
                         ids=["text", "json", "yaml", "json="])
def test_a_usage_error_has_one_exit_code_whatever_the_output(script, argv, status, output):
    if script == "kafka-dump-log" and "json" in "".join(output):
        output = ["--output", "jsonl"]
    assert run(script, [*argv, *output])[0] == status


# ---------------------------------------------------------------- YAML: dump-log, no folding


def test_dump_log_yaml_is_the_jsonl_objects_as_documents(tmp_path):
    (tmp_path / "00000000000000000000.log").write_bytes(build_batch([(b"k", b"v" * 300), (None, b"w")], 0, timestamp=5))
    argv = ["--files", "00000000000000000000.log", "--output"]
    status, jsonl, _ = run("kafka-dump-log", [*argv, "jsonl"], cwd=str(tmp_path))
    status_yaml, text, err = run("kafka-dump-log", [*argv, "yaml"], cwd=str(tmp_path))
    assert (status, status_yaml, err) == (0, 0, "")
    objects = [json.loads(line) for line in jsonl.splitlines()]
    assert list(yaml.safe_load_all(text)) == objects and len(objects) == 5   # file, batch, 2 records, file_end
    assert text.startswith("---\nkind: file\n") and text.count("\n---\n") == 4


def test_yaml_is_never_folded_at_80_columns():
    long = "x " * 120
    assert render({"message": long}, "yaml") == f"message: '{long}'\n"
    assert yaml_document({"message": long}).splitlines()[1] == f"message: '{long}'"


# ---------------------------------------------------------------- the umbrella's help


def test_the_umbrella_help_is_rendered_as_the_tools_are():
    status, umbrella, _ = run("kraftsman", ["--help"])
    _, cluster, _ = run("kafka-cluster", ["--help"])
    assert status == 0
    for text in (umbrella, cluster):
        assert text.startswith("Usage: ") and "\nOptions:\n" in text and "\nCommands:\n" in text
    assert umbrella.startswith("Usage: kraftsman [OPTIONS] COMMAND [ARGS]...\n")
    demo = " ".join(umbrella[umbrella.index("  demo "):umbrella.index("  pipeline ")].split())
    assert demo == "demo Start a 3-controller quorum and brokers on 127.0.0.1, fence one, then show the log they wrote."
    status, out, err = run("kraftsman", [])
    assert (status, out) == (64, "") and err.startswith("Usage: kraftsman")   # no command: a usage error on stderr
