"""Listener: an asyncio server speaking Kafka's request/response protocol to a request handler.

Per connection (Kafka's SocketServer + Selector behaviour):

    int32 size | request header | body      ->  handler(ctx, body) -> response body | None, or an awaitable of it
    int32 size | response header | body     <-  encoded at the request's version, in request order

Rules:
- A size < 0 or > max_request_size closes that connection only (Kafka's InvalidReceiveException).
- An ApiVersions request at an unsupported version gets a v0 response with UNSUPPORTED_VERSION (35)
  (KIP-511); any other unknown api key, unsupported version, API or version this listener does not
  advertise (its ApiVersions table, read at start) or undecodable request closes the connection.
  Bytes after a decoded body are ignored (Kafka's request parser does not look for leftovers, and
  librdkafka 2.16 sends 3 extra bytes after its all-topics Metadata v12 request).
- The listener answers ApiVersions itself from `api_versions` (a response body, or a callable returning
  one); the handler never sees ApiVersions. It unwraps Envelope (KIP-590: a broker forwarding a
  client's request): the handler sees the inner request (ctx.forwarded_by/principal/client_address
  set) and its answer goes back inside an EnvelopeResponse; an inner request that does not decode
  gets the envelope error INVALID_REQUEST (42), an unsupported inner version UNSUPPORTED_VERSION (35); an
  inner answer holding NOT_CONTROLLER (DescribeQuorum: NOT_LEADER_OR_FOLLOWER) goes back as the envelope
  error NOT_CONTROLLER, as Kafka's RequestChannel does, so that the broker retries at the active controller.
- Requests may be processed concurrently (up to `max_in_flight` per connection) but responses leave
  in request order; a handler returning None sends nothing for that request.
- The handler is called as soon as its request is read. Each request takes a slot in the answer order; an
  answer is written as soon as it and every answer before it are there: at once when the handler answered
  at once or completes a Reply (set on the loop's thread, handed on without a loop hop), else when its
  task or future is done. Reading pauses while max_in_flight answers wait or the socket's send buffer is full.
- Requests are cut from the byte stream in the socket's own callback (each connection is an asyncio Protocol),
  not by a reader task, so a request reaches its handler with no task wake-up in between. A client's EOF ends
  the connection and drops the answers it still waits for.
- A handler exception (or a body that does not encode) logs one line to `kraftsman.server` and closes
  that connection.
- A connection with no bytes either way and nothing in flight for idle_timeout_ms is closed.
- A new connection past max_connections on the listener, or past max_connections_per_ip from one address,
  is closed at once (Kafka's max.connections / max.connections.per.ip); the others are not disturbed.
- Security (listener_security.ListenerSecurity, None for PLAINTEXT): TLS wraps the server socket; on SASL
  listeners every request before authentication goes to the connection's SaslSession (sasl_server), whose
  answer may end the connection; ctx.session_principal is the SASL user, the TLS subject or User:ANONYMOUS.
  SaslHandshake/SaslAuthenticate after authentication get ILLEGAL_SASL_STATE without reaching the handler.
"""
from __future__ import annotations

import asyncio
import collections
import inspect
import itertools
import logging
import struct
from dataclasses import dataclass

from kraftsman.controller.quorum.error_responses import error_codes
from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

from . import api_versions as api_versions_mod
from . import sasl_server
from .answers import AnswerEncoder, Reply, Slot

