"""partition_text writes PartitionRegistration's text straight from the records: the same text as
str(materialize(entry)) for every partition of the real fixtures and for tagged, version 0-2, ELR and changed
entries, and a topic's tree_text equals printing it child by child."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.controller.image import partition_text
from kraftsman.controller.image.loader import load_directory, load_file
from kraftsman.controller.image.nodes import topic_node
from kraftsman.controller.image.partitions import materialize, merge_raw
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
PARTITIONS = sorted(p for p in DATA.rglob("__cluster_metadata-0") if p.is_dir()) if DATA.is_dir() else []
TOPIC = bytes(range(1, 17))


def _printed(node, indent: int = 0) -> str:
    """Print a directory child by child, as the shell's printer does without tree_text."""
    out = []
    for name in sorted(node.child_names()):
        child = node.child(name)
        out.append("  " * indent + name + ":\n")
        out.append(_printed(child, indent + 1) if child.is_directory else "  " * (indent + 1) + child.text + "\n")
    return "".join(out)


def _check_topics(image) -> int:
    checked = 0
    for topic in image.topics.by_id.values():
        node = topic_node(topic)
        assert node.tree_text(3) == _printed(node, 3)
        checked += len(topic.partitions)
    return checked


@pytest.mark.parametrize("pdir", PARTITIONS or [None], ids=[str(p.relative_to(DATA)) for p in PARTITIONS] or ["none"])
def test_tree_text_equals_the_printed_children_on_real_directories(pdir):
    if pdir is None:
        pytest.skip(f"real Kafka fixtures not found at {DATA} (../shared is absent)")
    try:
        image = load_directory(pdir).image
    except ValueError as e:
        pytest.skip(f"not loadable as a directory: {e}")
    _check_topics(image)


def _partition(version: int, partition_id: int, **fields) -> bytes:
    message = codec.message_class("PartitionRecord")(
        partition_id=partition_id, topic_id=TOPIC, replicas=[3, 1, 2], isr=[3, 1], removing_replicas=[2],
        adding_replicas=[], leader=3, leader_epoch=4, partition_epoch=5,
        directories=[bytes([7] * 16), bytes([8] * 16), bytes([9] * 16)] if version else [])
    for name, value in fields.items():
        setattr(message, name, value)
    return write_metadata_record(ApiMessageAndVersion(message, version))


def _change(partition_id: int) -> bytes:
    message = codec.message_class("PartitionChangeRecord")(partition_id=partition_id, topic_id=TOPIC, leader=1)
    return write_metadata_record(ApiMessageAndVersion(message, 0))


ENTRIES = [
    _partition(0, 0), _partition(1, 1), _partition(2, 2),
    _partition(0, 3, leader_recovery_state=1), _partition(1, 4, leader_recovery_state=7),
    _partition(2, 5, eligible_leader_replicas=[1, 2], last_known_elr=[]),
    _partition(2, 6, eligible_leader_replicas=None, last_known_elr=[3]),
    _partition(1, 7, directories=[]), _partition(1, 8, isr=[]),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=range(len(ENTRIES)))
def test_one_value_gives_the_registration_text(entry):
    assert partition_text.text(entry) == str(materialize(entry))


def test_changed_entries_and_registrations_give_their_text():
    lazy = merge_raw(ENTRIES[1], _change(1), TOPIC, 1)
    for entry in (lazy, materialize(lazy)):
        assert partition_text.text(entry) == str(materialize(entry))
    assert partition_text.lines({1: lazy}, "<", "|", ">") == {"1": f"<1|{materialize(lazy)}>"}


def test_a_topic_kept_in_its_file_gives_the_same_lines(tmp_path):
    topic = write_metadata_record(ApiMessageAndVersion(
        codec.message_class("TopicRecord")(name="t", topic_id=TOPIC), 0))
    values = [topic] + [_partition(1, p) for p in range(70)] + [_partition(1, 3, leader=2)] + ENTRIES
    (tmp_path / "a.log").write_bytes(build_batch([(None, v) for v in values], 0))
    image = load_file(tmp_path / "a.log").image
    assert image.topics.by_id[TOPIC].chunks is not None
    assert _check_topics(image) == 70   # ids 0-69, later records winning
