"""The KRaft role state machine (KIP-595 + KIP-996 pre-vote + KIP-853 observers) and quorum-state.

Roles and their transitions (e = epoch; "higher" = any message showing an epoch above ours):

    from \\ to   | unattached       | voted          | prospective        | candidate        | leader       | follower            | resigned          | observer
    ------------|------------------|----------------|--------------------|------------------|--------------|---------------------|-------------------|------------------
    unattached  | higher epoch     | grant a vote   | election timeout   | -                | -            | leader known        | -                 | voter set drops us
    voted       | higher epoch     | -              | election timeout   | -                | -            | leader known        | -                 | voter set drops us
    prospective | higher epoch     | grant a vote   | timeout (backoff)  | pre-vote majority| -            | leader known        | -                 | voter set drops us
    candidate   | higher epoch     | -              | lost / timeout     | -                | vote majority| leader known        | -                 | voter set drops us
    leader      | higher epoch     | -              | -                  | -                | -            | higher epoch +      | check-quorum fail,| higher epoch once
                |                  |                |                    |                  |              | leader known        | resign(), removed | it removed itself
    follower    | higher epoch     | -              | fetch timeout      | -                | -            | leader known (new e)| -                 | voter set drops us
    resigned    | higher epoch     | -              | election timeout   | -                | -            | leader known        | -                 | -
    observer    | (stays observer) | -              | -                  | -                | -            | (observer w/ leader)| -                 | -

Rules:
- `epoch`, `leader_id`, `voted_id` and `voted_directory_id` are what quorum-state persists; any
  change to them must be persisted (Ready.quorum_state) before the node sends anything.
- Within one epoch a node votes at most once, and never after it learned that epoch's leader;
  `voted_id` and `leader_id` are kept across role changes inside an epoch.
- A candidate always increments the epoch; a prospective never does (a pre-vote changes nothing).
- A non-voter is an observer: it follows a leader when it knows one and never campaigns.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import ZERO_UUID, Uuid

QuorumStateData = codec.message_class("QuorumStateData")

UNATTACHED, VOTED, PROSPECTIVE, CANDIDATE = "unattached", "voted", "prospective", "candidate"
LEADER, FOLLOWER, RESIGNED, OBSERVER = "leader", "follower", "resigned", "observer"
ROLES = (UNATTACHED, VOTED, PROSPECTIVE, CANDIDATE, LEADER, FOLLOWER, RESIGNED, OBSERVER)

ALLOWED = {
    UNATTACHED: {UNATTACHED, VOTED, PROSPECTIVE, FOLLOWER, OBSERVER, CANDIDATE},
    VOTED: {UNATTACHED, PROSPECTIVE, FOLLOWER, OBSERVER, CANDIDATE},
    PROSPECTIVE: {UNATTACHED, VOTED, PROSPECTIVE, CANDIDATE, FOLLOWER, OBSERVER},
    CANDIDATE: {UNATTACHED, PROSPECTIVE, LEADER, FOLLOWER, OBSERVER},
    LEADER: {UNATTACHED, RESIGNED, FOLLOWER, OBSERVER},
    FOLLOWER: {UNATTACHED, PROSPECTIVE, FOLLOWER, OBSERVER, CANDIDATE},
    RESIGNED: {UNATTACHED, PROSPECTIVE, FOLLOWER, OBSERVER, CANDIDATE},
    OBSERVER: {OBSERVER, UNATTACHED, FOLLOWER},
}
"""Which role may follow which. Single-voter quorums skip pre-vote (unattached -> candidate), and
an observer that finds itself in the voter set becomes unattached or follower; a leader that
removed itself and then sees a higher epoch before the removal committed becomes an observer."""


class TransitionError(RuntimeError):
    """A role change that the state machine does not allow (a bug, never input-driven)."""


class QuorumState:
    """Epoch, role, known leader and vote of one replica."""

    __slots__ = ("epoch", "role", "leader_id", "voted_id", "voted_directory_id")

    def __init__(self, epoch: int = 0, role: str = UNATTACHED, leader_id: int | None = None,
                 voted_id: int | None = None, voted_directory_id: bytes = ZERO_UUID):
        self.epoch, self.role, self.leader_id = epoch, role, leader_id
        self.voted_id, self.voted_directory_id = voted_id, voted_directory_id

    def persisted(self) -> tuple:
        """Return the fields quorum-state stores (compare to know whether to persist)."""
        return self.epoch, self.leader_id, self.voted_id, bytes(self.voted_directory_id)

    def move(self, role: str, epoch: int | None = None, leader_id=..., voted_id=..., voted_dir=...) -> None:
        """Change role (checked against ALLOWED); a new epoch forgets the leader and the vote."""
        if role not in ALLOWED[self.role]:
            raise TransitionError(f"{self.role} -> {role} is not a valid KRaft transition")
        if epoch is not None and epoch != self.epoch:
            if epoch < self.epoch:
                raise TransitionError(f"epoch may not go back from {self.epoch} to {epoch}")
            self.epoch, self.leader_id, self.voted_id, self.voted_directory_id = epoch, None, None, ZERO_UUID
        self.role = role
        if leader_id is not ...:
            self.leader_id = leader_id
        if voted_id is not ...:
            self.voted_id = voted_id
        if voted_dir is not ...:
            self.voted_directory_id = voted_dir

    def to_data(self, kraft_version: int, voter_ids=()) -> tuple:
        """Return (QuorumStateData, data_version) as FileQuorumStateStore writes it."""
        data = QuorumStateData(leader_id=-1 if self.leader_id is None else self.leader_id,
                               leader_epoch=self.epoch, voted_id=-1 if self.voted_id is None else self.voted_id)
        if kraft_version >= 1:
            data.voted_directory_id = Uuid(bytes(self.voted_directory_id))
            return data, 1
        data.cluster_id, data.applied_offset = "", 0
        data.current_voters = [QuorumStateData.Voter(voter_id=v) for v in sorted(voter_ids)]
        return data, 0

    @classmethod
    def from_data(cls, data) -> "QuorumState":
        """Rebuild the persisted part (the role is decided by the node on start-up)."""
        leader = None if data.leader_id < 0 else data.leader_id
        voted = None if data.voted_id < 0 else data.voted_id
        return cls(max(data.leader_epoch, 0), UNATTACHED, leader, voted, data.voted_directory_id or ZERO_UUID)

    def __repr__(self) -> str:
        return (f"QuorumState(epoch={self.epoch}, role={self.role}, leader={self.leader_id}, "
                f"voted={self.voted_id})")
