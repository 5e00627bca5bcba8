"""What each case of kafka-admin-3.9 expects of the cluster, checked through the brokers' (or a controller's) answers
to the RPCs its tool would send (the inventory in controller/client/broker_apis): the peer side of every case,
before the tools exist.

Rules:
- A check reads the case's expected output and asserts that the answers carry exactly that information, rendered
  the few ways the tools print it (describe lines, config synonyms, ACL entries, quota lines, the current
  assignment JSON, api version ranges, election results). Orders the fixture README calls varying are compared
  as sets; everything else exactly.
- A check that performs the case's own change (an election) returns True: the case then counts as done.
- Requests go where the tool sends them: the case's --bootstrap-server broker, broker N for BROKER "N" configs, a
  controller for --bootstrap-controller.
"""
from __future__ import annotations

import json
import re

from kraftsman.controller.quorum.configs_synonyms import java_double
from kraftsman.storage.protocol.errors import Errors as E

from .admin_cluster import BROKER_PORTS, CONTROLLER_PORTS, PREFERRED, UNCLEAN, AdminCluster, message
from .admin_cluster_compare import Case

SOURCES = {1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG"}
DEFAULT_SOURCE = 5
INTERNAL = {"__consumer_offsets", "__transaction_state"}


def _bootstrap_broker(case: Case) -> int:
    address = case.argv[case.argv.index("--bootstrap-server") + 1]
    port = int(address.rsplit(":", 1)[1])
    return next(b for b, p in BROKER_PORTS.items() if p == port)


def _controller_request(cluster: AdminCluster, api: str, version: int, body):
    from kraftsman.controller.wire.connection import Connection

    async def exchange():
        conn = await Connection.open("127.0.0.1", CONTROLLER_PORTS[1], client_id="fixture-check", timeout_ms=10_000)
        try:
            await conn.negotiate()
            return await conn.request(api, version, body, timeout_ms=30_000)
        finally:
            await conn.close()
    return cluster.loop.run(exchange())


# ---------------------------------------------------------------- kafka-topics


def _topic_partitions(cluster: AdminCluster, broker: int) -> dict:
    answer = cluster.request("DescribeTopicPartitions", 0, message("DescribeTopicPartitionsRequest", topics=[],
                                                                   response_partition_limit=2000, cursor=None), broker)
    assert answer.next_cursor is None
    return {t.name: t for t in answer.topics}


def _configs(cluster, kind: int, names: list[str], broker: int | None, synonyms: bool = True) -> dict:
    cls = message("DescribeConfigsRequest")
    body = message("DescribeConfigsRequest", include_synonyms=synonyms, resources=[
        cls.DescribeConfigsResource(resource_type=kind, resource_name=n, configuration_keys=None) for n in names])
    request = _controller_request if broker is None else (lambda c, *a: c.request(*a, broker))
    return {r.resource_name: r for r in request(cluster, "DescribeConfigs", 4, body).results}


def _partition_line(topic: str, p) -> str:
    def ids(values):
        return ",".join(str(v) for v in values)
    leader = p.leader_id if p.leader_id >= 0 else "none"
    return (f"\tTopic: {topic}\tPartition: {p.partition_index}\tLeader: {leader}\tReplicas: {ids(p.replica_nodes)}"
            f"\tIsr: {ids(sorted(p.isr_nodes))}\tElr: {ids(p.eligible_leader_replicas)}\t"
            f"LastKnownElr: {ids(p.last_known_elr)}")


def _expected_topic_lines(case: Case) -> tuple[dict, list[str]]:
    headers, partitions = {}, []
    for line in case.stdout.splitlines():
        if line.startswith("Topic: "):
            headers[line.split("\t")[0][len("Topic: "):]] = line
        elif line.startswith("\tTopic: "):
            partitions.append(re.sub(r"(Isr: )([\d,]*)", lambda m: m.group(1) + ",".join(sorted(m.group(2).split(
                ","))), line))
    return headers, partitions


def _header_matches(cluster, broker: int, topic, header: str) -> None:
    fields = dict(f.split(": ", 1) for f in header.split("\t"))
    replicas = len(topic.partitions[0].replica_nodes)
    assert (int(fields["PartitionCount"]), int(fields["ReplicationFactor"])) == (len(topic.partitions), replicas)
    result = _configs(cluster, 2, [topic.name], broker, synonyms=False)[topic.name]
    shown = {f"{c.name}={c.value}" for c in result.configs if c.config_source != DEFAULT_SOURCE}
    # entries print in a Java HashMap's order, and a list value holds commas: compare the sorted pieces
    pieces = ",".join(sorted(shown)).split(",") if shown else []
    assert sorted(pieces) == sorted(filter(None, fields["Configs"].split(",")))


def _min_isr(cluster: AdminCluster, broker: int, name: str) -> int:
    result = _configs(cluster, 2, [name], broker, synonyms=False)[name]
    return int(next(c.value for c in result.configs if c.name == "min.insync.replicas"))


def _selected(case: Case, topic, p, min_isr: int, live: set[int]) -> bool:
    argv = case.argv
    if "--under-replicated-partitions" in argv:
        return len(p.isr_nodes) < len(p.replica_nodes)
    if "--at-min-isr-partitions" in argv:
        return len(p.isr_nodes) == min_isr
    if "--unavailable-partitions" in argv:
        return p.leader_id < 0 or p.leader_id not in live
    return True


def check_describe_topics(cluster: AdminCluster, case: Case) -> bool:
    broker = _bootstrap_broker(case)
    topics = _topic_partitions(cluster, broker)
    wanted = case.argv[case.argv.index("--topic") + 1] if "--topic" in case.argv else None
    names = [n for n in topics if (wanted is None or n == wanted) and
             not ("--exclude-internal" in case.argv and n in INTERNAL)]
    live = {b.broker_id for b in cluster.request("DescribeCluster", 1, message("DescribeClusterRequest"),
                                                 broker).brokers}
    headers, expected = _expected_topic_lines(case)
    min_isr = {n: _min_isr(cluster, broker, n) for n in names} if "--at-min-isr-partitions" in case.argv else {}
    rendered = [_partition_line(n, p) for n in names for p in topics[n].partitions
                if _selected(case, topics[n], p, min_isr.get(n, 1), live)]
    assert sorted(rendered) == sorted(expected)
    filtered = any(f in case.argv for f in ("--under-replicated-partitions", "--at-min-isr-partitions",
                                            "--unavailable-partitions"))
    assert set(headers) == (set() if filtered else set(names))
    for name, header in headers.items():
        _header_matches(cluster, broker, topics[name], header)
    return False


def check_list_topics(cluster: AdminCluster, case: Case) -> bool:
    answer = cluster.request("Metadata", 12, message("MetadataRequest", topics=None), _bootstrap_broker(case))
    names = sorted(t.name for t in answer.topics if t.name not in INTERNAL)
    assert names == case.stdout.splitlines()
    return False


def check_missing_topic(cluster: AdminCluster, case: Case) -> bool:
    answer = cluster.request("Metadata", 12, message("MetadataRequest", topics=None), _bootstrap_broker(case))
    assert "nope" not in {t.name for t in answer.topics} and answer.topics
    return False


def _create_error(cluster: AdminCluster, case: Case, name: str) -> bool:
    cls = message("CreateTopicsRequest")
    body = message("CreateTopicsRequest", timeout_ms=30_000, validate_only=False, topics=[cls.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1, assignments=[], configs=[])])
    (result,) = cluster.request("CreateTopics", 7, body, _bootstrap_broker(case)).topics
    prefix = "Error while executing topic command : "
    assert result.error_message == case.stdout.splitlines()[0][len(prefix):]
    assert result.error_code in (E.TOPIC_ALREADY_EXISTS, E.INVALID_TOPIC_EXCEPTION)
    return False


