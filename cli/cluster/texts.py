"""What kafka-cluster's verbs share: the tool's words for a server error, and DescribeCluster read through them.

Rules:
- Light to import (the tool's --help loads it): the client is imported when a call is made.
- Failures map to exit codes in common.admin.admin_call; here only the words: a server error reads
  `<ERROR_NAME>: <message>` as Kafka's tools print it, the Kafka exception's default text standing in for a
  message the server did not send.
"""
from __future__ import annotations

from ..common.admin import admin_call


def server_words(error) -> str:
    """Return kafka-cluster's line for a controller.client.admin.ServerError."""
    from kraftsman.storage.protocol.errors import default_message

    return f"{error.name}: {error.message or default_message(error.code) or 'no message'}"


def describe_cluster(ctx, controllers: bool, deadline: float | None = None, include_fenced: bool = False):
    """Return DescribeCluster's ClusterInfo of the controllers (or the brokers, the fenced ones too when asked and
    the server speaks v2), before `deadline` (the run's by default), failures worded as kafka-cluster words them."""
    from kraftsman.controller.client.admin import BROKERS, CONTROLLERS

    return admin_call(ctx.admin(deadline).describe_cluster, CONTROLLERS if controllers else BROKERS, include_fenced,
                      wording=server_words)
