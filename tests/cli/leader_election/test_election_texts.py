"""kafka-leader-election's JSON file and texts (cli.leader_election) against Kafka 3.9's, the fixture's recorded
outputs where it has them (compared as tests/admin_cluster_compare masks them)."""
from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from kraftsman.cli.common import jopt
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.jopt import KafkaError
from kraftsman.cli.leader_election import texts
from kraftsman.cli.leader_election.election_file import read_election_file
from kraftsman.controller.client.admin import ServerError

from ...admin_cluster_compare import FIXTURES, load_case, normalize

NOT_NEEDED = ServerError(84, "Leader election not needed for topic partition.")


def failure_text(error: jopt.KafkaError) -> str:
    """Return what kafka-leader-election prints on stderr for `error` (jopt.uncaught: Kafka's mainNoExit)."""
    out, err = io.StringIO(), io.StringIO()
    jopt.uncaught(SimpleNamespace(env=Environment(stdout=out, stderr=err)), error)
    assert out.getvalue() == ""
    return err.getvalue()


def _fixture(name: str):
    if not FIXTURES.is_dir():
        pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)")
    return load_case(name)


def _failure(path) -> KafkaError:
    with pytest.raises(KafkaError) as e:
        read_election_file(str(path))
    return e.value


def test_malformed_file_is_kafkas_replica_election_data_is_empty(tmp_path):
    case = _fixture("election-malformed-json")
    (tmp_path / "elect.json").write_bytes(case.files["elect.json"])
    got = failure_text(_failure(tmp_path / "elect.json"))
    assert normalize(case.tool, case.argv, got) == normalize(case.tool, case.argv, case.stderr)
    (tmp_path / "empty.json").write_text("")
    assert _failure(tmp_path / "empty.json").message == "Replica election data is empty"


@pytest.mark.parametrize("content, first_line", [
    ("[1]", "com.fasterxml.jackson.databind.JsonMappingException: Expected JSON object, received [1]"),
    ('{"partition": []}', 'Replica election data is missing "partitions" field'),
    ('{"partitions": {}}', "com.fasterxml.jackson.databind.JsonMappingException: Expected JSON array, received {}"),
    ('{"partitions": [{"topic": "t"}]}', "com.fasterxml.jackson.databind.JsonMappingException: No such field "
                                         "exists: `partition`"),
    ('{"partitions": [{"topic": "t", "partition": "0"}]}', "com.fasterxml.jackson.databind.JsonMappingException: "
                                                            'Expected `Integer` value, received "0"'),
    ('{"partitions": [{"topic": 7, "partition": 0}]}', "com.fasterxml.jackson.databind.JsonMappingException: "
                                                        "Expected `String` value, received 7"),
])
def test_wrong_shapes_are_kafkas_exceptions(tmp_path, content, first_line):
    (tmp_path / "elect.json").write_text(content)
    e = _failure(tmp_path / "elect.json")
    lines = failure_text(e).split("\n")
    assert lines[0] == first_line
    if e.java_class == "java.lang.RuntimeException":     # Kafka wraps JsonMappingException: a "Caused by" follows
        assert lines[1] == "java.lang.RuntimeException: " + first_line and "Caused by: " + first_line in lines


def test_duplicates_missing_file_and_a_good_file(tmp_path):
    (tmp_path / "dup.json").write_text(json.dumps({"partitions": [
        {"topic": "t-assign", "partition": p} for p in (2, 1, 0, 2, 1)]}))
    assert _failure(tmp_path / "dup.json").message == ("Replica election data contains duplicate partitions: "
                                                       "[t-assign-2, t-assign-1]")
    assert _failure(tmp_path / "nope.json").java_string() == ("java.lang.RuntimeException: "
                                                            f"java.nio.file.NoSuchFileException: {tmp_path}/nope.json")
    (tmp_path / "ok.json").write_text('{"partitions":[{"topic":"a","partition":1,"x":0},{"topic":"b","partition":0}]}')
    assert read_election_file(str(tmp_path / "ok.json")) == [("a", 1), ("b", 0)]
    (tmp_path / "none.json").write_text('{"partitions":[]}')
    assert read_election_file(str(tmp_path / "none.json")) == []


def test_outcome_lines_match_the_json_file_case():
    case = _fixture("election-preferred-json-file")
    result = texts.outcome({("t-assign", 2): None, ("t-assign", 1): NOT_NEEDED})
    out = "".join(line + "\n" for line in texts.outcome_lines(0, result))
    assert out == case.stdout and texts.failure(result) is None


def test_outcome_order_is_javas_hash_set_order():
    result = texts.outcome({("t-p3r2", i): None for i in range(5)} | {("__consumer_offsets", 1): None})
    line = texts.outcome_lines(1, result)[0]
    # Kafka's HashSet<TopicPartition> iterates by bucket: hash 31 * (31 + partition) + the topic's String hash
    # (t-p3r2: 3365929148), spread (h ^ h >>> 16) & 15: t-p3r2-0..4 fall in buckets 13, 12, 11, 10, 9 and
    # __consumer_offsets-1 (3324596919) in 14
    assert line == ("Successfully completed leader election (UNCLEAN) for partitions t-p3r2-4, t-p3r2-3, t-p3r2-2, "
                    "t-p3r2-1, t-p3r2-0, __consumer_offsets-1")


def test_a_failed_partition_prints_on_stdout_and_fails_on_stderr():
    case = _fixture("election-preferred-partition-leader-down")
    result = texts.outcome({("t-on5", 0): ServerError(80, "The preferred leader was not available.")})
    out = "".join(line + "\n" for line in texts.outcome_lines(0, result))
    assert out == case.stdout
    err = failure_text(texts.failure(result))
    assert normalize(case.tool, case.argv, err) == normalize(case.tool, case.argv, case.stderr)
