"""kafka-leader-election live on the fixture cluster (kraftsman controllers 1-3, simulated Kafka 3.9 brokers 4 and 5):
preferred elections after a broker restart (one partition, a JSON file, every partition, through
--bootstrap-server and --bootstrap-controller), an unclean election of a partition whose in-sync replica is gone,
failures per partition in Kafka's words, bad input, and every JSON document valid against
cli/schemas/leader-election.schema.json.

The tests share one cluster and run in file order (each leaves the brokers running with full ISRs).
"""
from __future__ import annotations

import io
import json

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.leader_election.tool import run

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, FIXTURES, AdminCluster
from ...admin_cluster_ops import ClusterOps
from ..test_json_schemas import Checker

B, C = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER)
P, U, J = ("--election-type", "preferred"), ("--election-type", "unclean"), ("--output", "json")

if not FIXTURES.parent.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster takes its settings from them)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("election-live")) as started:
        ops = ClusterOps(started)
        ops.create_topic("le", assignment=[[4, 5], [5, 4], [5, 4]])
        ops.create_topic("lu", assignment=[[4, 5]])
        ops.wait_full_isr()
        yield started


def ke(*argv: str, cwd: str = ".") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env={}, cwd=cwd)
    status = run_command(run, list(argv), env, prog="kafka-leader-election")
    return status, out.getvalue(), err.getvalue()


def leaders(cluster, topic: str) -> list[int]:
    t = cluster.running()[0].image.topics.by_name[topic]
    return [t.partition(i).leader for i in sorted(t.partitions)]


def restart(cluster, broker_id: int) -> None:
    """Stop a broker (its leaderships move away) and start it again; wait until every ISR is full again."""
    cluster.stop_broker(broker_id)
    cluster.start_broker(broker_id)
    ClusterOps(cluster).wait_full_isr()


def test_preferred_elections_after_a_restart(cluster, tmp_path):
    restart(cluster, 5)
    assert leaders(cluster, "le") == [4, 4, 4]                        # broker 5's leaderships moved to 4
    assert ke(*B, *P, "--topic", "le", "--partition", "1") == (
        0, "Successfully completed leader election (PREFERRED) for partitions le-1\n", "")
    cluster.sync()
    assert ke(*B, *P, "--topic", "le", "--partition", "1") == (
        0, "Valid replica already elected for partitions le-1\n", "")
    (tmp_path / "elect.json").write_text(json.dumps({"partitions": [{"topic": "le", "partition": 2},
                                                                    {"topic": "le", "partition": 0}]}))
    status, out, err = ke(*B, "--election-type", "PREFERRED", "--path-to-json-file", "elect.json", cwd=str(tmp_path))
    assert (status, err) == (0, "") and out.splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions le-2",
        "Valid replica already elected for partitions le-0"]
    cluster.sync()
    assert leaders(cluster, "le") == [4, 5, 5]


def test_every_partition_through_the_controllers(cluster):
    restart(cluster, 4)
    status, out, err = ke(*C, *P, "--all-topic-partitions")
    assert (status, err) == (0, "")
    (line,) = out.splitlines()                                # the partitions broker 4 prefers moved to 5
    assert line.startswith("Successfully completed leader election (PREFERRED) for partitions ")
    assert set(line.split("partitions ", 1)[1].split(", ")) == {"le-0", "lu-0"}
    cluster.sync()
    assert leaders(cluster, "le") == [4, 5, 5] and leaders(cluster, "lu") == [4]
    assert ke(*C, *P, "--all-topic-partitions") == (0, "", "")           # nothing left to do: no output


def test_unclean_election_of_a_partition_whose_in_sync_replica_is_gone(cluster):
    ops = ClusterOps(cluster)
    cluster.stop_broker(5)
    cluster.stop_broker(4)                                                # lu-0 keeps ISR [4], no leader
    cluster.start_broker(5)
    try:
        status, out, err = ke("--bootstrap-server", "127.0.0.1:31015", *P, "--topic", "lu", "--partition", "0")
        assert (status, out) == (1, "Error completing leader election (PREFERRED) for partition: lu-0: "
                                    "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The "
                                    "preferred leader was not available.\n")
        assert err.startswith("1 replica(s) could not be elected\norg.apache.kafka.server.common."
                              "AdminCommandFailedException: 1 replica(s) could not be elected\n\tat ")
        assert "\tSuppressed: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred " \
               "leader was not available.\n" in err
        assert ke("--bootstrap-server", "127.0.0.1:31015", *U, "--topic", "lu", "--partition", "0") == (
            0, "Successfully completed leader election (UNCLEAN) for partitions lu-0\n", "")
        cluster.wait_partition("lu", 0, "led by 5", lambda p: p.leader == 5)
        assert ke("--bootstrap-server", "127.0.0.1:31015", *U, "--topic", "lu", "--partition", "0") == (
            0, "Valid replica already elected for partitions lu-0\n", "")
    finally:
        cluster.start_broker(4)
        ops.wait_full_isr()


