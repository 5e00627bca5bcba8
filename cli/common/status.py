"""The suite's exit codes (ExitStatus) and the error a tool reports as one line with one of them (ToolError).

Rules:
- Exit codes are an IntEnum documented in the README; Kafka-compatible tools keep Kafka's codes.
"""
from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Process exit codes shared by all tools."""

    OK = 0
    ERROR = 1             # Kafka's generic failure code (bad input, failed operation)
    CORRUPT = 2           # dump-log: some bytes could not be decoded; the rest was printed
    FOREIGN = 3           # kafka-storage: a directory is formatted for another node/cluster (README)
    REFUSED = 4           # kafka-cluster unregister --require-fenced: the broker is still active
    UNHEALTHY = 5         # kafka-cluster health: the cluster is not healthy
    UNCHANGED = 6         # json/yaml: --if-exists / --if-not-exists found it already so (nothing to do)
    USAGE = 64            # bad flags or arguments (BSD sysexits EX_USAGE)
    UNAVAILABLE = 69      # cannot reach the cluster (EX_UNAVAILABLE)
    TIMED_OUT = 75        # kafka-cluster wait: the state was not reached in time (EX_TEMPFAIL)
    INTERRUPTED = 130     # Ctrl-C


class ToolError(Exception):
    """An error a tool reports as one line with a given exit status; `hint`, when given, is a second line
    (`<prog>: hint: ...`) saying what to do, under a Kafka text that does not."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = int(status)
        self.hint = hint
