"""Elections: pre-vote (KIP-996) and vote rounds, Vote and Begin/EndQuorumEpoch handling.

Rules:
- A round (prospective: pre-vote, candidate: vote) waits out its backoff, asks every other voter,
  re-asks the silent ones every retry interval, and ends WON, LOST, or at its election timeout;
  a lost or timed-out round becomes a prospective round after binary exponential backoff.
- Pre-vote requests carry the prospective's current epoch and change no state at the receiver.
  A receiver refuses a pre-vote while it is the leader or has fetched from a live leader within
  the fetch timeout; otherwise it grants when the candidate's log is at least as up to date,
  except that a prospective asking for pre-votes in the same epoch grants another prospective
  with an equally up-to-date log only if that one has the higher id (split pre-vote: when both
  granted, both became candidates, refused each other's vote and, with the remaining voter
  down, waited out their election timeouts).
- A real vote is granted at most once per epoch, never once the epoch's leader is known, and
  only to a log at least as up to date ((last epoch, end offset) compared in that order).
- A voter that cannot take a pre-vote (Kafka 3.9 speaks Vote v0-1) answers it, through the transport, with
  a top-level UNSUPPORTED_VERSION: the prospective then runs a real election at once, as Kafka 4.0's
  does, so a mixed quorum elects either kind of voter.
- Requests are validated as Kafka does: cluster id (top level), then epoch (FENCED_LEADER_EPOCH
  for an older one), voter key (INVALID_VOTER_KEY) and voter set (INCONSISTENT_VOTER_SET, static
  quorums only), at partition level with the current leader and epoch.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import Errors
from kraftsman.storage.protocol.uuids import ZERO_UUID

from . import messages as msg
from . import quorum
from .state import CANDIDATE, FOLLOWER, LEADER, OBSERVER, PROSPECTIVE, RESIGNED, VOTED


class Tally:
    """Votes of the current round."""

    __slots__ = ("pre_vote", "granted", "rejected", "backoff_until", "sent", "last_send")

    def __init__(self, pre_vote: bool, self_id: int, backoff_until: int):
        self.pre_vote, self.backoff_until = pre_vote, backoff_until
        self.granted, self.rejected = {self_id}, set()
        self.sent, self.last_send = False, 0


def start_round(node, pre_vote: bool, backoff_ms: int) -> None:
    node.tally = Tally(pre_vote, node.node_id, node.now + backoff_ms)
    node.deadline = node.tally.backoff_until + node.election_timeout()
    if backoff_ms <= 0 and pre_vote and not node.cfg.pre_vote:
        node.become_candidate()
    elif backoff_ms <= 0:
        send_votes(node)
        check_result(node)


def campaign_tick(node) -> None:
    t = node.tally
    if node.now < t.backoff_until:
        return
    if t.pre_vote and not node.cfg.pre_vote and node.voters.ids() - {node.node_id}:
        node.become_candidate()
        return
    if not t.sent:
        send_votes(node)
        check_result(node)
    elif node.now >= node.deadline:
        lose(node)
    elif node.now - t.last_send >= node.cfg.retry_backoff_ms * 2:
        send_votes(node, only_silent=True)


def send_votes(node, only_silent: bool = False) -> None:
    t, log = node.tally, node.log
    t.sent, t.last_send = True, node.now
    for voter in node.voters.nodes():
        if voter.voter_id == node.node_id or (only_silent and voter.voter_id in t.granted | t.rejected):
            continue
        body = msg.vote_request(node.cfg.cluster_id, node.epoch, node.node_id, node.cfg.directory_id,
                                voter.voter_id, voter.directory_id, log.last_epoch(), log.end_offset)
        node.send(voter.voter_id, body, pre_vote=t.pre_vote)


def check_result(node) -> None:
    t = node.tally
    result = quorum.vote_result(node.voters.ids(), t.granted, t.rejected)
    if result == quorum.WON:
        if t.pre_vote:
            node.become_candidate()
        else:
            node.become_leader(t.granted)
    elif result == quorum.LOST:
        lose(node)


def lose(node) -> None:
    node.election_retries += 1
    node.become_prospective(node.election_backoff())


def resigned_tick(node) -> None:
    """Nothing to retry: EndQuorumEpoch is best effort, followers also time out on their own."""


# ---------------------------------------------------------------- Vote


def _log_up_to_date(node, last_epoch: int, last_offset: int) -> bool:
    return (last_epoch, last_offset) >= (node.log.last_epoch(), node.log.end_offset)


def _vote_error(node, env, part) -> int:
    """Return the partition-level error for a vote request, or NONE."""
    body = env.body
    if part.candidate_id < 0 or part.candidate_epoch < 0:
        return Errors.INVALID_REQUEST
    if body.voter_id >= 0 and body.voter_id != node.node_id:
        return Errors.INVALID_VOTER_KEY
    vdir = bytes(part.voter_directory_id)
    if vdir != bytes(ZERO_UUID) and bytes(node.cfg.directory_id) not in (vdir, bytes(ZERO_UUID)):
        return Errors.INVALID_VOTER_KEY
    if part.candidate_epoch < node.epoch:
        return Errors.FENCED_LEADER_EPOCH
    if node.kraft_version == 0 and (not node.is_voter() or part.candidate_id not in node.voters):
        return Errors.INCONSISTENT_VOTER_SET
    return Errors.NONE


def _can_grant_pre_vote(node, part) -> bool:
    role = node.role
    if role == LEADER:
        return False
    if role in (FOLLOWER, OBSERVER) and node.leader_id is not None and node.fetcher.leader_alive(node):
        return False
    if _split_pre_vote(node, part):
        return part.candidate_id > node.node_id
    return _log_up_to_date(node, part.last_offset_epoch, part.last_offset)


def _split_pre_vote(node, part) -> bool:
    """Tell whether this node is itself asking for pre-votes in the request's epoch with a log exactly
    as up to date as the requester's: granting each other, both would run and split the vote."""
    t = node.tally
    return (node.role == PROSPECTIVE and t is not None and t.pre_vote and t.sent
            and part.candidate_epoch == node.epoch
            and (part.last_offset_epoch, part.last_offset) == (node.log.last_epoch(), node.log.end_offset))


