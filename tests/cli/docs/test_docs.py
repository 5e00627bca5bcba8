"""Man pages and completions: current with the tools' definitions, complete, rendering cleanly, and actually
completing (the scripts ask the tools, so every flag of the definition completes)."""
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.docs import man as docs_man
from kraftsman.cli.docs import pages as docs
from kraftsman.storage.releases import RELEASES

from ..completion.test_complete import candidates, tool_programs

NEWEST_RELEASE = RELEASES[-1]

REPO = Path(__file__).resolve().parents[3]
COMMANDS = docs.commands()
NAMES = [c.name for c in COMMANDS]
# Kafka 3.9 kafka-storage.sh: sub-commands and flags (issue 3 / the reference section 4.1), written by hand.
KAFKA_STORAGE_COMMANDS = {"info", "format", "random-uuid", "version-mapping", "feature-dependencies"}
KAFKA_FORMAT_FLAGS = {"-c", "--config", "-t", "--cluster-id", "-g", "--ignore-formatted", "-r", "--release-version",
                      "-f", "--feature", "-S", "--add-scram", "-s", "--standalone", "-I", "--initial-controllers",
                      "-N", "--no-initial-controllers"}


def unroff(text: str) -> str:
    return text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "").replace("\\&", "")


def test_generated_files_are_current():
    stale = docs.stale_files()
    assert not stale, f"run `python -m kraftsman.cli.docs.pages --write`; stale: {stale}"


def test_a_new_flag_makes_the_files_stale(monkeypatch):
    import click

    from kraftsman.cli.common.typer_app import click_command
    from kraftsman.cli.storage import tool as storage_tool

    fmt = click_command(storage_tool.app, "storage").commands["format"]
    monkeypatch.setattr(fmt, "params", fmt.params + [click.Option(["--brand-new-flag"],
                                                                  help="added without regenerating")])
    assert docs.stale_files() == ["man/kafka-storage.1"]        # the scripts ask the tool: nothing to regenerate
    assert "--brand-new-flag" in candidates("kafka-storage format --brand")


def test_registry_covers_every_console_script():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(NAMES) == set(scripts)
    for command in COMMANDS:
        assert scripts[command.name].split(":")[0] == command.module


@pytest.mark.parametrize("name", NAMES)
def test_every_flag_and_subcommand_is_documented_and_completed(name):
    command = next(c for c in COMMANDS if c.name == name)
    man = unroff((REPO / f"man/{name}.1").read_text())
    scripts = [(REPO / p).read_text() for p in (f"completions/{name}.bash", f"completions/_{name}",
                                                 f"completions/{name}.fish")]
    for node in docs.model(command, nested=False).walk():
        for option in node.options:
            for flag in option.flags:
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", man), (name, node.path, flag)
        for sub in node.subcommands:
            assert re.search(rf"(?<![\w-]){re.escape(sub)}(?![\w-])", man), (name, sub)
    assert all(f"_{name.replace('-', '_').upper()}_COMPLETE" in s for s in scripts), name
    for node in docs.model(command).walk():
        line = " ".join([name, *node.path, "-"])     # a flag of a later release is offered when that one is spoken
        offered = set(candidates(line)) | set(candidates(line, {"KRAFTSMAN_KAFKA_VERSION": NEWEST_RELEASE}))
        assert {f for option in node.options for f in option.flags} <= offered, (name, node.path)
        if node.subcommands:
            assert set(node.subcommands) <= set(candidates(" ".join([name, *node.path, ""]))), (name, node.path)


def test_kafka_storage_documents_kafkas_flags():
    man = unroff((REPO / "man/kafka-storage.1").read_text())
    for word in KAFKA_STORAGE_COMMANDS | KAFKA_FORMAT_FLAGS:
        assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", man), word


def readme_exit_codes() -> dict[int, str]:
    text = (REPO / "README.md").read_text().split("## Exit codes", 1)[1]
    return {int(code): meaning.strip() for code, meaning in re.findall(r"^\| (\d+) \|(.*)\|$", text, re.M)}


@pytest.mark.parametrize("name", NAMES)
def test_man_page_sections_and_exit_status(name):
    text = (REPO / f"man/{name}.1").read_text()
    sections = re.findall(r"^\.SH (.+)$", text, re.M)
    for required in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "EXAMPLES",
                     "SEE ALSO"):
        assert required in sections, (name, required)
    exit_part = unroff(text.split(".SH EXIT STATUS", 1)[1].split(".SH", 1)[0])
    codes = readme_exit_codes()
    for status in ExitStatus:
        assert f"\n{status.value}\n" in exit_part
        assert codes[status.value].replace("`", "") in " ".join(exit_part.split())


def test_environment_variables_in_man_pages_are_read_by_the_code():
    sources = "".join(p.read_text() for folder in ("cli", "storage", "shell", "controller")
                      for p in (REPO / folder).rglob("*.py") if not p.name.startswith("docs"))
    for name in NAMES:
        for var in re.findall(r"^\\fB([A-Z_]+)\\fR$", (REPO / f"man/{name}.1").read_text(), re.M):
            assert f'"{var}"' in sources, (name, var)


@pytest.mark.parametrize("name,caption,example", [(n, c, e) for n, items in docs_man.EXAMPLES.items()
                                                  for c, e in items])
def test_examples_parse_with_the_real_parsers(name, caption, example):
    words = shlex.split(example)
    command = next(c for c in COMMANDS if c.name == words[0])
    args = words[1:]
    if command.subcommand is None and args[0] in {c.subcommand for c in COMMANDS}:
        command = next(c for c in COMMANDS if c.subcommand == args[0])
        args = args[1:]
    docs.parse_example(command, args)


