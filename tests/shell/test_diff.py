"""diff: field-level changes of the typed records, structured output, marks and the session's own images (live mode),
colour only on a terminal, and one-line errors."""
from __future__ import annotations

import json

import pytest
import yaml

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.producer_ids import Provenance
from kraftsman.shell import changes as changes_module
from kraftsman.shell.output import Output
from kraftsman.shell.runner import run_line
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

FOO, BAR = Uuid(b"\x01" * 16), Uuid(b"\x02" * 16)


def _record(record_type: str, version: int = 0, **fields) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(codec.message_class(record_type)(**fields), version)


def _broker(broker_id: int, fenced: bool) -> ApiMessageAndVersion:
    return _record("RegisterBrokerRecord", 2, broker_id=broker_id, incarnation_id=Uuid(bytes([broker_id]) * 16),
                   broker_epoch=10 + broker_id, end_points=[], features=[], rack=None, fenced=fenced)


def _next(image, offset: int, *records):
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply(Provenance(offset, 1, 1_700_000_000_000 + offset))


def _base():
    """Return the first image: brokers 1-3, topics foo (leader 1, isr [1, 2, 3]) and bar, a broker config."""
    return _next(MetadataDelta().apply(), 10, _broker(1, False), _broker(3, False),
                 _record("TopicRecord", name="foo", topic_id=FOO),
                 _record("PartitionRecord", partition_id=0, topic_id=FOO, replicas=[1, 2, 3], isr=[1, 2, 3], leader=1,
                         leader_epoch=0, partition_epoch=0),
                 _record("TopicRecord", name="bar", topic_id=BAR),
                 _record("PartitionRecord", partition_id=0, topic_id=BAR, replicas=[3], isr=[3], leader=3),
                 _record("ConfigRecord", resource_type=4, resource_name="", name="x", value="y"))


def _later(image):
    """Return the image after: foo's partition 0 lost its leader and broker 3, broker 1 fenced, broker 2 registered,
    bar deleted, the config changed."""
    return _next(image, 20,
                 _record("PartitionChangeRecord", partition_id=0, topic_id=FOO, leader=-1, isr=[1, 2]),
                 _record("BrokerRegistrationChangeRecord", broker_id=1, broker_epoch=11, fenced=1),
                 _broker(2, False), _record("RemoveTopicRecord", topic_id=BAR),
                 _record("ConfigRecord", resource_type=4, resource_name="", name="x", value="z"))


def _run(state, line: str, write=None) -> tuple[int, str]:
    shown = []
    status = run_line(state, line, write or shown.append, shell=True)
    return status, "".join(shown)


def _live_state():
    """Return a state that started on the first image and then swapped in the later one, as a live shell does before
    a command; its opener refuses everything, as the live mode's does."""
    def refuse(spec):
        raise ValueError("a live shell cannot load other images")
    first = _base()
    state = ShellState(first, open_image=refuse)
    state.set_image(_later(first))
    return state


