"""kafka-cluster wait (kraftsman): block until a broker reaches a state, for playbooks (a rolling restart).

Rules:
- States: registered; unregistered; fenced (registered and fenced); unfenced (registered, unfenced and not in
  controlled shutdown). --restarted-after TIME also needs a restart after TIME; --incarnation-changed-from ID an
  incarnation id other than ID.
- The state comes from DescribeCluster (reads.described), polled with a backoff doubling from 100 ms to 1 s: with
  fenced brokers where the server speaks v2 (kraftsman's controller, Kafka 4.x), unfenced ones only below. A
  controller that lists no brokers (Kafka's) is followed in its metadata log instead: a non-replica LogReader
  catches up once, then long-polls (Fetch waits up to 500 ms), so a change is seen as soon as it commits.
- A restart after TIME: the broker's start time (kraftsman's, in the metadata) is later than TIME. A server that
  tells no start time (Kafka's brokers and controllers) leaves the wait to see the restart: the broker must be seen
  gone after TIME (not listed, fenced, in controlled shutdown, or its own endpoint, given as a bootstrap address,
  refusing) and then back in the state asked. A restart over before the wait's first look is not seen: start the
  wait before the restart ends.
- What a server cannot tell is refused at its first answer (exit 1): the states but unfenced when it lists
  unfenced brokers only, --incarnation-changed-from when it tells no incarnation.
- --timeout bounds the whole wait (300 s when neither the flag, a variable nor a profile gives one).
- Exit 0 when reached; 75 when the time runs out first; 69 when the cluster cannot be reached at all (nothing ever
  answered).
- On a terminal one progress line on stderr is redrawn in place; nothing else goes to stderr unless it fails.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from ..common.admin import Failure
from ..common.status import ExitStatus
from .brokers import Broker, broker_data, from_registration, iso_time
from .progress import ProgressLine

TIMED_OUT = ExitStatus.TIMED_OUT      # BSD sysexits EX_TEMPFAIL: not yet, try again later
DEFAULT_TIMEOUT_S = 300.0
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.1, 1.0
MISSING, UNLISTED = "not registered", "not listed by DescribeCluster (fenced or not registered)"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def parse_time(text: str) -> int:
    """Return TIME (epoch milliseconds, or an ISO 8601 time, local when it has no offset) as epoch ms."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return int(datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        raise ValueError(f"{text!r} is neither an ISO 8601 time nor milliseconds since the Unix epoch") from None


@dataclass(frozen=True)
class Goal:
    """What `wait` waits for."""

    broker_id: int
    state: str
    after_ms: int | None = None
    incarnation: str | None = None

    def in_state(self, broker: Broker | None) -> bool:
        """Tell whether `broker` (None: not registered) is in the state asked, restart aside."""
        if self.state == "unregistered":
            return broker is None
        if broker is None or (self.state == "fenced" and not broker.fenced) or \
                (self.state == "unfenced" and not broker.active):
            return False
        return self.incarnation is None or broker.incarnation_id != self.incarnation

    def reached(self, broker: Broker | None, restart_seen: bool = False) -> bool:
        """Tell whether `broker` is in the state asked and, with --restarted-after, restarted after TIME: by its
        start time, or (none known) by a restart the wait saw."""
        if not self.in_state(broker):
            return False
        if self.after_ms is None:
            return True
        return broker.start_time_ms > self.after_ms if broker.start_time_ms >= 0 else restart_seen

    def describe(self) -> str:
        """Return the goal in words: 'unfenced, started after <time>'."""
        words = [self.state]
        if self.after_ms is not None:
            words.append(f"started after {iso_time(self.after_ms)}")
        if self.incarnation is not None:
            words.append(f"with an incarnation other than {self.incarnation}")
        return ", ".join(words)


def state_of(broker: Broker | None, missing: str = MISSING) -> str:
    """Return where a broker stands, in words (`missing` when it is not listed)."""
    if broker is None:
        return missing
    state = "in controlled shutdown" if broker.in_controlled_shutdown else "fenced" if broker.fenced else "unfenced"
    started = iso_time(broker.start_time_ms)
    details = [f"incarnation {broker.incarnation_id}"] if broker.incarnation_id else []
    details += [f"started at {started}"] if started else []
    return state + (f" ({', '.join(details)})" if details else "")


class _Described:
    """Broker states from DescribeCluster, polled with a backoff; None from next() until a controller that lists no
    brokers is found (then `needs_log`)."""

    def __init__(self, ctx):
        self.ctx, self.backoff, self.answered, self.last = ctx, 0.0, False, None
        self.missing, self.needs_log, self.refused_all = MISSING, False, False

    def next(self, broker_id: int) -> Broker | None:
        """Return the broker as the server lists it now (None: not listed)."""
        from .reads import described

        time.sleep(max(0.0, min(self.backoff, self.ctx.deadline - time.monotonic())))
        self.backoff = min(max(self.backoff * 2, FIRST_BACKOFF_S), MAX_BACKOFF_S)
        if self.answered and time.monotonic() >= self.ctx.deadline:
            return self.last
        self.refused_all = False
        try:
            found = described(self.ctx, self.ctx.deadline)
        except Failure as e:
            if not self.answered or e.status != ExitStatus.UNAVAILABLE:
                raise
            self.refused_all = True
            return self.last    # a connection lost after the first answer: keep polling until the deadline
        if found is None:
            self.needs_log = True
            return None
        self.answered, self.missing = True, MISSING if found.complete else UNLISTED
        self.last = found.by_id.get(broker_id)
        return self.last

    def close(self) -> None:
        pass


