"""Kafka error codes used by the replication handlers, and ApiError (code + message) as Kafka's.

Rules:
- Codes and default messages are Kafka 3.9's `Errors` enum (reference §5.4).
- `ApiError(code)` carries Kafka's default message, as Java's `new ApiError(Errors.X)`; NONE has no message.
- Handlers raise ApiError internally and turn it into response fields; it never escapes a handler.
"""
from __future__ import annotations

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
INVALID_TOPIC_EXCEPTION = 17
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
UNSUPPORTED_VERSION = 35
POLICY_VIOLATION = 44
FENCED_LEADER_EPOCH = 74
STALE_BROKER_EPOCH = 77
OPERATION_NOT_ATTEMPTED = 55
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
NO_REASSIGNMENT_IN_PROGRESS = 85
TOPIC_DELETION_DISABLED = 73
INVALID_UPDATE_VERSION = 95
UNKNOWN_TOPIC_ID = 100
BROKER_ID_NOT_REGISTERED = 102
INELIGIBLE_REPLICA = 107
NEW_LEADER_ELECTED = 108

DEFAULT_MESSAGES = {
    UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    LEADER_NOT_AVAILABLE: "There is no leader for this topic-partition as we are in the middle of a leadership "
                          "election.",
    INVALID_TOPIC_EXCEPTION: "The request attempted to perform an operation on an invalid topic.",
    TOPIC_ALREADY_EXISTS: "Topic with this name already exists.",
    INVALID_PARTITIONS: "Number of partitions is below 1.",
    INVALID_REPLICATION_FACTOR: "Replication factor is below 1 or larger than the number of available brokers.",
    INVALID_REPLICA_ASSIGNMENT: "Replica assignment is invalid.",
    INVALID_CONFIG: "Configuration is invalid.",
    INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library or the "
                     "message was sent to an incompatible broker. See the broker logs for more details.",
    POLICY_VIOLATION: "Request parameters do not satisfy the configured policy.",
    TOPIC_DELETION_DISABLED: "Topic deletion is disabled.",
    PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
    ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    NO_REASSIGNMENT_IN_PROGRESS: "No partition reassignment is in progress.",
    UNKNOWN_TOPIC_ID: "This server does not host this topic ID.",
    BROKER_ID_NOT_REGISTERED: "The given broker ID was not registered.",
}


class ApiError(Exception):
    """An error code with its message (Kafka's ApiError); the default message when none is given."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = DEFAULT_MESSAGES.get(code) if message is None else message


OK = ApiError(NONE)
OK.message = None
