"""Route one blocking admin request to the active controller, found from bootstrap addresses (sync_client).

Rules:
- With bootstrap controllers (ClientConfig.bootstrap_controllers, Kafka's `bootstrap.controllers`) every
  request goes to the active controller, as Kafka's Admin client sends it: a bootstrap controller is asked
  DescribeCluster v1 with EndpointType 2, whose ControllerId names the active controller and whose Brokers
  list each controller's endpoint on the listener asked; the request then goes there (on the same
  connection when the bootstrap address is that controller).
- With bootstrap servers the request goes to the first address that answers; only when that answer is a
  refusal is the server asked DescribeCluster (EndpointType 2) for the active controller.
- A refusal is the attempt raising Refused (NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER). Kafka 3.9 standbys name
  no leader in them; a Refused may still carry an endpoint (kraftsman's DescribeQuorum lists Nodes), tried
  first. A server without DescribeCluster v1, ControllerId -1 (an election) or an unlisted ControllerId
  names nobody: the request is tried on that server itself.
- Bootstrap addresses are tried in turn, round after round with a backoff (50 ms doubling up to 1 s) until
  the deadline; a round in which no bootstrap address accepted a connection raises that error at once.
- When time runs out the error says why, in this order: the controller named active could not be reached
  (its connection error, naming it); every answer was a refusal (NoActiveController, with the tool's
  timeout); the last connection error; else RequestTimeout.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from . import sync_client as sc

CONTROLLER_ENDPOINTS = 2
CONNECTION_ERRORS = (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed)
_NOTHING = object()


class Refused(Exception):
    """Signal that the server asked is not the active controller; `leader` is an endpoint it named, if any."""

    def __init__(self, error: str, leader: tuple[str, int] | None = None):
        super().__init__(error)
        self.error, self.leader = error, leader


@dataclass(frozen=True)
class Named:
    """A controller some server named active: its id (-1 when only its endpoint was given) and endpoint."""

    node_id: int
    address: tuple[str, int]
    by: str

    def __str__(self) -> str:
        node = f"node {self.node_id} " if self.node_id >= 0 else ""
        return f"{node}at {self.address[0]}:{self.address[1]}, named the active controller by {self.by}"


def named_controller(conn: sc.SyncConnection, deadline: float) -> Named | None:
    """Return the active controller as `conn`'s server names it in DescribeCluster v1 (EndpointType 2), or
    None when it cannot tell: no DescribeCluster v1, an error code, ControllerId -1 or not among the Brokers."""
    from kraftsman.storage.protocol import codec

    if not conn.supports("DescribeCluster", 1):
        return None
    body = codec.message_class("DescribeClusterRequest")(endpoint_type=CONTROLLER_ENDPOINTS)
    response = conn.request("DescribeCluster", conn.pick_version("DescribeCluster"), body, deadline)
    if response.error_code or response.controller_id < 0:
        return None
    node = next((b for b in response.brokers if b.broker_id == response.controller_id), None)
    return None if node is None else Named(node.broker_id, (node.host, node.port), conn.name)


def on_active_controller(addresses, config: sc.ClientConfig, deadline: float, attempt, *, api: str):
    """Return attempt(conn) from the first server that does not refuse it, looking for the active controller
    as the Rules say. `attempt` raises Refused on a refusal; its other errors reach the caller."""
    return _Search(config, deadline, api).run(list(addresses), attempt)


class _Search:
    """One search for the active controller: what was tried, and the failures that explain a timeout."""

    def __init__(self, config: sc.ClientConfig, deadline: float, api: str):
        self.config, self.deadline, self.api = config, deadline, api
        self.refusal: tuple[str, str] | None = None     # (error name, server) of the latest refusal
        self.named: Named | None = None                 # the latest controller named active
        self.named_error: sc.ClientError | None = None  # that controller could not be reached
        self.error: sc.ClientError | None = None        # the latest other connection failure

    def run(self, addresses: list, attempt):
        delay = 0.05
        while time.monotonic() < self.deadline:
            connected = False
            for address in addresses:
                if time.monotonic() >= self.deadline:
                    break
                conn = self._open(address)
                if conn is None:
                    continue
                connected = True
                with conn:
                    outcome = self._through(conn, attempt)
                if outcome is not _NOTHING:
                    return outcome
            if not connected:
                break
            time.sleep(max(0.0, min(delay, self.deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
        raise self.failure()

    def _open(self, address: tuple[str, int], named: Named | None = None) -> sc.SyncConnection | None:
        try:
            conn = sc.SyncConnection.open(*address, self.config, self.deadline)
        except CONNECTION_ERRORS as e:
            self._failed(e, named)
            return None
        if named is not None:
            self.named_error = None
        return conn

    def _failed(self, error: sc.ClientError, named: Named | None) -> None:
        if named is None:
            self.error = error
        else:
            self.named_error = type(error)(f"{error} ({named})")

    def _through(self, conn: sc.SyncConnection, attempt):
        """Run the attempt on the active controller as `conn` leads to it."""
        named = self._ask(conn) if self.config.bootstrap_controllers else None
        if named is _NOTHING:
            return _NOTHING
        if named is not None and named.address != (conn.host, conn.port):
            return self._on_named(named, attempt)
        return self._attempt(conn, attempt, None, hops=named is None)

    def _ask(self, conn: sc.SyncConnection):
        """Return the controller `conn`'s server names active: a Named, None (nobody), _NOTHING (it broke)."""
        try:
            named = named_controller(conn, self.deadline)
        except (sc.NotKafka, sc.RequestTimeout) as e:   # the connection broke or the deadline passed
            self.error = e
            return _NOTHING
        if named is not None:
            self.named = named
        return named

    def _attempt(self, conn: sc.SyncConnection, attempt, named: Named | None, *, hops: bool):
        """Return attempt(conn); after a refusal, with `hops`, its answer on the controller named active."""
        try:
            return attempt(conn)
        except Refused as e:
            self.refusal = (e.error, conn.name)
            hint = e.leader
        except (sc.NotKafka, sc.RequestTimeout) as e:   # the connection broke or the deadline passed
            self._failed(e, named)
            return _NOTHING
        if not hops:
            return _NOTHING
        if hint is not None:
            target = Named(-1, hint, conn.name)
        else:   # with bootstrap controllers DescribeCluster was asked already
            target = None if self.config.bootstrap_controllers else self._ask(conn)
        if target is None or target is _NOTHING or target.address == (conn.host, conn.port):
            return _NOTHING
        return self._on_named(target, attempt)

    def _on_named(self, named: Named, attempt):
        conn = self._open(named.address, named)
        if conn is None:
            return _NOTHING
        with conn:
            return self._attempt(conn, attempt, named, hops=False)

    def failure(self) -> sc.ClientError:
        """Return the error that best explains why no active controller answered before the deadline."""
        if self.named_error is not None:
            return self.named_error
        if self.refusal is not None:
            return sc.NoActiveController(self._refusals_text())
        if self.error is not None:
            return self.error
        return sc.RequestTimeout(f"no server answered {self.api} in time")

    def _refusals_text(self) -> str:
        error, server = self.refusal
        kind = "controller" if self.config.bootstrap_controllers else "server"
        seconds = f"{self.config.request_timeout_ms / 1000:g} s"
        if self.named is None:
            return (f"every {kind} answered {error} to {self.api} and none named the active controller within "
                    f"{seconds} (last answer from {server})")
        return (f"every {kind} answered {error} to {self.api} within {seconds}, even {self.named} "
                f"(last answer from {server})")
