"""`--initial-controllers` voter strings (DynamicVoter, DynamicVoters) and their VotersRecord.

Rules:
- Parsing follows Kafka's DynamicVoter.parse character by character, with its messages
  (VoterError): `id@host:port:directoryId`, IPv6 hosts in brackets (`id@[::1]:port:dirId`).
- Voters are kept sorted by node id, as Kafka's TreeMap does.
- Integers parse like Java's Integer.parseInt: optional sign, ASCII digits, 32-bit range.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .protocol import codec
from .protocol.uuids import Uuid, UuidError

_JAVA_INT = re.compile(r"[+-]?[0-9]+")


class VoterError(ValueError):
    """A bad dynamic voter string; the message is Kafka's."""


@dataclass(frozen=True)
class DynamicVoter:
    """One initial controller: node id, host, port and metadata directory id."""

    directory_id: Uuid
    node_id: int
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.node_id}@{host}:{self.port}:{self.directory_id}"


def _parse_int(text: str, message: str) -> int:
    if not _JAVA_INT.fullmatch(text) or not -2**31 <= int(text) < 2**31:
        raise VoterError(message)
    return int(text)


def parse_voter(text: str) -> DynamicVoter:
    """Parse one `id@host:port:directoryId` string (DynamicVoter.parse)."""
    text = text.strip()
    at = text.find("@")
    if at < 0:
        raise VoterError("No @ found in dynamic voter string.")
    if at == 0:
        raise VoterError("Invalid @ at beginning of dynamic voter string.")
    node_id = _parse_int(text[:at], "Failed to parse node id in dynamic voter string.")
    if node_id < 0:
        raise VoterError(f"Invalid negative node id {node_id} in dynamic voter string.")
    host, rest = _split_host(text[at + 1:])
    port, directory_id = _split_port(rest)
    return DynamicVoter(directory_id, node_id, host, port)


def _split_host(rest: str) -> tuple[str, str]:
    """Return (host, the rest starting at the port colon)."""
    if not rest:
        raise VoterError("No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise VoterError("Hostname began with left bracket, but no right bracket was found.")
        return rest[1:end], rest[end + 1:]
    end = rest.find(":")
    if end < 0:
        raise VoterError("No colon following hostname could be found.")
    return rest[:end], rest[end:]


def _split_port(rest: str) -> tuple[int, Uuid]:
    """Parse `:port:directoryId`."""
    if not rest.startswith(":"):
        raise VoterError("Port section must start with a colon.")
    rest = rest[1:]
    end = rest.find(":")
    if end < 0:
        raise VoterError("No colon following port could be found.")
    port = _parse_int(rest[:end], "Failed to parse port in dynamic voter string.")
    if not 0 <= port <= 65535:
        raise VoterError(f"Invalid port {port} in dynamic voter string.")
    try:
        return port, Uuid.from_string(rest[end + 1:])
    except UuidError:
        raise VoterError("Failed to parse directory ID in dynamic voter string.") from None


def parse_voters(text: str) -> dict[int, DynamicVoter]:
    """Parse a comma-separated voter list into {node id: voter}, sorted by node id."""
    voters: dict[int, DynamicVoter] = {}
    parsed = [parse_voter(part) for part in text.strip().split(",") if part]
    if not parsed:
        raise VoterError("No voters given.")
    for voter in parsed:
        if voter.node_id in voters:
            raise VoterError(f"Node id {voter.node_id} was specified more than once.")
        voters[voter.node_id] = voter
    return dict(sorted(voters.items()))


def voters_record(voters: dict[int, DynamicVoter], listener_name: str):
    """Build the VotersRecord (version 0) of the initial voter set, endpoints named `listener_name`."""
    cls = codec.message_class("VotersRecord")
    return cls(version=0, voters=[
        cls.Voter(voter_id=v.node_id, voter_directory_id=v.directory_id,
                  endpoints=[cls.Endpoint(name=listener_name, host=v.host, port=v.port)],
                  kraft_version_feature=cls.KRaftVersionFeature(min_supported_version=0,
                                                                max_supported_version=1))
        for v in voters.values()])
