"""The fixture comparison (tests/admin_cluster_compare) masks what kafka-admin-3.9's README names as varying, and
nothing else: every case matches itself, a run differing only in a varying field matches, any other change does
not."""
from __future__ import annotations

import pytest

from .admin_cluster_compare import case_names, compare, load_case, normalize

NAMES = case_names()
if not NAMES:
    pytest.skip("admin fixtures not found (../shared is absent)", allow_module_level=True)


@pytest.mark.parametrize("name", NAMES)
def test_every_case_matches_itself(name):
    case = load_case(name)
    assert compare(case, case.stdout, case.stderr, case.rc) == []


def test_describe_masks_topic_ids_topic_order_and_isr_order_only():
    case = load_case("topics-describe-final-all")
    varied = case.stdout.replace("TopicId: hITc2T9kTbav28H8xLZG8Q", "TopicId: AAAAAAAAAAAAAAAAAAAAAA")
    varied = varied.replace("Isr: 4,5", "Isr: 5,4")
    blocks = varied.split("\nTopic: ")
    varied = "\nTopic: ".join([blocks[0].replace("Topic: ", "", 1), *blocks[1:]][::-1])
    varied = "Topic: " + varied if not varied.startswith("Topic: ") else varied
    assert sorted(varied.splitlines()) != sorted(case.stdout.splitlines())
    assert compare(case, varied, case.stderr, case.rc) == []
    assert compare(case, case.stdout.replace("Replicas: 5,4", "Replicas: 4,5", 1), case.stderr, case.rc) != []
    assert compare(case, case.stdout.replace("Leader: 5", "Leader: 4", 1), case.stderr, case.rc) != []


def test_stderr_masks_log4j_times_and_stack_frames_loosely():
    case = load_case("topics-describe-missing")
    varied = case.stderr.replace("[2026-11-27 21:38:38,184]", "[2031-01-02 03:04:05,678]")
    varied = varied.replace("(TopicCommand.java:218)", "(TopicCommand.java:999)")
    assert compare(case, case.stdout, varied, case.rc) == []
    assert compare(case, case.stdout, varied.replace("does not exist", "is missing"), case.rc) != []
    assert compare(case, case.stdout, case.stderr, 0) == ["exit code 0, expected 1"]


def test_acl_listings_compare_as_sets():
    case = load_case("acls-list-topic-match")
    blocks = [b for b in case.stdout.split("\n\n") if b.strip()]
    first = blocks[0].split("\n")
    entries = [line.strip(" \t") for line in first[1:]][::-1]
    first = [first[0], " \t" + entries[0], *("\t" + e for e in entries[1:-1]), "\t" + entries[-1] + " "]
    varied = "\n\n".join([*blocks[1:], "\n".join(first)]) + "\n\n"
    assert varied != case.stdout and compare(case, varied, case.stderr, case.rc) == []
    assert compare(case, case.stdout.replace("CREATE", "DELETE"), case.stderr, case.rc) != []


def test_quorum_masks_leader_epochs_offsets_directory_ids_and_observer_order():
    case = load_case("quorum-describe-status")
    varied = case.stdout.replace("LeaderEpoch:            6", "LeaderEpoch:            9")
    varied = varied.replace("HighWatermark:          1506", "HighWatermark:          77")
    varied = varied.replace('[{"id": 5, "directoryId": "upuifqfeUPe18J0sSsEBgQ"}, {"id": 4, "directoryId": '
                            '"XytuyLb9JTGoFZC-lz6LKQ"}]',
                            '[{"id": 4, "directoryId": "AAAAAAAAAAAAAAAAAAAAAA"}, {"id": 5, "directoryId": '
                            '"BBBBBBBBBBBBBBBBBBBBBB"}]')
    assert compare(case, varied, case.stderr, case.rc) == []
    assert compare(case, case.stdout.replace('"id": 4', '"id": 6'), case.stderr, case.rc) != []
    assert compare(case, case.stdout.replace("31002", "31005"), case.stderr, case.rc) != []


def test_api_versions_mask_the_broker_order_only():
    case = load_case("apiversions-broker4")
    first, second = case.stdout.split(")\n", 1)
    assert compare(case, second + first + ")\n", case.stderr, case.rc) == []
    assert compare(case, case.stdout.replace("0 to 12 [usable: 12]", "0 to 11 [usable: 11]", 1), case.stderr,
                   case.rc) != []


def test_generate_masks_the_proposal_not_the_current_assignment():
    case = load_case("reassign-generate")
    lines = case.stdout.split("\n")
    proposal = lines.index("Proposed partition reassignment configuration") + 1
    lines[proposal] = lines[proposal].replace('"replicas":[5]', '"replicas":[4]', 1)
    assert compare(case, "\n".join(lines), case.stderr, case.rc) == []
    current = case.stdout.replace('"replicas":[4]', '"replicas":[5]', 1)
    assert compare(case, current, case.stderr, case.rc) != []


def test_elections_mask_the_order_of_elected_partitions():
    case = load_case("election-preferred-json-file")
    assert normalize(case.tool, case.argv, "Successfully completed leader election (PREFERRED) for partitions b-1, a-0"
                     ) == "Successfully completed leader election (PREFERRED) for partitions a-0, b-1"
    assert compare(case, case.stdout.replace("t-assign-1", "t-assign-0"), case.stderr, case.rc) != []


def test_partition_lines_move_with_their_topic_but_keep_their_order():
    case = load_case("topics-describe-at-min-isr")
    groups: dict[str, list[str]] = {}
    for line in case.stdout.rstrip("\n").split("\n"):
        groups.setdefault(line.split("\t")[1], []).append(line)
    reordered = "\n".join(line for topic in reversed(list(groups)) for line in groups[topic]) + "\n"
    assert reordered != case.stdout and compare(case, reordered, case.stderr, case.rc) == []
    lines = case.stdout.split("\n")
    lines[0], lines[1] = lines[1], lines[0]          # t-cfg's partitions 1 before 0: not a varying order
    assert compare(case, "\n".join(lines), case.stderr, case.rc) != []
