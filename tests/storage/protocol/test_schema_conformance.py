"""Our YAML specs restate Kafka's JSON specs (shared/reference/kafka-schemas) without drift.

Rules:
- Every Kafka JSON file is compared with `schema.load(<its name>)`: message keys, every field
  recursively (in order) and commonStructs.
- Every key found in the JSON is either compared here or listed in UNCOMPARED_KEYS, so a new
  spec key cannot slip past unnoticed.
- Skips cleanly when ../shared is absent.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftsman.storage.protocol import schema
from kraftsman.storage.protocol.schema import NO_VERSIONS, Versions

REPO = Path(__file__).resolve().parents[3]
KAFKA_SCHEMAS = REPO.parent / "shared" / "reference" / "kafka-schemas"

# Keys we deliberately do not compare: documentation, and deprecation notes our codec ignores.
UNCOMPARED_KEYS = {"about", "deprecatedVersions"}
MESSAGE_KEYS = {"name", "type", "apiKey", "validVersions", "flexibleVersions", "fields", "commonStructs",
                "listeners", "latestVersionUnstable"}
FIELD_KEYS = {"name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default", "mapKey",
              "ignorable", "flexibleVersions", "entityType", "fields"}
# Specs we carry that the reference snapshot predates (see SOURCE.md there).
OURS_ONLY = {"ClearElrRecord", "AllocateProducerIdsRequest", "AllocateProducerIdsResponse",
             "AlterConfigsRequest", "AlterConfigsResponse", "DescribeConfigsRequest",
             "DescribeConfigsResponse", "EnvelopeRequest", "EnvelopeResponse",
             # internal coordinator records (kafka-dump-log --offsets-decoder / --transaction-log-decoder)
             "OffsetCommitKey", "OffsetCommitValue", "GroupMetadataKey", "GroupMetadataValue",
             "ConsumerProtocolSubscription", "ConsumerProtocolAssignment", "TransactionLogKey",
             "TransactionLogValue", "ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue",
             # SASL (kafka-cluster's client and the controller's SASL listeners)
             "SaslHandshakeRequest", "SaslHandshakeResponse", "SaslAuthenticateRequest", "SaslAuthenticateResponse",
             # ACL APIs Kafka's controllers serve (not in the reference copy)
             "DescribeAclsRequest", "DescribeAclsResponse", "CreateAclsRequest", "CreateAclsResponse",
             "DeleteAclsRequest", "DeleteAclsResponse",
             # listed by Kafka's controllers, answered UNKNOWN_SERVER_ERROR (Kafka 3.9's spec, v0-3)
             "DescribeDelegationTokenRequest", "DescribeDelegationTokenResponse",
             # admin APIs Kafka's controllers serve (not in the reference copy)
             "UpdateFeaturesRequest", "UpdateFeaturesResponse",
             "AlterUserScramCredentialsRequest", "AlterUserScramCredentialsResponse",
             "DescribeUserScramCredentialsRequest", "DescribeUserScramCredentialsResponse",
             "AlterClientQuotasRequest", "AlterClientQuotasResponse",
             # KIP-858 directory assignment, which Kafka 3.9's controllers serve (not in the reference copy)
             "AssignReplicasToDirsRequest", "AssignReplicasToDirsResponse",
             # delegation-token APIs Kafka 3.9's controllers serve (not in the reference copy)
             "CreateDelegationTokenRequest", "CreateDelegationTokenResponse", "RenewDelegationTokenRequest",
             "RenewDelegationTokenResponse", "ExpireDelegationTokenRequest", "ExpireDelegationTokenResponse",
             # reads a Kafka 3.9 broker answers itself (the simulated broker's listener; not in the reference copy)
             "DescribeTopicPartitionsRequest", "DescribeTopicPartitionsResponse", "DescribeClientQuotasRequest",
             "DescribeClientQuotasResponse", "DescribeLogDirsRequest", "DescribeLogDirsResponse"}
# Specs we carry past the reference (Kafka 3.9): spec -> our validVersions, and the fields only those versions add.
NEWER_THAN_REFERENCE = {"VoteRequest": "0-2", "VoteResponse": "0-2",   # Kafka 4.0, KIP-996 pre-vote
                        "DescribeClusterRequest": "0-2", "DescribeClusterResponse": "0-2",  # 4.0, KIP-1073
                        # Kafka 4.x's new versions beside 3.9's (reference/kafka-4x/schema-diff-3.9-to-4x.md)
                        "FetchRequest": "0-18", "FetchResponse": "0-18", "MetadataRequest": "0-13",
                        "MetadataResponse": "0-13", "AddRaftVoterRequest": "0-1", "AddRaftVoterResponse": "0-1",
                        "AlterPartitionReassignmentsRequest": "0-1", "AlterPartitionReassignmentsResponse": "0-1"}
KRAFTSMAN_TAGS = {"DescribeClusterResponse.Brokers." + name   # kraftsman tagged extensions (tags 10000-10003)
                  for name in ("StartTimeMs", "BrokerEpoch", "IncarnationId", "InControlledShutdown")}
ADDED_FIELDS = {"VoteRequest.Topics.Partitions.PreVote",
                "DescribeClusterRequest.IncludeFencedBrokers", "DescribeClusterResponse.Brokers.IsFenced",
                "FetchRequest.Topics.Partitions.HighWatermark", "MetadataResponse.ErrorCode",
                "AddRaftVoterRequest.AckWhenCommitted", "AlterPartitionReassignmentsRequest.AllowReplicationFactorChange",
                "AlterPartitionReassignmentsResponse.AllowReplicationFactorChange",
                *KRAFTSMAN_TAGS, "BrokerRegistrationRequest.StartTimeMs"}


def strip_comments(text: str) -> str:
    """Remove `//` comments that are outside JSON strings."""
    out, i, in_string = [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            step = 2 if c == "\\" else 1
            out.append(text[i:i + step])
            in_string = c != '"'
            i += step
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _json_files() -> list[Path]:
    return sorted(KAFKA_SCHEMAS.glob("*.json")) if KAFKA_SCHEMAS.is_dir() else []


def _load_json(path: Path) -> dict:
    return json.loads(strip_comments(path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module", autouse=True)
def _need_shared():
    if not KAFKA_SCHEMAS.is_dir():
        pytest.skip(f"Kafka JSON schemas not found at {KAFKA_SCHEMAS} (../shared is absent)")


def _versions(raw) -> Versions:
    return Versions.parse(None if raw is None else str(raw))


def _int_or_none(raw) -> int | None:
    return None if raw is None else int(raw)


def _default_text(raw) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


def _our_default(text: str | None) -> str | None:
    return None if text is None else text.lower() if text in ("True", "False") else text


def _compare_field(where: str, raw: dict, ours: schema.FieldSpec) -> None:
    where = f"{where}.{raw['name']}"
    assert set(raw) <= FIELD_KEYS | UNCOMPARED_KEYS, f"{where}: uncompared keys {set(raw) - FIELD_KEYS}"
    assert ours.name == raw["name"], where
    assert ours.type == raw["type"], where
    assert ours.versions == _versions(raw["versions"]), where
    assert ours.nullable_versions == _versions(raw.get("nullableVersions")), where
    assert ours.tagged_versions == _versions(raw.get("taggedVersions")), where
    assert ours.tag == _int_or_none(raw.get("tag")), where  # Kafka writes some tags as strings ("0")
    assert _our_default(ours.default) == _default_text(raw.get("default")), where
    assert ours.map_key == raw.get("mapKey", False), where
    assert ours.ignorable == raw.get("ignorable", False), where
    assert ours.entity_type == raw.get("entityType"), where
    expected_flex = raw.get("flexibleVersions")
    assert ours.flexible_versions == (None if expected_flex is None else _versions(expected_flex)), where
    _compare_fields(where, raw.get("fields", []), ours.fields)


def _compare_fields(where: str, raw_fields: list, ours: tuple) -> None:
    ours = tuple(f for f in ours if f"{where}.{f.name}" not in ADDED_FIELDS)
    assert [f.name for f in ours] == [f["name"] for f in raw_fields], f"{where}: field names/order differ"
    for raw, field in zip(raw_fields, ours):
        _compare_field(where, raw, field)


def _compare_message(raw: dict, ours: schema.MessageSpec) -> None:
    name = raw["name"]
    assert set(raw) <= MESSAGE_KEYS | UNCOMPARED_KEYS, f"{name}: uncompared keys {set(raw) - MESSAGE_KEYS}"
    assert ours.name == name
    assert ours.type == raw["type"], name
    assert ours.api_key == _int_or_none(raw.get("apiKey")), name
    assert ours.valid_versions == _versions(NEWER_THAN_REFERENCE.get(name, raw["validVersions"])), name
    assert ours.flexible_versions == _versions(raw.get("flexibleVersions", "none")), name
    assert ours.listeners == tuple(raw.get("listeners", ())), name
    assert ours.latest_version_unstable == raw.get("latestVersionUnstable", False), name
    _compare_fields(name, raw["fields"], ours.fields)
    for common in raw.get("commonStructs", []):
        struct = ours.struct(common["name"])
        assert struct.versions == _versions(common["versions"]), f"{name}.{common['name']}"
        _compare_fields(f"{name}.{common['name']}", common["fields"], struct.fields)


@pytest.mark.parametrize("path", _json_files(), ids=lambda p: p.stem)
def test_spec_matches_kafka_json(path: Path):
    raw = _load_json(path)
    _compare_message(raw, schema.load(raw["name"]))


def test_every_kafka_spec_is_covered_and_ours_add_only_known_extras():
    kafka_names = {_load_json(p)["name"] for p in _json_files()}
    assert len(_json_files()) == 81
    assert kafka_names - set(schema.names()) == set()
    assert set(schema.names()) - kafka_names == OURS_ONLY


def test_strip_comments_keeps_slashes_inside_strings():
    text = '{"a": "x // y", // gone\n "b": "q\\"//"} // tail'
    assert json.loads(strip_comments(text)) == {"a": "x // y", "b": 'q"//'}


def test_no_versions_round_trips_through_text():
    assert Versions.parse("none") is NO_VERSIONS
    assert str(Versions.parse("3+")) == "3+" and str(Versions.parse("1-3")) == "1-3"


def test_our_schema_files_hold_facts_only():
    """Field layouts are facts and stay; Kafka's `about` sentences are prose and must not come back."""
    import yaml

    def abouts(node, where):
        if isinstance(node, dict):
            return [where] * ("about" in node) + [a for k, v in node.items() for a in abouts(v, f"{where}.{k}")]
        if isinstance(node, list):
            return [a for i, v in enumerate(node) for a in abouts(v, f"{where}[{i}]")]
        return []
    schemas = Path(__file__).resolve().parents[3] / "storage" / "protocol" / "schemas"
    found = [a for path in sorted(schemas.glob("*.yaml")) for a in abouts(yaml.safe_load(path.read_text()), path.name)]
    assert len(list(schemas.glob("*.yaml"))) > 100 and found == []


