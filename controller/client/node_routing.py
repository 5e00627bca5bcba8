"""Send one admin request to a named node (a broker's own configs, BROKER "4"), found in the cluster's listing.

Rules:
- The node is looked up where Kafka's Admin client looks it up: with bootstrap servers among the brokers the
  cluster lists (DescribeCluster, EndpointType 1), with bootstrap controllers among the controllers (EndpointType
  2: a controller's own id can be asked, a broker's cannot).
- A node the listing does not name is waited for, the listing asked again with a backoff (50 ms doubling up to
  1 s), until the deadline: then NodeUnavailable, a RequestTimeout (Kafka's Admin client times out the same way).
- The request itself runs on its own connection to that node; its failures reach the caller unchanged.
"""
from __future__ import annotations

import time

from . import sync_client as sc


class NodeUnavailable(sc.RequestTimeout):
    """The node a request must go to was not in the cluster's listing before the deadline."""


def on_node(admin, node_id: int, attempt, api: str):
    """Return attempt(conn) on node `node_id` of `admin`'s cluster (see Rules)."""
    from .admin import BROKERS, CONTROLLERS

    kind = CONTROLLERS if admin.config.bootstrap_controllers else BROKERS
    delay, listed = 0.05, {}
    while time.monotonic() < admin.deadline:
        listed = {n.node_id: (n.host, n.port) for n in admin.describe_cluster(kind).nodes}
        if node_id in listed:
            with sc.SyncConnection.open(*listed[node_id], admin.config, admin.deadline) as conn:
                return attempt(conn)
        time.sleep(max(0.0, min(delay, admin.deadline - time.monotonic())))
        delay = min(delay * 2, 1.0)
    what = "controllers" if kind == CONTROLLERS else "brokers"
    raise NodeUnavailable(f"node {node_id} is not among the {what} the cluster lists "
                          f"({', '.join(map(str, sorted(listed))) or 'none'}): no node to send {api} to in time")
