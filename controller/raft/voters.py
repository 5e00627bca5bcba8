"""Voter sets (KIP-853): who votes, with directory ids and endpoints, and their history in the log.

Rules:
- A VoterSet is immutable; add/remove/update return a new set.
- With kraft.version 0 the set is static (ids from configuration, directory ids ZERO_UUID).
- With kraft.version 1 the set comes from the newest VotersRecord: in the latest snapshot, then in
  the log, committed or not (Kafka uses an appended voter set at once). A VoterHistory keeps one
  entry per VotersRecord offset so that truncation can bring back an older set.
- At most one voter change is in flight: `VoterHistory.pending(hw)` tells whether the newest
  VotersRecord is still uncommitted.
"""
from __future__ import annotations

import bisect
from typing import NamedTuple

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

VotersRecord = codec.message_class("VotersRecord")


class VoterNode(NamedTuple):
    """One voter: id, directory id, listener endpoints ((name, host, port), ...), kraft.version range."""

    voter_id: int
    directory_id: bytes = ZERO_UUID
    endpoints: tuple = ()
    min_kraft: int = 0
    max_kraft: int = 1


class VoterSet:
    """An immutable set of voters keyed by id."""

    __slots__ = ("_nodes", "_ids")

    def __init__(self, nodes=()):
        self._nodes = {n.voter_id: n for n in nodes}
        self._ids = frozenset(self._nodes)  # the set never changes: the leader asks for it several times a commit

    @classmethod
    def static(cls, ids) -> "VoterSet":
        """Build a kraft.version 0 voter set from ids only."""
        return cls(VoterNode(i) for i in ids)

    def ids(self) -> frozenset:
        return self._ids

    def nodes(self) -> list[VoterNode]:
        return [self._nodes[i] for i in sorted(self._nodes)]

    def get(self, voter_id: int) -> VoterNode | None:
        return self._nodes.get(voter_id)

    def __contains__(self, voter_id) -> bool:
        return voter_id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __eq__(self, other) -> bool:
        return isinstance(other, VoterSet) and self._nodes == other._nodes

    __hash__ = None

    def __repr__(self) -> str:
        return f"VoterSet({sorted(self._nodes)})"

    def is_voter(self, voter_id: int, directory_id: bytes | None = None) -> bool:
        """Tell whether (id, directory id) is a voter; a ZERO or None directory id matches any."""
        node = self._nodes.get(voter_id)
        if node is None:
            return False
        if not directory_id or directory_id == ZERO_UUID or node.directory_id == ZERO_UUID:
            return True
        return bytes(node.directory_id) == bytes(directory_id)

    def add(self, node: VoterNode) -> "VoterSet":
        return VoterSet([*self._nodes.values(), node])

    def remove(self, voter_id: int) -> "VoterSet":
        return VoterSet(n for n in self._nodes.values() if n.voter_id != voter_id)

    def to_record(self):
        """Return the VotersRecord (v0) describing this set."""
        voters = []
        for n in self.nodes():
            voters.append(VotersRecord.Voter(
                voter_id=n.voter_id, voter_directory_id=Uuid(bytes(n.directory_id)),
                endpoints=[VotersRecord.Endpoint(name=a, host=b, port=c) for a, b, c in n.endpoints],
                kraft_version_feature=VotersRecord.KRaftVersionFeature(
                    min_supported_version=n.min_kraft, max_supported_version=n.max_kraft)))
        return VotersRecord(version=0, voters=voters)

    @classmethod
    def from_record(cls, record) -> "VoterSet":
        """Build a voter set from a decoded VotersRecord."""
        nodes = []
        for v in record.voters:
            f = v.kraft_version_feature
            eps = tuple((e.name, e.host, e.port) for e in v.endpoints)
            nodes.append(VoterNode(v.voter_id, Uuid(bytes(v.voter_directory_id)), eps,
                                   f.min_supported_version, f.max_supported_version))
        return cls(nodes)


class VoterHistory:
    """Voter sets by the offset of the VotersRecord that introduced them (plus a base set)."""

    __slots__ = ("base", "_offsets", "_sets")

    def __init__(self, base: VoterSet):
        self.base = base
        self._offsets: list[int] = []
        self._sets: list[VoterSet] = []

    def latest(self) -> VoterSet:
        return self._sets[-1] if self._sets else self.base

    def latest_offset(self) -> int:
        """Return the offset of the newest VotersRecord in the log, or -1."""
        return self._offsets[-1] if self._offsets else -1

    def add(self, offset: int, voters: VoterSet) -> None:
        self._offsets.append(offset)
        self._sets.append(voters)

    def truncate(self, end_offset: int) -> None:
        """Forget sets introduced at or after `end_offset` (log truncation)."""
        i = bisect.bisect_left(self._offsets, end_offset)
        del self._offsets[i:], self._sets[i:]

    def at(self, end_offset: int) -> VoterSet:
        """Return the set in force for a log prefix ending (exclusive) at `end_offset`."""
        i = bisect.bisect_left(self._offsets, end_offset)
        return self._sets[i - 1] if i else self.base

    def reset(self, base: VoterSet) -> None:
        """Start again from `base` (a snapshot was installed or loaded)."""
        self.base = base
        self._offsets.clear()
        self._sets.clear()

    def compact(self, start_offset: int) -> None:
        """Fold sets introduced below `start_offset` into the base (log prefix deleted)."""
        i = bisect.bisect_left(self._offsets, start_offset)
        if i:
            self.base = self._sets[i - 1]
            del self._offsets[:i], self._sets[:i]

    def pending(self, high_watermark: int) -> bool:
        """Tell whether the newest VotersRecord is not committed yet."""
        return bool(self._offsets) and self._offsets[-1] >= high_watermark
