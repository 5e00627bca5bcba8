"""kafka-configs' command-line rules, --add-config parsing and texts, as Kafka 3.9's ConfigCommand has them
(no cluster: the checks run before anything is sent)."""
from __future__ import annotations

import shlex

import pytest

from kraftsman.cli.configs import texts
from kraftsman.cli.configs.add_config import (
    ConfigFileError,
    configs_to_add,
    configs_to_delete,
    parse_add_config,
    quota_value,
    scram_credential,
)
from kraftsman.cli.configs.entities import (
    Occurrences,
    Refusal,
    Usage,
    check_args,
    check_names_per_type,
    entity_names,
    entity_types,
)
from kraftsman.controller.client.admin.results import ConfigEntry, ConfigSynonym

FLAGS = {"alter", "describe", "all", "entity-default", "force", "client-defaults", "user-defaults", "broker-defaults",
         "ip-defaults"}


def opts(command_line: str) -> Occurrences:
    """Parse a command line the way joptsimple hands options over (flags take no value)."""
    words, given = shlex.split(command_line), []
    while words:
        name = words.pop(0)[2:]
        given.append((name, None if name in FLAGS else words.pop(0)))
    return Occurrences(given)


def refusal(command_line: str):
    with pytest.raises((Usage, Refusal)) as e:
        o = opts(command_line)
        check_args(o)
        check_names_per_type(o)
    return type(e.value).__name__, str(e.value)


S = "--bootstrap-server h:1 "


@pytest.mark.parametrize("command_line, expected", [
    ("--entity-type topics", ("Usage", "Command must include exactly one action: --describe, --alter")),
    (S + "--describe --alter --entity-type topics", ("Usage", "Command must include exactly one action: --describe, "
                                                              "--alter")),
    (S + "--describe --entity-type topics --add-config a=b",
     ("Usage", 'Option "[describe]" can\'t be used with option "[add-config]"')),
    (S + "--describe --entity-type topics --entity-type topics",
     ("Refusal", "Duplicate entity type(s) specified: topics")),
    (S + "--describe --entity-type nope", ("Refusal", "Invalid entity type nope, the entity type must be one of "
                                                      "topics, clients, users, brokers, ips, broker-loggers, "
                                                      "client-metrics with a --bootstrap-server or "
                                                      "--bootstrap-controller argument")),
    ("--zookeeper z --describe --entity-type topics",
     ("Refusal", "Invalid entity type topics, the entity type must be one of users, brokers with a --zookeeper "
                 "argument")),
    (S + "--describe", ("Refusal", "At least one entity type must be specified")),
    (S + "--describe --entity-type topics --entity-type users",
     ("Refusal", "Only 'users' and 'clients' entity types may be specified together")),
    (S + "--describe --entity-name x --topic t",
     ("Refusal", "--entity-{type,name,default} should not be used in conjunction with specific entity flags")),
    ("--describe --entity-type users", ("Refusal", "One of the required --bootstrap-server, --boostrap-controller, "
                                                    "or --zookeeper arguments must be specified")),
    (S + "--bootstrap-controller c:1 --describe --entity-type brokers --entity-name 4",
     ("Refusal", "Only one of --bootstrap-server, --boostrap-controller, and --zookeeper can be specified")),
    (S + "--describe --entity-type brokers --entity-name x",
     ("Refusal", "The entity name for brokers must be a valid integer broker id, but it is: x")),
    (S + "--describe --broker-logger 99999999999",
     ("Refusal", "The entity name for broker-loggers must be a valid integer broker id, but it is: 99999999999")),
    (S + "--describe --entity-type broker-loggers",
     ("Refusal", "an entity name must be specified with --describe of broker-loggers")),
    (S + "--alter --entity-type users --add-config a=b",
     ("Refusal", "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips")),
    (S + "--alter --entity-type topics --add-config a=b",
     ("Refusal", "an entity name must be specified with --alter of topics")),
    (S + "--alter --topic t --add-config a=b --add-config-file f",
     ("Refusal", "Only one of --add-config or --add-config-file must be specified")),
    (S + "--alter --topic t",
     ("Refusal", "At least one of --add-config, --add-config-file, or --delete-config must be specified with "
                 "--alter")),
    (S + "--alter --entity-type users --entity-name a --entity-type clients --add-config a=b",
     ("Refusal", "An entity name must be specified for every entity type")),
    (S + "--describe --topic a --topic b",
     ("Refusal", "Found multiple arguments for option topic, but you asked for only one")),
])
def test_kafkas_refusals_in_kafkas_order(command_line, expected):
    assert refusal(command_line) == expected


