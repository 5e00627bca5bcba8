"""kafka-reassign-partitions live on the fixture cluster (kraftsman controllers 1-3, simulated Kafka 3.9 brokers 4 and
5): a proposal generated, a plan executed and verified until done (throttles set, then cleared), a throttled move
verified while in progress, listed and cancelled, --verify's exit codes in json mode (0 done, 75 in progress, 1 not
as planned), the same through --bootstrap-controller, bad input refused before anything is changed, and every JSON
document valid against cli/schemas/reassign-partitions.schema.json.

The tests share one cluster and run in file order.
"""
from __future__ import annotations

import io
import json
import time

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.reassign.tool import run

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, FIXTURES, AdminCluster
from ...admin_cluster_ops import ClusterOps
from ..test_json_schemas import Checker

B, C, J = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER), ("--output", "json")
RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")

if not FIXTURES.parent.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster takes its settings from them)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("reassign-live")) as started:
        ops = ClusterOps(started)
        ops.create_topic("rm", assignment=[[4], [4]])
        ops.create_topic("rm2", assignment=[[5, 4]])
        ops.wait_full_isr()
        ops.produce("rm", 0, 200_000)
        ops.produce("rm", 1, 5_000_000)
        yield started


@pytest.fixture
def files(tmp_path):
    def write(name: str, content) -> str:
        (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
        return str(tmp_path / name)
    return write


def kr(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env={}), prog="kafka-reassign-partitions")
    return status, out.getvalue(), err.getvalue()


def plan(*moves: tuple[str, int, list[int]]) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]}


def configs(cluster, kind: int, name: str) -> dict:
    return cluster.running()[0].image.configs.resources.get((kind, name), {})


