"""Outbound Kafka connections: a generic request/response Connection, and the PeerRouter for Raft RPCs.

Rules:
- A Connection owns one socket: requests get increasing correlation ids, may be pipelined, and each
  response is matched by correlation id and decoded at its request's version. A request that outlives
  its timeout raises RequestTimeout (an asyncio.TimeoutError); a dead socket fails every waiter with
  ConnectionClosed (a ConnectionError); pick_version raises UnsupportedVersion, and a body that does
  not encode raises FramingError before anything is sent.
- `negotiate()` sends ApiVersions at our highest version with client software name/version; on
  UNSUPPORTED_VERSION it retries at the highest version the server's v0 answer lists (KIP-511).
- PeerRouter.send never blocks: it queues per peer; the peer connects lazily, negotiates versions and
  reconnects with exponential backoff. While a peer is down (connect failed, backoff running) its
  messages are dropped: the Raft core retries on its own timers. A message finding the peer connected,
  nothing queued and a request slot free is written at once, without a hop through the send loop.
- Responses go back to the core as Envelope(src=peer, dst=us, correlation_id=<the core's cid>, body,
  pre_vote); wire correlation ids stay inside the Connection.
- A pre-vote for a peer that speaks Vote below v2 (Kafka 3.9) is not sent: the core gets a VoteResponse with
  UNSUPPORTED_VERSION at once, as Kafka 4.0's network client answers it, and runs a real election
  (election.py); the first time per peer this is logged at INFO. `vote_max_version` caps our own Vote
  version (a voter told to speak Kafka 3.9's Raft wire).
"""
from __future__ import annotations

import asyncio
import collections
import importlib.metadata
import itertools
import logging
import re

from kraftsman.controller.raft.messages import Envelope
from kraftsman.storage.protocol import codec, framing

from . import raft_wire

log = logging.getLogger("kraftsman.server")
API_VERSIONS_KEY, UNSUPPORTED_VERSION = framing.API_VERSIONS_KEY, framing.UNSUPPORTED_VERSION


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
    for info in framing.api_registry().values():
        if info.name == api_name:
            return info
    raise UnsupportedVersion(f"unknown API {api_name!r}")


class Connection:
    """One client connection to a Kafka-protocol server."""

    def __init__(self, reader, writer, *, host: str, port: int, client_id: str | None, timeout_ms: int):
        self.reader, self.writer, self.host, self.port = reader, writer, host, port
        self.client_id, self.timeout_ms = client_id, timeout_ms
        self.api_versions: dict[int, tuple[int, int]] | None = None
        self._cids = itertools.count()
        self._waiters: dict[int, tuple[int, int, asyncio.Future]] = {}
        self._closed = False
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def open(cls, host: str, port: int, *, client_id: str | None = "kraftsman",
                   timeout_ms: int = 30_000) -> "Connection":
        """Connect to host:port within timeout_ms (raises OSError or RequestTimeout)."""
        try:
            async with asyncio.timeout(timeout_ms / 1000):  # not wait_for: 3.11's swallows a cancel that
                reader, writer = await asyncio.open_connection(host, port)  # meets the connect's end
        except TimeoutError:
            raise RequestTimeout(f"connecting to {host}:{port} timed out after {timeout_ms} ms") from None
        return cls(reader, writer, host=host, port=port, client_id=client_id, timeout_ms=timeout_ms)

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
        self.writer.write(frame)
        return future

    async def request(self, api_name: str, version: int, body, *, timeout_ms: int | None = None):
        """Send a request and return the decoded response body."""
        future = self.send(api_name, version, body)
        timeout = (self.timeout_ms if timeout_ms is None else timeout_ms) / 1000
        try:
            if not future.done():
                await self.writer.drain()
            async with asyncio.timeout(timeout):
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

    async def negotiate(self, *, software_name: str = SOFTWARE_NAME, software_version: str = SOFTWARE_VERSION,
                        timeout_ms: int | None = None) -> dict[int, tuple[int, int]]:
        """Ask the server's API version ranges (ApiVersions, KIP-511 fallback); remember and return them."""
        ours = _api_by_name("ApiVersions").valid_versions.hi
        body = codec.message_class("ApiVersionsRequest")(client_software_name=software_name,
                                                         client_software_version=software_version)
        response = await self.request("ApiVersions", ours, body, timeout_ms=timeout_ms)
        if response.error_code == UNSUPPORTED_VERSION:
            theirs = {k.api_key: k.max_version for k in response.api_keys}.get(API_VERSIONS_KEY, 0)
            response = await self.request("ApiVersions", min(ours, theirs), body, timeout_ms=timeout_ms)
        if response.error_code:
            raise UnsupportedVersion(f"ApiVersions to {self.host}:{self.port} failed with error {response.error_code}")
        self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        return self.api_versions

    def pick_version(self, api, wanted_max: int | None = None) -> int:
        """Return the highest version of `api` (name or key) both sides speak, at most `wanted_max`."""
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
        """Close the socket now and fail every pending request (the reader ends by itself)."""
        self._fail(None)

    async def close(self) -> None:
        """Close the socket, fail every pending request and wait for the reader to end."""
        self._fail(None)
        self._reader_task.cancel()
        await asyncio.wait([self._reader_task])  # the reader's end, not its error; our own cancellation propagates

    def _fail(self, error) -> None:
        if not self._closed:
            self._closed = True
            self.writer.close()
        reason = f": {error}" if error else ""
        for _key, _version, future in list(self._waiters.values()):
            if not future.done():
                future.set_exception(ConnectionClosed(f"connection to {self.host}:{self.port} closed{reason}"))
        self._waiters.clear()

    async def _read_loop(self) -> None:
        error = None
        try:
            while True:
                head = await self.reader.readexactly(4)
                size = int.from_bytes(head, "big", signed=True)
                if size < 4 or size > framing.MAX_FRAME_SIZE:
                    raise framing.FramingError(f"invalid response size {size}")
                self._deliver(await self.reader.readexactly(size))
        except asyncio.IncompleteReadError:
            error = "closed by the server"
        except (ConnectionError, OSError, framing.FramingError) as e:
            error = str(e) or type(e).__name__
        self._fail(error)

    def _deliver(self, frame: bytes) -> None:
        cid = int.from_bytes(frame[:4], "big", signed=True)
        waiter = self._waiters.get(cid)
        if waiter is None:
            return  # the waiter timed out or was cancelled: drop the late response
        api_key, version, future = waiter
        _header, body = framing.decode_response(api_key, version, frame)
        if not future.done():
            future.set_result(body)


