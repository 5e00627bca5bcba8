"""kafka-topics live on the fixture cluster (kraftsman controllers 1-3, simulated Kafka 3.9 brokers 4 and 5): topics
created, listed, described (with a broker down too), grown and deleted through --bootstrap-server and
--bootstrap-controller; --if-exists / --if-not-exists and their exit codes in json/yaml mode; bad input in Kafka's
words; every JSON document valid against cli/schemas/topics.schema.json, every shape seen."""
from __future__ import annotations

import io
import json

import pytest
import yaml

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.topics.tool import run

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, FIXTURES, AdminCluster
from ..test_json_schemas import Checker

B, C = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER)
J = ("--output", "json")

if not FIXTURES.parent.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster takes its settings from them)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("topics-live")) as started:
        yield started


def kt(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env=env or {}), prog="kafka-topics")
    return status, out.getvalue(), err.getvalue()


def rows(text: str) -> list[dict]:
    """Return the partition lines of a --describe output as dicts."""
    return [dict(f.split(": ", 1) for f in line.strip("\t").split("\t")) for line in text.splitlines()
            if line.startswith("\tTopic: ")]


def test_create_describe_alter_delete(cluster):
    assert kt(*B, "--create", "--topic", "live.a", "--partitions", "3", "--replication-factor", "2") == \
        (0, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
            "collide. To avoid issues it is best to use either, but not both.\nCreated topic live.a.\n", "")
    cluster.sync()
    status, out, err = kt(*B, "--describe", "--topic", "live.a")
    assert status == 0 and err == ""
    header = out.splitlines()[0]
    assert header.startswith("Topic: live.a\tTopicId: ") and "\tPartitionCount: 3\tReplicationFactor: 2\t" in header
    assert [(r["Partition"], len(r["Replicas"].split(","))) for r in rows(out)] == [("0", 2), ("1", 2), ("2", 2)]
    assert kt(*B, "--alter", "--topic", "live.a", "--partitions", "5") == (0, "", "")
    cluster.sync()
    assert len(rows(kt(*B, "--describe", "--topic", "live.a")[1])) == 5
    assert "live.a" in kt(*B, "--list")[1].splitlines()
    assert kt(*B, "--delete", "--topic", "live.a") == (0, "", "")
    cluster.sync()
    assert "live.a" not in kt(*B, "--list")[1].splitlines()


def test_assignment_and_configs_reach_the_cluster(cluster):
    assert kt(*B, "--create", "--topic", "live-assigned", "--replica-assignment", "5:4,4:5",
              "--config", "cleanup.policy=compact", "--config", "min.insync.replicas = 2")[0] == 0
    cluster.sync()
    out = kt(*B, "--describe", "--topic", "live-assigned")[1]
    assert out.splitlines()[0].endswith("Configs: min.insync.replicas=2,cleanup.policy=compact")
    assert [r["Replicas"] for r in rows(out)] == ["5,4", "4,5"]
    out = kt(*B, "--describe", "--topics-with-overrides")[1]
    assert [line.split("\t")[0] for line in out.splitlines()] == ["Topic: live-assigned"]


def test_under_replicated_with_a_broker_down(cluster):
    kt(*B, "--create", "--topic", "live-urp", "--replica-assignment", "4:5,5:4")
    cluster.sync()
    assert kt(*B, "--describe", "--under-replicated-partitions", "--topic", "live-urp") == (0, "", "")
    cluster.stop_broker(5)
    try:
        status, out, _ = kt(*B, "--describe", "--under-replicated-partitions", "--topic", "live-urp")
        assert status == 0 and [(r["Partition"], r["Leader"], r["Isr"]) for r in rows(out)] == \
            [("0", "4", "4"), ("1", "4", "4")]
        assert kt(*B, "--describe", "--unavailable-partitions", "--topic", "live-urp") == (0, "", "")
        status, out, _ = kt(*B, "--describe", "--under-min-isr-partitions", "--topic", "live-urp")
        assert status == 0 and out == ""           # min.insync.replicas 1, ISR [4]
    finally:
        cluster.start_broker(5)


def test_bootstrap_controller_reads_metadata_and_writes_at_the_active_controller(cluster):
    assert kt(*C, "--create", "--topic", "live-ctl", "--partitions", "2", "--replication-factor", "2") == \
        (0, "Created topic live-ctl.\n", "")
    cluster.sync()
    status, out, err = kt(*C, "--describe", "--topic", "live-ctl")
    assert status == 0 and err == ""
    assert [r["Elr"] for r in rows(out)] == ["N/A", "N/A"]          # Metadata: no ELR lists
    assert "live-ctl" in kt(*C, "--list", "--exclude-internal")[1].split()
    assert kt(*C, "--delete", "--topic", "live-ctl") == (0, "", "")


