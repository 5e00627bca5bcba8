"""`--transaction-log-decoder` and `--offsets-decoder`: Kafka's text for `__transaction_state` and
`__consumer_offsets` segments.

Sources of the expected text:
- Transaction log: real `kafka-dump-log.sh --deep-iteration --print-data-log --transaction-log-decoder`
  output of a Strimzi cluster (Kafka 3.9 era, March 2025) published in fvaleri/strimzi-debugging
  (sessions on transactions). Its five batches are rebuilt here byte for byte from the TransactionLogKey /
  TransactionLogValue v0 layout; the batch sizes and CRCs Kafka printed (120/3663501755, ...) prove the
  bytes are the ones Kafka dumped, so every line must come out identical.
- Offsets: hand-encoded keys/values (layouts of OffsetCommitKey/Value, GroupMetadataKey/Value and
  ConsumerProtocolSubscription/Assignment) and lines derived from DumpLogSegments.OffsetsMessageParser:
  key `{"type":"<t>","data":..}`, payload `{"version":"<v>","data":..}`, `<DELETE>` for tombstones,
  `Unknown record type ..` / `Error at offset ..` keys with no payload.
- Offsets, Kafka's own expectations: the strings of DumpLogSegmentsTest.testOffsetsMessageParser (3.8/3.9 era)
  for a consumer-protocol group, a malformed one, a consumer-group metadata record, its tombstone and an
  unknown record type, with the records' bytes laid out by hand.
"""
from __future__ import annotations

import io
import struct

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.coordinator import scala_hash_set_order, topic_partition_hash
from kraftsman.cli.dump_log.tool import run
from kraftsman.storage.records.batch import build_batch

NAME = "00000000000000000000.log"


def dump(tmp_path, data: bytes, *flags) -> tuple[int, list[str], str]:
    (tmp_path / NAME).write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, [*flags, "--files", NAME], Environment(stdout=out, stderr=err, cwd=str(tmp_path)),
                         prog="kafka-dump-log")
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue().splitlines(), err.getvalue()


def string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


# ---------------------------------------------------------------- transaction log (real Kafka output)

TXN_KEY = bytes.fromhex("0000" "000b") + b"kafka-txn-0"  # key version 0, TransactionalId


def txn_value(status: int, partitions, last_update: int, start: int) -> bytes:
    """TransactionLogValue v0: ProducerId, ProducerEpoch, TimeoutMs, Status, Partitions, LastUpdate, Start."""
    out = struct.pack(">hqhib", 0, 1, 0, 60000, status)
    if partitions is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(partitions))
        for topic, ids in partitions:
            out += string(topic) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return out + struct.pack(">qq", last_update, start)


TWO = [("output-topic", [0]), ("__consumer_offsets", [12])]
TXN_BATCHES = [  # (offset, batch timestamp, status, partitions, last update, start)
    (0, 1742739549438, 0, None, 1742739549435, -1),
    (1, 1742739702876, 1, [("output-topic", [0])], 1742739702876, 1742739702876),
    (2, 1742739702882, 1, TWO, 1742739702882, 1742739702876),
    (3, 1742739703134, 2, TWO, 1742739703132, 1742739702876),
    (4, 1742739703240, 4, [], 1742739703142, 1742739702876),
]
_HEAD = ("baseOffset: {o} lastOffset: {o} count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
         "producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: "
         "OptionalLong.empty position: {p} CreateTime: {t} size: {s} magic: 2 compresscodec: none crc: {c} "
         "isvalid: true")
_REC = ("| offset: {o} CreateTime: {t} keySize: 15 valueSize: {v} sequence: -1 headerKeys: [] "
        "key: transaction_metadata::transactionalId=kafka-txn-0 payload: producerId:1,producerEpoch:0,{rest}")