# ---------------------------------------------------------------- kafka-configs


def _config_lines(results, source: int) -> list[str]:
    lines = []
    for entry in sorted(results.configs, key=lambda c: c.name):
        if entry.config_source != source:
            continue
        synonyms = ", ".join(f"{SOURCES[s.source]}:{s.name}={s.value}" for s in entry.synonyms)
        lines.append(f"  {entry.name}={entry.value} sensitive={str(entry.is_sensitive).lower()} "
                     f"synonyms={{{synonyms}}}")
    return lines


def check_describe_configs(cluster: AdminCluster, case: Case) -> bool:
    argv = case.argv
    kind = 2 if argv[argv.index("--entity-type") + 1] == "topics" else 4
    name = "" if "--entity-default" in argv else argv[argv.index("--entity-name") + 1]
    via_controller = "--bootstrap-controller" in argv
    broker = None if via_controller else (int(name) if kind == 4 and name else _bootstrap_broker(case))
    result = _configs(cluster, kind, [name], broker)[name]
    if case.rc:
        assert (result.error_code, result.error_message) == (E.UNKNOWN_TOPIC_OR_PARTITION, "")
        assert "UnknownTopicOrPartitionException: \n" in case.stderr
        return False
    source = 1 if kind == 2 else (3 if not name else 2)
    assert _config_lines(result, source) == case.stdout.splitlines()[1:]
    return False