def test_the_recorded_refusal_of_both_bootstraps():
    # configs-both-bootstraps: one line on stderr, rc 1 (the caller prints a Refusal without the help)
    assert refusal("--bootstrap-server 127.0.0.1:31014 --bootstrap-controller 127.0.0.1:31001 --describe "
                   "--entity-type brokers --entity-name 4") == (
        "Refusal", "Only one of --bootstrap-server, --boostrap-controller, and --zookeeper can be specified")


@pytest.mark.parametrize("command_line, types, names", [
    ("--entity-type topics --entity-name t", ["topics"], ["t"]),
    ("--entity-type users --entity-default --entity-type clients --entity-name c", ["users", "clients"], ["", "c"]),
    ("--entity-type clients --entity-name c --entity-type users --entity-default", ["clients", "users"], ["c", ""]),
    ("--user alice --client-defaults", ["users", "clients"], ["alice", ""]),
    ("--broker-defaults", ["brokers"], [""]),
    ("--entity-type users", ["users"], []),
])
def test_entity_types_and_names_follow_kafkas_order(command_line, types, names):
    o = opts(command_line)
    assert (entity_types(o), entity_names(o)) == (types, names)


def test_valid_alters_pass_every_check():
    for line in ("--alter --entity-type topics --entity-name plain --add-config 'retention.ms=86400000,"
                 "cleanup.policy=[compact,delete]'",
                 "--alter --entity-type brokers --entity-default --delete-config log.cleaner.threads",
                 "--alter --add-config SCRAM-SHA-256=[iterations=8192,password=pw] --entity-type users "
                 "--entity-name alice", "--describe --entity-type users", "--describe --entity-type clients"):
        o = opts(S + line)
        check_args(o)
        check_names_per_type(o)


@pytest.mark.parametrize("text, parsed", [
    ("retention.ms=86400000,cleanup.policy=[compact,delete]",
     {"retention.ms": "86400000", "cleanup.policy": "compact,delete"}),
    ("SCRAM-SHA-256=[iterations=8192,password=pw]", {"SCRAM-SHA-256": "iterations=8192,password=pw"}),
    (" a = b , c=[x,y] ", {"a": "b", "c": "x,y"}),
    ("ssl.endpoint.identification.algorithm=", {"ssl.endpoint.identification.algorithm": ""}),
    ("a=1,a=2,", {"a": "2"}),
])
def test_add_config_splits_outside_brackets(text, parsed):
    assert parse_add_config(text) == parsed


@pytest.mark.parametrize("text", ["a", "a=b=c", ",a=b", "", "a=b,,c=d"])
def test_add_config_pairs_must_be_key_val(text):
    with pytest.raises(Refusal, match=r'^Invalid entity config: all configs to be added must be in the format '
                                      r'"key=val"\.$'):
        parse_add_config(text)


def test_add_config_file_first_then_add_config_and_key_characters(tmp_path):
    path = tmp_path / "c.properties"
    path.write_text("a=1\nb = 2\n")
    warnings = []
    got = configs_to_add(opts(f"--add-config-file {path} --add-config b=3,message.format.version=3.0"),
                         warnings.append)
    assert got == {"a": "1", "b": "3", "message.format.version": "3.0"}
    assert warnings[0].startswith("WARNING: The configuration message.format.version=3.0 is specified.")
    with pytest.raises(Refusal, match="^Invalid character found for config key: a b$"):
        configs_to_add(opts("--add-config 'a b=1'"), warnings.append)
    with pytest.raises(ConfigFileError) as missing:
        configs_to_add(opts(f"--add-config-file {tmp_path / 'nope'}"), warnings.append)
    assert missing.value.java == f"java.nio.file.NoSuchFileException: {tmp_path / 'nope'}"
    assert configs_to_delete(opts("--delete-config ' a ,b' --delete-config c")) == ["a", "b", "c"]


