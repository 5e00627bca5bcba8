"""kafka-metadata-quorum in-process against in-test servers: Kafka 3.9's texts and exit codes, kraftsman's additions.

Expected texts restate Kafka's MetadataQuorumCommand (handleDescribeStatus, the Node record's toString,
quorumInfoToRows, relativeTimeMs) and ToolsUtils.prettyPrintTable (cells padded, each followed by a tab).
"""
from __future__ import annotations

import io
import json
import time

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.quorum import tool as metadata_quorum
from kraftsman.controller.client.admin import QuorumInfo, ReplicaState
from kraftsman.storage.protocol.uuids import Uuid

from ...controller.server import quorum_fixtures
from ...controller.server.sync_fakes import FakeServer, body, http_server

RANGES = {18: (0, 4), 60: (0, 1), 55: (0, 2)}
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
DIR = {1: "ILZ5MPTeRWakmJu99uBJCA", 2: "b-DwmhtOheTqZzPoh52kfA", 3: "g42deArWBTRM5A1yuVpMCg",
       7: "3Db5QLSqSZieL3rJBUUegA"}


def mq(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_quorum.run, list(argv), Environment(stdout=out, stderr=err),
                         prog="kafka-metadata-quorum")
    return status, out.getvalue(), err.getvalue()


def replica(cls, rid, leo, fetch=-1, caught_up=-1, directory=True):
    raw = Uuid.from_string(DIR[rid]) if directory else bytes(16)
    return cls.ReplicaState(replica_id=rid, replica_directory_id=raw, log_end_offset=leo,
                            last_fetch_timestamp=fetch, last_caught_up_timestamp=caught_up)


def quorum_body(leader=2, part_error=0, leader_address=None, directory=True, own=None):
    """A DescribeQuorum answer; `own` ({"address": "host:port"}, filled once the fake server listens) puts
    the answering controller among the nodes as voter 1, as a real voter lists itself."""
    cls = body("DescribeQuorumResponse").__class__
    voters = [replica(cls, 1, 100, 1_000_900, 1_000_800, directory), replica(cls, 2, 120, 1_001_000, 1_001_000,
                                                                             directory),
              replica(cls, 3, 120, 1_000_990, 1_000_990, directory)]
    observers = [replica(cls, 7, 90, directory=directory)]
    part = cls.PartitionData(partition_index=0, error_code=part_error, leader_id=leader, leader_epoch=5,
                             high_watermark=118, current_voters=voters if not part_error else [],
                             observers=observers if not part_error else [])
    nodes = [cls.Node(node_id=i, listeners=[cls.Listener(name="CONTROLLER", host=f"c{i}", port=9090 + i)])
             for i in (1, 2, 3)]
    if leader_address is not None:
        host, port = leader_address.rsplit(":", 1)
        nodes[leader - 1] = cls.Node(node_id=leader, listeners=[cls.Listener(name="CONTROLLER", host=host,
                                                                             port=int(port))])
    if own:
        host, port = own["address"].rsplit(":", 1)
        nodes[0] = cls.Node(node_id=1, listeners=[cls.Listener(name="CONTROLLER", host=host, port=int(port))])
    return cls(error_code=0, topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[part])], nodes=nodes)


def describe_cluster_body(request):
    """A DescribeCluster answer naming controller 2 without listing its endpoint: it names no address."""
    cls = body("DescribeClusterResponse").__class__
    return cls(cluster_id=CLUSTER_ID, controller_id=2, brokers=[], endpoint_type=getattr(request, "endpoint_type", 1))


def handler(**kwargs):
    def answer(header, request):
        if header.request_api_key == 60:
            return describe_cluster_body(request)
        return quorum_body(**kwargs)
    return answer


@pytest.fixture
def server():
    with FakeServer(handler(), ranges=RANGES) as s:
        yield s


# ---------------------------------------------------------------- --status