def check_bad_config_value(cluster: AdminCluster, case: Case) -> bool:
    cls = message("IncrementalAlterConfigsRequest")
    body = message("IncrementalAlterConfigsRequest", validate_only=False, resources=[cls.AlterConfigsResource(
        resource_type=2, resource_name="plain", configs=[cls.AlterableConfig(name="retention.ms", config_operation=0,
                                                                             value="abc")])])
    (result,) = cluster.request("IncrementalAlterConfigs", 1, body, _bootstrap_broker(case)).responses
    assert result.error_code == E.INVALID_CONFIG
    assert f"Caused by: org.apache.kafka.common.errors.InvalidConfigurationException: {result.error_message}\n" \
        in case.stderr
    return False


def _quota_lines(cluster: AdminCluster, case: Case, entity_type: str) -> set[str]:
    cls = message("DescribeClientQuotasRequest")
    body = message("DescribeClientQuotasRequest", strict=False, components=[cls.ComponentData(
        entity_type=entity_type, match_type=2, match=None)])
    lines = set()
    words = {"user": "user-principal", "client-id": "client-id"}
    for entry in cluster.request("DescribeClientQuotas", 1, body, _bootstrap_broker(case)).entries:
        who = ", ".join(f"the default {words[e.entity_type]}" if e.entity_name is None
                        else f"{words[e.entity_type]} '{e.entity_name}'" for e in entry.entity)
        values = ", ".join(sorted(f"{v.key}={java_double(v.value)}" for v in entry.values))
        lines.add(f"Quota configs for {who} are {values}")
    return lines


def _sorted_values(line: str) -> str:
    head, sep, values = line.partition(" are ")
    return head + sep + ", ".join(sorted(values.split(", ")))


def check_describe_quotas(cluster: AdminCluster, case: Case) -> bool:
    kind = "user" if case.argv[case.argv.index("--entity-type") + 1] == "users" else "client-id"
    expected = {_sorted_values(line) for line in case.stdout.splitlines() if line.startswith("Quota configs")}
    assert _quota_lines(cluster, case, kind) == expected
    if kind == "user":
        users = cluster.request("DescribeUserScramCredentials", 0, message("DescribeUserScramCredentialsRequest",
                                                                           users=None), _bootstrap_broker(case))
        names = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
        scram = {f"SCRAM credential configs for user-principal '{r.user}' are " +
                 ", ".join(f"{names[c.mechanism]}=iterations={c.iterations}" for c in r.credential_infos)
                 for r in users.results}
        assert scram == {line for line in case.stdout.splitlines() if line.startswith("SCRAM")}
    return False


# ---------------------------------------------------------------- kafka-acls

