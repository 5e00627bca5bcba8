"""One asyncio request/response Connection to a Kafka-protocol server: the controller's peers and forwarding,
brokers simulated by tests and the async admin client all speak through it.

Rules:
- A Connection owns one socket: requests get increasing correlation ids, may be pipelined, and each
  response is matched by correlation id and decoded at its request's version. A request that outlives
  its timeout raises RequestTimeout (an asyncio.TimeoutError); a dead socket fails every waiter with
  ConnectionClosed (a ConnectionError); pick_version raises UnsupportedVersion, and a body that does
  not encode raises FramingError before anything is sent.
- send_to() hands a response to a callback as soon as it is read (an Answer: no future, no loop hop), for a
  caller on the loop's thread that must act at once (the Raft peers).
- `negotiate()` sends ApiVersions at our highest version with client software name/version; on
  UNSUPPORTED_VERSION it retries at the highest version the server's v0 answer lists (KIP-511).
- Responses are cut from the byte stream in the socket's own callback (an asyncio Protocol), not by a reader
  task: each one reaches its waiter as soon as its last byte arrives, with no task wake-up in between. A size
  below 4 or above MAX_FRAME_SIZE, or a response that does not decode, ends the connection like a dead socket.
- A request written while the socket's buffer is above its high-water mark waits in request() until the
  buffer drains (flow control, as StreamWriter.drain).
"""
from __future__ import annotations

import asyncio
import importlib.metadata
import itertools
import re

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

API_VERSIONS_KEY = framing.API_VERSIONS_KEY


def _software_version() -> str:
    try:
        version = importlib.metadata.version("kraftsman")
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    return re.sub(r"[^a-zA-Z0-9.\-]", "-", version).strip("-.") or "0"


SOFTWARE_NAME, SOFTWARE_VERSION = "kraftsman", _software_version()


class ConnectionClosed(ConnectionError):
    """The connection closed (or broke) before the response arrived."""


class RequestTimeout(asyncio.TimeoutError):
    """A request got no response within its timeout."""


class UnsupportedVersion(ValueError):
    """The server and kraftsman share no version of an API."""


def _api_by_name(api_name: str) -> framing.ApiInfo:
    info = _API_BY_NAME.get(api_name)
    if info is None:
        for info in framing.api_registry().values():
            if info.name == api_name:
                _API_BY_NAME[api_name] = info
                return info
        raise UnsupportedVersion(f"unknown API {api_name!r}")
    return info


_API_BY_NAME: dict[str, framing.ApiInfo] = {}


class Answer:
    """A request's answer handed to a callback as soon as it is read: callback(body, None), or callback(None,
    error) when the connection fails or expire() runs first; no future, no loop hop (Connection.send_to)."""

    __slots__ = ("_callback", "_drop")

    def __init__(self, callback, drop):
        self._callback, self._drop = callback, drop

    def done(self) -> bool:
        """Tell whether the answer was given (or the wait given up)."""
        return self._callback is None

    def set_result(self, body) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(body, None)

    def set_exception(self, error) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback(None, error)

    def expire(self, error: Exception | None = None) -> None:
        """Give up waiting: the callback gets `error` (a RequestTimeout by default), a late answer is dropped."""
        if self._callback is not None:
            self._drop()
            self.set_exception(error or RequestTimeout("no response in time"))


def _expire(future: asyncio.Future) -> None:
    """End a request's wait: one timer on its future, rather than a timeout scope around the await."""
    if not future.done():
        future.set_exception(RequestTimeout("no response in time"))


