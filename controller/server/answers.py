"""The answers of one server connection: a Slot per request in the answer order, and the Reply a handler completes
later.

Rules:
- A Slot holds its request's answer bytes once ready; the connection writes the slots at the head of the order that
  are ready, so answers leave in request order however they complete.
- A Reply is set on the event loop's thread; set_result() hands the answer to its one consumer at once (the
  connection encodes and writes it), without the loop hop an asyncio future's callbacks take. A coroutine may
  await it instead.
"""
from __future__ import annotations

import asyncio


class Slot:
    """One request's place in the answer order: its answer's bytes once ready."""

    __slots__ = ("item", "ready", "data", "cancelled", "waiting")

    def __init__(self, item):
        self.item, self.ready, self.data, self.cancelled, self.waiting = item, False, b"", False, None

    def fill(self, data: bytes) -> None:
        self.ready, self.data = True, data

    def cancel(self) -> None:
        """Drop the answer: cancel what it waits for."""
        self.cancelled = True
        if self.waiting is not None:
            self.waiting.cancel()
        elif hasattr(self.item, "cancel"):
            self.item.cancel()


class Reply:
    """An answer a handler gives later, set on the event loop's thread: set_result() hands it to the connection at
    once, without the loop hop an asyncio future's callbacks take (a Raft fetch answered with new records, a
    write answered at its commit)."""

    __slots__ = ("_done", "_result", "_callback")

    def __init__(self):
        self._done, self._result, self._callback = False, None, None

    def done(self) -> bool:
        """Tell whether the answer was set (or cancelled)."""
        return self._done

    def result(self):
        """Return the answer (None when cancelled)."""
        return self._result

    def set_result(self, answer) -> None:
        """Set the answer (a second one is ignored) and hand it on."""
        if self._done:
            return
        self._done, self._result = True, answer
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(answer)

    def cancel(self) -> None:
        """Drop the answer: the connection is gone."""
        self._done, self._callback = True, None

    def when_done(self, callback) -> None:
        """Call callback(answer) when the answer is set (at once when it is); one callback, its one consumer."""
        if self._done:
            callback(self._result)
        else:
            self._callback = callback

    def __await__(self):
        """Await the answer (for a consumer that is a coroutine: a forwarded request, a self-registration)."""
        future = asyncio.get_running_loop().create_future()
        self.when_done(lambda answer: future.done() or future.set_result(answer))
        return future.__await__()
