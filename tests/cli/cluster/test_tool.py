"""kafka-cluster in-process against in-test servers: Kafka's texts and exit codes, kraftsman's additions."""
from __future__ import annotations

import io
import json
import time

from kraftsman.cli.cluster import tool as cluster_tool
from kraftsman.cli.cluster.commands import format_endpoints
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.controller.client.admin import Node

from ...controller.server.sync_fakes import FakeServer, body, http_server, silent_server

RANGES = {18: (0, 4), 3: (0, 12), 60: (0, 1), 64: (0, 0)}


def kc(*argv, variables=None):
    """Run kafka-cluster in-process (with `variables` as its whole environment, when given)."""
    out, err = io.StringIO(), io.StringIO()
    extra = {} if variables is None else {"env": variables}
    env = Environment(stdout=out, stderr=err, **extra)
    status = run_command(cluster_tool.run, list(argv), env, prog="kafka-cluster")
    return status, out.getvalue(), err.getvalue()


def describe_handler(cluster_id="abcdefghijklmnopqrstuv", brokers=((4, "h4", 9092, None),)):
    def handler(header, request):
        cls = body("DescribeClusterResponse").__class__
        nodes = [cls.DescribeClusterBroker(broker_id=i, host=h, port=p, rack=r) for i, h, p, r in brokers]
        return cls(cluster_id=cluster_id, controller_id=1, brokers=nodes,
                   endpoint_type=getattr(request, "endpoint_type", 1))
    return handler


def unregister_handler(*codes):
    answers = list(codes)

    def handler(header, request):
        if header.request_api_key == 60:
            return describe_handler()(header, request)
        return body("UnregisterBrokerResponse", error_code=answers.pop(0) if answers else 0)
    return handler


# ---------------------------------------------------------------- arguments (Kafka's argparse4j behaviour)


def test_connection_flag_is_required_and_exclusive():
    status, out, err = kc("cluster-id")
    assert status == 1 and out == ""
    assert err.startswith("usage: kafka-cluster cluster-id")
    assert "one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required" in err
    status, _, err = kc("unregister", "--id", "1", "-b", "a:1", "-C", "b:2")
    assert status == 1 and "not allowed with argument" in err


def test_unregister_needs_an_integer_id_whatever_the_output():
    assert kc("unregister", "-b", "a:1")[0] == 1
    assert kc("unregister", "--id", "x", "-b", "a:1", "--output=json")[0] == 1
    status, _, err = kc("unregister", "--id", "x", "-b", "a:1", "--output", "json")
    assert status == 1 and "invalid int value: 'x'" in err


def test_help_lists_kafkas_subcommands():
    status, out, _ = kc("--help")
    assert status == 0
    for text in ("The Kafka cluster tool.", "Get information about the ID of a cluster.", "Unregister a broker.",
                 "List endpoints"):
        assert text in out


def test_include_fenced_brokers_with_controllers_is_kafkas_error():
    status, out, err = kc("list-endpoints", "--include-fenced-brokers", "-C", "127.0.0.1:1")
    assert (status, out, err) == (1, "", "Cannot use --include-fenced-brokers with command list-endpoints\n")


def test_missing_config_file_is_one_line(tmp_path):
    status, _, err = kc("cluster-id", "-b", "a:1", "-c", str(tmp_path / "nope.properties"))
    assert status == 1 and err.count("\n") == 1 and "No such file or directory" in err


# ---------------------------------------------------------------- cluster-id


def test_cluster_id_through_describe_cluster():
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert kc("cluster-id", "-b", server.address) == (0, "Cluster ID: abcdefghijklmnopqrstuv\n", "")
        status, out, _ = kc("cluster-id", "-C", server.address, "--output", "json")
        assert json.loads(out) == {"command": "cluster-id", "status": 0, "cluster_id": "abcdefghijklmnopqrstuv"}
        # -C: one DescribeCluster looks for the active controller (as Kafka's Admin does), one is the answer
        assert [r.endpoint_type for h, r in server.requests if h.request_api_key == 60] == [1, 2, 2]


def test_cluster_id_null_is_kafkas_old_version_text_and_metadata_fallback():
    def handler(header, request):
        return body("MetadataResponse", cluster_id=None, controller_id=-1)
    with FakeServer(handler, ranges={18: (0, 4), 3: (0, 12)}) as server:
        assert kc("cluster-id", "-b", server.address) == (
            0, "No cluster ID found. The Kafka version is probably too old.\n", "")


