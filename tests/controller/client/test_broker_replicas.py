"""The simulated broker's machinery without a quorum: partition logs, the replication quota, the committed image,
ISR expansion by the leader, and the listener's protocol rules."""
from __future__ import annotations

import asyncio

from kraftsman.controller.client.broker_apis.image_follower import ImageFollower
from kraftsman.controller.client.broker_apis.listener import BrokerListener
from kraftsman.controller.client.broker_apis.partition_log import PartitionLog, ReplicationQuota
from kraftsman.controller.client.broker_apis.replicas import ReplicaManager
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

from .test_broker_apis import T1, image, registration, topic


def test_a_follower_reads_whole_batches_up_to_the_fetch_size_and_never_past_the_limit():
    leader = PartitionLog()
    leader.append(100_000, 0, 0)
    follower = PartitionLog()
    follower.append_batches(leader.read(0, 40_000, leader.log_end_offset))
    assert 0 < follower.size <= 40_000 and follower.log_end_offset < leader.log_end_offset
    follower.append_batches(leader.read(follower.log_end_offset, 1 << 20, leader.log_end_offset))
    assert (follower.size, follower.log_end_offset) == (leader.size, leader.log_end_offset)
    assert leader.read(leader.log_end_offset, 1 << 20, leader.log_end_offset) == b""
    assert leader.read(0, 1 << 20, 0) == b""            # nothing at or past the limit (a consumer's high watermark)
    assert len(leader.read(0, 1, leader.log_end_offset)) > 1  # a first batch even past the fetch size
    follower.truncate(2)
    assert follower.log_end_offset == 2 and follower.size == sum(len(b) for b in follower.batches)


def test_the_quota_lets_one_fetch_through_then_about_one_per_window():
    quota = ReplicationQuota()
    assert not quota.exceeded(0.0, 1000)
    quota.record(0.0, 1 << 20)
    assert quota.exceeded(0.5, 1000) and quota.exceeded(10.9, 1000)
    assert not quota.exceeded(11.1, 1000)               # the sample left the 11 s window
    assert not quota.exceeded(0.5, float("inf"))


def _batch(base: int, *records) -> bytes:
    values = [(None, write_metadata_record(r)) for r in records]
    return build_batch(values, base_offset=base, partition_leader_epoch=1)


def _fetch_answer(records: bytes, high_watermark: int):
    cls = codec.message_class("FetchResponse")
    part = cls.PartitionData(partition_index=0, high_watermark=high_watermark, records=records)
    return cls(responses=[cls.FetchableTopicResponse(partitions=[part])])


def test_the_image_holds_only_committed_records_and_skips_batches_seen_before():
    feature = ApiMessageAndVersion(codec.message_class("FeatureLevelRecord")(name="metadata.version",
                                                                            feature_level=21), 0)
    follower = ImageFollower()
    seen = []
    follower.on_change(seen.append)
    data = _batch(0, feature) + _batch(1, registration(4))
    asyncio.run(follower.on_fetch(None, _fetch_answer(data, 1)))
    assert follower.image.features.metadata_version == 21 and 4 not in follower.image.cluster.brokers
    asyncio.run(follower.on_fetch(None, _fetch_answer(data, 2)))         # the same batches again, now committed
    assert 4 in follower.image.cluster.brokers and follower.offset == 2 and len(seen) == 2


class _Channel:
    def __init__(self):
        self.sent = []

    async def send(self, api, version, body):
        self.sent.append(body)
        return codec.message_class("AlterPartitionResponse")(topics=[])