KAFKA_TXN_TEXT = [
    "Log starting offset: 0",
    _HEAD.format(o=0, p=0, t=1742739549438, s=120, c=3663501755),
    _REC.format(o=0, t=1742739549438, v=37, rest="state=Empty,partitions=[],txnLastUpdateTimestamp=1742739549435,"
                                                 "txnTimeoutMs=60000"),
    _HEAD.format(o=1, p=120, t=1742739702876, s=143, c=563111626),
    _REC.format(o=1, t=1742739702876, v=59, rest="state=Ongoing,partitions=[output-topic-0],"
                                                 "txnLastUpdateTimestamp=1742739702876,txnTimeoutMs=60000"),
    _HEAD.format(o=2, p=263, t=1742739702882, s=172, c=1296972565),
    _REC.format(o=2, t=1742739702882, v=87, rest="state=Ongoing,partitions=[output-topic-0,__consumer_offsets-12],"
                                                 "txnLastUpdateTimestamp=1742739702882,txnTimeoutMs=60000"),
    _HEAD.format(o=3, p=435, t=1742739703134, s=172, c=598474139),
    _REC.format(o=3, t=1742739703134, v=87, rest="state=PrepareCommit,partitions=[output-topic-0,"
                                                 "__consumer_offsets-12],txnLastUpdateTimestamp=1742739703132,"
                                                 "txnTimeoutMs=60000"),
    _HEAD.format(o=4, p=607, t=1742739703240, s=120, c=4205821491),
    _REC.format(o=4, t=1742739703240, v=37, rest="state=CompleteCommit,partitions=[],"
                                                 "txnLastUpdateTimestamp=1742739703142,txnTimeoutMs=60000"),
]


def txn_segment() -> bytes:
    return b"".join(build_batch([(TXN_KEY, txn_value(status, parts, last, start))], off, timestamp=ts)
                    for off, ts, status, parts, last, start in TXN_BATCHES)


def test_transaction_log_matches_real_kafka_output(tmp_path):
    status, out, err = dump(tmp_path, txn_segment(), "--deep-iteration", "--print-data-log",
                            "--transaction-log-decoder")
    assert (status, err) == (0, "")
    assert out == [f"Dumping {NAME}"] + KAFKA_TXN_TEXT


def test_transaction_log_skip_record_metadata_keeps_key_and_payload(tmp_path):
    status, out, _ = dump(tmp_path, txn_segment(), "--transaction-log-decoder", "--skip-record-metadata")
    assert status == 0
    assert out[3] == ("| key: transaction_metadata::transactionalId=kafka-txn-0 payload: producerId:1,producerEpoch:0,"
                      "state=Empty,partitions=[],txnLastUpdateTimestamp=1742739549435,txnTimeoutMs=60000")


def test_transaction_log_tombstone_and_unknown_key_version(tmp_path):
    other = struct.pack(">h", 3) + string("x")
    status, out, err = dump(tmp_path, build_batch([(TXN_KEY, None), (other, b"\x00\x00")], timestamp=5),
                            "--transaction-log-decoder")
    assert (status, err) == (0, "")
    assert out[3].endswith("keySize: 15 valueSize: -1 sequence: -1 headerKeys: [] "
                           "key: transaction_metadata::transactionalId=kafka-txn-0 payload: <DELETE>")
    assert out[4].endswith("keySize: 5 valueSize: 2 sequence: -1 headerKeys: [] key: unknown::version=3")


def test_transaction_log_bad_state_is_one_line_and_exit_2(tmp_path):
    bad = txn_value(9, [], 1, 1)
    status, out, err = dump(tmp_path, build_batch([(TXN_KEY, bad)], timestamp=5), "--transaction-log-decoder")
    assert status == 2
    assert err.count("\n") == 2 and "Unknown transaction state id 9" in err  # then the summary line
    assert err.endswith("kafka-dump-log: 1 batch failed: 00000000000000000000.log at position 0\n")
    assert out[2].startswith("baseOffset: 0 ")


def test_scala_hash_set_order_is_by_bucket_then_hash():
    # TopicPartition("t", p).hashCode = 31 * (31 + p) + "t".hashCode (116) = 1077 + 31p; with 16 buckets
    # p=0..3 land in buckets 5, 4, 3, 2, so the set iterates them backwards.
    assert [topic_partition_hash("t", p) for p in range(4)] == [1077, 1108, 1139, 1170]
    assert scala_hash_set_order([[("t", p) for p in range(4)]]) == [("t", 3), ("t", 2), ("t", 1), ("t", 0)]
    # "output-topic".hashCode() = -1218349725 and "__consumer_offsets".hashCode() = -970371369 (Java): after
    # TopicPartition's mixing and Scala's xor-folding both land in bucket 5, where the lower (signed) hash,
    # output-topic-0's, comes first, whatever the insertion order: Kafka printed it first (real output above).
    assert scala_hash_set_order([[("__consumer_offsets", 12)], [("output-topic", 0)]]) == \
        [("output-topic", 0), ("__consumer_offsets", 12)]


