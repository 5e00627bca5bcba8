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