def test_text_shows_changed_fields_added_and_removed_nodes():
    status, text = _run(_live_state(), "diff")
    assert status == 0
    lines = text.splitlines()
    assert lines[0].startswith("--- start (offset 10,") and lines[1].startswith("+++ current (offset 20,")
    partition = lines.index("~ /image/topics/byName/foo/0")
    assert lines[partition + 1:partition + 5] == ["    isr: [1, 2, 3] -> [1, 2]", "    leader: 1 -> -1",
                                                  "    leader_epoch: 0 -> 1", "    partition_epoch: 0 -> 1"]
    broker = lines.index("~ /image/cluster/brokers/1")
    assert "    fenced: false -> true" in lines[broker + 1:broker + 4]
    assert "+ /image/cluster/brokers/2" in lines and "- /image/topics/byName/bar" in lines
    assert "~ /image/configs/BROKER/x: y -> z" in lines
    assert not any("/byId/" in line or "provenance" in line for line in lines[2:])
    assert "~ /image/cluster/brokers/3" not in lines      # unchanged records print nothing


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_structured_output_lists_the_changes(output):
    status, text = _run(_live_state(), f"diff --output {output}")
    document = json.loads(text) if output == "json" else yaml.safe_load(text)
    assert status == 0 and document["from"]["provenance"]["offset"] == 10 and document["to"]["source"] == "current"
    by_path = {c["path"]: c for c in document["changes"]}
    fields = {f["name"]: (f["old"], f["new"]) for f in by_path["/image/topics/byName/foo/0"]["fields"]}
    assert fields == {"isr": ([1, 2, 3], [1, 2]), "leader": (1, -1), "leader_epoch": (0, 1), "partition_epoch": (0, 1)}
    assert by_path["/image/cluster/brokers/2"]["change"] == "added" and by_path["/image/cluster/brokers/2"]["new"]["id"] == 2
    removed = by_path["/image/topics/byName/bar"]
    assert removed["change"] == "removed" and removed["old"]["partitions"]["0"]["replicas"] == [3]
    assert by_path["/image/configs/BROKER/x"] == {"path": "/image/configs/BROKER/x", "change": "changed",
                                                  "old": "y", "new": "z"}


def test_yaml_is_the_json_document():
    state = _live_state()
    assert yaml.safe_load(_run(state, "diff -o yaml")[1]) == json.loads(_run(state, "diff -o json")[1])


def test_live_session_diffs_marks_and_offsets_it_has_shown():
    state = _live_state()
    _, marked = _run(state, "mark before")
    assert marked.startswith("@before: offset 20,")
    state.set_image(_next(state.image, 30, _record("PartitionChangeRecord", partition_id=0, topic_id=FOO, leader=2)))
    _, since_mark = _run(state, "diff")                        # a bare diff: the newest mark against now
    assert since_mark.splitlines()[0].startswith("--- @before (offset 20,")
    assert since_mark.splitlines()[2:] == ["~ /image/topics/byName/foo/0", "    leader: -1 -> 2",
                                           "    leader_epoch: 1 -> 2", "    partition_epoch: 1 -> 2"]
    assert _run(state, "diff @before")[1] == since_mark
    _, by_offsets = _run(state, "diff 10 20 -p /image/topics/byName/foo")
    assert "    leader: 1 -> -1" in by_offsets.splitlines()


def test_an_offset_the_session_never_showed_is_one_line():
    state = _live_state()
    status, text = _run(state, "diff 15")
    assert status == 1 and text.count("\n") == 1
    assert text.startswith("diff: a live shell cannot load other images") and "offsets 10, 20" in text


def test_a_failing_opener_is_one_line_whatever_it_raises():
    class ToolFailure(Exception):
        def __init__(self, message):
            super().__init__(message)
            self.message = message

    def opener(spec):
        raise ToolFailure(f"kafka-metadata-shell: {spec}: No such file or directory")
    state = ShellState(_base(), open_image=opener)
    assert _run(state, "diff /nope.log") == (1, "diff: kafka-metadata-shell: /nope.log: No such file or directory\n")


BAD = [
    ("diff 10 20 30", 64, "diff: give at most two sources"),
    ("diff @gone", 1, "diff: no mark @gone"),
    ("diff 10 -p /image/nope", 1, "diff: /image/nope: no such node in either image."),
    ("diff 10 -o xml", 64, "argument --output/-o: invalid choice: 'xml'"),
    ("mark bad/name", 64, "mark: bad mark name 'bad/name'"),
]


