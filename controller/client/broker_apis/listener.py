"""The simulated broker's client listener: Kafka's request/response protocol on a TCP port (PLAINTEXT).

    int32 size | request header | body      ->  handler(request, body) -> response body | None, or an awaitable
    int32 size | response header | body     <-  encoded at the request's version

Rules:
- One request at a time per connection, as Kafka's SocketServer mutes a channel until its response is sent:
  a connection's answers leave in request order and a slow one holds the next.
- An ApiVersions request is answered here: at a version we do not know, a v0 answer with UNSUPPORTED_VERSION
  (KIP-511); with a bad v3+ client software name or version, INVALID_REQUEST; else the broker's table.
- A request for an API or version the broker does not advertise now, one that does not parse, a size < 0 or
  above max_request_size, a handler answer of None, or a handler exception closes that connection (Kafka's
  SocketServer / KafkaApis do the same); bytes after a parsed body are ignored, as Kafka's parser does.
- Each connection's principal is User:ANONYMOUS (PLAINTEXT, no principal builder).
"""
from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass

from kraftsman.storage.protocol import framing

from . import api_table

log = logging.getLogger("kraftsman.broker_sim")
ANONYMOUS = "User:ANONYMOUS"


@dataclass(frozen=True, slots=True)
class BrokerRequest:
    """One request as the broker's handlers see it: its header fields, the raw frame, where it came from."""

    api_key: int
    api_version: int
    api_name: str
    correlation_id: int
    client_id: str | None
    frame: bytes              # header and body as received, without the size prefix (what forwarding wraps)
    peer: tuple
    listener: str
    principal: str = ANONYMOUS


class BrokerListener:
    """Accept connections on (host, port) and serve them with `handler`; `advertised()` is the API table now and
    `api_versions()` the ApiVersionsResponse body."""

    def __init__(self, host: str, port: int, handler, *, advertised, api_versions, name: str = "PLAINTEXT",
                 max_request_size: int = 104_857_600):
        self.host, self.name, self.handler = host, name, handler
        self.advertised, self.api_versions = advertised, api_versions
        self.max_request_size = max_request_size
        self._port = port
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def port(self) -> int:
        """Return the bound port."""
        return self._port

    @property
    def serving(self) -> bool:
        """Tell whether the listener accepts connections."""
        return self._server is not None

    async def start(self) -> None:
        """Bind and accept connections."""
        self._server = await asyncio.start_server(self._accept, self.host, self._port, reuse_address=True)
        self._port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop accepting and drop every connection."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def _accept(self, reader, writer) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        peer = writer.get_extra_info("peername") or ("?", 0)
        try:
            while True:
                frame = await self._read_frame(reader)
                if frame is None:
                    return
                answer = await self._answer(frame, peer)
                if answer is None:
                    return
                writer.write(answer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # a client that left, or close(): the connection ends quietly
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _read_frame(self, reader) -> bytes | None:
        try:
            size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
            if size < 0 or size > self.max_request_size:
                log.info("%s: closing %s: invalid receive (size = %d)", self.name, self.port, size)
                return None
            return await reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def _answer(self, frame: bytes, peer) -> bytes | None:
        """Return the response frame for one request, or None to close the connection."""
        try:
            header, body = framing.decode_request(frame, trailing_ok=True)
        except framing.UnsupportedVersionError as e:
            if e.api_key == framing.API_VERSIONS_KEY and e.header is not None:
                return framing.unsupported_api_versions_response(e.header.correlation_id)
            return _refused(self.name, str(e))
        except framing.FramingError as e:
            return _refused(self.name, str(e))
        key, version = header.request_api_key, header.request_api_version
        info = framing.api_info(key)
        if key == framing.API_VERSIONS_KEY:
            code = api_table.request_error(body, version)
            answer = _api_versions_error(code) if code else self.api_versions()
            return framing.encode_response(key, version, header.correlation_id, answer)
        lo, hi = self.advertised().get(key, (0, -1))
        if not lo <= version <= hi:
            return _refused(self.name, f"{info.name} v{version} is not enabled on this listener")
        request = BrokerRequest(key, version, info.name, header.correlation_id, header.client_id, frame, peer,
                                self.name)
        try:
            answer = self.handler(request, body)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is None:
                return _refused(self.name, f"{info.name} v{version} is not served")
            return framing.encode_response(key, version, header.correlation_id, answer)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - Kafka closes the connection on a request that fails this way
            log.exception("%s: %s v%d failed", self.name, info.name, version)
            return _refused(self.name, f"{type(e).__name__}: {e}")


def _refused(name: str, reason: str) -> None:
    log.info("%s: closing a connection: %s", name, reason)
    return None


def _api_versions_error(code: int):
    from kraftsman.storage.protocol import codec

    return codec.message_class("ApiVersionsResponse")(error_code=code)