def test_status_is_kafkas_text(server):
    status, out, err = mq("--bootstrap-controller", server.address, "describe", "--status")
    assert (status, err) == (0, "")
    assert out == (
        f"ClusterId:              {CLUSTER_ID}\n"
        "LeaderId:               2\n"
        "LeaderEpoch:            5\n"
        "HighWatermark:          118\n"
        "MaxFollowerLag:         20\n"
        "MaxFollowerLagTimeMs:   200\n"
        f'CurrentVoters:          [{{"id": 1, "directoryId": "{DIR[1]}", "endpoints": ["CONTROLLER://c1:9091"]}}, '
        f'{{"id": 2, "directoryId": "{DIR[2]}", "endpoints": ["CONTROLLER://c2:9092"]}}, '
        f'{{"id": 3, "directoryId": "{DIR[3]}", "endpoints": ["CONTROLLER://c3:9093"]}}]\n'
        f'CurrentObservers:       [{{"id": 7, "directoryId": "{DIR[7]}"}}]\n')
    assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [2, 2, 2]  # 2 look for the leader
    assert [r.topics[0].topic_name for h, r in server.requests if h.request_api_key == 55] == ["__cluster_metadata"]


def test_status_without_directory_ids_prints_null_and_bootstrap_server_asks_brokers():
    with FakeServer(handler(directory=False), ranges=RANGES) as server:
        status, out, _ = mq("--bootstrap-server", server.address, "describe", "--status")
        assert status == 0
        assert '[{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://c1:9091"]}, ' in out
        assert out.endswith('CurrentObservers:       [{"id": 7, "directoryId": null}]\n')
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [1]


def test_follower_lag_is_zero_when_the_leader_is_the_laggard():
    info = QuorumInfo(1, 1, 5, [ReplicaState(1, None, 5, 1, 1), ReplicaState(2, None, 5, None, None)])
    assert metadata_quorum.follower_lag(info) == (0, 0)
    info.voters[1].log_end_offset = 3
    assert metadata_quorum.follower_lag(info) == (2, -1)


def test_ipv6_endpoints_are_bracketed():
    assert metadata_quorum.endpoint_text("CONTROLLER", "::1", 9093) == "CONTROLLER://[::1]:9093"


def test_status_json(server):
    status, out, err = mq("--bootstrap-controller", server.address, "--output", "json", "describe", "--status")
    assert (status, err) == (0, "")
    obj = json.loads(out)
    assert obj["command"] == "describe" and obj["status"] == 0 and obj["cluster_id"] == CLUSTER_ID
    assert (obj["leader_id"], obj["leader_epoch"], obj["high_watermark"]) == (2, 5, 118)
    assert (obj["max_follower_lag"], obj["max_follower_lag_time_ms"]) == (20, 200)
    assert obj["current_voters"][0] == {"id": 1, "directory_id": DIR[1], "endpoints": ["CONTROLLER://c1:9091"]}
    assert obj["current_observers"] == [{"id": 7, "directory_id": DIR[7], "endpoints": []}]
    # --output also after the sub-command (kraftsman)
    assert json.loads(mq("--bootstrap-controller", server.address, "describe", "--status", "--output=json")[1])


# ---------------------------------------------------------------- --replication


def test_replication_is_kafkas_table(server):
    status, out, err = mq("--bootstrap-controller", server.address, "describe", "--replication")
    assert (status, err) == (0, "")
    lines = out.split("\n")
    assert lines[-1] == "" and all(line.endswith("\t") for line in lines[:-1])
    assert lines[:-1] == [
        "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t",
        f"2     \t{DIR[2]}\t120         \t0  \t1001000           \t1001000              \tLeader  \t",
        f"1     \t{DIR[1]}\t100         \t20 \t1000900           \t1000800              \tFollower\t",
        f"3     \t{DIR[3]}\t120         \t0  \t1000990           \t1000990              \tFollower\t",
        f"7     \t{DIR[7]}\t90          \t30 \t-1                \t-1                   \tObserver\t"]


