"""The core of the Admin client: its errors, its connections, and where each request goes (Kafka 3.9's routing).

Rules:
- Routing follows KafkaAdminClient's node providers, one method each; `attempt(conn)` sends the request on a
  connection and returns the result (or raises):
  - any_node (LeastLoadedNodeProvider) for reads: the bootstrap addresses in turn (the controllers with
    bootstrap controllers); a round in which none accepts a connection raises that error at once.
  - on_controller (ControllerNodeProvider) for controller-bound writes: with bootstrap servers the node the
    Metadata answer names as controller (in KRaft a random live broker, which forwards the write); with
    bootstrap controllers the active controller (active_controller.on_active_controller, DescribeCluster v1).
    A refusal (the attempt raises Refused: NOT_CONTROLLER) asks the metadata again and retries, until the deadline.
  - on_node (ConstantNodeIdProvider) for a request to one node by id: its endpoint in the metadata (brokers, or
    controllers with bootstrap controllers). A node the metadata does not list is waited for, asking again,
    until the deadline (NodeUnavailable, a RequestTimeout naming it and the call), as Kafka's client waits for a
    node assignment.
- Connections are kept for the Admin's life, one per address, and closed by close() (or `with Admin(...)`); one
  that breaks during an attempt (NotKafka) is dropped and the attempt retried on a new one until the deadline.
- The routing metadata (nodes by id, controller id) comes from Metadata with no topics (bootstrap servers) or
  DescribeCluster with EndpointType 2 (bootstrap controllers); it is cached until a refusal or a missing node.
- Errors: a server error code is ServerError (code and the message Kafka's exception carries: the server's,
  else the code's default text); connection failures are sync_client's (Unreachable, RequestTimeout, NotKafka,
  AuthenticationFailed); an API the server lacks is sync_client.UnsupportedVersion. Nothing here prints.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from kraftsman.storage.protocol.errors import Errors, default_message, error_name

from .. import sync_client as sc
from ..active_controller import Refused, on_active_controller

BROKERS, CONTROLLERS = 1, 2                                     # DescribeCluster's EndpointType
BACKOFF_S, BACKOFF_MAX_S = 0.05, 1.0


class ServerError(Exception):
    """The server answered with an error code (Kafka's ApiException): `code`, and its message ("" when none)."""

    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code, self.message = code, message

    @property
    def name(self) -> str:
        """Return the error's name in Kafka's Errors table (UNKNOWN_SERVER_ERROR for -1)."""
        return error_name(self.code)


def error_message(code: int, message: str | None) -> str:
    """Return the message Kafka's exception for `code` carries: the server's, else the default one."""
    if message is not None:
        return message
    return default_message(code) or f"error code {code}"


def raise_for(code: int, message: str | None) -> None:
    """Raise ServerError for a non-zero error code (Kafka's message rule), Refused for NOT_CONTROLLER."""
    if code == Errors.NOT_CONTROLLER:
        raise Refused(Errors.NOT_CONTROLLER.name)
    if code:
        raise ServerError(code, error_message(code, message))


class NodeUnavailable(sc.RequestTimeout):
    """A request for one node by id found no such node in the metadata before the deadline."""


@dataclass
class Routing:
    """What requests are routed by: the nodes by id ((host, port)) and the controller's id (-1: unknown)."""

    nodes: dict[int, tuple[str, int]] = field(default_factory=dict)
    controller_id: int = -1


class AdminCore:
    """The addresses, client settings and deadline of one Admin, its connections and its routes (see Rules)."""

    def __init__(self, addresses, config: sc.ClientConfig, deadline: float):
        self.addresses, self.config, self.deadline = list(addresses), config, deadline
        self._connections: dict[tuple[str, int], sc.SyncConnection] = {}
        self._routing: Routing | None = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection this Admin opened."""
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()

    # ------------------------------------------------------------ connections
    def connection(self, address: tuple[str, int]) -> sc.SyncConnection:
        """Return the open connection to `address`, connecting (and negotiating) first if needed."""
        conn = self._connections.get(tuple(address))
        if conn is None:
            conn = sc.SyncConnection.open(*address, self.config, self.deadline)
            self._connections[tuple(address)] = conn
        return conn

    def _drop(self, address: tuple[str, int]) -> None:
        conn = self._connections.pop(tuple(address), None)
        if conn is not None:
            conn.close()

    def _try(self, address: tuple[str, int], attempt):
        """Run attempt on `address`'s connection; a broken connection is dropped and re-raised."""
        conn = self.connection(address)
        try:
            return attempt(conn)
        except sc.NotKafka:
            self._drop(address)
            raise

    def _pause(self, delay: float) -> float:
        """Sleep `delay` (never past the deadline); return the next, doubled delay."""
        time.sleep(max(0.0, min(delay, self.deadline - time.monotonic())))
        return min(delay * 2, BACKOFF_MAX_S)

    # ------------------------------------------------------------ routes
    def _on_active_controller(self, attempt, api: str):
        """Return attempt(conn) as active_controller routes it (the calls written before issue 30's routes)."""
        return on_active_controller(self.addresses, self.config, self.deadline, attempt, api=api)

    def any_node(self, attempt, api: str):
        """Return attempt(conn) from the first bootstrap address that answers (see Rules)."""
        delay, error = BACKOFF_S, None
        while time.monotonic() < self.deadline:
            connected = False
            for address in self.addresses:
                try:
                    return self._try(address, attempt)
                except (sc.Unreachable, sc.AuthenticationFailed) as e:
                    error = e
                except (sc.NotKafka, sc.RequestTimeout) as e:
                    error, connected = e, True
            if not connected:
                break
            delay = self._pause(delay)
        raise error or sc.RequestTimeout(f"no server answered {api} in time")

    def on_controller(self, attempt, api: str):
        """Return attempt(conn) from the controller (see Rules)."""
        if self.config.bootstrap_controllers:
            return on_active_controller(self.addresses, self.config, self.deadline, attempt, api=api)
        delay, refusal = BACKOFF_S, None
        while time.monotonic() < self.deadline:
            routing = self.routing()
            address = routing.nodes.get(routing.controller_id)
            if address is not None:
                try:
                    return self._try(address, attempt)
                except Refused as e:
                    refusal = f"{address[0]}:{address[1]} answered {e.error} to {api}"
                except (sc.Unreachable, sc.NotKafka):
                    pass
            self._routing = None
            delay = self._pause(delay)
        if refusal is not None:
            raise sc.NoActiveController(f"{refusal} until the deadline")
        raise sc.RequestTimeout(f"no controller was known to send {api} to before the deadline")

    def on_node(self, node_id: int, attempt, api: str):
        """Return attempt(conn) from node `node_id` (see Rules)."""
        delay = BACKOFF_S
        while True:
            address = self.routing().nodes.get(node_id)
            if address is not None:
                return self._try(address, attempt)
            self._routing = None
            delay = self._pause(delay)
            if time.monotonic() >= self.deadline:    # checked before asking the metadata again, which would fail
                raise NodeUnavailable(f"node {node_id} is not in the cluster's metadata (call: {api})")

    def routing(self) -> Routing:
        """Return the cached routing metadata, asking any node for it when there is none."""
        if self._routing is None:
            self._routing = self.any_node(self._routing_on, "Metadata")
        return self._routing

    def _routing_on(self, conn: sc.SyncConnection) -> Routing:
        from kraftsman.storage.protocol import codec

        if self.config.bootstrap_controllers:
            body = codec.message_class("DescribeClusterRequest")(endpoint_type=CONTROLLERS)
            response = conn.request("DescribeCluster", conn.pick_version("DescribeCluster"), body, self.deadline)
            raise_for(response.error_code, response.error_message)
            return Routing({b.broker_id: (b.host, b.port) for b in response.brokers}, response.controller_id)
        body = codec.message_class("MetadataRequest")(topics=[])
        response = conn.request("Metadata", conn.pick_version("Metadata"), body, self.deadline)
        return Routing({b.node_id: (b.host, b.port) for b in response.brokers},
                       getattr(response, "controller_id", -1))

    def remaining_ms(self) -> int:
        """Return the time left before the deadline, in ms (at least 1): the timeout a request carries."""
        return max(1, int((self.deadline - time.monotonic()) * 1000))