def test_scala_hash_set_grows_past_twelve_elements():
    # 13 single-partition `++=`: before the 12th, sizeHint asks for tableSizeFor((11 + 1 + 1) / 0.75 = 17)
    # = 32 buckets (more than 12 elements never fit 16 buckets at load factor 0.75); with hashes 1077 + 31p
    # the order is then by (h & 31), then h.
    groups = [[("t", p)] for p in range(13)]
    hashes = {p: 1077 + 31 * p for p in range(13)}
    expected = sorted(range(13), key=lambda p: (hashes[p] & 31, hashes[p]))
    assert [p for _, p in scala_hash_set_order(groups)] == expected


# ---------------------------------------------------------------- offsets decoder (hand-derived)

# OffsetCommitKey v1 (record type 1): group "grp", topic "topic-a", partition 0
COMMIT_KEY = bytes.fromhex("0001" "0003") + b"grp" + bytes.fromhex("0007") + b"topic-a" + bytes.fromhex("00000000")
# OffsetCommitValue v3: offset 42, leaderEpoch 5, metadata "", commitTimestamp 1700000000000
COMMIT_VALUE = bytes.fromhex("0003" "000000000000002a" "00000005" "0000" "0000018bcfe56800")
COMMIT_KEY_JSON = '{"type":"1","data":{"group":"grp","topic":"topic-a","partition":0}}'


def _subscription() -> bytes:  # ConsumerProtocolSubscription v0: Topics ["topic-a"], UserData null
    return struct.pack(">hi", 0, 1) + string("topic-a") + struct.pack(">i", -1)


def _assignment() -> bytes:  # ConsumerProtocolAssignment v0: [("topic-a", [0])], UserData null
    return struct.pack(">hi", 0, 1) + string("topic-a") + struct.pack(">ii", 1, 0) + struct.pack(">i", -1)


def group_value(protocol_type: str, subscription: bytes) -> bytes:
    """GroupMetadataValue v1: protocolType, generation, protocol, leader, members (with rebalanceTimeout)."""
    assignment = _assignment()
    member = (string("m-1") + string("cli") + string("/127.0.0.1") + struct.pack(">ii", 300000, 45000)
              + struct.pack(">i", len(subscription)) + subscription + struct.pack(">i", len(assignment)) + assignment)
    return (struct.pack(">h", 1) + string(protocol_type) + struct.pack(">i", 1) + string("range") + string("m-1")
            + struct.pack(">i", 1) + member)


def test_offset_commit_record_and_tombstone(tmp_path):
    status, out, err = dump(tmp_path, build_batch([(COMMIT_KEY, COMMIT_VALUE), (COMMIT_KEY, None)], timestamp=7),
                            "--offsets-decoder")
    assert (status, err) == (0, "")
    assert out[3] == ("| offset: 0 CreateTime: 7 keySize: 20 valueSize: 24 sequence: -1 headerKeys: [] key: "
                      + COMMIT_KEY_JSON + ' payload: {"version":"3","data":{"offset":42,"leaderEpoch":5,'
                      '"metadata":"","commitTimestamp":1700000000000}}')
    assert out[4] == ("| offset: 1 CreateTime: 7 keySize: 20 valueSize: -1 sequence: -1 headerKeys: [] key: "
                      + COMMIT_KEY_JSON + " payload: <DELETE>")


def test_offset_commit_value_v1_has_expire_timestamp_and_no_leader_epoch(tmp_path):
    value = struct.pack(">hq", 1, 10) + string("m") + struct.pack(">qq", 100, 200)
    _, out, _ = dump(tmp_path, build_batch([(COMMIT_KEY, value)], timestamp=7), "--offsets-decoder",
                     "--skip-record-metadata")
    assert out[3] == ("| key: " + COMMIT_KEY_JSON + ' payload: {"version":"1","data":{"offset":10,"metadata":"m",'
                      '"commitTimestamp":100,"expireTimestamp":200}}')


def test_value_version_past_the_spec_is_read_like_the_highest(tmp_path):
    # Kafka's generated read() has no top-level version check: v5 reads (and prints) like v4, flexible.
    value = struct.pack(">hqi", 5, 1, -1) + b"\x01" + struct.pack(">q", 2) + b"\x00"  # compact "" then no tags
    _, out, _ = dump(tmp_path, build_batch([(COMMIT_KEY, value)], timestamp=7), "--offsets-decoder",
                     "--skip-record-metadata")
    assert out[3].endswith('payload: {"version":"5","data":{"offset":1,"leaderEpoch":-1,"metadata":"",'
                           '"commitTimestamp":2}}')