def test_if_exists_and_if_not_exists_tell_changed_from_already_so(cluster):
    kt(*B, "--create", "--topic", "live-once")
    cluster.sync()
    assert kt(*B, "--create", "--topic", "live-once", "--if-not-exists") == (0, "", "")
    status, out, _ = kt(*B, "--create", "--topic", "live-once", "--if-not-exists", *J)
    assert (status, json.loads(out)) == (6, {"command": "create", "status": 6, "changed": False, "topic": "live-once"})
    status, out, _ = kt(*B, "--create", "--topic", "live-twice", "--if-not-exists", "--output", "yaml")
    assert status == 0 and yaml.safe_load(out)["changed"] is True
    cluster.sync()
    assert kt(*B, "--delete", "--topic", "nope", "--if-exists") == (0, "", "")
    status, out, _ = kt(*B, "--delete", "--topic", "nope", "--if-exists", *J)
    assert (status, json.loads(out)["changed"]) == (6, False)
    status, out, _ = kt(*B, "--alter", "--topic", "nope", "--partitions", "3", "--if-exists", *J)
    assert (status, json.loads(out)["changed"]) == (6, False)
    status, out, _ = kt(*B, "--delete", "--topic", "live-(once|twice)", *J)
    assert (status, json.loads(out)["topics"]) == (0, ["live-once", "live-twice"])


def test_bad_input_in_kafkas_words(cluster):
    status, out, err = kt(*B, "--describe", "--topic", "nope")
    assert (status, out) == (1, "Error while executing topic command : Topic 'Optional[nope]' does not exist as "
                                "expected\n")
    assert "ERROR java.lang.IllegalArgumentException: Topic 'Optional[nope]'" in err and "\tat " in err
    status, out, err = kt(*B, "--create", "--topic", "live-rf", "--replication-factor", "3")
    assert (status, out) == (1, "Error while executing topic command : Unable to replicate the partition 3 time(s): "
                                "The target replication factor of 3 cannot be reached because only 2 broker(s) are "
                                "registered.\n")
    assert "ERROR org.apache.kafka.common.errors.InvalidReplicationFactorException: Unable" in err
    assert "\tat " not in err                       # the server's errors carry no stack trace, as Kafka's
    status, out, err = kt(*B, "--create", "--topic", "x", "--replication-factor", "0")
    assert (status, out) == (1, "Error while executing topic command : The replication factor must be between 1 "
                                "and 32767 inclusive\n")
    status, out, err = kt(*B, "--alter", "--topic", "t")
    assert (status, out) == (1, "") and err.startswith('Missing required argument "[partitions]"\nOption ')
    status, out, err = kt(*B, "--list", "--partitions", "3")
    assert err.startswith('Option "[partitions]" can\'t be used with option "[list]"\n')
    status, out, err = kt(*B, "--delete", "--topic", "t", "--if-not-exists", *J)
    assert (status, json.loads(out)["error"]) == (1, 'Option "[if-not-exists]" can\'t be used with option "[delete]"')


def test_multi_topic_alter_is_validated_before_anything_is_applied(cluster):
    kt(*B, "--create", "--topic", "live-grow-1", "--partitions", "1")
    kt(*B, "--create", "--topic", "live-grow-2", "--partitions", "3")
    cluster.sync()
    status, out, _ = kt(*B, "--alter", "--topic", "live-grow-.*", "--partitions", "2")
    assert (status, out) == (1, "Error while executing topic command : The topic live-grow-2 currently has 3 "
                             "partition(s); 2 would not be an increase.\n")
    cluster.sync()
    assert len(rows(kt(*B, "--describe", "--topic", "live-grow-1")[1])) == 1      # not grown: nothing applied
    assert kt(*B, "--alter", "--topic", "live-grow-.*", "--partitions", "4") == (0, "", "")


def test_json_outputs_follow_the_schema(cluster):
    check = Checker("topics", one_line=True)
    check(kt(*B, "--create", "--topic", "live-json", "--partitions", "2", *J), 0, "create")
    cluster.sync()
    check(kt(*B, "--create", "--topic", "live-json", "--if-not-exists", *J), 6, "unchanged")
    check(kt(*B, "--list", *J), 0, "list")
    doc = check(kt(*B, "--describe", "--topic", "live-json", *J), 0, "describe")
    assert [p["partition"] for p in doc["topics"][0]["partitions"]] == [0, 1]
    check(kt(*B, "--alter", "--topic", "live-json", "--partitions", "3", *J), 0, "changed")
    cluster.sync()
    check(kt(*B, "--delete", "--topic", "live-json", *J), 0, "changed")
    check(kt(*B, "--describe", "--topic", "nope", *J), 1, "error")
    check(kt("--bootstrap-server", "127.0.0.1:31999", "--list", *J), 69, "error")
    check.all_seen()


def test_tab_completes_live_topic_names_and_config_names(cluster):
    from ..completion.test_complete import candidates

    kt(*B, "--create", "--topic", "live-complete")
    cluster.sync()
    assert "live-complete" in candidates(f"kafka-topics --bootstrap-server {BOOTSTRAP_SERVER} --describe --topic li")
    assert "live-complete" in candidates(f"kafka-topics -X client.id=c --bootstrap-controller {BOOTSTRAP_CONTROLLER} "
                                         "--delete --topic l")
    assert candidates("kafka-topics --bootstrap-server 127.0.0.1:31999 --describe --topic ") == []   # silent
    assert candidates("kafka-topics --create --config min.in") == ["min.insync.replicas="]