class Connection:
    """One client connection to a Kafka-protocol server."""

    def __init__(self, transport, protocol: "_Frames", *, host: str, port: int, client_id: str | None,
                 timeout_ms: int):
        self.transport, self.protocol, self.host, self.port = transport, protocol, host, port
        self.client_id, self.timeout_ms = client_id, timeout_ms
        self.api_versions: dict[int, tuple[int, int]] | None = None
        self._cids = itertools.count()
        self._waiters: dict[int, tuple[int, int, asyncio.Future]] = {}
        self._picked: dict[tuple, int] = {}  # (api, wanted max) -> version (pick_version)
        self._closed = False
        protocol.attach(self)

    @classmethod
    async def open(cls, host: str, port: int, *, client_id: str | None = "kraftsman",
                   timeout_ms: int = 30_000, ssl=None) -> "Connection":
        """Connect to host:port within timeout_ms (raises OSError or RequestTimeout); with an SSLContext `ssl`,
        over TLS (ssl.SSLError when the handshake fails)."""
        loop = asyncio.get_running_loop()
        tls = {} if ssl is None else {"ssl": ssl, "server_hostname": host}
        try:
            async with asyncio.timeout(timeout_ms / 1000):  # not wait_for: 3.11's swallows a cancel that
                transport, protocol = await loop.create_connection(_Frames, host, port, **tls)  # meets the end
        except TimeoutError:
            what = "" if ssl is None else " (TLS)"
            raise RequestTimeout(f"connecting to {host}:{port}{what} timed out after {timeout_ms} ms") from None
        return cls(transport, protocol, host=host, port=port, client_id=client_id, timeout_ms=timeout_ms)

    @property
    def closed(self) -> bool:
        """Tell whether the connection is closed."""
        return self._closed

    def send(self, api_name: str, version: int, body) -> asyncio.Future:
        """Write a request now; return the future of its response body."""
        info = _api_by_name(api_name)
        future = asyncio.get_running_loop().create_future()
        if self._closed:
            future.set_exception(ConnectionClosed(f"connection to {self.host}:{self.port} is closed"))
            return future
        cid = next(self._cids) & 0x7FFFFFFF
        frame = framing.encode_request(info.api_key, version, cid, self.client_id, body)
        self._waiters[cid] = (info.api_key, version, future)
        future.add_done_callback(lambda _f: self._waiters.pop(cid, None))
        self.transport.write(frame)
        return future

    def send_to(self, api_name: str, version: int, body, callback) -> Answer:
        """Write a request now; callback(body, None) gets its response as soon as it is read (see Answer)."""
        info = _api_by_name(api_name)
        cid = next(self._cids) & 0x7FFFFFFF
        answer = Answer(callback, lambda: self._waiters.pop(cid, None))
        if self._closed:
            answer.set_exception(ConnectionClosed(f"connection to {self.host}:{self.port} is closed"))
            return answer
        frame = framing.encode_request(info.api_key, version, cid, self.client_id, body)
        self._waiters[cid] = (info.api_key, version, answer)
        self.transport.write(frame)
        return answer

    async def request(self, api_name: str, version: int, body, *, timeout_ms: int | None = None):
        """Send a request and return the decoded response body."""
        future = self.send(api_name, version, body)
        timeout = (self.timeout_ms if timeout_ms is None else timeout_ms) / 1000
        timer = None
        try:
            if not future.done() and self.protocol.paused:
                await self.protocol.drained()  # only when the socket's buffer is above its high-water mark
            if not future.done():
                timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
            return await future
        except TimeoutError:
            raise RequestTimeout(f"{api_name} v{version} to {self.host}:{self.port} got no response "
                                 f"within {timeout * 1000:.0f} ms") from None
        except ConnectionClosed:
            raise
        except (ConnectionError, OSError) as e:
            self._fail(e)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: the caller gets the error below
            raise ConnectionClosed(f"connection to {self.host}:{self.port} broke: {e}") from None
        finally:
            if timer is not None:
                timer.cancel()

    async def negotiate(self, *, software_name: str = SOFTWARE_NAME, software_version: str = SOFTWARE_VERSION,
                        timeout_ms: int | None = None) -> dict[int, tuple[int, int]]:
        """Ask the server's API version ranges (ApiVersions, KIP-511 fallback); remember and return them."""
        ours = _api_by_name("ApiVersions").valid_versions.hi
        body = codec.message_class("ApiVersionsRequest")(client_software_name=software_name,
                                                         client_software_version=software_version)
        response = await self.request("ApiVersions", ours, body, timeout_ms=timeout_ms)
        if response.error_code == Errors.UNSUPPORTED_VERSION:
            theirs = {k.api_key: k.max_version for k in response.api_keys}.get(API_VERSIONS_KEY, 0)
            response = await self.request("ApiVersions", min(ours, theirs), body, timeout_ms=timeout_ms)
        if response.error_code:
            raise UnsupportedVersion(f"ApiVersions to {self.host}:{self.port} failed with error {response.error_code}")
        self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        self._picked.clear()
        return self.api_versions

    def pick_version(self, api, wanted_max: int | None = None) -> int:
        """Return the highest version of `api` (name or key) both sides speak, at most `wanted_max` (remembered
        until the next negotiate(): a Raft peer asks for every message)."""
        picked = self._picked.get((api, wanted_max))
        if picked is None:
            picked = self._picked[(api, wanted_max)] = self._pick_version(api, wanted_max)
        return picked

    def _pick_version(self, api, wanted_max: int | None) -> int:
        info = _api_by_name(api) if isinstance(api, str) else framing.api_info(api)
        hi = info.valid_versions.hi if wanted_max is None else min(wanted_max, info.valid_versions.hi)
        lo = info.valid_versions.lo
        if self.api_versions is not None:
            if info.api_key not in self.api_versions:
                raise UnsupportedVersion(f"{self.host}:{self.port} does not serve {info.name}")
            their_lo, their_hi = self.api_versions[info.api_key]
            lo, hi = max(lo, their_lo), min(hi, their_hi)
        if hi < lo:
            raise UnsupportedVersion(f"{self.host}:{self.port} and kraftsman share no version of {info.name}")
        return hi

    def abort(self) -> None:
        """Close the socket now and fail every pending request."""
        self._fail(None)

    async def close(self) -> None:
        """Close the socket and fail every pending request."""
        self._fail(None)
        await asyncio.sleep(0)  # the transport lets go of the socket on the loop's next turn

    def _fail(self, error) -> None:
        if not self._closed:
            self._closed = True
            self.transport.close()
        reason = f": {error}" if error else ""
        for _key, _version, future in list(self._waiters.values()):
            if not future.done():
                future.set_exception(ConnectionClosed(f"connection to {self.host}:{self.port} closed{reason}"))
        self._waiters.clear()

    def _deliver(self, frame: bytes) -> None:
        cid = int.from_bytes(frame[:4], "big", signed=True)
        waiter = self._waiters.get(cid)
        if waiter is None:
            return  # the waiter timed out or was cancelled: drop the late response
        api_key, version, future = waiter
        if type(future) is Answer:
            del self._waiters[cid]
        _header, body = framing.decode_response(api_key, version, frame)
        if not future.done():
            future.set_result(body)


