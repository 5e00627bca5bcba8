"""Dispatcher: route each request a listener reads to whoever answers it, for one ControllerServer.

Rules:
- The order is fixed: with an authorizer, its denial (authorizer.request_denial); without one, the ACL APIs'
  SECURITY_DISABLED answer; then the Raft APIs go to the core; an API the quorum controller does not serve
  gets UNKNOWN_SERVER_ERROR (Kafka's ControllerApis: "Unsupported ApiKey"; the listener lets through only what it
  advertises), or no answer (None) before the quorum controller exists; token APIs the connection may not use
  are refused (token_requests); reads answer from the committed image (Metadata filtered by the authorizer);
  everything else is a write.
- A write on the active controller answers once its records commit (NOT_CONTROLLER if they cannot); a
  standby relays it to the active controller (forwarding, one hop), except a token request, whose principal
  would become the standby's, and a write a broker forwarded in an Envelope (Kafka's controllers never relay
  one; the broker finds the active controller itself): those are NOT_CONTROLLER.
- An answer is returned at once when it is ready (a refusal, a read, a Raft request the core answers in the
  same step), else as an answers.Reply completed by the core's reply or the write's commit: no task and no loop
  hop per request.
- The Dispatcher reads the process's parts (driver, quorum controller, authorizer, forwarder) through the
  server when a request arrives, since the server builds them in start(); it owns no state of its own.
"""
from __future__ import annotations

import asyncio
import logging

from kraftsman.controller.quorum import error_responses as errors
from kraftsman.storage.protocol.errors import Errors

from . import raft_wire, token_requests
from .answers import Reply
from .authorizer import filter_metadata, request_denial, request_principal

log = logging.getLogger("kraftsman.server")
RAFT_APIS = frozenset({"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch", "FetchSnapshot", "DescribeQuorum",
                       "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter"})


class Dispatcher:
    """Route requests for `server` (a ControllerServer): refusals, Raft, reads, writes, forwarding."""

    def __init__(self, server):
        self.server = server

    def handle(self, rctx, body):
        """Serve one request from a listener: return its response (None: no answer) or an awaitable of it."""
        name = rctx.api_name
        refused = self.refusal(rctx, body)
        if refused is not None:
            return refused
        if name in RAFT_APIS:
            return self.raft_request(name, rctx.api_version, body)
        quorum = self.server.quorum
        if quorum is None:
            return None
        if name not in quorum.handlers:
            log.info("%s: %s v%d is listed but not served by a controller: UNKNOWN_SERVER_ERROR", rctx.listener,
                     name, rctx.api_version)
            return errors.error_response(name, body, Errors.UNKNOWN_SERVER_ERROR)
        if name in token_requests.TOKEN_APIS:
            refused = self.token_refusal(rctx, body)
            if refused is not None:
                return refused
        if quorum.is_read_only(name):
            return self.read(rctx, body)
        if rctx.forwarded_by is not None and not self.server.driver.is_active:
            return errors.error_response(name, body, Errors.NOT_CONTROLLER)  # a broker's Envelope: no relay
        return self.write(name, rctx.api_version, body, rctx.client_id, request_principal(rctx))

    def refusal(self, rctx, body):
        """Return the authorizer's denial, or SECURITY_DISABLED for an ACL API without one; else None."""
        authorizer = self.server.authorizer
        if authorizer is not None:
            return request_denial(authorizer, rctx, body)
        if rctx.api_name in errors.NO_AUTHORIZER:
            return errors.security_disabled(rctx.api_name, body)
        return None

    def token_refusal(self, rctx, body):
        """Return the refusal of a delegation-token request this connection may not make, else None."""
        server = self.server
        return token_requests.refusal(rctx, body, server.config.security_protocol(rctx.listener), server.authorizer)

    def read(self, rctx, body):
        """Answer a read-only request from the committed image (Metadata filtered by the authorizer)."""
        server, name = self.server, rctx.api_name
        context = server.context(rctx.api_version, listener=rctx.listener)
        response = server.quorum.handle(name, context, body).response
        if server.authorizer is not None and name == "Metadata":
            response = filter_metadata(server.authorizer, rctx, body, response)
        return response

    def raft_request(self, name: str, version: int, body):
        """Hand an inbound Raft request to the core; return its response body (None: no answer) or, when
        the core answers later (a parked fetch), a future of it (None after the request timeout)."""
        server = self.server
        env = raft_wire.raft_request_from_wire(name, version, body, server.config.node_id)
        if getattr(body, "leader_endpoints", None):
            server.learn_endpoints(body)
        now: list = []
        future = None

        def finish(answer):
            return raft_wire.add_leader_endpoint(name, version, answer, server.address_of)

        def reply(answer) -> None:
            if future is None:
                now.append(answer)
            elif not future.done():
                timer.cancel()
                future.set_result(finish(answer))
        server.driver.request(env, reply)
        if now:
            return finish(now[0])
        future = Reply()
        timer = asyncio.get_running_loop().call_later((server.config.request_timeout_ms + 1000) / 1000,
                                                      future.set_result, None)
        return future

    def write(self, name: str, version: int, body, client_id: str | None = None,
              principal: str = "User:ANONYMOUS"):
        """Return a future of the write's response, set once its records commit; on a standby, the active
        controller's answer (see Rules)."""
        server = self.server
        if not server.driver.is_active:
            return self.forward(name, version, body, client_id)
        result = server.quorum.handle(name, server.context(version, pending=True, principal=principal), body)
        future = Reply()

        def committed(error) -> None:
            if not future.done():
                future.set_result(result.response if error is None
                                  else errors.error_response(name, body, Errors.NOT_CONTROLLER))
        server.driver.propose(result.records, committed)
        server.schedule_flush()
        return future

    def forward(self, name: str, version: int, body, client_id: str | None):
        """Relay a standby's write to the active controller (a token request: NOT_CONTROLLER)."""
        server = self.server
        if name in token_requests.TOKEN_APIS:
            return errors.error_response(name, body, Errors.NOT_CONTROLLER)
        leader = server.driver.node.leader_id
        return server.forwarder.forward(leader, server.peer_endpoints().get(leader), name, version, body, client_id)
