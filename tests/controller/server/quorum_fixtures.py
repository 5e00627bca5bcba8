"""Shared pieces for tests on a real controller quorum: a background event loop and quorum queries."""
from __future__ import annotations

import asyncio
import threading

from kraftsman.controller.server.controller_client import describe_quorum, find_leader  # noqa: F401

FAST = {"controller.quorum.election.timeout.ms": "500", "controller.quorum.fetch.timeout.ms": "1000",
        "controller.quorum.election.backoff.max.ms": "300", "broker.session.timeout.ms": "3000",
        "broker.heartbeat.interval.ms": "500", "metadata.log.max.record.bytes.between.snapshots": "4000",
        "metadata.log.segment.bytes": "16384"}


class LoopThread:
    """An asyncio loop in a daemon thread; run(coro) waits for the result from test code."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