def test_scram_values_and_quota_doubles():
    assert scram_credential("SCRAM-SHA-256", "iterations=8192,password=pw") == (8192, "pw")
    assert scram_credential("SCRAM-SHA-512", "password=a=b,c") == (4096, "a=b,c")
    assert scram_credential("SCRAM-SHA-512", "iterations=-1,password=x") == (4096, "x")
    with pytest.raises(Refusal, match="^Invalid credential property SCRAM_SHA_256=pw$"):
        scram_credential("SCRAM-SHA-256", "pw")
    with pytest.raises(Refusal, match="^Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256$"):
        scram_credential("SCRAM-SHA-256", "iterations=100,password=x")
    with pytest.raises(Refusal, match='^For input string: ""$'):
        scram_credential("SCRAM-SHA-256", "iterations=,password=x")
    assert [quota_value("k", v) for v in ("1024", " 1e3 ", "2.5d", "-0", ".5")] == [1024.0, 1000.0, 2.5, -0.0, 0.5]
    with pytest.raises(Refusal, match="^Cannot parse quota configuration value for k: 1_000$"):
        quota_value("k", "1_000")


def test_describe_texts_match_the_recording():
    entry = ConfigEntry("cleanup.policy", "compact", 1, synonyms=[ConfigSynonym("cleanup.policy", "compact", 1),
                                                                  ConfigSynonym("log.cleanup.policy", "delete", 5)])
    assert texts.config_line(entry) == ("  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                                        "cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}")
    secret = ConfigEntry("ssl.key.password", None, 2, sensitive=True,
                         synonyms=[ConfigSynonym("ssl.key.password", None, 2)])
    assert texts.config_line(secret) == ("  ssl.key.password=null sensitive=true "
                                         "synonyms={DYNAMIC_BROKER_CONFIG:ssl.key.password=null}")
    assert texts.describe_header("topics", "t-cfg", False) == "Dynamic configs for topic t-cfg are:"
    assert texts.describe_header("brokers", "", False) == "Default configs for brokers in the cluster are:"
    assert texts.describe_header("brokers", "4", True) == "All configs for broker 4 are:"
    assert texts.quota_line([("client-id", "c1")], [("consumer_byte_rate", 2048.0), ("producer_byte_rate", 1024.0)]) \
        == "Quota configs for client-id 'c1' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0"
    assert texts.quota_line([("client-id", None), ("user", "u")], [("request_percentage", 1e7)]) == \
        "Quota configs for user-principal 'u', the default client-id are request_percentage=1.0E7"
    assert texts.scram_line("alice", [("SCRAM-SHA-256", 8192)]) == \
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192"
    assert texts.completed_line("topics", "plain") == "Completed updating config for topic plain."
    assert texts.completed_line("users", "") == "Completed updating default config for users in the cluster."


def test_shown_entries_keep_the_dynamic_source_sorted_in_java_order():
    entries = [ConfigEntry("b", "1", 2), ConfigEntry("a", "1", 5), ConfigEntry("B", "1", 2), ConfigEntry("c", "1", 3)]
    assert [e.name for e in texts.shown_entries(entries, "brokers", "4", False)] == ["B", "b"]
    assert [e.name for e in texts.shown_entries(entries, "brokers", "", False)] == ["c"]
    assert [e.name for e in texts.shown_entries(entries, "brokers", "4", True)] == ["B", "a", "b", "c"]


def test_valid_config_names_per_entity_type():
    from kraftsman.cli.configs.config_names import add_config_help, names

    assert names("users") == ["SCRAM-SHA-256", "SCRAM-SHA-512", "consumer_byte_rate", "controller_mutation_rate",
                              "producer_byte_rate", "request_percentage"]
    assert names("ips") == ["connection_creation_rate"] and names("broker-loggers") == []
    brokers = names("brokers")
    assert {"log.cleaner.threads", "log.retention.ms", "leader.replication.throttled.rate"} <= set(brokers)
    assert "broker.id" not in brokers and "node.id" not in brokers       # read-only configs are not listed
    assert {"cleanup.policy", "retention.ms", "min.insync.replicas"} <= set(names("topics"))
    text = add_config_help()
    assert "For entity-type 'users': \n\tSCRAM-SHA-256\n\tSCRAM-SHA-512\n\tconsumer_byte_rate\n" in text
    assert text.endswith("\tmetrics\nEntity types 'users' and 'clients' may be specified together to update config "
                         "for clients of a specific user.")