def test_replication_human_readable_uses_now(server, monkeypatch):
    monkeypatch.setattr(metadata_quorum, "now_ms", lambda: 1_002_000)
    status, out, _ = mq("--bootstrap-controller", server.address, "describe", "--replication", "--human-readable")
    assert status == 0
    rows = [[cell.strip() for cell in line.split("\t")] for line in out.splitlines()]
    assert rows[1][4:7] == ["1000 ms ago", "1000 ms ago", "Leader"]
    assert rows[2][4:6] == ["1100 ms ago", "1200 ms ago"]
    assert rows[4][4:6] == ["-1", "-1"]


def test_replication_human_readable_with_a_future_timestamp_is_one_line(server, monkeypatch):
    monkeypatch.setattr(metadata_quorum, "now_ms", lambda: 1_000_950)
    status, out, err = mq("--bootstrap-controller", server.address, "describe", "--replication", "--human-readable")
    assert (status, out) == (1, "") and err.count("\n") == 1
    assert err.startswith("Error while computing relative time, possible drift in system clock. Current timestamp "
                          "is 1000950, last fetch timestamp is 1001000")


def test_replication_json(server):
    status, out, _ = mq("--bootstrap-controller", server.address, "--output", "json", "describe", "--replication")
    assert status == 0
    replicas = json.loads(out)["replicas"]
    assert [(r["node_id"], r["lag"], r["status"]) for r in replicas] == [
        (2, 0, "Leader"), (1, 20, "Follower"), (3, 0, "Follower"), (7, 30, "Observer")]
    assert replicas[3]["last_fetch_timestamp"] is None and replicas[0]["directory_id"] == DIR[2]


# ---------------------------------------------------------------- leaders and errors


def test_a_follower_points_to_the_leader_through_its_nodes():
    own: dict = {}
    with FakeServer(handler(), ranges=RANGES) as leader:
        with FakeServer(handler(part_error=6, leader_address=leader.address, own=own), ranges=RANGES) as follower:
            own["address"] = follower.address
            status, out, err = mq("--bootstrap-controller", follower.address, "describe", "--status")
            assert (status, err) == (0, "") and "LeaderId:               2\n" in out
            assert any(h.request_api_key == 55 for h, _ in leader.requests)


def test_no_leader_before_the_timeout_exits_69():
    with FakeServer(handler(part_error=6, leader=-1), ranges=RANGES) as server:
        start = time.monotonic()
        status, out, err = mq("--bootstrap-controller", server.address, "--timeout", "1", "describe", "--replication")
        assert (status, out) == (69, "") and err.count("\n") == 1
        assert err == ("every controller answered NOT_LEADER_OR_FOLLOWER to DescribeQuorum and none named the "
                       f"active controller within 1 s (last answer from {server.address})\n")
        assert time.monotonic() - start < 3


def test_server_error_is_one_line_exit_1():
    def answer(header, request):
        if header.request_api_key == 60:
            return describe_cluster_body(request)
        cls = body("DescribeQuorumResponse").__class__
        return cls(error_code=31, error_message=None, topics=[])
    with FakeServer(answer, ranges=RANGES) as server:
        status, out, err = mq("--bootstrap-controller", server.address, "describe", "--replication")
        assert (status, out, err) == (1, "", "CLUSTER_AUTHORIZATION_FAILED: no message\n")


def test_server_without_describe_quorum_is_exit_1():
    with FakeServer(handler(), ranges={18: (0, 4), 60: (0, 1)}) as server:
        status, _, err = mq("--bootstrap-controller", server.address, "describe", "--replication")
        assert status == 1 and "does not support the DescribeQuorum API" in err


def test_unreachable_and_foreign_servers_exit_69():
    with FakeServer() as gone:
        closed = gone.address
    with http_server() as http:
        for address, text in ((closed, "cannot connect"), (http.address, "does not speak the Kafka protocol")):
            status, out, err = mq("--bootstrap-server", address, "--timeout", "3", "describe", "--status")
            assert (status, out) == (69, "") and text in err and err.count("\n") == 1, err
            status, out, err = mq("--bootstrap-server", address, "--timeout", "3", "--output", "json",
                                  "describe", "--status")
            assert status == 69 and err == "" and json.loads(out)["status"] == 69


