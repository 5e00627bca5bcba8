"""kafka-acls' command-line rules and the ACLs a command line names, as Kafka 3.9's AclCommand builds them, and
its texts (no cluster: the checks run before anything is sent)."""
from __future__ import annotations

import shlex

import pytest

from kraftsman.cli.acls import texts
from kraftsman.cli.acls.bindings import Failed, Usage, check_args, filter_entries, patterns_to_add, resource_filters
from kraftsman.controller.client.admin.acls import AccessControlEntry, ResourcePattern

FLAGS = {"add", "remove", "list", "cluster", "producer", "consumer", "idempotent", "force", "help", "version"}


class Opts:
    """A parsed command line: every option with its values, in order."""

    def __init__(self, command_line: str):
        words, self.given = shlex.split(command_line), []
        while words:
            name = words.pop(0)[2:]
            self.given.append((name, None if name in FLAGS else words.pop(0)))

    def has(self, name):
        return any(n == name for n, _ in self.given)

    def values(self, name):
        return [v for n, v in self.given if n == name and v is not None]

    def value(self, name):
        values = self.values(name)
        return values[0] if values else None


S = "--bootstrap-server h:1 "


def usage(command_line: str) -> str:
    with pytest.raises(Usage) as e:
        opts = Opts(command_line)
        check_args(opts)
        filter_entries(opts) if opts.has("remove") else patterns_to_add(opts) if opts.has("add") else None
    return str(e.value)


@pytest.mark.parametrize("command_line, message", [
    (S + "--topic plain", "Command must include exactly one action: --list, --add, --remove. "),
    (S + "--add --operation Read --topic plain",
     "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."),
    (S + "--authorizer x --list", "Only one of --bootstrap-server or --authorizer must be specified"),
    ("--list", 'Missing required argument "[authorizer-properties]"'),
    ("--authorizer-properties a=b --command-config f --list",
     "The --command-config option can only be used with --bootstrap-server option"),
    (S + "--authorizer-properties a=b --list",
     "The --authorizer-properties option can only be used with --authorizer option"),
    (S + "--list --producer --topic t", 'Option "[list]" can\'t be used with option "[producer]"'),
    (S + "--add --producer --operation Read --topic t --allow-principal User:a",
     'Option "[producer]" can\'t be used with option "[operation]"'),
    (S + "--add --principal User:a --topic t", "The --principal option is only available if --list is set"),
    (S + "--add --producer --allow-principal User:a", "With --producer you must specify a --topic"),
    (S + "--add --idempotent --topic t --allow-principal User:a",
     "The --idempotent option is only available if --producer is set"),
    (S + "--add --consumer --topic t --allow-principal User:a",
     "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option "
     "should be specified."),
    (S + "--add --allow-principal User:a --operation Read",
     "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or "
     "--delegation-token <Delegation Token ID>"),
    (S + "--add --allow-principal User:a --operation Read --cluster",
     "ResourceType CLUSTER only supports operations Create, ClusterAction, DescribeConfigs, AlterConfigs, "
     "IdempotentWrite, Alter, Describe, All"),
    (S + "--add --allow-principal User:a --operation Nope --group g",
     "ResourceType GROUP only supports operations Read, Describe, Delete, All"),
    (S + "--add --allow-principal User:a --topic t --resource-pattern-type match",
     "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
])
def test_kafkas_refusals(command_line, message):
    assert usage(command_line) == message


def test_failures_inside_the_action_are_kafkas_catch_all():
    with pytest.raises(Failed, match="^expected a string in format principalType:principalName but got alice$"):
        patterns_to_add(Opts(S + "--add --allow-principal alice --topic t"))
    with pytest.raises(Failed, match="^Cannot parse argument 'lit' of option resource-pattern-type$"):
        resource_filters(Opts(S + "--list --topic t --resource-pattern-type lit"))
    with pytest.raises(Failed, match="^operation must not be ANY$"):
        patterns_to_add(Opts(S + "--add --allow-principal User:a --operation any --topic t"))


def test_the_recorded_adds_name_kafkas_entries():
    cluster = patterns_to_add(Opts(S + "--add --allow-principal User:alice --operation Describe --operation Alter "
                                       "--cluster"))
    assert {str(p): [str(a) for a in acls] for p, acls in cluster.items()} == {
        "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)": [
            "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)",
            "(principal=User:alice, host=*, operation=ALTER, permissionType=ALLOW)"]}
    deny = patterns_to_add(Opts(S + "--add --deny-principal User:bob --deny-host 10.0.0.1 --operation Write "
                                    "--topic plain"))
    assert [str(a) for a in deny[ResourcePattern(2, "plain", 3)]] == [
        "(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY)"]
    producer = patterns_to_add(Opts(S + "--add --allow-principal User:carol --producer --topic t-p3r2"))
    assert {a.operation for a in producer[ResourcePattern(2, "t-p3r2", 3)]} == {4, 5, 8}


def test_producer_consumer_idempotent_and_prefixed():
    found = patterns_to_add(Opts(S + "--add --allow-principal User:a --allow-principal User:b --allow-host h1 "
                                     "--producer --consumer --idempotent --topic t --group g --transactional-id ' x' "
                                     "--resource-pattern-type PREFIXED"))
    shown = {(p.resource_type, p.name, p.pattern_type): sorted((a.principal, a.operation) for a in acls)
             for p, acls in found.items()}
    assert shown == {
        (2, "t", 4): sorted((p, op) for p in ("User:a", "User:b") for op in (3, 4, 5, 8)),
        (5, " x", 4): sorted((p, op) for p in ("User:a", "User:b") for op in (4, 8)),
        (3, "g", 4): [("User:a", 3), ("User:b", 3)],
        (4, "kafka-cluster", 3): [("User:a", 12), ("User:b", 12)]}   # idempotent: always the LITERAL cluster
    assert all(a.host == "h1" for acls in found.values() for a in acls)
    # with a PREFIXED pattern type, --cluster names no resource
    assert resource_filters(Opts(S + "--list --cluster --resource-pattern-type prefixed"), die_if_none=False) == []


def test_remove_without_principals_names_whole_filters():
    found = filter_entries(Opts(S + "--remove --topic plain --group g --resource-pattern-type any"))
    assert found == {ResourcePattern(2, "plain", 1): [], ResourcePattern(3, "g", 1): []}


def test_blocks_keep_kafkas_trailing_spaces():
    pattern = ResourcePattern(4, "kafka-cluster", 3)
    acls = [AccessControlEntry("User:alice", "*", 8, 3), AccessControlEntry("User:alice", "*", 7, 3)]
    assert texts.block("Adding ACLs", pattern, acls) == (
        "Adding ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)\n"
        "\t(principal=User:alice, host=*, operation=ALTER, permissionType=ALLOW) \n\n")
    assert texts.remove_all_question(ResourcePattern(2, None, 1)) == (
        "Are you sure you want to delete all ACLs for resource filter "
        "`ResourcePattern(resourceType=TOPIC, name=<any>, patternType=ANY)`? (y/n)")