def test_group_metadata_expands_consumer_protocol_members(tmp_path):
    key = bytes.fromhex("0002" "0003") + b"grp"
    status, out, _ = dump(tmp_path, build_batch([(key, group_value("consumer", _subscription()))], timestamp=7),
                          "--offsets-decoder", "--skip-record-metadata")
    assert status == 0
    assert out[3] == ('| key: {"type":"2","data":{"group":"grp"}} payload: {"version":"1","data":{'
                      '"protocolType":"consumer","generation":1,"protocol":"range","leader":"m-1","members":[{'
                      '"memberId":"m-1","clientId":"cli","clientHost":"/127.0.0.1","rebalanceTimeout":300000,'
                      '"sessionTimeout":45000,"subscription":{"topics":["topic-a"],"userData":null},'
                      '"assignment":{"assignedPartitions":[{"topic":"topic-a","partitions":[0]}],"userData":null}}]}}')


def test_group_metadata_keeps_bytes_of_other_protocols_and_unparsable_subscriptions(tmp_path):
    import base64

    key = bytes.fromhex("0002" "0003") + b"grp"
    b64 = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    _, out, _ = dump(tmp_path, build_batch([(key, group_value("connect", _subscription())),
                                            (key, group_value("consumer", b"\x00"))], timestamp=7),
                     "--offsets-decoder", "--skip-record-metadata")
    assert f'"subscription":"{b64(_subscription())}","assignment":"{b64(_assignment())}"' in out[3]
    assert '"subscription":"AA==","assignment":{"assignedPartitions":' in out[4]


def test_unknown_record_type_and_unreadable_key(tmp_path):
    share_key = struct.pack(">h", 9) + string("g")
    status, out, err = dump(tmp_path, build_batch([(share_key, b"\x00\x00"), (b"\x00\x01", b"")], timestamp=7),
                            "--offsets-decoder", "--skip-record-metadata")
    assert out[3:] == ["| key: Unknown record type 9 at offset 0, skipping.",
                       "| key: Error at offset 1, skipping. Could not read record with version 1 from key's buffer "
                       "due to: null."]
    assert (status, err) == (2, "kafka-dump-log: 1 batch failed: 00000000000000000000.log at position 0\n")


def test_missing_key_is_reported_on_one_line(tmp_path):
    status, out, err = dump(tmp_path, build_batch([(None, b"x")], timestamp=7), "--offsets-decoder")
    assert status == 2
    assert err.count("\n") == 2 and "(message had a missing key)" in err
    assert err.endswith("kafka-dump-log: 1 batch failed: 00000000000000000000.log at position 0\n")


def test_short_value_version(tmp_path):
    _, out, _ = dump(tmp_path, build_batch([(COMMIT_KEY, b"\x00")], timestamp=7), "--offsets-decoder",
                     "--skip-record-metadata")
    assert out[3] == "| key: Error at offset 0, skipping. Could not read version from value's buffer."


# ---------------------------------------------------------------- Kafka's own OffsetsMessageParser expectations
# DumpLogSegmentsTest.testOffsetsMessageParser (Kafka 3.8/3.9 era) gives the exact key/payload strings for these
# records; the bytes are laid out by hand here from the specs (GroupMetadataValue v4 is flexible: compact
# strings/arrays/bytes with length + 1 and empty tagged-field sections; the consumer protocol is not flexible).

def compact(text: str | bytes | None) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return b"\x00" if raw is None else bytes([len(raw) + 1]) + raw


KAFKA_GROUP_KEY = '{"type":"2","data":{"group":"group"}}'
KAFKA_GROUP_PREFIX = ('{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
                      '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
                      '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
                      '"rebalanceTimeout":1000,"sessionTimeout":100,')


def kafka_group_value(subscription: bytes, assignment: bytes) -> bytes:
    member = (compact("member") + compact("instance") + compact("client") + compact("host")
              + struct.pack(">ii", 1000, 100) + compact(subscription) + compact(assignment) + b"\x00")
    return (struct.pack(">h", 4) + compact("consumer") + struct.pack(">i", 10) + compact("range")
            + compact("member") + struct.pack(">q", -1) + b"\x02" + member + b"\x00")


