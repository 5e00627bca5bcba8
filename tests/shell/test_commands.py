"""Table tests of the shell commands: Kafka's messages, layouts, globs and errors."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.shell.printer import format_ls
from kraftsman.shell.runner import run_line
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion


def _image():
    delta = MetadataDelta()
    for i, name in enumerate(["foo", "bar", "foo.1"]):
        topic_id = Uuid(bytes([i + 1]) * 16)
        delta.replay(ApiMessageAndVersion(codec.message_class("TopicRecord")(name=name, topic_id=topic_id), 0))
        delta.replay(ApiMessageAndVersion(codec.message_class("PartitionRecord")(
            partition_id=0, topic_id=topic_id, replicas=[1], isr=[1], leader=1), 0))
    delta.replay(ApiMessageAndVersion(codec.message_class("ConfigRecord")(
        resource_type=4, resource_name="", name="x", value="y"), 0))
    return delta.apply()


def run(line: str, shell: bool = True, cwd: str = "/", width=None) -> str:
    state = ShellState(_image(), working_directory=cwd, screen_width=width, interactive=width is not None)
    out = []
    run_line(state, line, out.append, shell=shell)
    return "".join(out)


CASES = [
    ("ls /image/topics/byName", "bar\nfoo\nfoo.1\n"),
    ("ls /image/topics/byName/foo/name /image/cluster", "name\n\ncluster:\nbrokers\ncontrollers\n"),
    ("ls /image/cluster /image/features", "cluster:\nbrokers\ncontrollers\n\nfeatures:\nmetadataVersion\nzkMigrationState\n"),
    ("ls /nope", "ls: /nope: no such file or directory.\n"),
    ("ls /image/topics/byName/f*", "foo:\n0\nid\nname\n\nfoo.1:\n0\nid\nname\n"),
    ("ls /image/topics/byName/{bar,foo}/name", "name\nname\n"),
    ("ls /image/topics/byName/foo?1", "0\nid\nname\n"),
    ("ls /image/topics/byName/foo\\\\.1", "ls: /image/topics/byName/foo\\.1: no such file or directory.\n"),
    ("ls /image/topics/byName/{a,{b}}", "ls: /image/topics/byName/{a,{b}}: no such file or directory.\n"),
    ("cat /image/topics/byName/foo/name", "foo\n"),
    ("cat /image", "cat: /image: Is a directory\n"),
    ("cat /missing", "cat: /missing: No such file or directory.\n"),
    ("cat /image/configs/BROKER/x /image/features/metadataVersion", "y\n3.0-IV1\n"),
    ("cat -o json /image/configs", '{\n  "BROKER": {\n    "x": "y"\n  }\n}\n'),
    ("cd /image/topics/byName/foo/name", "cd: /image/topics/byName/foo/name: not a directory.\n"),
    ("cd /zzz", "cd: /zzz: no such directory.\n"),
    ("cd /image/configs\npwd", "/image/configs\n"),
    ("cd /image/configs\ncd ..\npwd", "/image\n"),
    ("cd\npwd", "/\n"),
    ("find /image/configs", "/image/configs\n/image/configs/BROKER\n/image/configs/BROKER/x\n"),
    ("find /nope", "find: /nope: no such file or directory.\n"),
    ("tree /image/configs", "BROKER:\n  x:\n    y\n"),
    ("tree /image/features/metadataVersion", "3.0-IV1\n"),
    ("tree /no", "tree: /no: No such file or directory.\n"),
    ("man pwd", "pwd: Print the current working directory.\n\nusage: pwd\n"),
    ("man zz", "man: unknown command zz. Type help to get a list of commands.\n"),
    ("", ""),
    ("   ", ""),
    ("cat", "too few arguments\n"),
    ("pwd extra", "unrecognized arguments: 'extra'\n"),
    ("history x", "argument numEntriesToShow: could not convert 'x' to Integer (For input string: \"x\")\n"),
    ("frob", "invalid choice: 'frob' (choose from {cat,cd,clear,diff,exit,find,help,history,ls,man,mark,pwd,quit,tree})\n"),
    ("help pwd", "pwd: Print the current working directory.\n\nusage: pwd\n"),
    ("cd /image/configs\ncd /image\ncd -\npwd", "/image/configs\n"),
    ("cd /image/configs\ntree", "BROKER:\n  x:\n    y\n"),
    ("ls /image/topics/byName/[a-c]*", "0\nid\nname\n"),
    ("ls /image/topics/byName/foo[!.]1", "ls: /image/topics/byName/foo[!.]1: no such file or directory.\n"),
    ("ls /image/topics/byName/foo[.]1", "0\nid\nname\n"),
    ("ls /image/topics/byName/[", "ls: /image/topics/byName/[: no such file or directory.\n"),
    ("clear", ""),
    ("hist", "invalid choice: 'hist': did you mean 'history'?\n"),
]


@pytest.mark.parametrize("line, expected", CASES, ids=[c[0] or "empty" for c in CASES])
def test_command_output(line, expected):
    state = ShellState(_image())
    out = []
    for part in line.split("\n"):
        out.clear()
        run_line(state, part, out.append, shell=True)
    assert "".join(out) == expected


def test_find_keeps_the_typed_path():
    assert run("find .", cwd="/image/configs") == ".\n./BROKER\n./BROKER/x\n"


def test_non_interactive_mode_has_only_kafka_readonly_commands():
    assert run("cd /image", shell=False) == "invalid choice: 'cd': did you mean 'cat'?\n" or \
        run("cd /image", shell=False).startswith("invalid choice: 'cd'")
    assert run("ls /image/configs", shell=False) == "BROKER\n"


def test_help_lists_every_command():
    text = run("help")
    assert text.startswith("Welcome to the Apache Kafka metadata shell.\n\n")
    for name in ("cat", "cd", "exit", "find", "help", "history", "ls", "man", "pwd", "tree"):
        assert f"    {name} " in text


def test_history_numbers_entries():
    state = ShellState(_image(), history=["ls", "pwd", "history 2"])
    out = []
    run_line(state, "history 2", out.append)
    assert "".join(out) == "    1  pwd\n    2  history 2\n"


LS_LAYOUT = [
    (["a", "b", "c"], None, ["a", "b", "c"]),
    (["a", "b", "c"], 80, ["a  b  c"]),
    (["alpha", "b", "gamma", "d"], 16, ["alpha  gamma", "b      d"]),
    (["x" * 30, "y"], 20, ["x" * 30, "y"]),
]


@pytest.mark.parametrize("entries, width, expected", LS_LAYOUT)
def test_ls_columns(entries, width, expected):
    assert format_ls([], [("d", entries)], width) == expected


def test_ls_headings_skip_empty_directories():
    assert format_ls(["f"], [("empty", []), ("d", ["x"])], None) == ["f", "", "d:", "x"]
    assert format_ls([], [("empty", []), ("d", ["x"])], None) == ["", "d:", "x"]


def test_quit_ends_the_session_as_exit():
    state = ShellState(_image())
    run_line(state, "quit", [].append)
    assert state.exit_requested


def test_clear_clears_the_screen_interactively():
    assert run("clear", width=80) == "\033[H\033[2J\033[3J"