@pytest.mark.parametrize("line, status, start", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line(line, status, start):
    got, text = _run(_live_state(), line)
    assert got == status and text.startswith(start) and text.count("\n") == 1


def test_identical_areas_are_not_walked(monkeypatch):
    """The later image shares the topics it did not touch: of the 200 partitions only the changed one is read."""
    first = _base()
    topics = [_record("TopicRecord", name=f"t{i}", topic_id=Uuid(bytes([9, i]) * 8)) for i in range(50)]
    first = _next(first, 11, *topics, *[_record("PartitionRecord", partition_id=p, topic_id=Uuid(bytes([9, i]) * 8),
                                                replicas=[1], isr=[1], leader=1, leader_epoch=0, partition_epoch=0)
                                  for i in range(50) for p in range(4)])
    later = _next(first, 12, _record("PartitionChangeRecord", partition_id=3, topic_id=Uuid(bytes([9, 7]) * 8),
                                     leader=-1))
    read = []
    real = changes_module.node_data
    monkeypatch.setattr(changes_module, "node_data", lambda image, path, node: read.append(path) or real(image, path, node))
    state = ShellState(first)
    state.set_image(later)
    _, text = _run(state, "diff 11")
    assert text.splitlines()[2:] == ["~ /image/topics/byName/t7/3", "    leader: 1 -> -1", "    leader_epoch: 0 -> 1",
                                     "    partition_epoch: 0 -> 1"]
    topics_read = {path for path in read if path[:2] == ("image", "topics")}
    assert {path[:4] for path in topics_read} == {("image", "topics", "byName", "t7")}, read
    assert {path[4] for path in topics_read} <= {"3", "name", "id"}


class _Terminal:
    """A stream that says it is a terminal."""

    def __init__(self):
        self.parts = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch, tmp_path):
    monkeypatch.delenv("NO_COLOR", raising=False)
    screen = _Terminal()
    _run(_live_state(), "diff", screen.write)
    coloured = "".join(screen.parts)
    assert "\033[31m1\033[0m -> \033[32m-1\033[0m" in coloured and "\033[32m+ /image/cluster/brokers/2\033[0m" in coloured
    _run(_live_state(), f"diff > {tmp_path / 'out.txt'}", screen.write)
    assert "\033[" not in (tmp_path / "out.txt").read_text() and "    leader: 1 -> -1\n" in (tmp_path / "out.txt").read_text()
    assert "\033[" not in _run(_live_state(), "diff")[1]               # a list is not a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    screen = _Terminal()
    _run(_live_state(), "diff", Output(screen.write, terminal=True))
    assert "\033[" not in "".join(screen.parts) and "    leader: 1 -> -1\n" in "".join(screen.parts)


def test_man_diff_explains_sources_and_live_mode():
    _, text = _run(_live_state(), "man diff")
    assert "usage: diff [--path PATH] [--output OUTPUT] [sources [sources ...]]" in text
    assert "live shell" in text and "@NAME" in text


def test_a_live_repl_diffs_what_changed_since_its_mark(tmp_path):
    """As the live mode wires it: before each command the newest image is swapped in; `mark` then `diff` shows the
    changes the quorum made in between (here: bar deleted, broker 1 fenced)."""
    import threading
    import time

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from kraftsman.shell.repl import run_repl

    first = _base()
    newest = [first, first, _later(first)]           # the image each command gets: mark, pwd, then the quorum moved
    state, out = ShellState(first), []

    def before_command(state, write):
        state.set_image(newest.pop(0) if len(newest) > 1 else newest[0])

    with create_pipe_input() as pipe:
        def typist():
            for line in ("mark\r", "pwd\r", "diff\r", "exit\r"):
                time.sleep(0.2)
                pipe.send_text(line)
        thread = threading.Thread(target=typist, daemon=True)
        thread.start()
        status = run_repl(state, out.append, history_path=tmp_path / "h", input=pipe, output=DummyOutput(),
                          before_command=before_command)
        thread.join()
    lines = "".join(out).splitlines()
    assert status == 0 and f"@1: {first.provenance}" in lines
    diff = lines[lines.index(f"--- @1 ({first.provenance})"):]
    assert diff[1].startswith("+++ current (offset 20,")
    assert "- /image/topics/byName/bar" in diff and "    fenced: false -> true" in diff
