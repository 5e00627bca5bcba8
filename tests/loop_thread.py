"""An asyncio event loop in a daemon thread, for blocking test and benchmark code (no pytest import:
the chaos benchmark loads this package as a script)."""
from __future__ import annotations

import asyncio
import threading


class LoopThread:
    """An asyncio loop in a daemon thread; run(coro) waits for the result from the calling thread."""

    def __init__(self, name: str = "test-loop"):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 60):
        """Run `coro` on the loop and return its result (raise after `timeout` seconds)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and wait for its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
