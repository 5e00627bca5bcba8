"""Walking every partition (`tree`, `cat --output json`) reads the image without keeping decoded partitions: on the
1.01M-record log the shell's peak RSS stayed at the loaded image + 1 MB instead of + 553 MB
(tests/bench/bench_shell_tree.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from kraftsman.controller.image.loader import load
from kraftsman.controller.image.partitions import PartitionRegistration
from kraftsman.shell.runner import run_words
from kraftsman.shell.state import ShellState

REPO = Path(__file__).resolve().parents[2]


def _generated(tmp_path) -> Path:
    spec = importlib.util.spec_from_file_location("gen_metadata_log", REPO / "tests" / "bench" / "gen_metadata_log.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(tmp_path / "00000000000000000000.log", 20, 10)


def _decoded(image) -> int:
    return sum(type(entry) is PartitionRegistration for topic in image.topics.by_id.values()
               for entry in topic.partitions.values())


def test_tree_and_json_leave_the_partitions_as_loaded(tmp_path):
    image = load(str(_generated(tmp_path))).image
    before = _decoded(image)
    lines = []
    for words in (["tree", "/image/topics"], ["cat", "--output", "json", "/image/topics/byName/bench-topic-00001"]):
        assert run_words(ShellState(image), words, lines.append, shell=False) == 0
    assert sum(text.count("PartitionRegistration(") for text in lines) == 400   # each partition, byId and byName
    assert any('"partitions"' in text for text in lines)                           # and one topic as JSON
    assert _decoded(image) == before