def test_kafka_test_case_group_metadata_with_consumer_protocol(tmp_path):
    # ConsumerProtocol.serializeSubscription at v3: topics ["foo"], userData null, ownedPartitions [foo: [0]],
    # generationId 0, rackId "rack"; serializeAssignment at v3: [foo: [0]], userData null.
    subscription = (struct.pack(">hi", 3, 1) + string("foo") + struct.pack(">i", -1) + struct.pack(">i", 1)
                    + string("foo") + struct.pack(">ii", 1, 0) + struct.pack(">i", 0) + string("rack"))
    assignment = struct.pack(">hi", 3, 1) + string("foo") + struct.pack(">iii", 1, 0, -1)
    key = struct.pack(">h", 2) + string("group")
    _, out, _ = dump(tmp_path, build_batch([(key, kafka_group_value(subscription, assignment))], timestamp=1),
                     "--offsets-decoder", "--skip-record-metadata")
    assert out[3] == ("| key: " + KAFKA_GROUP_KEY + " payload: " + KAFKA_GROUP_PREFIX
                      + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo",'
                        '"partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
                        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')


def test_kafka_test_case_malformed_consumer_protocol_keeps_bytes(tmp_path):
    key = struct.pack(">h", 2) + string("group")
    value = kafka_group_value(b"Subscription", b"Assignment")
    _, out, _ = dump(tmp_path, build_batch([(key, value)], timestamp=1), "--offsets-decoder", "--skip-record-metadata")
    assert out[3] == ("| key: " + KAFKA_GROUP_KEY + " payload: " + KAFKA_GROUP_PREFIX
                      + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}')


def test_kafka_test_case_consumer_group_metadata_tombstone_and_unknown_type(tmp_path):
    key = struct.pack(">h", 3) + string("group")
    value = struct.pack(">hi", 0, 10) + b"\x00"  # ConsumerGroupMetadataValue v0: epoch 10, no tagged fields
    unknown = struct.pack(">h", 32767) + string("group")
    _, out, _ = dump(tmp_path, build_batch([(key, value), (key, None), (unknown, value)], timestamp=1),
                     "--offsets-decoder", "--skip-record-metadata")
    assert out[3:] == ['| key: {"type":"3","data":{"groupId":"group"}} payload: {"version":"0","data":{"epoch":10}}',
                       '| key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>',
                       "| key: Unknown record type 32767 at offset 2, skipping."]


def test_kafka_test_case_unknown_tagged_field_past_the_end(tmp_path):
    # Kafka's test reads a ConsumerGroupMemberMetadataValue as a ConsumerGroupMetadataValue and expects the
    # message below; these 12 bytes after the version reproduce its reading: epoch (4), one tagged field,
    # tag 0, size varint ff ff ff ff 01 = 536870911, and 1 byte left.
    key = struct.pack(">h", 3) + string("group")
    value = struct.pack(">h", 0) + bytes.fromhex("00000101" "01" "00" "ffffffff01" "00")
    _, out, _ = dump(tmp_path, build_batch([(key, value)], timestamp=1), "--offsets-decoder", "--skip-record-metadata")
    assert out[3] == ("| key: Error at offset 0, skipping. Could not read record with version 0 from value's buffer "
                      "due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available.")


def test_java_reader_messages_for_malformed_records(tmp_path):
    long_group = struct.pack(">hh", 1, 100) + b"grp"  # OffsetCommitKey: group claims 100 bytes, 3 left
    null_group = struct.pack(">hh", 3, -1)  # ConsumerGroupMetadataKey: GroupId null
    members = struct.pack(">h", 0) + string("consumer") + struct.pack(">i", 1) + string("r") + string("m") \
        + struct.pack(">i", 1000)  # GroupMetadataValue v0: 1000 members, 0 bytes left
    group_key = struct.pack(">h", 2) + string("g")
    records = [(long_group, None), (null_group, None), (group_key, members)]
    status, out, _ = dump(tmp_path, build_batch(records, timestamp=1), "--offsets-decoder", "--skip-record-metadata")
    prefix = "| key: Error at offset {}, skipping. Could not read record with version {} from {}'s buffer due to: "
    assert out[3:] == [
        prefix.format(0, 1, "key") + "Error reading byte array of 100 byte(s): only 3 byte(s) available.",
        prefix.format(1, 3, "key") + "non-nullable field groupId was serialized as null.",
        prefix.format(2, 0, "value") + "Tried to read 1000 elements, but only 0 bytes remain."]
    assert status == 2
