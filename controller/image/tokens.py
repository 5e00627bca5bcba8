"""Delegation tokens by token id (DelegationTokenRecord / RemoveDelegationTokenRecord).

Rules:
- Text follows the shell's DelegationTokenDataNode (redaction disabled), a verbatim concatenation.
"""
from __future__ import annotations

from .keyed import KeyedDelta, KeyedImage


def delegation_token(record) -> str:
    """Render a token as Kafka's DelegationTokenDataNode prints it."""
    return (f"DelegationTokenDatatokenId={record.token_id}(owner={record.owner}"
            f"(tokenRequester={record.requester}(renewers={' '.join(record.renewers)}, "
            f"issueTimestamp={record.issue_timestamp}, maxTimestamp={record.max_timestamp}), "
            f"expiryTimestamp={record.expiration_timestamp}")


class DelegationTokensImage(KeyedImage):
    """token id -> (DelegationTokenRecord, version)."""

    __slots__ = ()


class DelegationTokensDelta(KeyedDelta):
    """Collect token changes."""

    def replay_token(self, message, version: int) -> None:
        """Apply DelegationTokenRecord."""
        self.put(message.token_id, message, version)

    def replay_remove(self, message) -> None:
        """Apply RemoveDelegationTokenRecord (unknown ids are ignored, as Kafka does)."""
        self.remove(message.token_id)
