"""SCRAM credentials: (mechanism, user) -> UserScramCredentialRecord.

Rules:
- Mechanisms: 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512; both mechanism directories always exist.
- Text follows the shell's ScramCredentialDataNode with redaction disabled (hex salt and keys).
"""
from __future__ import annotations

from . import render
from .errors import ImageReplayError
from .keyed import KeyedDelta, KeyedImage

MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


def scram_credential(record) -> str:
    """Render a credential as ScramCredentialData(salt=.., storedKey=.., serverKey=.., iterations=..)."""
    return (f"ScramCredentialData(salt={render.hex_bytes(record.salt)}, "
            f"storedKey={render.hex_bytes(record.stored_key)}, serverKey={render.hex_bytes(record.server_key)}, "
            f"iterations={record.iterations})")


class ScramImage(KeyedImage):
    """(mechanism, user name) -> (UserScramCredentialRecord, version)."""

    __slots__ = ()

    def users(self, mechanism: int) -> dict:
        """Return user name -> record for one mechanism."""
        return {user: message for (mech, user), (message, _) in self.entries.items() if mech == mechanism}


class ScramDelta(KeyedDelta):
    """Collect credential changes."""

    def replay_credential(self, message, version: int) -> None:
        """Apply UserScramCredentialRecord."""
        self.put((message.mechanism, message.name), message, version)

    def replay_remove(self, message) -> None:
        """Apply RemoveUserScramCredentialRecord."""
        if not self.remove((message.mechanism, message.name)):
            raise ImageReplayError(f"Failed to remove SCRAM credential for {message.name}: not found")
