"""ActiveControllerClient: send controller RPCs to whichever controller is active, as brokers and admin tools do.

Rules:
- Keeps one Connection per controller, opened lazily; the last controller that answered without
  NOT_CONTROLLER is tried first.
- NOT_CONTROLLER (41) in a response's top-level error code names no leader (Kafka 3.9): the refusing
  controller is asked DescribeCluster v1 (EndpointType 2), and the controller its ControllerId names is
  tried at once (its endpoint added when it is not among `addresses`); with nobody named, or after a
  connection failure, the next controller is tried after a backoff. Everything gives up with
  ControllerUnavailable after `timeout_ms`, saying so when every answer was NOT_CONTROLLER.
- Responses are returned as decoded bodies; other error codes are the caller's business.
"""
from __future__ import annotations

import asyncio

from kraftsman.storage.protocol.errors import Errors

CONTROLLER_ENDPOINTS = 2


class ControllerUnavailable(RuntimeError):
    """No controller accepted the request within the timeout."""


class ActiveControllerClient:
    """Route requests to the active controller among `addresses` [(host, port), ...]."""

    def __init__(self, addresses, *, client_id: str = "kraftsman", timeout_ms: int = 30_000,
                 backoff_ms: int = 50):
        self.addresses = list(addresses)
        self.client_id, self.timeout_ms, self.backoff_ms = client_id, timeout_ms, backoff_ms
        self._conns: dict[int, object] = {}
        self._preferred = 0

    async def _connection(self, index: int):
        from kraftsman.controller.wire.connection import Connection as PeerConnection

        conn = self._conns.get(index)
        if conn is None or getattr(conn, "closed", False):
            host, port = self.addresses[index]
            conn = await PeerConnection.open(host, port, client_id=self.client_id, timeout_ms=self.timeout_ms)
            self._conns[index] = conn
        return conn

    async def request(self, api_name: str, version: int, body, *, timeout_ms: int | None = None):
        """Send to the active controller; return the response body."""
        loop = asyncio.get_running_loop()
        timeout_s = (timeout_ms or self.timeout_ms) / 1000
        deadline, index = loop.time() + timeout_s, self._preferred
        last_error, refusals, named_any = "no controller answered", 0, False
        while loop.time() < deadline:
            remaining = deadline - loop.time()
            try:
                conn = await self._connection(index)
                response = await conn.request(api_name, version, body, timeout_ms=int(remaining * 1000))
            except (OSError, asyncio.TimeoutError, ConnectionError, EOFError) as e:
                last_error = f"{self.addresses[index][0]}:{self.addresses[index][1]}: {e or type(e).__name__}"
                await self._drop(index)
            else:
                if getattr(response, "error_code", 0) != Errors.NOT_CONTROLLER:
                    self._preferred = index
                    return response
                named = await self._named(conn, deadline)
                refusals, named_any = refusals + 1, named_any or named is not None
                last_error = _refusals_text(refusals, named_any, timeout_s)
                if named is not None and named != index:
                    index = named
                    continue
            index = (index + 1) % len(self.addresses)
            await asyncio.sleep(min(self.backoff_ms / 1000, max(deadline - loop.time(), 0)))
        raise ControllerUnavailable(f"{api_name}: {last_error}")

    async def _named(self, conn, deadline: float) -> int | None:
        """Return the index of the controller `conn`'s server names active in DescribeCluster, or None."""
        from kraftsman.storage.protocol import codec

        remaining = deadline - asyncio.get_running_loop().time()
        body = codec.message_class("DescribeClusterRequest")(endpoint_type=CONTROLLER_ENDPOINTS)
        try:
            response = await conn.request("DescribeCluster", 1, body, timeout_ms=max(1, int(remaining * 1000)))
        except (OSError, asyncio.TimeoutError, ConnectionError, EOFError):
            return None
        node = next((b for b in response.brokers if b.broker_id == response.controller_id), None)
        if response.error_code or node is None:
            return None
        if (node.host, node.port) not in self.addresses:
            self.addresses.append((node.host, node.port))
        return self.addresses.index((node.host, node.port))

    async def _drop(self, index: int) -> None:
        conn = self._conns.pop(index, None)
        if conn is not None:
            await _close(conn)

    async def close(self) -> None:
        """Close every connection."""
        for index in list(self._conns):
            await self._drop(index)


def _refusals_text(refusals: int, named_any: bool, timeout_s: float) -> str:
    who = "even the one named active" if named_any else "and none named the active controller"
    return f"every controller answered NOT_CONTROLLER ({refusals} times), {who}, within {timeout_s:g} s"


async def _close(conn) -> None:
    result = conn.close()
    if asyncio.iscoroutine(result):
        await result


def describe_quorum_request():
    """Return a DescribeQuorum request for `__cluster_metadata`-0."""
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeQuorumRequest")
    partition = cls.PartitionData(partition_index=0)
    return cls(topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


async def describe_quorum(host: str, port: int, timeout_ms: int = 2000):
    """Ask one controller for DescribeQuorum v2; return its partition data, or None unless it leads."""
    from kraftsman.controller.wire.connection import Connection

    conn = await Connection.open(host, port, client_id="kraftsman-describe-quorum", timeout_ms=timeout_ms)
    try:
        response = await conn.request("DescribeQuorum", 2, describe_quorum_request(), timeout_ms=timeout_ms)
    finally:
        await _close(conn)
    part = response.topics[0].partitions[0] if response.topics else None
    if response.error_code or part is None or part.error_code:
        return None
    return part


async def find_leader(addresses: dict, timeout_s: float = 30, exclude=(), min_high_watermark: int = 1):
    """Return (leader id, DescribeQuorum partition data) once a controller of `addresses` {id: (host, port)}
    answers as a leader that has committed at least `min_high_watermark` offsets."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        for node_id, (host, port) in addresses.items():
            if node_id in exclude:
                continue
            try:
                part = await describe_quorum(host, port)
            except (OSError, asyncio.TimeoutError, ConnectionError, EOFError):
                continue
            if part is not None and part.leader_id == node_id and part.high_watermark >= min_high_watermark:
                return node_id, part
        await asyncio.sleep(0.1)
    raise ControllerUnavailable(f"no controller of {sorted(addresses)} became leader within {timeout_s:g} s")
