"""suggest(): Tab completion of command names and node paths, as tables."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.shell.completion import suggest
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion


@pytest.fixture(scope="module")
def state():
    delta = MetadataDelta()
    topic_id = Uuid(b"\x01" * 16)
    delta.replay(ApiMessageAndVersion(codec.message_class("TopicRecord")(name="orders", topic_id=topic_id), 0))
    return ShellState(delta.apply())


TABLE = [
    ("", 0, ["cat", "cd", "clear", "diff", "exit", "find", "help", "history", "ls", "man", "mark", "pwd", "quit", "tree"]),
    ("c", 0, ["cat", "cd", "clear"]),
    ("hi", 0, ["history"]),
    ("zz", 0, []),
    ("ls ", 3, ["image/", "local/"]),
    ("ls /", 3, ["/image/", "/local/"]),
    ("ls /im", 3, ["/image/"]),
    ("cat /image/pro", 4, ["/image/producerIds/", "/image/provenance"]),
    ("ls /image/topics/byName/", 3, ["/image/topics/byName/orders/"]),
    ("ls /image/topics/byName/orders/n", 3, ["/image/topics/byName/orders/name"]),
    ("ls /nope/", 3, []),
    ("man h", 4, ["help", "history"]),
    ("man m", 4, ["man", "mark"]),
    ("pwd ", 4, []),
    ("tree /local/ver", 5, ["/local/version"]),
]


@pytest.mark.parametrize("line, start, expected", TABLE, ids=[t[0] or "empty" for t in TABLE])
def test_suggest(state, line, start, expected):
    got_start, candidates = suggest(line, state)
    assert got_start == start
    assert [text for text, _ in candidates] == expected


def test_directories_are_not_final_and_files_are(state):
    _, candidates = suggest("cat /image/pro", state)
    assert candidates == [("/image/producerIds/", False), ("/image/provenance", True)]


def test_relative_paths_follow_the_working_directory(state):
    state.working_directory = "/image/topics"
    try:
        assert suggest("cd by", state) == (3, [("byId/", False), ("byName/", False)])
    finally:
        state.working_directory = "/"


OPTIONS = [
    ("cat -", ["--output", "-o", "-h", "--help"]),
    ("cat --", ["--output", "--help"]),
    ("cat --o", ["--output"]),
    ("cat -o ", ["text", "json", "yaml"]),
    ("cat --output j", ["json"]),
    ("cat -o json -", []),                       # --output is given already; help only as the first word
    ("ls /image -", ["--output", "-o"]),
    ("tree -o yaml /im", ["/image/"]),           # after the option's value: paths again
    ("diff -", ["--path", "-p", "--output", "-o", "-h", "--help"]),
    ("diff --path /image/t", ["/image/topics/"]),
    ("diff -p /image -o y", ["yaml"]),
    ("pwd -", ["-h", "--help"]),
    ("history -", ["-h", "--help"]),
]


@pytest.mark.parametrize("line, expected", OPTIONS, ids=[t[0] for t in OPTIONS])
def test_options_complete_from_the_command_spec(state, line, expected):
    start, candidates = suggest(line, state)
    assert start == len(line) - len(line.split(" ")[-1])
    assert [text for text, _ in candidates] == expected
    assert all(final != text.endswith("/") for text, final in candidates)    # flags and values are final


def test_option_values_are_the_choices_the_parser_accepts(state):
    """One source: every value completion offers is accepted by the command's parser, and nothing else is offered."""
    from kraftsman.shell.commands import COMMANDS
    from kraftsman.shell.parsing import parse

    for name, command in COMMANDS.items():
        for option in command.spec.options:
            _, candidates = suggest(f"{name} {option.flags[0]} ", state)
            assert [c for c, _ in candidates] == list(option.choices) or not option.choices
            for choice in option.choices:
                words = [option.flags[-1], choice] + (["x"] if any(a.nargs in ("1", "+") for a in command.spec.args)
                                                      else [])
                assert parse(command.spec, words)[option.dest] == choice


def test_marks_complete_after_at(state):
    state.images.mark(state.image, "before")
    assert suggest("diff @b", state) == (5, [("@before", True)])