class _Frames(asyncio.Protocol):
    """Cut a Connection's byte stream into response frames and hand each one to it as soon as it is whole."""

    def __init__(self):
        self.conn: Connection | None = None
        self.buffer = bytearray()
        self.paused = False  # the transport's write buffer is above its high-water mark
        self._drain_waiters: list[asyncio.Future] = []  # one per request() waiting for the buffer to drain
        self._lost: str | None = None  # why the socket ended before the Connection was attached

    def attach(self, conn: Connection) -> None:
        """Serve `conn` from now on (what arrived before is handed over at once)."""
        self.conn = conn
        if self.buffer:
            early, self.buffer = bytes(self.buffer), bytearray()
            self.data_received(early)
        if self._lost is not None:
            conn._fail(self._lost)

    def data_received(self, data: bytes) -> None:
        if self.conn is None:
            self.buffer += data
            return
        buffer = self.buffer
        if buffer:
            buffer += data
            data = buffer
        pos, end = 0, len(data)
        try:
            while end - pos >= 4:
                size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
                if size < 4 or size > framing.MAX_FRAME_SIZE:
                    raise framing.FramingError(f"invalid response size {size}")
                if end - pos - 4 < size:
                    break
                self.conn._deliver(bytes(data[pos + 4:pos + 4 + size]))
                pos += 4 + size
        except framing.FramingError as e:
            self.conn._fail(str(e) or type(e).__name__)
            return
        if data is buffer:
            del buffer[:pos]
        elif pos < end:
            buffer += data[pos:]

    def eof_received(self) -> None:
        self._end("closed by the server")

    def connection_lost(self, exc) -> None:
        self._end((str(exc) or type(exc).__name__) if exc is not None else "closed by the server")
        self._wake_writer()

    def _end(self, reason: str) -> None:
        if self.conn is None:
            self._lost = self._lost or reason
        else:
            self.conn._fail(reason)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake_writer()

    async def drained(self) -> None:
        """Wait until the transport's write buffer is below its low-water mark again (or the socket is gone)."""
        if self.paused:
            waiter = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(waiter)
            await waiter

    def _wake_writer(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