def until(check, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_generate_proposes_over_the_listed_brokers(cluster, files):
    topics = files("topics.json", {"topics": [{"topic": "rm2"}, {"topic": "rm"}], "version": 1})
    for bootstrap in (B, C):
        status, out, err = kr(*bootstrap, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "4,5")
        lines = out.split("\n")
        assert (status, err, lines[0], lines[3], lines[5]) == (0, "", "Current partition replica assignment",
                                                               "Proposed partition reassignment configuration", "")
        assert json.loads(lines[1])["partitions"] == [
            {"topic": "rm", "partition": 0, "replicas": [4], "log_dirs": ["any"]},
            {"topic": "rm", "partition": 1, "replicas": [4], "log_dirs": ["any"]},
            {"topic": "rm2", "partition": 0, "replicas": [5, 4], "log_dirs": ["any", "any"]}]
        proposed = json.loads(lines[4])["partitions"]
        assert [(p["topic"], p["partition"], len(p["replicas"])) for p in proposed] == [("rm", 0, 1), ("rm", 1, 1),
                                                                                         ("rm2", 0, 2)]
        assert {p["replicas"][0] for p in proposed[:2]} == {4, 5}       # a topic's leaders spread over the brokers


def test_execute_with_a_throttle_then_verify_until_done(cluster, files):
    ops = ClusterOps(cluster)
    target = files("move.json", plan(("rm", 0, [5])))
    status, out, err = kr(*B, "--execute", "--reassignment-json-file", target, "--throttle", "5000000")
    assert (status, err) == (0, "") and out.split("\n") == [
        "Current partition replica assignment", "",
        '{"version":1,"partitions":[{"topic":"rm","partition":0,"replicas":[4],"log_dirs":["any"]}]}', "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.", "The inter-broker throttle limit was set to 5000000 B/s",
        "Successfully started partition reassignment for rm-0", ""]
    cluster.sync()
    assert configs(cluster, 2, "rm") == {"leader.replication.throttled.replicas": "0:4",
                                         "follower.replication.throttled.replicas": "0:5"}
    assert all(configs(cluster, 4, str(b)).get(k) == "5000000" for b in (4, 5) for k in RATES)
    doc = until(lambda: (lambda d: d if d["outcome"] == "done" else None)(
        json.loads(kr(*B, "--verify", "--reassignment-json-file", target, *J)[1])))
    assert doc["cleared"] == {"brokers": [4, 5], "topics": ["rm"]} and doc["status"] == 0
    cluster.sync()
    assert configs(cluster, 2, "rm") == {} and all(not configs(cluster, 4, str(b)) for b in (4, 5))
    assert kr(*B, "--verify", "--reassignment-json-file", target) == (0, (
        "Status of partition reassignment:\nReassignment of partition rm-0 is completed.\n\n"
        "Clearing broker-level throttles on brokers 4,5\nClearing topic-level throttles on topic rm\n"), "")
    ops.wait_full_isr()


def test_a_throttled_move_in_progress_is_listed_verified_and_cancelled(cluster, files):
    target = files("slow.json", plan(("rm", 1, [5])))
    assert kr(*C, "--execute", "--reassignment-json-file", target, "--throttle", "1000")[0] == 0
    cluster.sync()
    status, out, _ = kr(*B, "--list")
    assert (status, out) == (0, "Current partition reassignments:\nrm-1: replicas: 5,4. adding: 5. removing: 4.\n")
    assert kr(*B, "--verify", "--reassignment-json-file", target)[:2] == (
        0, "Status of partition reassignment:\nReassignment of partition rm-1 is still in progress.\n\n")
    status, out, _ = kr(*B, "--verify", "--reassignment-json-file", target, *J)
    assert (status, json.loads(out)["outcome"], json.loads(out)["cleared"]) == (75, "in progress", None)
    again = kr(*B, "--execute", "--reassignment-json-file", target)       # without --additional: Kafka's terse text
    assert again == (1, "Cannot execute because there is an existing partition assignment.  Use --additional to "
                        "override this and create a new partition assignment in addition to the existing one. The "
                        "--additional flag can also be used to change the throttle by resubmitting the current "
                        "reassignment.\n", "")
    assert kr(*C, "--cancel", "--reassignment-json-file", target) == (0, (
        "Successfully cancelled partition reassignment for: rm-1\nNone of the specified partition moves are active."
        "Clearing broker-level throttles on brokers 4,5\nClearing topic-level throttles on topic rm\n"), "")
    cluster.sync()
    status, out, _ = kr(*B, "--verify", "--reassignment-json-file", target, *J)
    assert (status, json.loads(out)["outcome"]) == (1, "failed")           # back on [4]: not the plan's [5]
    assert kr(*B, "--verify", "--reassignment-json-file", target)[:2] == (0, (
        "Status of partition reassignment:\nThere is no active reassignment of partition rm-1, but replica set is 4 "
        "rather than 5.\n\nClearing broker-level throttles on brokers 4,5\n"
        "Clearing topic-level throttles on topic rm\n"))
    assert kr(*B, "--list") == (0, "No partition reassignments found.\n", "")


def test_bad_input_changes_nothing(cluster, files):
    cases = [
        (plan(("rm2", 0, [4, 9])), "Error: Unknown broker id 9"),
        (plan(("nope", 0, [4])), "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic nope "
                                 "not found."),
        (plan(("rm", 7, [4])), "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to "
                               "find partition: rm-7"),
        (plan(("rm2", 0, [4, 4])), "Error: Partition replica lists may not contain duplicate entries: rm2-0 contains "
                                   "multiple entries for 4"),
        (plan(), "Error: Partition reassignment list cannot be empty"),
        ('{"partitions": [{"topic": "rm", "partition": 0, "replicas": [4], "log_dirs": ["/data"]}]}',
         'Error: kraftsman does not move replicas between log directories (log_dirs other than "any"): rm-0 on '
         "broker 4 to /data"),
        ('{"partitions": [', None),
        ('{"partitions": [{"topic": "rm", "partition": 0}]}', "Error: No such field exists: `replicas`"),
    ]
    for content, first in cases:
        status, out, err = kr(*B, "--execute", "--reassignment-json-file", files("bad.json", content),
                              "--throttle", "1000")
        assert (status, err) == (1, ""), out
        line = out.split("\n")[0]
        assert line == first if first else line == ("Error: com.fasterxml.jackson.core.io.JsonEOFException: Unexpected "
                                                    "end-of-input: expected close marker for Array (start marker at "
                                                    "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` "
                                                    "disabled); line: 1, column: 16])")
        assert "Traceback" not in out
    cluster.sync()
    assert kr(*B, "--list") == (0, "No partition reassignments found.\n", "")
    assert configs(cluster, 2, "rm") == {} and all(not configs(cluster, 4, str(b)) for b in (4, 5))
    status, out, err = kr(*B, "--execute", "--reassignment-json-file", "missing.json")
    assert (status, out.split("\n")[:2], err) == (1, ["Error: missing.json", "java.nio.file.NoSuchFileException: "
                                                                            "missing.json"], "")
    status, out, err = kr(*B, "--verify")
    assert (status, out, err.split("\n")[0]) == (1, "", 'Missing required argument "[reassignment-json-file]"')
    status, out, err = kr(*B, "--list", "--throttle", "5")
    assert (status, err.split("\n")[0]) == (1, 'Option "[throttle]" can\'t be used with action "[list]"')
    status, out, err = kr(*B, "--execute", "--reassignment-json-file", "x", "--throttle", "fast")
    assert (status, out.split("\n")[0]) == (1, "Error: x")               # Kafka reads the file first
    status, out, err = kr(*B, "--execute", "--reassignment-json-file", files("ok.json", plan(("rm", 0, [4]))),
                          "--throttle", "fast")
    assert (status, out.split("\n")[:2]) == (1, ["Error: Cannot parse argument 'fast' of option throttle",
                                                 "joptsimple.OptionArgumentConversionException: Cannot parse "
                                                 "argument 'fast' of option throttle"])
    status, out, err = kr("--bootstrap-server", "127.0.0.1:31999", "--list")
    assert (status, out.split("\n")[0]) == (69, "Error: cannot connect to 127.0.0.1:31999: Connection refused")


def test_json_outputs_follow_the_schema(cluster, files):
    check = Checker("reassign-partitions", one_line=True)
    target = files("json.json", plan(("rm2", 0, [4, 5])))
    check(kr(*B, "--list", *J), 0, "list")
    check(kr(*B, "--generate", "--topics-to-move-json-file", files("t.json", {"topics": [{"topic": "rm2"}]}),
             "--broker-list", "4,5", *J), 0, "generate")
    doc = check(kr(*B, "--execute", "--reassignment-json-file", target, "--throttle", "5000000", *J), 0, "execute")
    assert doc["started"] == ["rm2-0"] and doc["throttle"]["brokers"] == [4, 5]
    assert doc["current"] == [{"topic": "rm2", "partition": 0, "replicas": [5, 4], "log_dirs": ["any", "any"]}]
    doc = until(lambda: (lambda d: d if d["outcome"] == "done" else None)(
        json.loads(kr(*B, "--verify", "--reassignment-json-file", target, *J)[1])))
    check((doc["status"], json.dumps(doc) + "\n", ""), 0, "verify")
    check(kr(*B, "--cancel", "--reassignment-json-file", target, *J), 0, "cancel")
    check(kr(*B, "--execute", "--reassignment-json-file", files("b.json", plan(("rm2", 0, [9]))), *J), 1, "error")
    check(kr(*B, *J), 1, "error")
    check(kr("--bootstrap-server", "127.0.0.1:31999", "--list", *J), 69, "error")
    check.all_seen()


def test_tab_completes_live_broker_ids(cluster):
    from ..completion.test_complete import candidates

    assert candidates(f"kafka-reassign-partitions --bootstrap-server {BOOTSTRAP_SERVER} --generate --broker-list ") \
        == ["4", "5"]
