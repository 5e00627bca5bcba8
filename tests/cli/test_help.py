"""`--help` of every command and sub-command lists every flag (and sub-command) of its parser."""
import contextlib
import importlib
import io
import os
import re
import subprocess
import sys

import pytest

from kraftsman.cli import app
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.docs import pages as docs

CASES = [(c, path) for c in docs.commands() for path in docs.command_paths(c) if c.subcommand is not None or not path]


def run_help(command, path, release: str | None = None) -> tuple[int, str]:
    """Run the command's run(path + ['--help']) in-process (speaking for `release`, default 3.9); return
    (status, stdout + stderr)."""
    out = io.StringIO()
    env = Environment(stdout=out, stderr=out, env={"KRAFTSMAN_KAFKA_VERSION": release} if release else {})
    module = importlib.import_module(command.module)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = module.run([*path, "--help"], env)
        except SystemExit as e:
            status = e.code or 0
    return int(status), out.getvalue()


def jopt_tool(name: str) -> bool:
    """Tell whether the console script `name` keeps Kafka's jopt-simple manners (the registry's `jopt`)."""
    from kraftsman.cli.app import by_script

    tool = by_script(name)
    return tool is not None and tool.jopt


def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


@pytest.mark.parametrize("command,path", CASES, ids=[" ".join([c.name, *p]) for c, p in CASES])
def test_help_lists_every_flag(command, path):
    node = next(n for n in docs.model(command, nested=False).walk() if n.path == path)
    status, text = run_help(command, path)
    # Kafka's jopt-simple tools (kafka-dump-log, kafka-topics, ...) print their usage on stderr and exit 1 for
    # --help, as Kafka 3.9's do; every other tool exits 0.
    assert status == (1 if jopt_tool(command.name) else 0), text
    missing = [f for o in node.options for f in o.flags if not mentions(text, f)]
    missing += [s for s in node.subcommands if not mentions(text, s)]
    later = RELEASE_FLAGS.get(command.name, {})
    for flag in [f for f in missing if f in later]:  # a flag of a later Kafka: its table lists it, 3.9's does not
        missing.remove(flag)
        assert mentions(run_help(command, path, later[flag])[1], flag), (command.name, flag, later[flag])
    assert not missing, f"{command.name} {' '.join(path)} --help lacks {missing}:\n{text}"


# flags a tool takes only when speaking for a later Kafka release (and lists only then), by the release that added them
RELEASE_FLAGS = {"kafka-dump-log": {"--share-group-state-decoder": "4.0"}}


def test_storage_format_help_lists_kafkas_flags():
    # Kafka 3.9 kafka-storage.sh format's flags (issue 3 / the reference section 4.1), written by hand.
    kafka = ["-c", "--config", "-t", "--cluster-id", "-g", "--ignore-formatted", "-r", "--release-version", "-f",
             "--feature", "-S", "--add-scram", "-s", "--standalone", "-I", "--initial-controllers", "-N",
             "--no-initial-controllers"]
    storage = next(c for c in docs.commands() if c.name == "kafka-storage")
    _, text = run_help(storage, ("format",))
    assert [f for f in kafka if not mentions(text, f)] == []


def test_kraftsman_help_from_the_console_script():
    result = subprocess.run([sys.executable, "-c", "from kraftsman.cli.main import main; main()", "--help"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for sub in ("storage", "dump-log", "shell", "--version"):
        assert mentions(result.stdout, sub), sub


def _console_script(command) -> list[str]:
    import shutil

    path = shutil.which(command.name)
    return [path] if path else [sys.executable, "-c", f"from {command.module} import main; main()"]


@pytest.mark.parametrize("command", docs.commands(), ids=[c.name for c in docs.commands()])
def test_version_of_every_console_script(command):
    from kraftsman.cli.common.boundary import package_version

    environ = {k: v for k, v in os.environ.items() if k != "KRAFTSMAN_KAFKA_VERSION"}
    result = subprocess.run(_console_script(command) + ["--version"], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL, env=environ)
    assert (result.returncode, result.stderr) == (0, "")
    # every tool names itself (kafka-dump-log too, issue 31), kraftsman's version and the Kafka release it speaks
    # for (KRAFTSMAN_KAFKA_VERSION, 3.9 when unset), but the Kafka admin tools (kafka-topics, ...), which print
    # that release's Kafka version as Kafka's do; the umbrella only the version and the release
    expected = {"kraftsman": f"kraftsman {package_version()}, Kafka 3.9\n"} | {
        tool.script: "3.9.0\n" for tool in app.TOOLS if tool.kafka_version}
    assert result.stdout == expected.get(command.name, f"{command.name} (kraftsman) {package_version()}, Kafka 3.9\n")


@pytest.mark.parametrize("release", ["4.0", "4.1", "4.2"])
def test_version_names_the_release_kraftsman_speaks_for(release):
    from kraftsman.cli import main
    from kraftsman.cli.common.boundary import package_version, run_command
    from kraftsman.cli.dump_log.tool import run as dump_log
    from kraftsman.storage.releases import KAFKA_VERSIONS

    out = io.StringIO()
    env = Environment(stdout=out, stderr=out, env={"KRAFTSMAN_KAFKA_VERSION": release})
    assert main.run(["storage", "--version"], env) == 0 and main.run(["--version"], env) == 0
    assert run_command(dump_log, ["--version"], env, prog="kafka-dump-log") == 0
    assert main.run(["topics", "--version"], env) == 0
    assert out.getvalue() == (f"kafka-storage (kraftsman) {package_version()}, Kafka {release}\n"
                              f"kraftsman {package_version()}, Kafka {release}\n"
                              f"kafka-dump-log (kraftsman) {package_version()}, Kafka {release}\n"
                              f"{KAFKA_VERSIONS[release]}\n")
    bad = io.StringIO()
    env = Environment(stdout=bad, stderr=bad, env={"KRAFTSMAN_KAFKA_VERSION": "5.0"})
    assert run_command(lambda argv, env: 0, ["--version"], env, prog="kafka-storage") == 64
    assert bad.getvalue() == ("kafka-storage: KRAFTSMAN_KAFKA_VERSION: Unknown Kafka release '5.0': kraftsman speaks "
                              "for 3.9, 4.0, 4.1, 4.2\n")


def test_umbrella_subcommand_version():
    from kraftsman.cli import main
    from kraftsman.cli.common.boundary import package_version

    out = io.StringIO()
    assert main.run(["quorum", "--version"], Environment(stdout=out, stderr=out, env={})) == 0
    assert out.getvalue() == f"kafka-metadata-quorum (kraftsman) {package_version()}, Kafka 3.9\n"


@pytest.mark.parametrize("command,path", CASES, ids=[" ".join([c.name, *p]) for c, p in CASES])
def test_help_lists_the_global_flags(command, path):
    """--quiet, --verbose, --debug and --no-color work on every tool, so every --help names them (kafka-dump-log
    keeps Kafka's jopt-simple help, byte for byte)."""
    if command.name == "kafka-dump-log":
        pytest.skip("kafka-dump-log prints Kafka's own help text")
    _, text = run_help(command, path)
    assert all(mentions(text, flag) for flag in ("--quiet", "--verbose", "--debug", "--no-color")), text