def test_client_id_and_timeout_come_from_the_config_file(tmp_path):
    config = tmp_path / "admin.properties"
    config.write_text("client.id=playbook\nrequest.timeout.ms=400\n")
    with silent_server() as server:
        start = time.monotonic()
        status, _, err = kc("cluster-id", "-b", server.address, "-c", str(config))
        assert status == 69 and "no response in time" in err and time.monotonic() - start < 2
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        assert kc("cluster-id", "-b", server.address, "-c", str(config))[0] == 0
        assert {h.client_id for h, _ in server.requests} == {"playbook"}


DEPRECATED = ("Option --config has been deprecated and will be removed in a future version. "
              "Use --command-config instead.\n")


def kc_release(release, *argv, home=None):
    """Run kafka-cluster speaking for Kafka `release` (and with profiles under `home`)."""
    variables = {"KRAFTSMAN_KAFKA_VERSION": release, **({"XDG_CONFIG_HOME": str(home)} if home else {})}
    return kc(*argv, variables=variables)


def test_command_config_is_kafka_42s_name_and_config_the_deprecated_one(tmp_path):
    config = tmp_path / "admin.properties"
    config.write_text("client.id=playbook\n")
    answer = "Cluster ID: abcdefghijklmnopqrstuv\n"
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        for release in ("3.9", "4.0", "4.1", "4.2"):
            for flag in ("--command-config", "-c"):      # 4.2's names; kraftsman takes them for every release
                assert kc_release(release, "cluster-id", "-b", server.address, flag, str(config)) == (0, answer, "")
            notice = DEPRECATED if release == "4.2" else ""  # only 4.2 deprecates --config, on stdout
            assert kc_release(release, "cluster-id", "-b", server.address, "--config", str(config)) == (
                0, notice + answer, "")
            status, out, err = kc_release(release, "cluster-id", "-b", server.address, "--config", str(config),
                                          "--output", "json")    # stdout keeps one object: the notice goes aside
            assert status == 0 and json.loads(out)["cluster_id"] == "abcdefghijklmnopqrstuv" and err == notice
        assert {h.client_id for h, _ in server.requests} == {"playbook"}   # the file was read under each name
        for output in ("text", "json"):
            status, out, err = kc_release("4.2", "unregister", "--id", "4", "-b", server.address, "--config",
                                          str(config), "-c", str(config), "--output", output)
            assert (status, out) == (1, "") and err.endswith(
                "error: --config and --command-config cannot be specified together.\n")
        assert not [h for h, _ in server.requests if h.request_api_key == 64]    # refused before any request


def test_command_config_wins_over_the_profiles_client_config(tmp_path):
    profile_config, line_config = tmp_path / "profile.properties", tmp_path / "line.properties"
    profile_config.write_text("client.id=from-profile\n")
    line_config.write_text("client.id=from-line\n")
    with FakeServer(describe_handler(), ranges=RANGES) as server:
        (tmp_path / "kraftsman").mkdir()
        (tmp_path / "kraftsman" / "config.yaml").write_text(
            f"current-profile: lab\nprofiles:\n  lab:\n    bootstrap-server: {server.address}\n"
            f"    client-config: {profile_config}\n")
        for argv, client_id in ((["--command-config", str(line_config)], "from-line"), ([], "from-profile"),
                                (["--config", str(line_config)], "from-line")):
            server.requests.clear()
            assert kc_release("3.9", "cluster-id", *argv, home=tmp_path)[0] == 0
            assert {h.client_id for h, _ in server.requests} == {client_id}


# ---------------------------------------------------------------- unreachable clusters (69, one line, bounded)


def test_closed_port_wrong_host_and_http_server_exit_69_with_one_line():
    with FakeServer() as server:
        closed = server.address
    with http_server() as http:
        for address, text in ((closed, "cannot connect"), ("no-such-host.invalid:9092", "cannot resolve host"),
                              (http.address, "does not speak the Kafka protocol")):
            start = time.monotonic()
            status, out, err = kc("unregister", "--id", "3", "-b", address, "--timeout", "3")
            assert (status, out) == (69, "") and text in err and err.count("\n") == 1, err
            assert time.monotonic() - start < 3.5


# ---------------------------------------------------------------- unregister


def test_unregister_prints_kafkas_text_and_sends_the_id():
    with FakeServer(unregister_handler(0), ranges=RANGES) as server:
        assert kc("unregister", "--id", "7", "-b", server.address) == (0, "Broker 7 is no longer registered.\n", "")
        assert [r.broker_id for h, r in server.requests if h.request_api_key == 64] == [7]