# ---------------------------------------------------------------- arguments (Kafka's texts)


@pytest.mark.parametrize("argv,message", [
    (["describe"], "One of --status or --replication must be specified with describe sub-command"),
    (["describe", "--status", "--replication"],
     "Only one of --status or --replication should be specified with describe sub-command"),
    (["describe", "--status", "--human-readable"],
     "The option --human-readable is only supported along with --replication"),
])
def test_describe_flag_combinations_are_kafkas_errors(argv, message):
    status, out, err = mq("--bootstrap-controller", "127.0.0.1:1", *argv)
    assert (status, out, err) == (1, "", message + "\n")
    status, out, _ = mq("--bootstrap-controller", "127.0.0.1:1", "--output", "json", *argv)
    assert status == 1 and json.loads(out)["error"] == message   # the same code whatever --output asks


def test_connection_flag_is_required_and_exclusive():
    status, out, err = mq("describe", "--status")
    assert (status, out) == (1, "") and err.startswith("usage: kafka-metadata-quorum")
    assert "one of the arguments --bootstrap-server --bootstrap-controller is required" in err
    status, _, err = mq("--bootstrap-server", "a:1", "--bootstrap-controller", "b:2", "describe", "--status")
    assert status == 1 and "not allowed with argument" in err
    assert mq("--bootstrap-server", "a:1", "--output", "json")[0] == 1           # no sub-command, any --output


def test_missing_command_config_is_kafkas_message(tmp_path):
    path = tmp_path / "nope.properties"
    status, out, err = mq("--bootstrap-controller", "127.0.0.1:1", "--command-config", str(path), "describe",
                          "--status")
    assert (status, out, err) == (1, "", f"Properties file {path} does not exists!\n")


def test_command_config_sets_the_client_id(tmp_path, server):
    config = tmp_path / "admin.properties"
    config.write_text("client.id=quorum-check\n")
    assert mq("--bootstrap-controller", server.address, "--command-config", str(config), "describe",
              "--replication")[0] == 0
    assert {h.client_id for h, _ in server.requests} == {"quorum-check"}


def test_help_is_kafkas(server):
    status, out, _ = mq("--help")
    assert status == 0 and "This tool describes kraft metadata quorum status." in out
    status, out, _ = mq("--bootstrap-server", "a:1", "describe", "--help")
    # the help wraps where its formatter chooses: the words are compared, not the line breaks
    assert status == 0 and "Detailed information about the status of replication" in " ".join(out.split())


def test_umbrella_runs_it(server):
    from kraftsman.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = run_command(main.run, ["quorum", "--bootstrap-controller", server.address, "describe", "--status"],
                         Environment(stdout=out, stderr=err))
    assert (status, err.getvalue()) == (0, "") and out.getvalue().startswith(f"ClusterId:              {CLUSTER_ID}")


# ---------------------------------------------------------------- add-controller / remove-controller (KIP-853)


def voter_handler(*codes, leader=-1, leader_address=None, own=None):
    """Answer voter changes with `codes` in turn (then 0), DescribeQuorum as a follower of `leader`."""
    answers = list(codes)

    def answer(header, request):
        if header.request_api_key == 60:
            return describe_cluster_body(request)
        if header.request_api_key == 55:
            return quorum_body(leader=leader, part_error=6, leader_address=leader_address, own=own)
        name = "AddRaftVoterResponse" if header.request_api_key == 80 else "RemoveRaftVoterResponse"
        return body(name, error_code=answers.pop(0) if answers else 0, error_message=None)
    return answer


VOTER_RANGES = RANGES | {80: (0, 0), 81: (0, 0)}