log = logging.getLogger("kraftsman.server")
API_VERSIONS, ENVELOPE = framing.API_VERSIONS_KEY, 58
_WRITE_BUFFER_HIGH = 1 << 20  # stop reading requests while more than this waits to be sent


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Describe one request: header fields, the listener and the connection it came from."""

    api_key: int
    api_version: int
    api_name: str
    correlation_id: int
    client_id: str | None
    header: object
    listener: str
    peer: tuple
    connection_id: str
    principal: bytes | None = None       # Envelope only: the client's serialized principal
    client_address: bytes | None = None  # Envelope only: the client's IP address bytes
    forwarded_by: str | None = None      # Envelope only: the forwarding broker's client id
    session_principal: str = "User:ANONYMOUS"  # the connection's authenticated principal


class Listener:
    """Accept connections on (host, port) and serve Kafka requests with `handler`."""

    def __init__(self, name: str, host: str, port: int, handler, *, max_request_size: int = 104_857_600,
                 idle_timeout_ms: int = 600_000, api_versions=None, max_in_flight: int = 64, security=None,
                 max_connections: int = 2**31 - 1, max_connections_per_ip: int = 2**31 - 1):
        self.name, self.host, self.handler, self.security = name, host, handler, security
        self.max_request_size, self.idle_timeout_ms = max_request_size, idle_timeout_ms
        self.max_in_flight = max_in_flight
        self.max_connections, self.max_connections_per_ip = max_connections, max_connections_per_ip
        self.rejected = 0
        self.api_versions = api_versions if api_versions is not None else api_versions_mod.api_versions_response()
        self._port = port
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[_ServerConnection] = set()
        self._ids = itertools.count()
        self._reaper: asyncio.Task | None = None
        self.enabled: dict[int, tuple[int, int]] = {}  # api_key -> (min, max) advertised, read at start()
        self.encoder = AnswerEncoder()  # answers' frames (a Fetch body given to several followers: encoded once)

    @property
    def port(self) -> int:
        """Return the bound port (the real one once started with port 0)."""
        return self._port

    @property
    def connection_count(self) -> int:
        """Return the number of open connections."""
        return len(self._conns)

    async def start(self) -> None:
        """Bind and start accepting connections."""
        context = self.security.ssl_context if self.security is not None else None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _ServerConnection(self), self.host, self._port, ssl=context)
        self._port = self._server.sockets[0].getsockname()[1]
        self._reaper = asyncio.get_running_loop().create_task(self._reap_idle())
        self.enabled = {k.api_key: (k.min_version, k.max_version) for k in self.current_api_versions().api_keys}

    async def close(self) -> None:
        """Stop accepting, cancel in-flight requests and close every connection."""
        if self._server is not None:
            self._server.close()
        if self._reaper is not None:
            self._reaper.cancel()
        conns = list(self._conns)
        for conn in conns:
            conn.close()
        await asyncio.gather(*(c.done for c in conns), return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    def _over_limit(self, transport) -> str | None:
        """Say why a new connection exceeds max.connections or max.connections.per.ip, or return None."""
        if len(self._conns) >= self.max_connections:
            return f"max connection count {self.max_connections} reached"
        ip = (transport.get_extra_info("peername") or ("?",))[0]
        same = sum(1 for c in self._conns if c.peer[0] == ip)
        if same >= self.max_connections_per_ip:
            return f"max connection count {self.max_connections_per_ip} for {ip} reached"
        return None

    def current_api_versions(self):
        """Return the ApiVersionsResponse body to advertise now."""
        return self.api_versions() if callable(self.api_versions) else self.api_versions

    def _admit(self, transport) -> bool:
        """Tell whether a new connection may stay (max.connections, max.connections.per.ip); close it if not."""
        refusal = self._over_limit(transport)
        if refusal is None:
            return True
        self.rejected += 1
        log.info("%s: rejected connection from %s: %s", self.name, transport.get_extra_info("peername"), refusal)
        transport.close()
        return False

    async def _reap_idle(self) -> None:
        period = min(max(self.idle_timeout_ms / 4000, 0.01), 5.0)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            limit = loop.time() - self.idle_timeout_ms / 1000
            for conn in list(self._conns):
                if conn.idle_since(limit):
                    log.debug("%s: closing idle connection %s", self.name, conn.connection_id)
                    conn.close()


class _ServerConnection(asyncio.Protocol):
    """Read frames from one client, dispatch them and write responses in request order."""

    def __init__(self, listener: Listener):
        self.listener = listener
        self.loop = asyncio.get_running_loop()
        self.transport = None
        self.buffer = bytearray()
        self.slots: collections.deque[Slot] = collections.deque()  # requests not answered yet, in order
        self.reading = True           # False while max_in_flight answers wait or the send buffer is full
        self.send_blocked = False     # the transport's send buffer is above _WRITE_BUFFER_HIGH
        self.ending = False           # the last answer is queued (or the connection is closed): read no more
        self.done = self.loop.create_future()  # set once the connection is closed
        self.last_active = self.loop.time()
        self.sasl, self.principal = None, "User:ANONYMOUS"
        self.peer, self.connection_id = ("?", 0), "?"

    # ------------------------------------------------------------ the socket's callbacks
    def connection_made(self, transport) -> None:
        self.transport = transport
        listener = self.listener
        if not listener._admit(transport):
            self.ending = True
            self.done.set_result(None)
            return
        self.peer = transport.get_extra_info("peername") or ("?", 0)
        local = transport.get_extra_info("sockname") or ("?", 0)
        self.connection_id = f"{local[0]}:{local[1]}-{self.peer[0]}:{self.peer[1]}-{next(listener._ids)}"
        transport.set_write_buffer_limits(high=_WRITE_BUFFER_HIGH)
        security = listener.security
        if security is not None:
            self.sasl, self.principal = security.session(), security.principal(transport)
        listener._conns.add(self)

    def data_received(self, data: bytes) -> None:
        if self.ending:
            return
        self.buffer += data
        self._read_requests()

    def eof_received(self) -> None:
        self.close()

    def connection_lost(self, exc) -> None:
        self.close()

    def pause_writing(self) -> None:
        self.send_blocked = True
        self._pause()

    def resume_writing(self) -> None:
        self.send_blocked = False
        self._resume()

    # ------------------------------------------------------------ state
    @property
    def in_flight(self) -> int:
        """Return how many requests wait for their answer."""
        return len(self.slots)

    def idle_since(self, limit: float) -> bool:
        """Tell whether nothing moved since `limit` (loop time) and no request is in flight."""
        return self.last_active < limit and not self.slots

    def close(self) -> None:
        """Drop the answers not sent yet and close the socket (what was written still goes out); `done` is set
        once the handlers' tasks it cancelled have ended."""
        self.ending = True
        self.buffer = bytearray()
        cancelled = []
        while self.slots:
            slot = self.slots.popleft()
            slot.cancel()
            if isinstance(slot.waiting, asyncio.Task):
                cancelled.append(slot.waiting)
        if self.transport is not None:
            self.transport.close()
        self.listener._conns.discard(self)
        if self.done.done():
            return
        if cancelled:
            ended = asyncio.gather(*cancelled, return_exceptions=True)
            ended.add_done_callback(lambda _: self.done.done() or self.done.set_result(None))
        else:
            self.done.set_result(None)

    # ------------------------------------------------------------ reading
    def _pause(self) -> None:
        if self.reading and not self.ending:
            self.reading = False
            self.transport.pause_reading()

    def _resume(self) -> None:
        if self.reading or self.ending or self.send_blocked or len(self.slots) >= self.listener.max_in_flight:
            return
        self.reading = True
        self.transport.resume_reading()
        self._read_requests()  # what arrived before reading paused

    def _read_requests(self) -> None:
        """Serve the whole requests in the buffer, as far as the answer order and the send buffer have room."""
        buffer, pos = self.buffer, 0
        try:
            while not self.ending and self.reading:
                if len(self.slots) >= self.listener.max_in_flight:
                    self._pause()
                    break
                try:
                    frame, pos = framing.read_frame(buffer, pos, self._receive_limit())
                except framing.FramingError as e:  # Kafka's InvalidReceiveException
                    log.info("%s: closing %s: %s", self.listener.name, self.connection_id, e)
                    self.close()
                    return
                if frame is None:
                    break
                self.last_active = self.loop.time()
                item = self._dispatch(frame)
                if item is None:
                    self.close()
                    return
                self._answer(item)
                if isinstance(item, _Last):
                    self.ending = True  # the connection ends once that answer is sent
                    self.transport.pause_reading()
        finally:
            if pos and self.buffer is buffer:
                del buffer[:pos]

    def _receive_limit(self) -> int:
        """Return the largest request this connection may send now (socket.request.max.bytes; before SASL
        authentication, sasl.server.max.receive.size)."""
        limit = self.listener.max_request_size
        if self.sasl is not None and not self.sasl.complete:
            limit = min(limit, self.listener.security.max_receive_size)
        return limit

    def _answer(self, item) -> None:
        """Give the request its slot in the answer order; the answer is written as soon as it and every answer
        before it are there: at once when the handler answered at once, else when its Reply is set (no task, no
        loop hop) or its task or future is done."""
        slot = Slot(item)
        self.slots.append(slot)
        if isinstance(item, bytes):
            slot.fill(item)
            self._send_ready()
        elif isinstance(item, _Pending) and isinstance(item.future, Reply):
            item.future.when_done(lambda answer: self._settle(slot, item.ctx, answer))
        elif isinstance(item, _Last):
            slot.waiting = self.loop.create_task(asyncio.sleep(self.listener.security.failure_delay_ms / 1000))
            slot.waiting.add_done_callback(lambda _: self._settle_data(slot, item.data))
        else:
            slot.waiting = item.future if isinstance(item, _Pending) else item
            slot.waiting.add_done_callback(lambda f: self._settle_done(slot, item, f))

    def _settle_done(self, slot: "Slot", item, future) -> None:
        """Take the outcome of an answer's task or future (a failure closes the connection)."""
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self._failed(error)
            self.close()
            return
        ctx, answer = (item.ctx, future.result()) if isinstance(item, _Pending) else future.result()
        self._settle(slot, ctx, answer)

    def _settle(self, slot: "Slot", ctx: RequestContext, answer) -> None:
        """Encode a request's answer into its slot and send what is ready (None: nothing to send)."""
        if slot.cancelled:
            return
        try:
            data = b"" if answer is None else self.listener.encoder.frame(ctx, answer)
        except Exception as e:
            self._failed(e)
            self.close()
            return
        self._settle_data(slot, data)

    def _settle_data(self, slot: "Slot", data: bytes) -> None:
        if not slot.cancelled:
            slot.fill(data)
            self._send_ready()

    def _send_ready(self) -> None:
        """Write the answers at the head of the order that are ready."""
        slots, wrote = self.slots, False
        while slots and slots[0].ready:
            slot = slots.popleft()
            if slot.data:
                self.transport.write(slot.data)
                wrote = True
            if isinstance(slot.item, _Last):
                self.close()
                return
        if wrote:
            self.last_active = self.loop.time()
        if not self.reading:
            self._resume()

    def _dispatch(self, frame: bytes):
        """Return bytes to send, a task producing (ctx, body), or None to close the connection."""
        try:
            header, body = _decode_request(frame)
        except framing.UnsupportedVersionError as e:
            if e.api_key == API_VERSIONS and e.header is not None:
                return framing.unsupported_api_versions_response(e.header.correlation_id)
            return self._refuse(str(e))
        except framing.FramingError as e:
            return self._refuse(str(e))
        if self.sasl is not None and not self.sasl.complete:
            return self._authenticate(header, body)
        info, version = framing.api_info(header.request_api_key), header.request_api_version
        lo, hi = self.listener.enabled.get(info.api_key, (0, -1))
        if info.api_key != API_VERSIONS and not lo <= version <= hi:
            return self._refuse(f"{info.name} v{version} is not enabled on this listener")
        ctx = RequestContext(info.api_key, version, info.name, header.correlation_id,
                             header.client_id, header, self.listener.name, self.peer, self.connection_id,
                             session_principal=self.principal)
        if info.api_key in LISTENER_APIS:
            return self.loop.create_task(self._handle(ctx, body))
        try:
            answer = self.listener.handler(ctx, body)
            if isinstance(answer, (asyncio.Future, Reply)):
                return _Pending(ctx, answer)
            if inspect.isawaitable(answer):  # its own task: cancelled before it ran, it is closed, not dropped
                return _Pending(ctx, asyncio.ensure_future(answer, loop=self.loop))
            return b"" if answer is None else framing.encode_response(ctx.api_key, ctx.api_version,
                                                                     ctx.correlation_id, answer)
        except Exception as e:
            return self._failed(e)

    def _failed(self, e: Exception) -> None:
        log.error("%s: closing %s: request failed: %s: %s", self.listener.name, self.connection_id,
                  type(e).__name__, e)
        return None

    def _authenticate(self, header, body):
        """Serve a request of a connection that has not authenticated yet (sasl_server's rules)."""
        key, version, cid = header.request_api_key, header.request_api_version, header.correlation_id
        if key == API_VERSIONS:
            code = api_versions_mod.check_request(body, version)
            answer = api_versions_mod.error_response(code) if code else api_versions_mod.for_request_version(
                self.listener.current_api_versions(), version)
            return framing.encode_response(key, version, cid, answer)
        outcome = self.sasl.step(key, version, body)
        if outcome.response is None:
            return self._refuse(outcome.reason)
        data = framing.encode_response(key, version, cid, outcome.response)
        if outcome.close:
            log.info("%s: closing %s after answering: %s", self.listener.name, self.connection_id, outcome.reason)
            return _Last(data)
        if self.sasl.complete:
            self.principal = self.sasl.principal
        return data

    def _refuse(self, reason: str) -> None:
        log.info("%s: closing %s: %s", self.listener.name, self.connection_id, reason)
        return None

    async def _handle(self, ctx: RequestContext, body):
        """Answer what the listener serves itself (LISTENER_APIS)."""
        if ctx.api_key == API_VERSIONS:
            return ctx, _api_versions_answer(self.listener, ctx, body)
        if ctx.api_key == ENVELOPE:
            return ctx, await self._serve_envelope(ctx, body)
        return ctx, sasl_server.after_authentication(ctx.api_key)

    async def _serve_envelope(self, ctx: RequestContext, body):
        """Unwrap a forwarded request (KIP-590), serve it, and wrap its response (None: no answer)."""
        Envelope = codec.message_class("EnvelopeResponse")
        try:
            header, inner = _decode_request(bytes(body.request_data))
        except framing.UnsupportedVersionError:
            return Envelope(error_code=Errors.UNSUPPORTED_VERSION)
        except framing.FramingError:
            return Envelope(error_code=Errors.INVALID_REQUEST)
        info = framing.api_info(header.request_api_key)
        if info.api_key in (API_VERSIONS, ENVELOPE):
            return Envelope(error_code=Errors.INVALID_REQUEST)
        inner_ctx = RequestContext(info.api_key, header.request_api_version, info.name, header.correlation_id,
                                   header.client_id, header, ctx.listener, ctx.peer, ctx.connection_id,
                                   body.request_principal, body.client_host_address, ctx.client_id,
                                   session_principal=ctx.session_principal)
        response = self.listener.handler(inner_ctx, inner)
        if inspect.isawaitable(response):
            response = await response
        if response is None:
            return None
        if _tells_not_controller(info.name, response):
            return Envelope(error_code=Errors.NOT_CONTROLLER)
        frame = framing.encode_response(info.api_key, header.request_api_version, header.correlation_id, response)
        return Envelope(response_data=frame[4:], error_code=0)



