"""peer_endpoints: where a controller reaches each peer, and which controllers it shows to clients.

Rules:
- A peer's address comes, first found first, from controller.quorum.voters, from the voter set (VotersRecord
  endpoints on the controller listener), then from addresses learned from Raft messages (a response's
  NodeEndpoints, a BeginQuorumEpoch's LeaderEndpoints) for nodes none of those name; the bootstrap servers
  are ids -2, -3, ... This node itself is never a peer. A learned address is forgotten once the node is
  configured or in the voter set, so the map holds no more than the observers and joining voters heard from.
- Clients are shown the voters on the listener their request came in on: the controller listener's
  addresses above, or on another listener the endpoints the controllers registered for it (KIP-919); a
  voter with no endpoint there is left out, as Kafka's DescribeCluster leaves it out.
"""
from __future__ import annotations

from kraftsman.controller.quorum.context import ControllerNode

from .controller_registration import registered_endpoints


class PeerEndpoints:
    """The endpoint map of one controller: configured, from the voter set, and learned."""

    def __init__(self, config, advertised_host: str):
        self.config, self.host = config, advertised_host
        self.learned: dict[int, tuple[str, int]] = {}  # from Raft messages (observers, new voters)
        self.routed_voters = None  # the voter set the router's map was last built from

    def table(self, voters) -> dict[int, tuple[str, int]]:
        """Return node id -> (host, port) of every peer this node can reach."""
        out = dict(self.config.static_voters)
        name = self.config.controller_listener().name
        for voter in voters.nodes():
            for ep_name, host, port in voter.endpoints:
                if ep_name == name:
                    out.setdefault(voter.voter_id, (host, port))
        for node_id in [i for i in self.learned if i in out]:
            del self.learned[node_id]  # configured or in the voter set now: that address is the one to use
        out.update(self.learned)
        for i, address in enumerate(self.config.bootstrap_servers):
            out[-2 - i] = address
        out.pop(self.config.node_id, None)
        return out

    def learn(self, found: dict[int, tuple[str, int]], known: dict[int, tuple[str, int]]) -> bool:
        """Keep the addresses of `found` for nodes `known` (the router's map) has none for, or only a learned
        one that changed; return whether there were any."""
        fresh = {i: a for i, a in found.items() if i != self.config.node_id and self.learned.get(i) != a
                 and (i not in known or i in self.learned)}  # a configured or voter-set address stays
        self.learned.update(fresh)
        return bool(fresh)

    def controller_nodes(self, voters, committed, listeners, listener: str | None) -> tuple[ControllerNode, ...]:
        """Return the voters as clients reach them on `listener` (None: the first controller listener)."""
        ep = self.config.controller_listener()
        if listener is None or listener == ep.name:
            endpoints = self.table(voters)
            own = listeners[0].port if listeners else ep.port
        else:
            endpoints = registered_endpoints(committed, listener)
            own = next((x.port for x in listeners if x.name == listener), None)
        if own is not None:
            endpoints[self.config.node_id] = (self.host, own)
        return tuple(ControllerNode(i, h, p) for i, (h, p) in sorted(endpoints.items()) if i >= 0 and i in voters)