@pytest.mark.parametrize("name", NAMES)
def test_man_pages_render_without_warnings(name, tmp_path):
    page = REPO / f"man/{name}.1"
    if shutil.which("man"):
        result = subprocess.run(["man", "--warnings=all", "-l", str(page)], capture_output=True, text=True,
                                env={"MANWIDTH": "80", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin",
                                     "MANPAGER": "cat", "PAGER": "cat"}, timeout=20)
        assert result.returncode == 0 and "NAME" in result.stdout
    elif shutil.which("groff"):
        result = subprocess.run(["groff", "-z", "-w", "all", "-man", str(page)], capture_output=True, text=True,
                                timeout=20)
    else:
        pytest.skip("neither man nor groff is installed")
    assert result.stderr == "", result.stderr


def bash_complete(script: str, words: list[str], cwd: Path, programs: Path) -> list[str]:
    function = re.search(r"^complete .*-F (\S+) ", (REPO / script).read_text(), re.M)[1]
    code = (f"source {shlex.quote(str(REPO / script))}; COMP_WORDS=({' '.join(map(shlex.quote, words))}); "
            f"COMP_CWORD={len(words) - 1}; {function} {words[0]}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    env = dict(os.environ, PATH=f"{programs}:{os.environ.get('PATH', '')}")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True,
                            cwd=cwd, timeout=20, env=env)
    assert result.returncode == 0, result.stderr
    return [w for w in result.stdout.split("\n") if w]


BASH_CASES = [
    ("kafka-storage", ["kafka-storage", ""], KAFKA_STORAGE_COMMANDS),
    ("kafka-storage", ["kafka-storage", "format", "-"], KAFKA_FORMAT_FLAGS | {"-h", "--help", "--output"}),
    ("kafka-storage", ["kafka-storage", "info", "--output", ""], {"text", "json", "yaml"}),
    ("kafka-storage", ["kafka-storage", "format", "--output", "j"], {"json"}),
    ("kafka-storage", ["kafka-storage", "format", "-t", ""], set()),
    ("kafka-storage", ["kafka-storage", "-c", "x", "ra"], {"random-uuid"}),
    ("kafka-dump-log", ["kafka-dump-log", "--output", ""], {"text", "jsonl", "yaml"}),
    ("kafka-dump-log", ["kafka-dump-log", "--cluster"], {"--cluster-metadata-decoder"}),
    ("kraftsman", ["kraftsman", "st"], {"storage"}),
    ("kraftsman", ["kraftsman", "storage", "format", "--output", ""], {"text", "json", "yaml"}),
    ("kraftsman", ["kraftsman", "dump-log", "--output", ""], {"text", "jsonl", "yaml"}),
    ("kraftsman", ["kraftsman", "storage", ""], KAFKA_STORAGE_COMMANDS),
]


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Path:
    return tool_programs(tmp_path_factory.mktemp("programs"))


@pytest.mark.parametrize("name,words,expected", BASH_CASES)
def test_bash_completion_completes(name, words, expected, tmp_path, programs):
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    assert set(bash_complete(f"completions/{name}.bash", words, tmp_path, programs)) == expected


FILE_CASES = [("kafka-storage format -c serv", "<file>"), ("kafka-dump-log --files 0000", "<file>"),
              ("kafka-metadata-shell --snapshot 0", "<file>"), ("kafka-metadata-shell --directory ", "<dir>"),
              ("kraftsman dump-log --files x", "<file>"), ("kafka-metadata-quorum --command-config a", "<file>")]


@pytest.mark.parametrize("line,kind", FILE_CASES)
def test_file_and_folder_flags_complete_paths(line, kind):
    """A file or folder flag answers click's 'file'/'dir': the script lets the shell list the paths."""
    assert candidates(line) == [kind]


@pytest.mark.parametrize("name", NAMES)
def test_zsh_scripts_parse(name):
    if not shutil.which("zsh"):
        pytest.skip("zsh is not installed")
    result = subprocess.run(["zsh", "-n", str(REPO / f"completions/_{name}")], capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 0, result.stderr
    assert (REPO / f"completions/_{name}").read_text().startswith(f"#compdef {name}\n")


@pytest.mark.parametrize("name", NAMES)
def test_fish_scripts_parse(name):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    result = subprocess.run(["fish", "-n", str(REPO / f"completions/{name}.fish")], capture_output=True,
                            text=True, timeout=20)
    assert result.returncode == 0, result.stderr


def test_fish_completes_sub_commands_and_choices():
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    script = REPO / "completions/kafka-storage.fish"
    code = (f"source {shlex.quote(str(script))}; complete -C 'kafka-storage '; echo ---; "
            "complete -C 'kafka-storage info --output '")
    result = subprocess.run(["fish", "--no-config", "-c", code], capture_output=True, text=True, timeout=20)
    subs, choices = result.stdout.split("---\n")
    assert {line.split("\t")[0] for line in subs.splitlines()} == KAFKA_STORAGE_COMMANDS
    assert {line.split("\t")[0] for line in choices.splitlines()} == {"text", "json", "yaml"}


def test_every_man_page_has_examples():
    """An EXAMPLES section with at least one example on every page (three pages had an empty one)."""
    assert sorted(docs_man.EXAMPLES) == sorted(NAMES)
    for name in NAMES:
        text = unroff((REPO / f"man/{name}.1").read_text().split(".SH EXAMPLES", 1)[1].split(".SH", 1)[0])
        assert docs_man.EXAMPLES[name] and all(example in " ".join(text.split()) for _, example in
                                               docs_man.EXAMPLES[name]), name