def test_unknown_partitions_and_bad_input(cluster, tmp_path):
    status, out, err = ke(*B, *P, "--topic", "nope", "--partition", "0")
    assert status == 1 and out.startswith("Error completing leader election (PREFERRED) for partition: nope-0: "
                                          "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ")
    assert err.startswith("1 replica(s) could not be elected\n")
    cases = [((*B, "--all-topic-partitions"), "Missing required option(s): election-type"),
             (("--all-topic-partitions", *P), "Missing required option(s): bootstrap-server"),
             ((*B, *P), "One and only one of the following options is required: topic, all-topic-partitions, "
                        "path-to-json-file"),
             ((*B, *P, "--topic", "le", "--all-topic-partitions"), "One and only one of the following options is "
                                                                   "required: topic, all-topic-partitions, "
                                                                   "path-to-json-file"),
             ((*B, *P, "--topic", "le"), "Missing required option(s): partition"),
             ((*B, *P, "--partition", "0", "--all-topic-partitions"), "Option partition is only allowed if topic "
                                                                      "is used"),
             ((*B, "--election-type", "newest", "--all-topic-partitions"), "Cannot parse argument 'newest' of "
                                                                          "option election-type"),
             ((*B, *P, "--topic", "le", "--partition", "one"), "Cannot parse argument 'one' of option partition"),
             ((*B, *C, *P, "--all-topic-partitions"), "Only one of --bootstrap-server or --bootstrap-controller can "
                                                      "be specified")]
    for argv, message in cases:
        status, out, err = ke(*argv)
        assert (status, out, err.split("\n")[0]) == (1, "", message), argv
        assert "Traceback" not in err
    (tmp_path / "bad.json").write_text('{"partitions": [{"topic": "le"}]}')
    status, out, err = ke(*B, *P, "--path-to-json-file", str(tmp_path / "bad.json"))
    assert (status, out) == (1, "") and err.split("\n")[:2] == [
        "com.fasterxml.jackson.databind.JsonMappingException: No such field exists: `partition`",
        "java.lang.RuntimeException: com.fasterxml.jackson.databind.JsonMappingException: No such field exists: "
        "`partition`"]
    status, out, err = ke("--bootstrap-server", "127.0.0.1:31999", *P, "--all-topic-partitions")
    assert (status, out) == (69, "") and err.split("\n")[0].startswith("cannot connect to 127.0.0.1:31999")


def test_json_outputs_follow_the_schema(cluster):
    check = Checker("leader-election", one_line=True)
    restart(cluster, 5)
    doc = check(ke(*B, *P, "--all-topic-partitions", *J), 0, "elected")
    assert doc["election_type"] == "PREFERRED" and "le-1" in doc["elected"] and doc["failed"] == []
    cluster.sync()
    doc = check(ke(*B, *P, "--topic", "le", "--partition", "1", *J), 0, "elected")
    assert (doc["elected"], doc["not_needed"]) == ([], ["le-1"])
    doc = check(ke(*B, *P, "--topic", "nope", "--partition", "3", *J), 1, "partly_failed")
    assert doc["failed"][0]["partition"] == "nope-3" and doc["error"] == "1 replica(s) could not be elected"
    check(ke(*B, "--all-topic-partitions", *J), 1, "error")
    check(ke("--bootstrap-server", "127.0.0.1:31999", *P, "--all-topic-partitions", *J), 69, "error")
    check.all_seen()


def test_tab_completes_live_topic_names(cluster):
    from ..completion.test_complete import candidates

    assert "le" in candidates(f"kafka-leader-election --bootstrap-server {BOOTSTRAP_SERVER} --topic l")
    assert candidates("kafka-leader-election --election-type p") == ["preferred"]
