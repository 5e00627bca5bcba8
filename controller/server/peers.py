"""The PeerRouter: Raft RPCs to the other voters, each over a wire.connection.Connection.

Rules:
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
import logging

from kraftsman.controller.raft.messages import Envelope
from kraftsman.controller.wire.connection import Connection, UnsupportedVersion
from kraftsman.storage.protocol import framing

from . import raft_wire

log = logging.getLogger("kraftsman.server")


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
        waiting: list = []  # the timer, once the request counts as sent

        def answered(body, error) -> None:
            if waiting:
                waiting[0].cancel()
                self.sending -= 1
                self.slot_free.set()
            if error is None:
                self.router._deliver(self.peer_id, env, body)
        try:
            version = conn.pick_version(api, self._wanted_version(api))
            answer = conn.send_to(api, version, raft_wire.wire_body(env, version), answered)
        except raft_wire.PreVoteUnsupported as e:
            self._answer_unsupported_pre_vote(env, str(e))
            return
        except (UnsupportedVersion, framing.FramingError) as e:
            log.debug("raft %d: cannot send %r to node %d: %s", self.router.node_id, env, self.peer_id, e)
            self.router.dropped += 1
            return
        if not answer.done():  # answered with the request's answer as the connection reads it (no loop hop)
            self.sending += 1
            waiting.append(self.loop.call_later(self.router.request_timeout_ms / 1000, answer.expire))

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
