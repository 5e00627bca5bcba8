"""Golden bytes, derived by hand from the specs, for every metadata record, raft control record,
QuorumStateData and the request/response headers, at their lowest and highest valid versions.

Rules:
- Expected bytes are written as commented hex, one field per line, worked out from the spec
  (reference §1.1, §5.3): compact string = uvarint(len+1) + UTF-8, compact array = uvarint(n+1),
  every flexible struct ends with `uvarint count, (uvarint tag, uvarint size, payload)*`.
- Each case checks encode(message) == bytes, decode(bytes) == message and, where given, Kafka's JSON
  (§1.2: tagged fields omitted at default, uuid base64url, bytes padded base64, Java doubles).
- Values are non-default wherever the version allows, so a field silently dropped shows up.
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple

import pytest

from kraftsman.storage.protocol import codec, schema
from kraftsman.storage.protocol.uuids import ONE_UUID, Uuid
from kraftsman.storage.records.metadata import METADATA_RECORD_TYPES

U1 = Uuid(b"\x11" * 16)
U1_HEX = "11" * 16
U1_TEXT = "ER" * 10 + "EQ"  # base64url of 16 x 0x11, worked out by hand: 0x111111 -> "ERER"
ONE_HEX = "00" * 15 + "01"
ONE_TEXT = "AAAAAAAAAAAAAAAAAAAAAQ"  # reference §6: ONE_UUID
METADATA_VERSION = "11 6d657461646174612e76657273696f6e"  # compact "metadata.version" (16 chars)
CONTROLLER = "0b 434f4e54524f4c4c4552"  # compact "CONTROLLER" (10 chars)


def hexb(text: str) -> bytes:
    """Return the bytes of commented hex: '#' starts a comment, whitespace is ignored."""
    return bytes.fromhex(re.sub(r"#[^\n]*", "", text))


def M(spec: str, /, **fields):
    """Build a message of spec `spec`."""
    return codec.message_class(spec)(**fields)


def S(spec: str, struct: str, /, **fields):
    """Build a nested struct `struct` of spec `spec`."""
    return getattr(codec.message_class(spec), struct)(**fields)


class Golden(NamedTuple):
    name: str
    version: int
    build: Callable[[], object]
    hex: str
    json: str | None = None


RECORDS = [
    Golden("AbortTransactionRecord", 0, lambda: M("AbortTransactionRecord", reason="r"), """
        01 00 02 02 72          # tags: 1 field; tag 0 (Reason), size 2, compact "r"
    """, '{"reason":"r"}'),
    Golden("AccessControlEntryRecord", 0, lambda: M(
        "AccessControlEntryRecord", id=U1, resource_type=2, resource_name="t", pattern_type=3,
        principal="User:a", host="*", operation=4, permission_type=3), f"""
        {U1_HEX}                # Id
        02                      # ResourceType
        02 74                   # ResourceName "t"
        03                      # PatternType
        07 557365723a61         # Principal "User:a"
        02 2a                   # Host "*"
        04                      # Operation
        03                      # PermissionType
        00                      # no tagged fields
    """, '{"id":"' + U1_TEXT + '","resourceType":2,"resourceName":"t","patternType":3,"principal":"User:a",'
         '"host":"*","operation":4,"permissionType":3}'),
    Golden("BeginTransactionRecord", 0, lambda: M("BeginTransactionRecord", name="tx"), """
        01 00 03 03 7478        # tags: tag 0 (Name), size 3, compact "tx"
    """, '{"name":"tx"}'),
    Golden("BrokerRegistrationChangeRecord", 0, lambda: M(
        "BrokerRegistrationChangeRecord", broker_id=8, broker_epoch=26, fenced=1), """
        00000008                # BrokerId
        000000000000001a        # BrokerEpoch
        01 00 01 01             # tags: tag 0 (Fenced), size 1, 1
    """, '{"brokerId":8,"brokerEpoch":26,"fenced":1}'),  # reference §1.2's own example
    Golden("BrokerRegistrationChangeRecord", 2, lambda: M(
        "BrokerRegistrationChangeRecord", broker_id=8, broker_epoch=26, fenced=-1, in_controlled_shutdown=1,
        log_dirs=[U1]), f"""
        00000008 000000000000001a
        03                      # 3 tagged fields, ascending
        00 01 ff                # tag 0 Fenced = -1
        01 01 01                # tag 1 InControlledShutdown = 1
        02 11 02 {U1_HEX}       # tag 2 LogDirs, size 17: compact count 1+1, one uuid
    """, '{"brokerId":8,"brokerEpoch":26,"fenced":-1,"inControlledShutdown":1,"logDirs":["' + U1_TEXT + '"]}'),
    Golden("ClearElrRecord", 0, lambda: M("ClearElrRecord", topic_name="t"), """
        02 74 00                # TopicName "t", no tags
    """),
    Golden("ClientQuotaRecord", 0, lambda: M(
        "ClientQuotaRecord", entity=[S("ClientQuotaRecord", "EntityData", entity_type="user", entity_name=None)],
        key="consumer_byte_rate", value=10485760.0, remove=True), """
        02                      # Entity: 1 element
        05 75736572             #   EntityType "user"
        00                      #   EntityName null
        00                      #   struct tags
        13 636f6e73756d65725f627974655f72617465   # Key "consumer_byte_rate" (18 chars)
        4164000000000000        # Value 10485760.0 = 1.25 * 2^23: exponent 1023+23 = 0x416, mantissa .01b
        01                      # Remove
        00
    """, '{"entity":[{"entityType":"user","entityName":null}],"key":"consumer_byte_rate","value":1.048576E7,'
         '"remove":true}'),
    Golden("ConfigRecord", 0, lambda: M(
        "ConfigRecord", resource_type=2, resource_name="foo", name="cleanup.policy", value="compact"), """
        02                      # ResourceType
        04 666f6f               # ResourceName "foo"
        0f 636c65616e75702e706f6c696379   # Name "cleanup.policy" (14 chars)
        08 636f6d70616374       # Value "compact"
        00
    """, '{"resourceType":2,"resourceName":"foo","name":"cleanup.policy","value":"compact"}'),
    Golden("DelegationTokenRecord", 0, lambda: M(
        "DelegationTokenRecord", owner="User:a", requester="User:b", renewers=["User:c"], issue_timestamp=1,
        max_timestamp=2, expiration_timestamp=3, token_id="tok"), """
        07 557365723a61         # Owner "User:a"
        07 557365723a62         # Requester "User:b"
        02 07 557365723a63      # Renewers ["User:c"]
        0000000000000001        # IssueTimestamp
        0000000000000002        # MaxTimestamp
        0000000000000003        # ExpirationTimestamp
        04 746f6b               # TokenId "tok"
        00
    """),
    Golden("EndTransactionRecord", 0, lambda: M("EndTransactionRecord"), "00", "{}"),
    Golden("FeatureLevelRecord", 0, lambda: M("FeatureLevelRecord", name="metadata.version", feature_level=21), f"""
        {METADATA_VERSION}      # Name
        0015                    # FeatureLevel 21
        00
    """, '{"name":"metadata.version","featureLevel":21}'),
    Golden("FenceBrokerRecord", 0, lambda: M("FenceBrokerRecord", id=4, epoch=7), """
        00000004 0000000000000007 00
    """, '{"id":4,"epoch":7}'),
    Golden("NoOpRecord", 0, lambda: M("NoOpRecord"), "00", "{}"),
    Golden("PartitionChangeRecord", 0, lambda: M(
        "PartitionChangeRecord", partition_id=0, topic_id=U1, isr=[1, 2], leader=1, replicas=[1, 2, 3],
        removing_replicas=[3], adding_replicas=[], leader_recovery_state=1), f"""
        00000000                # PartitionId 0 (default -1)
        {U1_HEX}                # TopicId
        06                      # 6 tagged fields
        00 09 03 00000001 00000002           # tag 0 Isr [1,2]
        01 04 00000001                       # tag 1 Leader 1
        02 0d 04 00000001 00000002 00000003  # tag 2 Replicas [1,2,3]
        03 05 02 00000003                    # tag 3 RemovingReplicas [3]
        04 01 01                             # tag 4 AddingReplicas [] (default is null, so written)
        05 01 01                             # tag 5 LeaderRecoveryState 1
    """, '{"partitionId":0,"topicId":"' + U1_TEXT + '","isr":[1,2],"leader":1,"replicas":[1,2,3],'
         '"removingReplicas":[3],"addingReplicas":[],"leaderRecoveryState":1}'),
    Golden("PartitionChangeRecord", 2, lambda: M(
        "PartitionChangeRecord", partition_id=5, topic_id=ONE_UUID, isr=[1], directories=[U1],
        eligible_leader_replicas=[2], last_known_elr=[]), f"""
        00000005 {ONE_HEX}
        04                      # 4 tagged fields; Leader (-2) and LeaderRecoveryState (-1) are default
        00 05 02 00000001       # tag 0 Isr [1]
        06 05 02 00000002       # tag 6 EligibleLeaderReplicas [2]
        07 01 01                # tag 7 LastKnownElr []
        08 11 02 {U1_HEX}       # tag 8 Directories [U1] (declared before tags 6 and 7, written after)
    """, '{"partitionId":5,"topicId":"' + ONE_TEXT + '","isr":[1],"directories":["' + U1_TEXT + '"],'
         '"eligibleLeaderReplicas":[2],"lastKnownElr":[]}'),
    Golden("PartitionRecord", 0, lambda: M(
        "PartitionRecord", partition_id=0, topic_id=U1, replicas=[1, 2], isr=[1], removing_replicas=[],
        adding_replicas=[2], leader=1, leader_recovery_state=1, leader_epoch=3, partition_epoch=4), f"""
        00000000 {U1_HEX}       # PartitionId, TopicId
        03 00000001 00000002    # Replicas
        02 00000001             # Isr
        01                      # RemovingReplicas []
        02 00000002             # AddingReplicas
        00000001                # Leader
        00000003                # LeaderEpoch
        00000004                # PartitionEpoch
        01 00 01 01             # tag 0 LeaderRecoveryState 1
    """),
    Golden("PartitionRecord", 2, lambda: M(
        "PartitionRecord", partition_id=0, topic_id=U1, replicas=[1], isr=[1], leader=1, leader_epoch=0,
        partition_epoch=0, directories=[U1], eligible_leader_replicas=[2], last_known_elr=[3]), f"""
        00000000 {U1_HEX}
        02 00000001             # Replicas
        02 00000001             # Isr
        01 01                   # RemovingReplicas [], AddingReplicas []
        00000001 00000000 00000000   # Leader, LeaderEpoch, PartitionEpoch
        02 {U1_HEX}             # Directories
        02                      # 2 tagged fields
        01 05 02 00000002       # tag 1 EligibleLeaderReplicas [2]
        02 05 02 00000003       # tag 2 LastKnownElr [3]
    """),
    Golden("ProducerIdsRecord", 0, lambda: M(
        "ProducerIdsRecord", broker_id=1, broker_epoch=2, next_producer_id=1000), """
        00000001 0000000000000002 00000000000003e8 00
    """, '{"brokerId":1,"brokerEpoch":2,"nextProducerId":1000}'),
    Golden("RegisterBrokerRecord", 0, lambda: M(
        "RegisterBrokerRecord", broker_id=4, incarnation_id=U1, broker_epoch=10,
        end_points=[S("RegisterBrokerRecord", "BrokerEndpoint", name="PLAINTEXT", host="localhost", port=9092,
                      security_protocol=0)],
        features=[S("RegisterBrokerRecord", "BrokerFeature", name="metadata.version", min_supported_version=1,
                    max_supported_version=21)],
        rack="r1", fenced=False), f"""
        00000004 {U1_HEX} 000000000000000a     # BrokerId, IncarnationId, BrokerEpoch
        02                                     # EndPoints: 1
        0a 504c41494e54455854 0a 6c6f63616c686f7374 2384 0000 00   # PLAINTEXT, localhost, 9092, 0
        02                                     # Features: 1
        {METADATA_VERSION} 0001 0015 00
        03 7231                                # Rack "r1"
        00                                     # Fenced false (default true)
        00
    """),
    Golden("RegisterBrokerRecord", 3, lambda: M(
        "RegisterBrokerRecord", broker_id=4, is_migrating_zk_broker=True, incarnation_id=U1, broker_epoch=10,
        rack=None, fenced=True, in_controlled_shutdown=True, log_dirs=[ONE_UUID]), f"""
        00000004                # BrokerId
        01                      # IsMigratingZkBroker
        {U1_HEX} 000000000000000a
        01 01                   # EndPoints [], Features []
        00                      # Rack null
        01 01                   # Fenced, InControlledShutdown
        01 00 11 02 {ONE_HEX}   # tag 0 LogDirs [ONE]
    """, '{"brokerId":4,"isMigratingZkBroker":true,"incarnationId":"' + U1_TEXT + '","brokerEpoch":10,'
         '"endPoints":[],"features":[],"rack":null,"fenced":true,"inControlledShutdown":true,'
         '"logDirs":["' + ONE_TEXT + '"]}'),
    Golden("RegisterControllerRecord", 0, lambda: M(
        "RegisterControllerRecord", controller_id=1, incarnation_id=U1, zk_migration_ready=True,
        end_points=[S("RegisterControllerRecord", "ControllerEndpoint", name="CONTROLLER", host="h", port=9093,
                      security_protocol=0)]), f"""
        00000001 {U1_HEX} 01                    # ControllerId, IncarnationId, ZkMigrationReady
        02 {CONTROLLER} 02 68 2385 0000 00      # EndPoints: CONTROLLER h:9093 PLAINTEXT
        01                                      # Features []
        00
    """),
    Golden("RemoveAccessControlEntryRecord", 0, lambda: M("RemoveAccessControlEntryRecord", id=U1),
           f"{U1_HEX} 00", '{"id":"' + U1_TEXT + '"}'),
    Golden("RemoveDelegationTokenRecord", 0, lambda: M("RemoveDelegationTokenRecord", token_id="tok"),
           "04 746f6b 00"),
    Golden("RemoveTopicRecord", 0, lambda: M("RemoveTopicRecord", topic_id=ONE_UUID),
           f"{ONE_HEX} 00", '{"topicId":"' + ONE_TEXT + '"}'),
    Golden("RemoveUserScramCredentialRecord", 0, lambda: M(
        "RemoveUserScramCredentialRecord", name="alice", mechanism=1), "06 616c696365 01 00"),
    Golden("TopicRecord", 0, lambda: M("TopicRecord", name="foo", topic_id=U1),
           f"04 666f6f {U1_HEX} 00", '{"name":"foo","topicId":"' + U1_TEXT + '"}'),
    Golden("UnfenceBrokerRecord", 0, lambda: M("UnfenceBrokerRecord", id=5, epoch=6),
           "00000005 0000000000000006 00"),
    Golden("UnregisterBrokerRecord", 0, lambda: M("UnregisterBrokerRecord", broker_id=5, broker_epoch=6),
           "00000005 0000000000000006 00", '{"brokerId":5,"brokerEpoch":6}'),
    Golden("UserScramCredentialRecord", 0, lambda: M(
        "UserScramCredentialRecord", name="alice", mechanism=1, salt=b"\x01\x02", stored_key=b"\xff",
        server_key=b"", iterations=4096), """
        06 616c696365           # Name "alice"
        01                      # Mechanism
        03 0102                 # Salt (compact bytes)
        02 ff                   # StoredKey
        01                      # ServerKey empty
        00001000                # Iterations 4096
        00
    """, '{"name":"alice","mechanism":1,"salt":"AQI=","storedKey":"/w==","serverKey":"","iterations":4096}'),
    Golden("ZkMigrationStateRecord", 0, lambda: M("ZkMigrationStateRecord", zk_migration_state=2), "02 00",
           '{"zkMigrationState":2}'),
]

CONTROL = [
    Golden("LeaderChangeMessage", 0, lambda: M(
        "LeaderChangeMessage", version=0, leader_id=1,
        voters=[S("LeaderChangeMessage", "Voter", voter_id=1), S("LeaderChangeMessage", "Voter", voter_id=2)],
        granting_voters=[S("LeaderChangeMessage", "Voter", voter_id=1)]), """
        0000 00000001                    # Version, LeaderId
        03 00000001 00 00000002 00       # Voters [1, 2], each with empty tags
        02 00000001 00                   # GrantingVoters [1]
        00
    """, '{"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],"grantingVoters":[{"voterId":1}]}'),
    Golden("LeaderChangeMessage", 1, lambda: M(
        "LeaderChangeMessage", version=1, leader_id=2,
        voters=[S("LeaderChangeMessage", "Voter", voter_id=2, voter_directory_id=U1)]), f"""
        0001 00000002
        02 00000002 {U1_HEX} 00          # Voters [(2, U1)]
        01                               # GrantingVoters []
        00
    """),
    Golden("SnapshotHeaderRecord", 0, lambda: M(
        "SnapshotHeaderRecord", version=1, last_contained_log_timestamp=0x0102030405060708), """
        0001 0102030405060708 00
    """),
    Golden("SnapshotFooterRecord", 0, lambda: M("SnapshotFooterRecord", version=1), "0001 00", '{"version":1}'),
    Golden("KRaftVersionRecord", 0, lambda: M("KRaftVersionRecord", version=1, kraft_version=1), "0001 0001 00",
           '{"version":1,"kRaftVersion":1}'),
    Golden("VotersRecord", 0, lambda: M(
        "VotersRecord", version=0, voters=[S(
            "VotersRecord", "Voter", voter_id=1, voter_directory_id=U1,
            endpoints=[S("VotersRecord", "Endpoint", name="CONTROLLER", host="h", port=9093)],
            kraft_version_feature=S("VotersRecord", "KRaftVersionFeature", min_supported_version=0,
                                    max_supported_version=1))]), f"""
        0000                    # Version
        02                      # Voters: 1
        00000001 {U1_HEX}       #   VoterId, VoterDirectoryId
        02 {CONTROLLER} 02 68 2385 00   # Endpoints [CONTROLLER h:9093]
        0000 0001 00            #   KRaftVersionFeature 0..1 (a struct, no null marker)
        00                      #   voter tags
        00
    """, '{"version":0,"voters":[{"voterId":1,"voterDirectoryId":"' + U1_TEXT + '","endpoints":[{"name":'
         '"CONTROLLER","host":"h","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,'
         '"maxSupportedVersion":1}}]}'),
    Golden("QuorumStateData", 0, lambda: M(
        "QuorumStateData", cluster_id="c", leader_id=1, leader_epoch=2, voted_id=3, applied_offset=4,
        current_voters=[S("QuorumStateData", "Voter", voter_id=1)]), """
        02 63                   # ClusterId "c"
        00000001 00000002 00000003   # LeaderId, LeaderEpoch, VotedId
        0000000000000004        # AppliedOffset
        02 00000001 00          # CurrentVoters [1]
        00
    """, '{"clusterId":"c","leaderId":1,"leaderEpoch":2,"votedId":3,"appliedOffset":4,'
         '"currentVoters":[{"voterId":1}]}'),
    Golden("QuorumStateData", 1, lambda: M(
        "QuorumStateData", leader_id=1, leader_epoch=2, voted_id=3, voted_directory_id=U1), f"""
        00000001 00000002 00000003 {U1_HEX} 00
    """, '{"leaderId":1,"leaderEpoch":2,"votedId":3,"votedDirectoryId":"' + U1_TEXT + '"}'),
]

HEADERS = [
    Golden("RequestHeader", 0, lambda: M(
        "RequestHeader", request_api_key=7, request_api_version=0, correlation_id=9), "0007 0000 00000009"),
    Golden("RequestHeader", 1, lambda: M(
        "RequestHeader", request_api_key=3, request_api_version=1, correlation_id=9, client_id="adm"), """
        0003 0001 00000009 0003 61646d      # ClientId: int16 length
    """),
    Golden("RequestHeader", 2, lambda: M(
        "RequestHeader", request_api_key=1, request_api_version=17, correlation_id=0x01020304, client_id="raft"), """
        0001 0011 01020304
        0004 72616674           # ClientId stays an int16-length string in v2 (flexibleVersions none)
        00                      # header tagged fields
    """),
    Golden("ResponseHeader", 0, lambda: M("ResponseHeader", correlation_id=9), "00000009"),
    Golden("ResponseHeader", 1, lambda: M("ResponseHeader", correlation_id=9), "00000009 00"),
]

NULLS = [
    Golden("ConfigRecord", 0, lambda: M("ConfigRecord", resource_type=4, resource_name="", name="x", value=None),
           "04 01 02 78 00 00", '{"resourceType":4,"resourceName":"","name":"x","value":null}'),
    Golden("QuorumStateData", 0, lambda: M("QuorumStateData", cluster_id="", current_voters=None), """
        01 ffffffff ffffffff ffffffff 0000000000000000 00 00   # defaults -1, CurrentVoters null
    """),
    Golden("RequestHeader", 1, lambda: M(
        "RequestHeader", request_api_key=18, request_api_version=0, correlation_id=0, client_id=None),
        "0012 0000 00000000 ffff"),
    Golden("AbortTransactionRecord", 0, lambda: M("AbortTransactionRecord"), "00", "{}"),
    Golden("BrokerRegistrationChangeRecord", 2, lambda: M(
        "BrokerRegistrationChangeRecord", broker_id=1, broker_epoch=2),
        "00000001 0000000000000002 00", '{"brokerId":1,"brokerEpoch":2}'),
]

CASES = RECORDS + CONTROL + HEADERS + NULLS


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-v{c.version}-{i}" for i, c in enumerate(CASES)])
def test_golden_bytes(case: Golden):
    expected = hexb(case.hex)
    assert codec.encode(case.name, case.version, case.build()) == expected
    assert codec.decode(case.name, case.version, expected) == case.build()
    if case.json is not None:
        assert codec.to_json(case.name, case.version, case.build()) == case.json


def _covered() -> set[tuple[str, int]]:
    return {(c.name, c.version) for c in CASES}


@pytest.mark.parametrize("name", sorted(set(METADATA_RECORD_TYPES.values()) | {
    "LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord", "KRaftVersionRecord", "VotersRecord",
    "QuorumStateData", "RequestHeader", "ResponseHeader"}))
def test_lowest_and_highest_versions_are_covered(name: str):
    spec = schema.load(name)
    assert {(name, spec.valid_versions.lo), (name, spec.valid_versions.hi)} <= _covered()


def test_every_metadata_record_type_matches_its_schema_api_key():
    for api_key, name in METADATA_RECORD_TYPES.items():
        spec = schema.load(name)
        assert (spec.type, spec.api_key) == ("metadata", api_key), name
    metadata_specs = {n for n in schema.names() if schema.load(n).type == "metadata"}
    assert metadata_specs == set(METADATA_RECORD_TYPES.values())
    assert {6, 13, 16}.isdisjoint(METADATA_RECORD_TYPES)


def test_json_doubles_follow_java_double_to_string():
    cls = codec.message_class("ClientQuotaRecord")
    render = codec.json_renderer("ClientQuotaRecord", 0)
    for value, text in [(1024.0, "1024.0"), (1e7, "1.0E7"), (0.5, "0.5"), (1e-4, "1.0E-4"), (-0.0, "-0.0")]:
        assert f'"value":{text},' in render(cls(entity=[], key="k", value=value, remove=False))


PROBE = schema.build_message({
    "name": "KraftsmanTaggedNullProbe", "type": "data", "validVersions": "0", "flexibleVersions": "0+",
    "fields": [{"name": "Note", "type": "string", "versions": "0+", "nullableVersions": "0+",
                "taggedVersions": "0+", "tag": 3, "default": "hi"}],
})


@pytest.mark.parametrize("note,hex_text,json_text", [
    (None, "01 03 01 00", '{"note":null}'),   # null with a non-null default: tag 3, size 1, 0x00 (§5.3)
    ("hi", "00", "{}"),                       # the default is not written
    ("yo", "01 03 03 03 796f", '{"note":"yo"}'),  # tag 3, size 3, compact "yo"
])
def test_tagged_null_with_a_non_null_default(monkeypatch, note, hex_text, json_text):
    real_load = codec.load
    monkeypatch.setattr(codec, "load", lambda name: PROBE if name == PROBE.name else real_load(name))
    message = codec.message_class(PROBE.name)(note=note)
    assert codec.encode(PROBE.name, 0, message) == hexb(hex_text)
    assert codec.decode(PROBE.name, 0, hexb(hex_text)) == message
    assert codec.to_json(PROBE.name, 0, message) == json_text
