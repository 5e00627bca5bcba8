"""kafka-acls live: on the fixture cluster (kraftsman controllers 1-3 with the StandardAuthorizer, simulated Kafka 3.9
brokers 4 and 5) ACLs added, listed, matched and removed through --bootstrap-server and --bootstrap-controller,
the removal question, "changed" and "already so" in json/yaml mode, bad input in Kafka's words and every JSON
document valid against cli/schemas/acls.schema.json; on a cluster without super users, the StandardAuthorizer
enforcing an ACL kafka-acls wrote."""
from __future__ import annotations

import io
import json

import pytest
import yaml

from kraftsman.cli.acls.tool import run
from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment

from ...admin_cluster import BOOTSTRAP_CONTROLLER, BOOTSTRAP_SERVER, FIXTURES, AdminCluster
from ..test_json_schemas import Checker

B, C = ("--bootstrap-server", BOOTSTRAP_SERVER), ("--bootstrap-controller", BOOTSTRAP_CONTROLLER)
J = ("--output", "json")
ORDERS = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"

if not FIXTURES.parent.is_dir():
    pytest.skip("the shared fixtures are absent (the fixture cluster takes its settings from them)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with AdminCluster(tmp_path_factory.mktemp("acls-live")) as started:
        yield started


def ka(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=io.StringIO(stdin), env={})
    status = run_command(run, list(argv), env, prog="kafka-acls")
    return status, out.getvalue(), err.getvalue()


def entries(text: str) -> dict[str, set[str]]:
    """Return each resource block's entries (the fixture compares them as sets)."""
    found = {}
    for chunk in filter(None, text.split("\n\n")):
        head, *lines = chunk.split("\n")
        found[head] = {line.strip(" \t") for line in lines if line.strip()}
    return found


def test_add_list_and_remove_through_brokers_and_controllers(cluster):
    status, out, err = ka(*B, "--add", "--allow-principal", "User:ann", "--allow-principal", "User:bo",
                          "--operation", "Read", "--operation", "Describe", "--topic", "orders")
    assert (status, err) == (0, "") and out.startswith(f"Adding ACLs for resource `{ORDERS}`: \n \t(principal=User:")
    assert len(entries(out)[f"Adding ACLs for resource `{ORDERS}`: "]) == 4
    assert ka(*C, "--add", "--allow-principal", "User:ann", "--consumer", "--topic", "orders", "--group", "g")[0] == 0
    cluster.sync()
    listed = entries(ka(*B, "--list", "--topic", "orders")[1])
    assert listed == {f"Current ACLs for resource `{ORDERS}`: ": {
        f"(principal=User:{p}, host=*, operation={op}, permissionType=ALLOW)"
        for p in ("ann", "bo") for op in ("READ", "DESCRIBE")}}
    status, out, _ = ka(*C, "--list", "--principal", "User:bo")
    assert status == 0 and out.startswith("ACLs for principal `User:bo`\n") and "User:ann" not in out
    status, out, _ = ka(*B, "--list", "--group", "g", "--resource-pattern-type", "match")
    assert "ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)" in out
    assert ka(*B, "--remove", "--force", "--allow-principal", "User:bo", "--operation", "Read", "--operation",
              "Describe", "--topic", "orders") == (0, "", "")
    cluster.sync()
    assert "User:bo" not in ka(*B, "--list")[1]


def test_remove_asks_first(cluster):
    ka(*B, "--add", "--allow-principal", "User:cy", "--topic", "asked")
    cluster.sync()
    question = ("Are you sure you want to delete all ACLs for resource filter `ResourcePattern(resourceType=TOPIC, "
                "name=asked, patternType=LITERAL)`? (y/n)\n")
    assert ka(*B, "--remove", "--topic", "asked", stdin="n\n") == (0, question, "")
    assert ka(*B, "--remove", "--topic", "asked") == \
        (1, question, "no answer on stdin: nothing removed (--force removes without asking)\n")
    cluster.sync()
    assert "User:cy" in ka(*B, "--list", "--topic", "asked")[1]
    assert ka(*B, "--remove", "--topic", "asked", stdin="y\n") == (0, question, "")
    cluster.sync()
    assert ka(*B, "--list", "--topic", "asked") == (0, "", "")


def test_changed_and_already_so_in_json_and_yaml(cluster):
    add = (*B, "--add", "--allow-principal", "User:dee", "--operation", "Write", "--topic", "json-t")
    status, out, _ = ka(*add, *J)
    doc = json.loads(out)
    assert (status, doc["changed"], doc["acls"][0]["operation"]) == (0, True, "WRITE")
    cluster.sync()
    status, out, _ = ka(*add, "--output", "yaml")
    assert (status, yaml.safe_load(out)["changed"]) == (6, False)
    status, out, err = ka(*B, "--remove", "--topic", "json-t", *J, stdin="y\n")
    assert status == 0 and json.loads(out)["removed"][0]["principal"] == "User:dee" and err.startswith("Are you sure")
    cluster.sync()
    status, out, _ = ka(*B, "--remove", "--force", "--topic", "json-t", *J)
    assert (status, json.loads(out)) == (6, {"command": "remove", "status": 6, "changed": False, "removed": []})


def test_bad_input_in_kafkas_words(cluster):
    status, out, err = ka(*B, "--add", "--allow-principal", "alice", "--topic", "t")
    assert (status, err) == (1, "")
    assert out.startswith("Error while executing ACL command: expected a string in format principalType:principalName "
                          "but got alice\njava.lang.IllegalArgumentException: expected a string")
    status, out, err = ka(*B, "--add", "--allow-principal", "User:a", "--operation", "Read", "--cluster")
    assert status == 1 and err.startswith("ResourceType CLUSTER only supports operations Create, ClusterAction, ")
    status, out, err = ka(*B, "--list", "--bogus")
    assert status == 1 and err.startswith('Exception in thread "main" joptsimple.UnrecognizedOptionException: bogus '
                                          'is not a recognized option\n\tat ')
    status, out, err = ka("--authorizer-properties", "zookeeper.connect=z:2181", "--list")
    assert status == 1 and err.splitlines()[0].startswith("Warning: support for ACL configuration directly")
    status, out, err = ka("--bootstrap-server", "127.0.0.1:31999", "--list")
    assert status == 69 and out.startswith("Error while executing ACL command: ") and err == ""
    assert "Traceback" not in out


def test_json_outputs_follow_the_schema(cluster):
    check = Checker("acls", one_line=True)
    check(ka(*B, "--add", "--allow-principal", "User:eve", "--producer", "--topic", "s", *J), 0, "added")
    cluster.sync()
    check(ka(*B, "--add", "--allow-principal", "User:eve", "--producer", "--topic", "s", *J), 6, "unchanged")
    doc = check(ka(*B, "--list", "--topic", "s", *J), 0, "list")
    assert {a["operation"] for a in doc["acls"]} == {"WRITE", "DESCRIBE", "CREATE"}
    check(ka(*B, "--remove", "--force", "--topic", "s", *J), 0, "removed")
    check(ka(*B, "--add", "--topic", "s", *J), 1, "error")
    check(ka("--bootstrap-server", "127.0.0.1:31999", "--list", *J), 69, "error")
    check.all_seen()


def test_tab_completes_live_principals(cluster):
    from ..completion.test_complete import candidates

    ka(*B, "--add", "--allow-principal", "User:tabby", "--topic", "tab")
    cluster.sync()
    # bash splits words at ':', so the candidate is what follows it
    assert "tabby" in candidates(f"kafka-acls --bootstrap-server {BOOTSTRAP_SERVER} --list --principal User:t")
    assert "User:tabby" in candidates(f"kafka-acls --bootstrap-server {BOOTSTRAP_SERVER} --list --principal Us")
    assert candidates("kafka-acls --bootstrap-server 127.0.0.1:31999 --list --principal ") == []   # silent


def test_the_standard_authorizer_enforces_what_kafka_acls_wrote(tmp_path_factory):
    """Without super users (every PLAINTEXT client, the brokers too, is User:ANONYMOUS): once kafka-acls has allowed
    the brokers' CLUSTER_ACTION and then denied ALTER on the cluster (a DENY wins over an ALLOW), the controller's
    StandardAuthorizer refuses the next ACL change, which Kafka's texts report."""
    from ...controller.client.small_cluster import small_cluster
    from ...loop_thread import LoopThread

    security = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found": "true"}
    loop = LoopThread("acls-authorizer")
    try:
        with small_cluster(tmp_path_factory.mktemp("acls-authorizer"), loop, security=security) as small:
            server = ("--bootstrap-server", small.server)
            # an ACL on the cluster ends allow.everyone.if.no.acl.found there: the brokers' actions and ALTER allowed
            assert ka(*server, "--add", "--allow-principal", "User:ANONYMOUS", "--operation", "ClusterAction",
                      "--operation", "Describe", "--operation", "Alter", "--cluster")[0] == 0
            assert ka(*server, "--add", "--deny-principal", "User:ANONYMOUS", "--operation", "Alter",
                      "--cluster")[0] == 0
            small.sync(lambda image: len(image.acls.entries) == 4)
            status, out, err = ka(*server, "--add", "--allow-principal", "User:x", "--topic", "t")
            assert (status, err) == (1, "")
            assert "\nError while executing ACL command: org.apache.kafka.common.errors.ClusterAuthorizationException: " \
                   "Cluster authorization failed.\njava.util.concurrent.ExecutionException: " in out
            assert ka(*server, "--list", "--cluster")[1].count("operation=ALTER, permissionType=DENY") == 1
            assert ka(*server, "--list", "--topic", "t") == (0, "", "")          # nothing was added
    finally:
        loop.close()