def _can_grant_vote(node, candidate_id: int, log_ok: bool) -> bool:
    st = node.state
    if st.voted_id is not None:
        return st.voted_id == candidate_id
    if st.leader_id is not None or st.role in (LEADER, CANDIDATE, RESIGNED, FOLLOWER):
        return False
    return log_ok


def on_vote_request(node, env) -> None:
    body = env.body
    if not node.cluster_ok(body.cluster_id):
        node.reply(env, msg.vote_response(Errors.INCONSISTENT_CLUSTER_ID))
        return
    part = msg.partition_of(body)
    error = _vote_error(node, env, part)
    if error == Errors.NONE and not env.pre_vote and part.candidate_epoch > node.epoch:
        node.become_unattached(part.candidate_epoch)
    granted = False
    if error == Errors.NONE:
        if env.pre_vote:
            granted = _can_grant_pre_vote(node, part)
        else:
            log_ok = _log_up_to_date(node, part.last_offset_epoch, part.last_offset)
            granted = _can_grant_vote(node, part.candidate_id, log_ok)
            if granted and node.state.voted_id is None:
                _record_vote(node, part.candidate_id, part.candidate_directory_id)
    leader = -1 if node.leader_id is None else node.leader_id
    node.reply(env, msg.vote_response(Errors.NONE, error, leader, node.epoch, granted))


def _record_vote(node, candidate_id: int, candidate_dir: bytes) -> None:
    if node.role == OBSERVER:
        node.state.move(OBSERVER, voted_id=candidate_id, voted_dir=candidate_dir)
    else:
        node.become_voted(candidate_id, candidate_dir)


def on_vote_response(node, env) -> None:
    body = env.body
    if body.error_code == Errors.UNSUPPORTED_VERSION and env.pre_vote:
        _pre_vote_unsupported(node)
        return
    if body.error_code != Errors.NONE:
        return
    part = msg.partition_of(body)
    granted = part.error_code == Errors.NONE and part.vote_granted
    if part.leader_epoch > node.epoch or not granted:
        # a refusal naming this epoch's leader sends a prospective back to following it (KIP-996)
        if node.learn_leader(part.leader_epoch, part.leader_id):
            return
    t = node.tally
    if t is None or node.role not in (PROSPECTIVE, CANDIDATE) or env.pre_vote != t.pre_vote:
        return
    if part.leader_epoch != node.epoch and not (t.pre_vote and part.leader_epoch < node.epoch):
        return
    (t.granted if granted else t.rejected).add(env.src)
    check_result(node)