def test_unregister_retries_not_controller_then_succeeds():
    with FakeServer(unregister_handler(41, 41, 0), ranges=RANGES) as server:
        assert kc("unregister", "-i", "7", "-C", server.address, "--timeout", "5")[0] == 0
        assert sum(h.request_api_key == 64 for h, _ in server.requests) == 3


def test_an_error_without_a_message_shows_kafkas_default_message():
    """A refusal with no message reads as Kafka's ApiException does: the error's name and its default message."""
    with FakeServer(unregister_handler(31), ranges=RANGES) as server:
        status, out, err = kc("unregister", "--id", "9", "-b", server.address)
    assert (status, out, err) == (1, "", "CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed.\n")


def test_unregister_not_registered_is_1_or_0_with_missing_ok():
    with FakeServer(unregister_handler(102, 102), ranges=RANGES) as server:
        status, out, err = kc("unregister", "--id", "9", "-b", server.address)
        assert (status, out) == (1, "") and err == ("BROKER_ID_NOT_REGISTERED: The given broker ID was not "
                                                    "registered.\n")
        status, out, _ = kc("unregister", "--id", "9", "-b", server.address, "--missing-ok", "--output", "json")
        assert status == 0 and json.loads(out)["result"] == "not_registered"


def test_unregister_unsupported_api_is_kafkas_message_and_exit_0():
    with FakeServer(unregister_handler(), ranges={18: (0, 4), 60: (0, 1)}) as server:
        assert kc("unregister", "--id", "4", "-b", server.address) == (
            0, "The target cluster does not support the broker unregistration API.\n", "")


def test_require_fenced_refuses_an_active_broker_and_dry_run_changes_nothing():
    with FakeServer(unregister_handler(0), ranges=RANGES) as server:
        status, out, err = kc("unregister", "--id", "4", "-b", server.address, "--require-fenced")
        assert (status, out) == (4, "") and "still active" in err
        status, out, _ = kc("unregister", "--id", "4", "-b", server.address, "--dry-run", "--output", "json")
        assert status == 0 and json.loads(out)["active"] is True
        assert not any(h.request_api_key == 64 for h, _ in server.requests)
        assert kc("unregister", "--id", "5", "-b", server.address, "--require-fenced")[0] == 0   # not listed


# ---------------------------------------------------------------- list-endpoints (Kafka 4.0 layout)


def test_endpoint_table_uses_javas_padding():
    nodes = [Node(1, "host-a", 9092, "rack-one"), Node(2, "h", 9093, None)]
    # "%-10s %-6s %-10s %-8s %-10s %-15s%n": host width = len("host-a"), rack width = len("rack-one")
    assert format_endpoints(nodes, controllers=False).splitlines() == [
        "ID         HOST   PORT       RACK     STATE      ENDPOINT_TYPE  ",
        "1          host-a 9092       rack-one unfenced   broker         ",
        "2          h      9093       null     unfenced   broker         "]
    assert format_endpoints([], controllers=True) == "ID         " + "HOST".ljust(100) + " PORT       RACK       ENDPOINT_TYPE  \n"


def test_list_endpoints_against_a_server():
    brokers = ((5, "b5", 9095, "r1"), (4, "b4", 9094, "r0"))
    with FakeServer(describe_handler(brokers=brokers), ranges=RANGES) as server:
        status, out, _ = kc("list-endpoints", "-C", server.address)
        assert status == 0
        assert [line.split()[0] for line in out.splitlines()] == ["ID", "4", "5"]
        assert out.splitlines()[1] == "4          b4 9094       r0 controller     "


def test_server_without_describe_cluster_or_metadata():
    with FakeServer(ranges={18: (0, 4)}) as server:
        status, out, err = kc("cluster-id", "-C", server.address)
        assert (status, out) == (1, "") and "does not support the Metadata API" in err
        status, out, err = kc("list-endpoints", "-b", server.address)
        assert (status, err) == (0, "") and "does not support the Metadata API" in out
        status, out, err = kc("unregister", "--id", "1", "-b", server.address, "--require-fenced")
        assert status == 1 and err.startswith("cannot tell whether broker 1 is active")


def test_umbrella_command_runs_kafka_cluster():
    from kraftsman.cli import main

    out, err = io.StringIO(), io.StringIO()
    status = run_command(main.run, ["cluster", "cluster-id", "-b", "bad"], Environment(stdout=out, stderr=err))
    assert (status, err.getvalue()) == (1, "Invalid url in bootstrap.servers: bad\n")
