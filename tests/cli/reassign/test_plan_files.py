"""kafka-reassign-partitions' JSON files (cli.reassign.plan_files): Kafka 3.9's formats, checks and texts."""
from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from kraftsman.cli.common import jopt
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.jopt import KafkaError
from kraftsman.cli.reassign import plan_files as pf

from ...admin_cluster_compare import FIXTURES, case_names, load_case

FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
OPERATION = "org.apache.kafka.server.common.AdminOperationException"
MAPPING = "com.fasterxml.jackson.databind.JsonMappingException"


def error_text(error: jopt.KafkaError) -> str:
    """Return what kafka-reassign-partitions prints on stdout for `error` (jopt.stdout_error)."""
    out = io.StringIO()
    jopt.stdout_error(SimpleNamespace(env=Environment(stdout=out, stderr=io.StringIO())), error)
    return out.getvalue()


def _raises(call, *args) -> KafkaError:
    with pytest.raises(KafkaError) as e:
        call(*args)
    return e.value


def test_every_fixture_plan_parses_and_prints_back_as_written():
    if not FIXTURES.is_dir():
        pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)")
    plans = [load_case(n).files["reassign.json"] for n in case_names() if n.startswith("reassign-")
             and "reassign.json" in load_case(n).files]
    assert len(plans) == 6
    for raw in plans:
        plan = pf.parse_plan(raw.decode())
        assert pf.format_plan(plan.targets()) == raw.decode().strip()


def test_generate_fixtures_current_assignment_line():
    if not FIXTURES.is_dir():
        pytest.skip(f"admin fixtures not found at {FIXTURES} (../shared is absent)")
    case = load_case("reassign-generate")
    current = {("t-p3r2", i): r for i, r in enumerate([[5, 4], [4, 5], [5, 4], [4, 5], [5, 4]])}
    current |= {("t-move", 1): [4], ("t-move", 0): [4]}
    assert case.stdout.split("\n")[1] == pf.format_plan(current)
    assert pf.parse_topics(case.files["topics.json"].decode()) == ["t-p3r2", "t-move"]


def test_plan_defaults_log_dirs_and_keeps_named_ones():
    plan = pf.parse_plan('{"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any","/d"]},'
                         '{"topic":"b","partition":3,"replicas":[2]}]}')
    assert plan.partitions == [(("a", 0), [1, 2]), (("b", 3), [2])] and plan.log_dirs == {("a", 0, 2): "/d"}
    assert pf.format_plan(plan.targets(), plan.log_dirs) == (
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any","/d"]},'
        '{"topic":"b","partition":3,"replicas":[2],"log_dirs":["any"]}]}')
    assert pf.parse_plan('{"version":1}').partitions == []


@pytest.mark.parametrize("text, java_class, message", [
    ("", OPERATION, "com.fasterxml.jackson.core.JsonParseException: The input string shouldn't be empty"),
    ("[]", MAPPING, "Expected JSON object, received []"),
    ('{"version":2}', OPERATION, "Not supported version field value 2"),
    ('{"version":"1"}', MAPPING, 'Expected `Integer` value, received "1"'),
    ('{"partitions":[{"topic":"a","partition":0}]}', MAPPING, "No such field exists: `replicas`"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":4}]}', MAPPING,
     "Expected `JSON array` value, received 4"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[4,"5"]}]}', MAPPING,
     'Expected `Integer` value, received "5"'),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[4,5],"log_dirs":["any"]}]}', FAILED,
     "Size of replicas list [4, 5] is different from size of log dirs list [any] for partition a-0"),
])
def test_bad_plans_fail_as_kafka(text, java_class, message):
    e = _raises(pf.parse_plan, text)
    assert (e.java_class, e.message) == (java_class, message)


def test_a_plan_that_is_no_json_is_the_parse_error_wrapped():
    e = _raises(pf.parse_plan, '{"partitions": [')
    assert e.java_class == OPERATION and e.cause.java_class == "com.fasterxml.jackson.core.io.JsonEOFException"
    source = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: {}]"
    jackson = ("com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input: expected close marker for "
               f"Array (start marker at {source.format(16)})")
    text = error_text(e)
    assert text.startswith(f"Error: {jackson}\n at {source.format(17)}\n{OPERATION}: {jackson}\n at "
                           f"{source.format(17)}\n\tat ")
    assert f"\nCaused by: {jackson}\n at {source.format(17)}\n\tat " in text and text.endswith("\n\n")


@pytest.mark.parametrize("partitions, message", [
    ([], "Partition reassignment list cannot be empty"),
    ([("a", 0, [1]), ("a", 1, [])], "Partition replica list cannot be empty"),
    ([("a", 0, [1]), ("b", 1, [2]), ("a", 0, [2]), ("b", 1, [1])],
     "Partition reassignment contains duplicate topic partitions: a-0,b-1"),      # one bucket: added order
    ([("a", 0, [1, 1]), ("b", 2, [3, 2, 3, 2])],
     "Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1. "
     "b-2 contains multiple entries for 2,3"),
])
def test_execute_checks(partitions, message):
    plan = pf.parse_plan(json.dumps({"partitions": [{"topic": t, "partition": p, "replicas": r}
                                                    for t, p, r in partitions]}))
    e = _raises(pf.check_execute, plan)
    assert (e.java_class, e.message) == (FAILED, message)


def test_topics_files_and_broker_lists():
    assert pf.parse_topics('{"version":1}') == []
    assert _raises(pf.parse_topics, "{").message == "The input string is not a valid JSON"
    assert _raises(pf.parse_topics, '{"topics":[{"name":"a"}]}').message == "No such field exists: `topic`"
    assert pf.parse_broker_list("4,5,") == [4, 5] and pf.parse_broker_list("+4,-1") == [4, -1]
    for text, bad in (("4,x", "x"), ("", ""), ("4,,5", ""), (" 4", " 4"), ("2147483648", "2147483648")):
        e = _raises(pf.parse_broker_list, text)
        assert e.java_string() == f'java.lang.NumberFormatException: For input string: "{bad}"'
    assert _raises(pf.check_brokers, [5, 4, 5, 4]).message == "Broker list contains duplicate entries: [4, 5]"
    assert _raises(pf.check_topics, ["b", "a", "b"]).message == ("List of topics to reassign contains duplicate "
                                                                  "entries: [b]")