class _Logged:
    """Broker states from the metadata log of a controller that lists no brokers, through one LogReader."""

    missing, needs_log, refused_all = MISSING, False, False

    def __init__(self, ctx):
        from .reads import LogReader

        self.ctx, self.caught_up = ctx, False
        self.reader = LogReader(ctx, partitions=False, fetch_max_wait_ms=500)

    def next(self, broker_id: int) -> Broker | None:
        """Return the broker as the newest committed image has it (catching up first, then one long poll)."""
        try:
            view = self.reader.poll(self.ctx.deadline) if self.caught_up else self.reader.read(self.ctx.deadline)
        except Failure as e:
            if e.status == ExitStatus.UNAVAILABLE and self.reader.contacted:
                raise Failure(str(e), TIMED_OUT) from None
            raise
        self.caught_up = True
        registration = view.image.cluster.brokers.get(broker_id)
        return None if registration is None else from_registration(registration)

    def close(self) -> None:
        self.reader.close()


def _check_answer(goal: Goal, source, broker: Broker | None) -> None:
    """Refuse what the server's answers cannot tell (see Rules)."""
    if source.missing == UNLISTED and goal.state != "unfenced":
        raise Failure(f"this server's DescribeCluster lists unfenced brokers only (below v2): --state {goal.state} "
                      f"needs --bootstrap-controller or a server with DescribeCluster v2")
    if goal.incarnation is not None and broker is not None and broker.incarnation_id is None:
        raise Failure("this server tells no incarnation id (a Kafka server): --incarnation-changed-from needs "
                      "--bootstrap-controller on a kraftsman quorum")


def wait(args, ctx) -> int:
    """Wait until broker --id reaches --state; print where it stands."""
    after = parse_time(args.restarted_after) if args.restarted_after is not None else None
    goal = Goal(args.id, args.state, after, args.incarnation_changed_from)
    started = time.monotonic()
    if args.timeout is None:
        ctx.deadline = started + DEFAULT_TIMEOUT_S
    source = _Described(ctx)
    progress = ProgressLine(ctx.env)
    try:
        broker, source = _loop(goal, source, ctx, progress, started)
    finally:
        progress.clear()
        source.close()
    waited = time.monotonic() - started
    ctx.emit(f"Broker {goal.broker_id} is {state_of(broker, source.missing)}, after {waited:.1f} s.",
             broker_id=goal.broker_id, state=goal.state, reached=True, waited_s=round(waited, 3),
             broker=None if broker is None else broker_data(broker, int(time.time() * 1000)))
    return ExitStatus.OK


def _loop(goal: Goal, source, ctx, progress: ProgressLine, started: float):
    restart_seen, checked = False, False
    while True:
        broker = source.next(goal.broker_id)
        if source.needs_log:
            source = _Logged(ctx)
            continue
        if not checked:
            _check_answer(goal, source, broker)
            checked = True
        restart_seen = restart_seen or _looks_down(goal, broker, source, ctx)
        if goal.reached(broker, restart_seen):
            return broker, source
        elapsed = time.monotonic() - started
        state = state_of(broker, source.missing)
        if time.monotonic() >= ctx.deadline:
            raise Failure(f"Broker {goal.broker_id} did not become {goal.describe()} within {elapsed:.0f} s: it is "
                          f"{state}{_unseen_restart(goal, broker, restart_seen)}.", TIMED_OUT)
        progress.show(f"waiting for broker {goal.broker_id} to be {goal.describe()}: {state}, {elapsed:.0f} s")


def _looks_down(goal: Goal, broker: Broker | None, source, ctx) -> bool:
    """Tell whether this look saw the broker gone (for a restart after TIME, when no start time is known)."""
    if goal.after_ms is None or time.time() * 1000 <= goal.after_ms:
        return False
    if source.refused_all:
        last = source.last
        return last is not None and any(_same_endpoint((last.host, last.port), a) for a in ctx.addresses)
    return broker is None or broker.fenced or bool(broker.in_controlled_shutdown)


def _same_endpoint(a: tuple, b: tuple) -> bool:
    """Tell whether two (host, port) name the same endpoint (loopback names alike)."""
    return a[1] == b[1] and (a[0] == b[0] or {a[0], b[0]} <= LOOPBACK)


def _unseen_restart(goal: Goal, broker: Broker | None, restart_seen: bool) -> str:
    """Explain, when the state is reached but no start time tells of a restart, what the wait still lacks."""
    if goal.after_ms is None or not goal.in_state(broker) or broker.start_time_ms >= 0 or restart_seen:
        return ""
    return ("; the server tells no start time, and the wait has not seen the broker restart (gone, then back) "
            "since it began")