def _fetch(replica: int, epoch: int, offset: int):
    cls = codec.message_class("FetchRequest")
    return cls(replica_state=cls.ReplicaState(replica_id=replica, replica_epoch=epoch), max_wait_ms=0, min_bytes=0,
               max_bytes=1 << 20, topics=[cls.FetchTopic(topic_id=T1, partitions=[cls.FetchPartition(
                   partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])])


def _leader(*, fenced_follower: bool = False, recovering: bool = False):
    records = [registration(4), registration(5, fenced=fenced_follower), *topic("t", T1, ([4, 5], [4], 4))]
    state = image(*records)
    if recovering:
        change = codec.message_class("PartitionChangeRecord")(partition_id=0, topic_id=T1, leader_recovery_state=1)
        state = image(*records, ApiMessageAndVersion(change, 0))
    channel = _Channel()
    replicas = ReplicaManager(4, epoch=lambda: 104, channel=channel)
    return replicas, channel, state


def test_a_follower_that_reached_the_high_watermark_joins_the_isr_through_alter_partition():
    async def run():
        replicas, channel, state = _leader()
        replicas.on_image(state)
        replicas.append("t", 0, 50_000)
        first = await replicas.fetch(_fetch(5, 105, 0), 17)
        await asyncio.sleep(0)
        assert not channel.sent and first.responses[0].partitions[0].records     # behind: data, no ISR change
        end = replicas.logs[(T1, 0)].log_end_offset
        await replicas.fetch(_fetch(5, 105, end), 17)
        await asyncio.sleep(0.01)
        (body,) = channel.sent
        part = body.topics[0].partitions[0]
        assert (body.broker_id, body.broker_epoch) == (4, 104)
        assert [(b.broker_id, b.broker_epoch) for b in part.new_isr_with_epochs] == [(4, 104), (5, 105)]
        stale = await replicas.fetch(_fetch(6, 1, 0), 17)   # a broker that is no replica learns nothing new
        assert stale.responses[0].partitions[0].error_code == 0
    asyncio.run(run())


def test_a_fenced_follower_or_a_stale_epoch_does_not_join_and_a_recovering_leader_recovers_first():
    async def run():
        replicas, channel, state = _leader(fenced_follower=True)
        replicas.on_image(state)
        await replicas.fetch(_fetch(5, 105, 0), 17)
        replicas, second, state = _leader()
        replicas.on_image(state)
        await replicas.fetch(_fetch(5, 99, 0), 17)          # not the registered broker epoch (KIP-903)
        replicas, third, state = _leader(recovering=True)
        replicas.on_image(state)
        await asyncio.sleep(0.01)
        return channel.sent, second.sent, third.sent
    fenced, stale, recovering = asyncio.run(run())
    assert fenced == [] and stale == []
    (body,) = recovering
    part = body.topics[0].partitions[0]
    assert (part.leader_recovery_state, [b.broker_id for b in part.new_isr_with_epochs]) == (0, [4])


def _exchange(listener_frames: list[bytes], handler=None):
    async def run():
        listener = BrokerListener("127.0.0.1", 0, handler or (lambda request, body: None),
                                  advertised=lambda: {3: (0, 12)},
                                  api_versions=lambda: codec.message_class("ApiVersionsResponse")(error_code=0))
        await listener.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        answers = []
        try:
            for frame in listener_frames:
                writer.write(frame)
                try:
                    head = await asyncio.wait_for(reader.readexactly(4), 3)
                    answers.append(head + await reader.readexactly(int.from_bytes(head, "big")))
                except asyncio.IncompleteReadError:
                    answers.append(None)   # the broker closed the connection
                    break
        finally:
            writer.close()
            await listener.close()
        return answers
    return asyncio.run(run())


def test_api_versions_rules_on_the_listener():
    unsupported = framing.encode_request(18, 4, 1, "c", codec.message_class("ApiVersionsRequest")())
    unsupported = unsupported[:6] + (99).to_bytes(2, "big") + unsupported[8:]
    bad_name = framing.encode_request(18, 3, 2, "c", codec.message_class("ApiVersionsRequest")(
        client_software_name="-x", client_software_version="1"))
    first, second = _exchange([unsupported, bad_name])
    assert first == framing.unsupported_api_versions_response(1)
    _, body = framing.decode_response(18, 3, second[4:])
    assert (body.error_code, body.api_keys) == (42, [])


def test_requests_the_broker_does_not_advertise_or_serve_close_the_connection():
    metadata = framing.encode_request(3, 12, 5, "c", codec.message_class("MetadataRequest")(topics=[]))
    cluster = framing.encode_request(60, 1, 6, "c", codec.message_class("DescribeClusterRequest")())
    assert _exchange([cluster]) == [None]                       # not in the advertised table
    assert _exchange([metadata]) == [None]                      # advertised, but the handler serves nothing
    answer = codec.message_class("MetadataResponse")(brokers=[], topics=[])
    padded = (int.from_bytes(metadata[:4], "big") + 3).to_bytes(4, "big") + metadata[4:] + b"\0\0\0"
    (frame,) = _exchange([padded], handler=lambda request, body: answer)  # bytes after the body are ignored
    assert framing.decode_response(3, 12, frame[4:])[1] == answer
