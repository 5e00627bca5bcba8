"""The answers of one server connection: a Slot per request in the answer order, the Reply a handler completes
later, and the AnswerEncoder that frames them.

Rules:
- A Slot holds its request's answer bytes once ready; the connection writes the slots at the head of the order that
  are ready, so answers leave in request order however they complete.
- A Reply is set on the event loop's thread; set_result() hands the answer to its one consumer at once (the
  connection encodes and writes it), without the loop hop an asyncio future's callbacks take. A coroutine may
  await it instead.
- The Raft leader answers followers fetching at the same offset with one Fetch body (leader.complete_parked):
  the AnswerEncoder of their listener encodes it once and gives the next frame of the same body (same object,
  same version) only its own header. It keeps the last Fetch body it encoded, nothing else.
"""
from __future__ import annotations

import asyncio
import struct

from kraftsman.storage.protocol import framing

FETCH = 1
_RESPONSE_HEADER_SIZE = (4, 5)  # ResponseHeader v0: the correlation id; v1: and an empty tagged-field count


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


class AnswerEncoder:
    """Encode answers into response frames; a Fetch body framed again (same object, same version) is not
    encoded again."""

    __slots__ = ("_fetch",)

    def __init__(self):
        self._fetch = None  # (body, version, the body's bytes) of the Fetch answer encoded last

    def frame(self, ctx, answer) -> bytes:
        """Return the response frame of `answer` to the request `ctx` (network.RequestContext) describes."""
        if ctx.api_key != FETCH:
            return framing.encode_response(ctx.api_key, ctx.api_version, ctx.correlation_id, answer)
        header_size = _RESPONSE_HEADER_SIZE[framing.response_header_version(FETCH, ctx.api_version)]
        last = self._fetch
        if last is not None and last[0] is answer and last[1] == ctx.api_version:
            body = last[2]
            return b"".join((struct.pack(">ii", header_size + len(body), ctx.correlation_id),
                             b"\0" * (header_size - 4), body))
        frame = framing.encode_response(FETCH, ctx.api_version, ctx.correlation_id, answer)
        self._fetch = (answer, ctx.api_version, frame[4 + header_size:])
        return frame
