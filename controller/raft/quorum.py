"""Pure quorum arithmetic: majorities, vote tallies, high watermarks (no state, no I/O).

Rules:
- Offsets are exclusive end offsets, as in Kafka: a replica whose log end offset is N holds 0..N-1.
- The high watermark is the largest offset that a majority of the voters has reached (the
  majority-th largest end offset), and a leader only takes it if it lies past the start of its
  own epoch: entries of older epochs are never committed by counting (Raft section 5.4.2).
- The high watermark never moves backwards; callers pass the current one in.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

PENDING, WON, LOST = "pending", "won", "lost"


def majority(n_voters: int) -> int:
    """Return how many voters make a majority of `n_voters`."""
    return n_voters // 2 + 1


def vote_result(voters: Iterable[int], granted: Iterable[int], rejected: Iterable[int]) -> str:
    """Tally an election: WON once a majority granted, LOST once a majority can no longer grant."""
    voter_set = set(voters)
    need = majority(len(voter_set))
    yes = len(voter_set.intersection(granted))
    no = len(voter_set.intersection(rejected))
    if yes >= need:
        return WON
    if len(voter_set) - no < need:
        return LOST
    return PENDING


def majority_offset(voters: Iterable[int], end_offsets: Mapping[int, int]) -> int:
    """Return the largest offset reached by a majority of `voters` (unknown replicas count as 0)."""
    ids = voters if isinstance(voters, (set, frozenset)) else set(voters)
    if not ids:
        return 0
    get = end_offsets.get
    offsets = sorted([get(v, 0) for v in ids], reverse=True)
    return offsets[majority(len(offsets)) - 1]


def next_high_watermark(voters: Iterable[int], end_offsets: Mapping[int, int], epoch_start_offset: int,
                        current: int) -> int:
    """Return the leader's new high watermark (`current` when it cannot advance)."""
    candidate = majority_offset(voters, end_offsets)
    if candidate > epoch_start_offset and candidate > current:
        return candidate
    return current


def has_majority(voters: Iterable[int], members: Iterable[int]) -> bool:
    """Tell whether `members` include a majority of `voters`."""
    voter_set = set(voters)
    return len(voter_set.intersection(members)) >= majority(len(voter_set))