@pytest.fixture
def controller_config(tmp_path):
    meta = tmp_path / "metadata"
    meta.mkdir()
    (meta / "meta.properties").write_text(f"version=1\ncluster.id={CLUSTER_ID}\nnode.id=4\ndirectory.id={DIR[2]}\n")
    config = tmp_path / "controller-4.properties"
    config.write_text("process.roles=controller\nnode.id=4\nlisteners=CONTROLLER://:9094,PLAIN://:9092\n"
                      "advertised.listeners=CONTROLLER://c4.example:9094\ncontroller.listener.names=CONTROLLER\n"
                      f"log.dirs={meta},/elsewhere\n")
    return config


def test_remove_controller_is_kafkas_text_and_retries_a_follower():
    with FakeServer(voter_handler(6, 0), ranges=VOTER_RANGES) as server:
        status, out, err = mq("--bootstrap-controller", server.address, "remove-controller", "-i", "3",
                              "-d", DIR[3])
        assert (status, out, err) == (0, f"Removed  KRaft controller 3 with directory id {DIR[3]}\n", "")
        sent = [r for h, r in server.requests if h.request_api_key == 81]
        assert len(sent) == 2 and (sent[-1].voter_id, str(Uuid(bytes(sent[-1].voter_directory_id)))) == (3, DIR[3])
        assert sent[-1].cluster_id is None


def test_voter_change_goes_to_the_leader_a_follower_names_outside_the_bootstrap_list():
    own: dict = {}
    with FakeServer(voter_handler(), ranges=VOTER_RANGES) as leader:
        with FakeServer(voter_handler(*[6] * 1000, leader=3, leader_address=leader.address, own=own),
                        ranges=VOTER_RANGES) as follower:
            own["address"] = follower.address
            status, out, err = mq("--bootstrap-controller", follower.address, "remove-controller", "-i", "3",
                                  "-d", DIR[3])
            assert (status, out, err) == (0, f"Removed  KRaft controller 3 with directory id {DIR[3]}\n", "")
            # DescribeCluster names no address here: the voter change is tried, then DescribeQuorum's Nodes followed
            assert [h.request_api_key for h, _ in follower.requests if h.request_api_key != 18] == [60, 81, 55]
            assert [h.request_api_key for h, _ in leader.requests if h.request_api_key != 18] == [81]


def test_remove_controller_dry_run_and_argument_errors():
    with FakeServer(voter_handler(), ranges=VOTER_RANGES) as server:
        status, out, _ = mq("--bootstrap-controller", server.address, "remove-controller", "--controller-id", "3",
                            "--controller-directory-id", DIR[3], "--dry-run")
        assert (status, out) == (0, f"DRY RUN of removing  KRaft controller 3 with directory id {DIR[3]}\n")
        assert not any(h.request_api_key == 81 for h, _ in server.requests)
        assert mq("--bootstrap-controller", server.address, "remove-controller", "-i", "-1", "-d", DIR[3]) == (
            1, "", "Invalid negative --controller-id: -1\n")
        status, _, err = mq("--bootstrap-controller", server.address, "remove-controller", "-i", "1", "-d", "bad")
        assert status == 1 and err.startswith("Failed to parse --controller-directory-id: Input string `bad`")
        assert mq("--bootstrap-controller", server.address, "remove-controller", "-i", "1")[0] == 1   # -d required


def test_voter_change_without_a_leader_until_the_deadline_exits_69():
    with FakeServer(voter_handler(*[6] * 1000), ranges=VOTER_RANGES) as server:
        status, out, err = mq("--bootstrap-controller", server.address, "--timeout", "1", "remove-controller",
                              "-i", "3", "-d", DIR[3])
        assert (status, out) == (69, "") and "every controller answered NOT_LEADER_OR_FOLLOWER to RemoveRaftVoter" in err


