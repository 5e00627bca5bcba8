"""A real Kafka client (confluent-kafka / librdkafka) handshakes with a Listener and reads its Metadata answer."""
from __future__ import annotations

import asyncio
import threading

import pytest

from kraftsman.controller.server.network import Listener
from kraftsman.storage.protocol import codec

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient  # noqa: E402

Metadata = codec.message_class("MetadataResponse")


class Background:
    """A Listener on its own event loop thread (the client blocks the main thread)."""

    def __init__(self, handler):
        self.loop = asyncio.new_event_loop()
        self.listener = Listener("CONTROLLER", "127.0.0.1", 0, handler)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Listener:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.listener.start(), self.loop).result(5)
        return self.listener

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.listener.close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def test_admin_client_lists_topics_through_the_listener():
    seen = []

    async def handler(ctx, body):
        seen.append((ctx.api_name, ctx.api_version, ctx.client_id))
        if ctx.api_name != "Metadata":
            return None
        broker = Metadata.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=listener.port)
        part = Metadata.MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=0,
                                                  replica_nodes=[1], isr_nodes=[1])
        topic = Metadata.MetadataResponseTopic(name="t-one", partitions=[part])
        return Metadata(brokers=[broker], cluster_id="Xq3mZ8tnT3ahbQ6c2Rj1Vw", controller_id=1, topics=[topic])

    with Background(handler) as listener:
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{listener.port}", "client.id": "kraftsman-test"})
        md = admin.list_topics(timeout=8)
    assert md.cluster_id == "Xq3mZ8tnT3ahbQ6c2Rj1Vw" and md.controller_id == 1
    assert sorted(md.topics) == ["t-one"] and list(md.brokers) == [1]
    assert ("Metadata", 12, "kraftsman-test") in seen  # librdkafka picked our highest Metadata version