KAFKA_4X_SCHEMAS = REPO.parent / "shared" / "reference" / "kafka-4x" / "schemas"
FOUR_X_VERSIONS = ("FetchRequest", "FetchResponse", "MetadataRequest", "MetadataResponse", "AddRaftVoterRequest",
                   "AddRaftVoterResponse", "AlterPartitionReassignmentsRequest", "AlterPartitionReassignmentsResponse",
                   "UpdateFeaturesRequest", "UpdateFeaturesResponse", "ClearElrRecord",
                   "DescribeDelegationTokenRequest", "DescribeDelegationTokenResponse")


def _fields_4x(fields, where: str):
    for f in fields:
        yield f"{where}.{f['name']}", f
        yield from _fields_4x(f.get("fields", ()), f"{where}.{f['name']}")


@pytest.mark.parametrize("name", FOUR_X_VERSIONS)
def test_the_4x_versions_we_carry_are_kafka_4_2s(name):
    """Our spec reaches Kafka 4.2's newest version and holds every field 4.2 has, typed and tagged as 4.2 has it."""
    path = KAFKA_4X_SCHEMAS / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared absent)")
    raw = json.loads(strip_comments(path.read_text()))
    ours = schema.load(name)
    assert ours.valid_versions.hi == _versions(raw["validVersions"]).hi
    mine = {}

    def walk(fields, where):
        for f in fields:
            mine[f"{where}.{f.name}"] = f
            walk(f.fields or (ours.struct(f.element_type).fields if f.is_struct and ours.structs else ()),
                 f"{where}.{f.name}")
    walk(ours.fields, name)
    for key, field in _fields_4x(raw["fields"], name):
        assert key in mine, key
        assert (mine[key].type, mine[key].tag) == (field["type"], field.get("tag")), key