def test_voter_change_errors_are_one_line():
    with FakeServer(voter_handler(127), ranges=VOTER_RANGES) as server:
        status, out, err = mq("--bootstrap-controller", server.address, "remove-controller", "-i", "3", "-d", DIR[3])
        assert (status, out, err) == (1, "", "VOTER_NOT_FOUND: no message\n")
    with FakeServer(voter_handler(), ranges=RANGES) as server:
        status, _, err = mq("--bootstrap-controller", server.address, "remove-controller", "-i", "3", "-d", DIR[3])
        assert status == 1 and "does not support the RemoveRaftVoter API" in err


def test_add_controller_reads_the_controllers_own_config(controller_config):
    with FakeServer(voter_handler(0), ranges=VOTER_RANGES) as server:
        status, out, err = mq("--bootstrap-controller", server.address, "--command-config", str(controller_config),
                              "add-controller")
        assert (status, err) == (0, "")
        assert out == f"Added controller 4 with directory id {DIR[2]} and endpoints: CONTROLLER://c4.example:9094\n"
        (_, sent), = [(h, r) for h, r in server.requests if h.request_api_key == 80]
        assert (sent.voter_id, str(Uuid(bytes(sent.voter_directory_id))), sent.timeout_ms > 0) == (4, DIR[2], True)
        assert [(x.name, x.host, x.port) for x in sent.listeners] == [("CONTROLLER", "c4.example", 9094)]
        status, out, _ = mq("--bootstrap-controller", server.address, "--command-config", str(controller_config),
                            "--output", "json", "add-controller", "--dry-run")
        assert status == 0 and json.loads(out)["endpoints"] == ["CONTROLLER://c4.example:9094"]


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("node.id=4\n", ""), "node.id not found in configuration file. Is this a valid controller "
                                              "configuration file?"),
    (lambda t: t.replace("process.roles=controller", "process.roles=broker"),
     "process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration "
     "file?"),
    (lambda t: t.replace("controller.listener.names=CONTROLLER", "controller.listener.names=OTHER"),
     "Cannot find information about controller listener name: OTHER"),
    (lambda t: t.replace("log.dirs=", "nothing="), "Neither metadata.log.dir nor log.dirs were found. Is this a "
                                                   "valid controller configuration file?"),
])
def test_add_controller_config_errors_are_kafkas(controller_config, edit, message):
    controller_config.write_text(edit(controller_config.read_text()))
    assert mq("--bootstrap-controller", "127.0.0.1:1", "--command-config", str(controller_config),
              "add-controller", "--dry-run") == (1, "", message + "\n")


def test_add_controller_needs_the_config_and_its_meta_properties(controller_config, tmp_path):
    assert mq("--bootstrap-controller", "127.0.0.1:1", "add-controller") == (
        1, "", "You must supply the configuration file of the controller you are adding when using add-controller.\n")
    (tmp_path / "metadata" / "meta.properties").unlink()
    status, _, err = mq("--bootstrap-controller", "127.0.0.1:1", "--command-config", str(controller_config),
                        "add-controller")
    assert (status, err) == (1, f"Unable to read meta.properties from {tmp_path / 'metadata'}\n")


# ---------------------------------------------------------------- against a real 3-voter quorum on 127.0.0.1


loop = quorum_fixtures.loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with quorum_fixtures.running_quorum(tmp_path_factory.mktemp("metadata-quorum"), loop) as q:
        with quorum_fixtures.running_brokers(q, loop, (101,), unfenced=False, fetch=True):
            yield q


def wait_for(predicate, timeout: float = 20):
    return quorum_fixtures.wait_for(predicate, timeout, interval=0.2)


