"""ActiveControllerClient reaches the active controller of a Kafka 3.9 quorum from one standby's address."""
from __future__ import annotations

import asyncio
import time

import pytest

from kraftsman.controller.client.controller_client import ActiveControllerClient, ControllerUnavailable
from kraftsman.storage.protocol import codec

from ..server.kafka39_fakes import ACTIVE, kafka39_quorum


def unregister(client: ActiveControllerClient):
    async def call():
        try:
            body = codec.message_class("UnregisterBrokerRequest")(broker_id=4)
            return await client.request("UnregisterBroker", 0, body)
        finally:
            await client.close()
    return asyncio.run(call())


def test_a_refusal_is_followed_to_the_controller_describe_cluster_names():
    with kafka39_quorum() as quorum:
        client = ActiveControllerClient([("127.0.0.1", quorum.servers[1].port)], timeout_ms=30_000)
        started = time.monotonic()
        assert unregister(client).error_code == 0 and time.monotonic() - started < 5
        assert quorum.apis(1) == [64, 60] and quorum.apis(ACTIVE) == [64]
        assert client.addresses[1] == ("127.0.0.1", quorum.servers[ACTIVE].port)   # learnt, then preferred


def test_only_refusals_until_the_timeout_say_so():
    with kafka39_quorum() as quorum:
        quorum.election = True
        client = ActiveControllerClient([("127.0.0.1", quorum.servers[2].port)], timeout_ms=500, backoff_ms=100)
        with pytest.raises(ControllerUnavailable, match=r"^UnregisterBroker: every controller answered NOT_CONTROLLER"
                                                        r" \(\d+ times\), and none named the active controller, "
                                                        r"within 0\.5 s$"):
            unregister(client)