def _pre_vote_unsupported(node) -> None:
    """A voter cannot take pre-votes (see Rules): a prospective's round becomes a real election."""
    t = node.tally
    if t is not None and t.pre_vote and node.role == PROSPECTIVE and node.now >= t.backoff_until:
        node.become_candidate()


# ---------------------------------------------------------------- BeginQuorumEpoch


def _validate_epoch_request(node, env, name: str, voter_id: int | None = None):
    """Answer a foreign cluster and return None; else return (partition, error) of a Begin/EndQuorumEpoch."""
    if not node.cluster_ok(env.body.cluster_id):
        node.reply(env, msg.epoch_response(name, Errors.INCONSISTENT_CLUSTER_ID))
        return None
    part = msg.partition_of(env.body)
    if part.leader_id < 0 or part.leader_epoch < 0:
        return part, Errors.INVALID_REQUEST
    if part.leader_epoch < node.epoch:
        return part, Errors.FENCED_LEADER_EPOCH
    if voter_id is not None and voter_id >= 0 and voter_id != node.node_id:
        return part, Errors.INVALID_VOTER_KEY
    if node.kraft_version == 0 and part.leader_id not in node.voters:
        return part, Errors.INCONSISTENT_VOTER_SET
    return part, Errors.NONE


def _answer_epoch_request(node, env, name: str, error: int) -> None:
    """Reply with the partition error and what this node knows of the leader and epoch."""
    leader = -1 if node.leader_id is None else node.leader_id
    node.reply(env, msg.epoch_response(name, Errors.NONE, error, leader, node.epoch))


def on_begin_epoch_request(node, env) -> None:
    name = "BeginQuorumEpochResponse"
    checked = _validate_epoch_request(node, env, name, env.body.voter_id)
    if checked is None:
        return
    part, error = checked
    if error == Errors.NONE and (part.leader_epoch > node.epoch or node.leader_id is None):
        node.become_follower(part.leader_epoch, part.leader_id)
    _answer_epoch_request(node, env, name, error)


def on_begin_epoch_response(node, env) -> None:
    body = env.body
    if body.error_code != Errors.NONE:
        return
    part = msg.partition_of(body)
    if node.learn_leader(part.leader_epoch, part.leader_id):
        return
    if node.leader_state is not None and part.error_code == Errors.NONE and part.leader_epoch == node.epoch:
        node.leader_state.begin_acked.add(env.src)


def send_begin_epoch(node, voter_ids) -> None:
    for voter in node.voters.nodes():
        if voter.voter_id != node.node_id and voter.voter_id in voter_ids:
            body = msg.begin_epoch_request(node.cfg.cluster_id, node.epoch, node.node_id, voter.voter_id,
                                           voter.directory_id, node.cfg.endpoints)
            node.send(voter.voter_id, body)


# ---------------------------------------------------------------- EndQuorumEpoch


def send_end_epoch(node, preferred) -> None:
    for voter in node.voters.nodes():
        if voter.voter_id != node.node_id:
            body = msg.end_epoch_request(node.cfg.cluster_id, node.epoch, node.node_id, preferred,
                                         node.cfg.endpoints)
            node.send(voter.voter_id, body)


def _successor_delay(node, preferred_ids: list[int]) -> int:
    """Kafka's endQuorumEpochElectionBackoff: 0 for the first successor, then exponential."""
    if node.node_id not in preferred_ids:
        return node.cfg.election_backoff_max_ms
    position = preferred_ids.index(node.node_id)
    if position == 0:
        return 0
    return min(node.cfg.retry_backoff_ms << (position - 1), node.cfg.election_backoff_max_ms)


def on_end_epoch_request(node, env) -> None:
    name = "EndQuorumEpochResponse"
    checked = _validate_epoch_request(node, env, name)
    if checked is None:
        return
    part, error = checked
    if error == Errors.NONE:
        node.learn_leader(part.leader_epoch, part.leader_id)
        if node.role in (FOLLOWER, VOTED) and node.leader_id == part.leader_id and node.epoch == part.leader_epoch:
            ids = [c.candidate_id for c in part.preferred_candidates]
            node.fetcher.leader_resigned(node, _successor_delay(node, ids))
    _answer_epoch_request(node, env, name, error)


def on_end_epoch_response(node, env) -> None:
    body = env.body
    if body.error_code == Errors.NONE:
        part = msg.partition_of(body)
        node.learn_leader(part.leader_epoch, part.leader_id)
