"""ClusterError (code + message), raised inside the cluster-control handlers.

Rules:
- Codes come from storage.protocol.errors, Kafka's one table; messages are the ones Kafka's controller puts
  in its exceptions (only ControllerRegistration and DescribeCluster send them).
- ClusterError never escapes a handler: the handler turns it into the response's error fields.
"""
from __future__ import annotations


class ClusterError(Exception):
    """A Kafka error code with the message Kafka's controller gives it."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