def test_status_matches_the_quorum(quorum, loop):
    from ...controller.server.quorum_fixtures import find_leader

    def stable_reading():
        """(leader, partition, printed lines) when no election happened around the command (a loaded machine)."""
        leader, part = loop.run(find_leader(quorum.addresses()))
        status, out, err = mq("--bootstrap-controller", quorum.bootstrap(), "--timeout", "20", "describe",
                              "--status")
        assert (status, err) == (0, "")
        after, _ = loop.run(find_leader(quorum.addresses()))
        lines = dict(line.split(":", 1) for line in out.splitlines())
        return (leader, part, lines) if after == leader == int(lines["LeaderId"]) else None
    leader, part, lines = wait_for(stable_reading, timeout=60)
    assert lines["ClusterId"].strip() == quorum.cluster_id
    assert int(lines["LeaderEpoch"]) >= part.leader_epoch
    assert int(lines["HighWatermark"]) >= part.high_watermark
    assert lines["CurrentVoters"].strip() == "[" + ", ".join(
        f'{{"id": {i}, "directoryId": null, "endpoints": ["CONTROLLER://127.0.0.1:{quorum.ports[i]}"]}}'
        for i in quorum.ids) + "]"          # a static quorum (controller.quorum.voters): no directory ids
    status, out, _ = mq("--bootstrap-server", quorum.bootstrap(), "--output", "json", "describe", "--status")
    obj = json.loads(out)
    assert status == 0 and obj["leader_id"] == leader
    assert [v["id"] for v in obj["current_voters"]] == quorum.ids


def test_replication_lists_the_leader_followers_and_the_fetching_broker(quorum):
    def replicas():
        status, out, err = mq("--bootstrap-controller", quorum.bootstrap(), "--output", "json", "--timeout", "20",
                              "describe", "--replication")
        assert status == 0, err
        rows = json.loads(out)["replicas"]
        return rows if any(r["status"] == "Observer" for r in rows) else None
    rows = wait_for(replicas)
    leader = rows[0]["node_id"]
    assert [(r["node_id"], r["status"]) for r in rows[:3]] == [(leader, "Leader")] + [
        (i, "Follower") for i in quorum.ids if i != leader]
    assert [r["node_id"] for r in rows if r["status"] == "Observer"] == [101]
    assert all(r["lag"] >= 0 for r in rows) and rows[0]["last_caught_up_timestamp"] is not None
    status, out, err = mq("--bootstrap-controller", quorum.bootstrap(), "describe", "--replication",
                          "--human-readable")
    assert (status, err) == (0, "")
    assert out.splitlines()[0].split("\t")[:3] == ["NodeId", "DirectoryId           ", "LogEndOffset"]
    assert out.splitlines()[1].split("\t")[4].rstrip().endswith(" ms ago")


def test_voter_changes_on_a_static_quorum_are_unsupported(quorum):
    status, out, err = mq("--bootstrap-controller", quorum.bootstrap(), "--timeout", "20", "remove-controller",
                          "-i", "3", "-d", DIR[3])
    assert (status, out) == (1, "") and err.startswith("UNSUPPORTED_VERSION") and err.count("\n") == 2
    assert err.splitlines()[1].startswith("kafka-metadata-quorum: hint: this quorum is static")   # what to do


def test_the_leader_is_reached_on_the_listener_the_client_came_in_through():
    from kraftsman.controller.client.admin import leader_endpoint

    nodes = {1: [("CONTROLLER", "127.0.0.1", 9093), ("SECURE", "127.0.0.1", 9193)],
             2: [("CONTROLLER", "127.0.0.1", 9094), ("SECURE", "127.0.0.1", 9194)]}
    assert leader_endpoint(nodes, 2, ("127.0.0.1", 9193)) == ("127.0.0.1", 9194)
    assert leader_endpoint(nodes, 2, ("127.0.0.1", 9093)) == ("127.0.0.1", 9094)
    assert leader_endpoint(nodes, 2, ("localhost", 9193)) == ("127.0.0.1", 9194)  # same port, other name
    assert leader_endpoint(nodes, 2, ("127.0.0.1", 7777)) is None  # unknown listener: ask the next address
    assert leader_endpoint(nodes, 3, ("127.0.0.1", 9193)) is None
    assert leader_endpoint({2: [("CONTROLLER", "c2", 9094)]}, 2, ("127.0.0.1", 9193)) is None  # not its listener