_RESOURCES = {2: "TOPIC", 3: "GROUP", 4: "CLUSTER"}
_PATTERNS = {3: "LITERAL", 4: "PREFIXED"}
_OPERATIONS = {2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE", 7: "ALTER", 8: "DESCRIBE"}
_PERMISSIONS = {2: "DENY", 3: "ALLOW"}


def check_list_acls(cluster: AdminCluster, case: Case) -> bool:
    argv = case.argv
    name = argv[argv.index("--topic") + 1] if "--topic" in argv else None
    pattern = {"match": 2, "literal": 3}[argv[argv.index("--resource-pattern-type") + 1]] \
        if "--resource-pattern-type" in argv else 3
    body = message("DescribeAclsRequest", resource_type_filter=2 if name else 1, resource_name_filter=name,
                   pattern_type_filter=pattern if name else 1, principal_filter=None, host_filter=None, operation=1,
                   permission_type=1)
    answer = cluster.request("DescribeAcls", 3, body, _bootstrap_broker(case))
    blocks = set()
    for r in answer.resources:
        head = (f"Current ACLs for resource `ResourcePattern(resourceType={_RESOURCES[r.resource_type]}, "
                f"name={r.resource_name}, patternType={_PATTERNS[r.pattern_type]})`: ")
        entries = sorted(f"(principal={a.principal}, host={a.host}, operation={_OPERATIONS[a.operation]}, "
                         f"permissionType={_PERMISSIONS[a.permission_type]})" for a in r.acls)
        blocks.add((head, tuple(entries)))
    expected = set()
    for chunk in filter(None, case.stdout.split("\n\n")):
        lines = chunk.split("\n")
        expected.add((lines[0], tuple(sorted(line.strip(" \t") for line in lines[1:] if line.strip()))))
    assert blocks == expected
    return False


# ---------------------------------------------------------------- kafka-reassign-partitions


def _assignment_json(topics: dict, wanted: list[tuple[str, int]]) -> str:
    parts = []
    for name, index in sorted(wanted):
        replicas = next(p.replica_nodes for p in topics[name].partitions if p.partition_index == index)
        parts.append({"topic": name, "partition": index, "replicas": replicas, "log_dirs": ["any"] * len(replicas)})
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"))


def check_current_assignment(cluster: AdminCluster, case: Case) -> bool:
    topics = _topic_partitions(cluster, _bootstrap_broker(case))
    if "--generate" in case.argv:
        names = [t["topic"] for t in json.loads(case.files["topics.json"])["topics"]]
        wanted = [(n, p.partition_index) for n in names for p in topics[n].partitions]
        line = case.stdout.splitlines()[1]
    else:
        wanted = [(p["topic"], p["partition"]) for p in json.loads(case.files["reassign.json"])["partitions"]]
        line = case.stdout.splitlines()[2]
    assert _assignment_json(topics, wanted) == line
    return False


def check_list_reassignments(cluster: AdminCluster, case: Case) -> bool:
    answer = cluster.request("ListPartitionReassignments", 0, message("ListPartitionReassignmentsRequest",
                                                                      timeout_ms=30_000, topics=None),
                             _bootstrap_broker(case))
    lines = [f"{t.name}-{p.partition_index}: replicas: {','.join(map(str, p.replicas))}. adding: "
             f"{','.join(map(str, p.adding_replicas))}. removing: {','.join(map(str, p.removing_replicas))}."
             for t in answer.topics for p in t.partitions]
    if lines:
        assert case.stdout.splitlines() == ["Current partition reassignments:", *lines]
    else:
        assert case.stdout == "No partition reassignments found.\n"
    return False


def check_reassignment_done(cluster: AdminCluster, case: Case) -> bool:
    targets = json.loads(case.files["reassign.json"])["partitions"]
    for target in targets:
        p = cluster.partition(target["topic"], target["partition"])
        assert list(p.replicas) == target["replicas"] and not p.adding_replicas and not p.removing_replicas
    return False


def check_unknown_broker(cluster: AdminCluster, case: Case) -> bool:
    answer = cluster.request("DescribeCluster", 1, message("DescribeClusterRequest"), _bootstrap_broker(case))
    assert sorted(b.broker_id for b in answer.brokers) == [4, 5] and "Unknown broker id 9" in case.stdout
    return False


# ---------------------------------------------------------------- kafka-broker-api-versions, elections


def check_api_versions(cluster: AdminCluster, case: Case) -> bool:
    from kraftsman.storage.protocol import framing

    names = {info.name: key for key, info in framing.api_registry().items()}
    metadata = cluster.request("Metadata", 12, message("MetadataRequest", topics=[]), _bootstrap_broker(case))
    heads = {f"{b.host}:{b.port} (id: {b.node_id} rack: null) -> (" for b in metadata.brokers}
    assert heads == {line for line in case.stdout.splitlines() if line.endswith("-> (")}
    for block in case.stdout.split("\n)\n"):
        lines = [line for line in block.splitlines() if line]
        if not lines:
            continue
        broker = int(re.search(r"id: (\d+)", lines[0]).group(1))
        answer = cluster.request("ApiVersions", 3, message("ApiVersionsRequest", client_software_name="check",
                                                           client_software_version="1"), broker)
        served = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        for line in lines[1:]:
            match = re.match(r"\t(\w+)\((\d+)\): (?:(\d+)(?: to (\d+))? \[usable|UNSUPPORTED)", line)
            key = int(match.group(2))
            want = None if match.group(3) is None else (int(match.group(3)), int(match.group(4) or match.group(3)))
            assert served.get(key) == want, line
            assert names.get(match.group(1), key) == key
    return False


def _elect(cluster: AdminCluster, case: Case, partitions, election: int):
    cls = message("ElectLeadersRequest")
    wanted = None if partitions is None else [cls.TopicPartitions(topic=t, partitions=ps) for t, ps in partitions]
    answer = cluster.request("ElectLeaders", 2, message("ElectLeadersRequest", election_type=election,
                                                        topic_partitions=wanted, timeout_ms=30_000),
                             _bootstrap_broker(case))
    cluster.sync()
    return {(r.topic, p.partition_id): (p.error_code, p.error_message)
            for r in answer.replica_election_results for p in r.partition_result}


def check_election(cluster: AdminCluster, case: Case) -> bool:
    argv = case.argv
    kind = UNCLEAN if argv[argv.index("--election-type") + 1].lower() == "unclean" else PREFERRED
    if "--path-to-json-file" in argv:
        data = json.loads(case.files["elect.json"])["partitions"]
        by_topic: dict[str, list[int]] = {}
        for p in data:
            by_topic.setdefault(p["topic"], []).append(p["partition"])
        partitions = list(by_topic.items())
    elif "--all-topic-partitions" in argv:
        partitions = None
    else:
        partitions = [(argv[argv.index("--topic") + 1], [int(argv[argv.index("--partition") + 1])])]
    results = _elect(cluster, case, partitions, kind)
    elected = {f"{t}-{p}" for (t, p), (code, _) in results.items() if code == 0}
    not_needed = {f"{t}-{p}" for (t, p), (code, _) in results.items() if code == E.ELECTION_NOT_NEEDED}
    failed = {f"{t}-{p}: {message_}" for (t, p), (code, message_) in results.items()
              if code not in (0, E.ELECTION_NOT_NEEDED)}
    lines = case.stdout.splitlines()
    want_elected = {p for line in lines if line.startswith("Successfully") for p in line.split(" for partitions ")[1]
                    .split(", ")}
    want_not_needed = {p for line in lines if line.startswith("Valid replica") for p in line.split(
        " for partitions ")[1].split(", ")}
    want_failed = {line.split("for partition: ")[1].replace(
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ", "")
        for line in lines if line.startswith("Error completing")}
    assert (elected, not_needed, failed) == (want_elected, want_not_needed, want_failed)
    return True


CHECKS = {
    "topics-list-exclude-internal": check_list_topics,
    "topics-describe-missing": check_missing_topic,
    "topics-create-existing": lambda c, case: _create_error(c, case, "plain"),
    "topics-create-invalid-name": lambda c, case: _create_error(c, case, "bad name!"),
    **dict.fromkeys(("topics-describe-one", "topics-describe-under-replicated-none", "topics-describe-at-min-isr",
                     "topics-describe-broker-down-one", "topics-describe-broker-down-unavailable",
                     "topics-describe-broker-down-all", "topics-describe-broker-down-created-rf2",
                     "topics-describe-after-unclean", "topics-describe-final-all"), check_describe_topics),
    **dict.fromkeys(("configs-describe-topic", "configs-describe-broker", "configs-describe-broker-default",
                     "configs-describe-broker-default-after-add", "configs-describe-missing-topic",
                     "configs-bootstrap-controller-describe-topic",
                     "configs-bootstrap-controller-describe-broker-default"), check_describe_configs),
    "configs-alter-bad-value": check_bad_config_value,
    **dict.fromkeys(("configs-describe-users-all", "configs-describe-clients-all"), check_describe_quotas),
    **dict.fromkeys(("acls-list-empty", "acls-list-topic", "acls-list-topic-match", "acls-list-topic-after-remove"),
                    check_list_acls),
    **dict.fromkeys(("reassign-generate", "reassign-execute-expand", "reassign-execute-throttled-big"),
                    check_current_assignment),
    **dict.fromkeys(("reassign-list-none", "reassign-list-in-progress"), check_list_reassignments),
    **dict.fromkeys(("reassign-verify-done", "reassign-verify-done-throttled"), check_reassignment_done),
    "reassign-execute-missing-broker": check_unknown_broker,
    **dict.fromkeys(("apiversions-broker4", "apiversions-broker-down"), check_api_versions),
    **dict.fromkeys(("election-preferred-all-nothing-to-do", "election-preferred-json-file",
                     "election-preferred-not-needed", "election-preferred-partition-leader-down", "election-unclean"),
                    check_election),
}