class PeerRouter:
    """Send Raft request envelopes to peers by node id; hand responses back through `on_response`."""

    def __init__(self, node_id: int, endpoints: dict, on_response, *, client_id: str = "raft-client",
                 connect_timeout_ms: int = 2_000, reconnect_backoff_ms: int = 50,
                 reconnect_backoff_max_ms: int = 1_000, request_timeout_ms: int = 2_000, max_in_flight: int = 16,
                 max_queued: int = 256, vote_max_version: int | None = None):
        self.node_id, self.on_response, self.client_id = node_id, on_response, client_id
        self.connect_timeout_ms, self.request_timeout_ms = connect_timeout_ms, request_timeout_ms
        self.reconnect_backoff_ms, self.reconnect_backoff_max_ms = reconnect_backoff_ms, reconnect_backoff_max_ms
        self.max_in_flight, self.max_queued = max_in_flight, max_queued
        self.endpoints = dict(endpoints)
        self.vote_max_version = vote_max_version
        self.dropped = 0
        self._peers: dict[int, PeerLink] = {}

    def send(self, env: Envelope) -> None:
        """Queue a Raft request for env.dst; drop it when the peer is unknown, down or backed up."""
        peer = self._peers.get(env.dst)
        if peer is None:
            address = self.endpoints.get(env.dst)
            if address is None:
                log.debug("raft %d: no endpoint for node %d; dropping %r", self.node_id, env.dst, env)
                self.dropped += 1
                return
            peer = self._peers[env.dst] = PeerLink(self, env.dst, tuple(address))
        if not peer.enqueue(env):
            self.dropped += 1

    def update_endpoints(self, endpoints: dict) -> None:
        """Replace the endpoint map; peers whose address changed or vanished are closed."""
        self.endpoints = dict(endpoints)
        for node_id, peer in list(self._peers.items()):
            address = self.endpoints.get(node_id)
            if address is None or tuple(address) != peer.address:
                del self._peers[node_id]
                peer.stop()

    async def close(self) -> None:
        """Close every peer connection."""
        peers, self._peers = list(self._peers.values()), {}
        for peer in peers:
            peer.stop()
        await asyncio.gather(*(p.task for p in peers), return_exceptions=True)

    def _deliver(self, peer_id: int, env: Envelope, body) -> None:
        try:
            self.on_response(Envelope(peer_id, self.node_id, env.correlation_id, body, env.pre_vote))
        except Exception as e:  # the core's bug must not kill the transport; say it once
            log.error("raft %d: on_response failed for %r: %s: %s", self.node_id, env, type(e).__name__, e)


