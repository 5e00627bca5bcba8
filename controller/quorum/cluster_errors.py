"""Kafka error codes of the cluster-control RPCs, and ClusterError (code + message) raised inside handlers.

Rules:
- Codes are Kafka 3.9's `Errors` enum (reference §5.4, Appendix C); messages are the ones Kafka's
  controller puts in its exceptions (only ControllerRegistration and DescribeCluster send them).
- ClusterError never escapes a handler: the handler turns it into the response's error fields.
"""
from __future__ import annotations

NONE = 0
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
STALE_BROKER_EPOCH = 77
DUPLICATE_BROKER_REGISTRATION = 101
BROKER_ID_NOT_REGISTERED = 102
INCONSISTENT_CLUSTER_ID = 104
MISMATCHED_ENDPOINT_TYPE = 114
UNSUPPORTED_ENDPOINT_TYPE = 115
INVALID_REGISTRATION = 119
UNKNOWN_SERVER_ERROR = -1


class ClusterError(Exception):
    """A Kafka error code with the message Kafka's controller gives it."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