LISTENER_APIS = frozenset({API_VERSIONS, ENVELOPE, sasl_server.SASL_HANDSHAKE, sasl_server.SASL_AUTHENTICATE})


class _Pending:
    """Pair a request with the Reply or future of its answer."""

    __slots__ = ("ctx", "future")

    def __init__(self, ctx: RequestContext, future: asyncio.Future):
        self.ctx, self.future = ctx, future

    def cancel(self) -> None:
        self.future.cancel()


def _decode_request(frame: bytes):
    """Decode a request like Kafka's RequestContext.parseRequest: bytes after the body are ignored."""
    try:
        return framing.decode_request(frame)
    except framing.UnsupportedVersionError:
        raise
    except framing.FramingError:
        api_key, version = struct.unpack_from(">hh", frame) if len(frame) >= 4 else (-1, -1)
        if api_key not in framing.api_registry():
            raise
        info = framing.api_info(api_key)
        try:
            header, pos = codec.decoder("RequestHeader", framing.request_header_version(api_key, version))(frame, 0)
            body, end = codec.decoder(info.request, version)(frame, pos)
        except codec.CodecError:
            raise framing.FramingError(f"cannot decode {info.request} v{version}") from None
    log.debug("ignoring %d byte(s) after %s v%d", len(frame) - end, info.request, version)
    return header, body


class _Last:
    """Carry the bytes of a connection's last answer (a failed SASL exchange)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


def _tells_not_controller(api_name: str, response) -> bool:
    """Tell whether a forwarded request's answer goes back as an Envelope NOT_CONTROLLER (Kafka's
    RequestChannel: NOT_CONTROLLER anywhere in it, NOT_LEADER_OR_FOLLOWER for DescribeQuorum), so that the
    forwarding broker finds the active controller and sends it again."""
    code = Errors.NOT_LEADER_OR_FOLLOWER if api_name == "DescribeQuorum" else Errors.NOT_CONTROLLER
    return code in error_codes(response)


def _api_versions_answer(listener: Listener, ctx: RequestContext, body):
    code = api_versions_mod.check_request(body, ctx.api_version)
    if code:
        return api_versions_mod.error_response(code)
    return api_versions_mod.for_request_version(listener.current_api_versions(), ctx.api_version)