class PeerLink:
    """One peer: a bounded queue, a lazily opened Connection and a backoff clock."""

    def __init__(self, router: PeerRouter, peer_id: int, address: tuple):
        self.router, self.peer_id, self.address = router, peer_id, address
        self.loop = asyncio.get_running_loop()
        self.queue: collections.deque[Envelope] = collections.deque()
        self.wakeup = asyncio.Event()
        self.sending = 0  # requests written and not answered yet (at most router.max_in_flight)
        self.slot_free = asyncio.Event()
        self.conn: Connection | None = None
        self.down_until = 0.0
        self.backoff_ms = router.reconnect_backoff_ms
        self.told_no_pre_vote = False
        self.task = self.loop.create_task(self._run())

    def enqueue(self, env: Envelope) -> bool:
        """Queue `env`; return False when it was dropped (peer down or queue full)."""
        if self.loop.time() < self.down_until or len(self.queue) >= self.router.max_queued:
            return False
        if not self.queue and self.conn is not None and not self.conn.closed and \
                self.sending < self.router.max_in_flight:
            self._send(self.conn, env)
        else:
            self.queue.append(env)
            self.wakeup.set()
        return True

    def stop(self) -> None:
        """Stop sending; close the connection."""
        self.task.cancel()

    async def _run(self) -> None:
        try:
            await self._send_loop()
        finally:
            if self.conn is not None:
                self.conn.abort()

    async def _send_loop(self) -> None:
        while True:
            if not self.queue:
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            conn = await self._connection()
            if conn is None:
                self.router.dropped += len(self.queue)
                self.queue.clear()
                continue
            if self.sending >= self.router.max_in_flight:
                self.slot_free.clear()
                await self.slot_free.wait()
                continue
            self._send(conn, self.queue.popleft())

    async def _connection(self) -> Connection | None:
        if self.conn is not None and not self.conn.closed:
            return self.conn
        r = self.router
        try:
            conn = await Connection.open(*self.address, client_id=r.client_id, timeout_ms=r.connect_timeout_ms)
            try:
                await conn.negotiate(timeout_ms=r.connect_timeout_ms)
            except BaseException:
                await conn.close()
                raise
        except (OSError, ConnectionError, asyncio.TimeoutError, UnsupportedVersion) as e:
            log.debug("raft %d: node %d at %s:%d unreachable: %s", r.node_id, self.peer_id, *self.address, e)
            self.down_until = self.loop.time() + self.backoff_ms / 1000
            self.backoff_ms = min(self.backoff_ms * 2, r.reconnect_backoff_max_ms)
            return None
        self.conn, self.backoff_ms = conn, r.reconnect_backoff_ms
        return conn

    def _send(self, conn: Connection, env: Envelope) -> None:
        api = raft_wire.api_name(env)
        try:
            version = conn.pick_version(api, self._wanted_version(api))
            future = conn.send(api, version, raft_wire.wire_body(env, version))
        except raft_wire.PreVoteUnsupported as e:
            self._answer_unsupported_pre_vote(env, str(e))
            return
        except (UnsupportedVersion, framing.FramingError) as e:
            log.debug("raft %d: cannot send %r to node %d: %s", self.router.node_id, env, self.peer_id, e)
            self.router.dropped += 1
            return
        self.sending += 1
        timer = self.loop.call_later(self.router.request_timeout_ms / 1000, future.cancel)
        future.add_done_callback(lambda f: self._done(f, env, timer))

    def _wanted_version(self, api: str) -> int:
        wanted = raft_wire.WIRE_VERSIONS[api]
        cap = self.router.vote_max_version
        return min(wanted, cap) if api == "Vote" and cap is not None else wanted

    def _answer_unsupported_pre_vote(self, env: Envelope, reason: str) -> None:
        """Hand the core UNSUPPORTED_VERSION for a pre-vote this peer cannot take (see Rules)."""
        if not self.told_no_pre_vote:
            self.told_no_pre_vote = True
            log.info("raft %d: node %d cannot take a pre-vote (%s); its answers count as UNSUPPORTED_VERSION and "
                     "the election runs without pre-vote, as Kafka 4.0 does", self.router.node_id, self.peer_id, reason)
        body = raft_wire.unsupported_vote_response()
        self.loop.call_soon(self.router._deliver, self.peer_id, env, body)

    def _done(self, future: asyncio.Future, env: Envelope, timer: asyncio.TimerHandle) -> None:
        timer.cancel()
        self.sending -= 1
        self.slot_free.set()
        if future.cancelled() or future.exception() is not None:
            return
        self.router._deliver(self.peer_id, env, future.result())
