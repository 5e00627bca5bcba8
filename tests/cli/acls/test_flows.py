"""kafka-acls' list, add and remove flows on a kraftsman controller (StandardAuthorizer) and a simulated Kafka 3.9
broker: the blocks they print and what they change."""
from __future__ import annotations

import time

import pytest

from kraftsman.cli.acls.actions import NoAnswer, add_acls, list_acls, remove_acls
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.admin import Admin

from ...controller.client.small_cluster import small_cluster
from ...controller.server.quorum_fixtures import loop_fixture
from .test_rules import Opts

loop = loop_fixture()
PLAIN = "ResourcePattern(resourceType=TOPIC, name=plain, patternType=LITERAL)"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, loop):
    with small_cluster(tmp_path_factory.mktemp("acls-flows"), loop) as c:
        yield c


def admin(cluster, controllers: bool = False) -> Admin:
    address = cluster.controller if controllers else cluster.server
    return Admin(sc.parse_addresses(address), sc.ClientConfig(bootstrap_controllers=controllers),
                     time.monotonic() + 15)


def run(cluster, action, command_line: str, **kw):
    out = []
    result = action(Opts("--bootstrap-server x " + command_line), admin(cluster, kw.pop("controllers", False)),
                    out.append, **kw)
    return "".join(out), result


def blocks(text: str) -> set:
    """The fixture's comparison: resource blocks and their entries as sets."""
    return {(chunk.split("\n")[0], frozenset(line.strip(" \t") for line in chunk.split("\n")[1:] if line.strip()))
            for chunk in text.split("\n\n") if chunk}


def wait_acls(cluster, count: int) -> None:
    cluster.sync(lambda image: len(image.acls.entries) == count)


def test_empty_list_prints_nothing(cluster):
    assert run(cluster, list_acls, "--list") == ("", [])


def test_add_list_match_and_remove_as_the_recording(cluster):
    text, changed = run(cluster, add_acls, "--add --allow-principal User:alice --operation Read --topic plain",
                        ask_existing=True)
    assert changed and text == (f"Adding ACLs for resource `{PLAIN}`: \n"
                                " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n")
    run(cluster, add_acls, "--add --deny-principal User:bob --deny-host 10.0.0.1 --operation Write --topic plain")
    run(cluster, add_acls, "--add --allow-principal User:alice --resource-pattern-type prefixed --topic t-")
    run(cluster, add_acls, "--add --allow-principal User:carol --producer --topic t-p3r2")
    wait_acls(cluster, 6)
    text, _ = run(cluster, list_acls, "--list --topic plain")     # acls-list-topic
    assert blocks(text) == {(f"Current ACLs for resource `{PLAIN}`: ", frozenset({
        "(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY)",
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"}))}
    text, _ = run(cluster, list_acls, "--list --topic t-p3r2 --resource-pattern-type match")   # -list-topic-match
    assert blocks(text) == {
        ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t-p3r2, patternType=LITERAL)`: ",
         frozenset(f"(principal=User:carol, host=*, operation={op}, permissionType=ALLOW)"
                   for op in ("CREATE", "WRITE", "DESCRIBE"))),
        ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t-, patternType=PREFIXED)`: ",
         frozenset({"(principal=User:alice, host=*, operation=ALL, permissionType=ALLOW)"}))}
    text, shown = run(cluster, list_acls, "--list --principal User:alice", controllers=True)
    assert text.startswith("ACLs for principal `User:alice`\n") and len(shown) == 2
    _, changed = run(cluster, add_acls, "--add --allow-principal User:alice --operation Read --topic plain",
                     ask_existing=True)
    assert not changed                                                   # already so
    text, removed = run(cluster, remove_acls, "--remove --allow-principal User:alice --operation Read --topic plain",
                        read_answer=lambda: None, force=True)
    assert (text, [str(b) for b in removed]) == ("", [f"(pattern={PLAIN}, entry=(principal=User:alice, host=*, "
                                                   "operation=READ, permissionType=ALLOW))"])
    wait_acls(cluster, 5)
    text, _ = run(cluster, list_acls, "--list --topic plain")            # acls-list-topic-after-remove
    assert text == (f"Current ACLs for resource `{PLAIN}`: \n"
                    " \t(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY) \n\n")


def test_remove_asks_first(cluster):
    answers = iter(["n\n"])
    text, removed = run(cluster, remove_acls, "--remove --topic plain", read_answer=lambda: next(answers, None),
                        force=False)
    assert (text, removed) == (f"Are you sure you want to delete all ACLs for resource filter `{PLAIN}`? (y/n)\n",
                               [])
    with pytest.raises(NoAnswer):
        run(cluster, remove_acls, "--remove --topic plain", read_answer=lambda: None, force=False)
    _, removed = run(cluster, remove_acls, "--remove --topic plain --cluster", read_answer=lambda: "Y\n", force=False)
    assert {b.pattern.name for b in removed} == {"plain"}     # no cluster ACL here
    wait_acls(cluster, 4)
    _, removed = run(cluster, remove_acls, "--remove --topic plain", read_answer=lambda: "y", force=False)
    assert removed == []

