"""kafka-cluster wait (kraftsman): block until a broker reaches a state, for playbooks (a rolling restart).

Rules:
- States: registered; unregistered; fenced (registered and fenced); unfenced (registered, unfenced and not in
  controlled shutdown). --restarted-after TIME also needs the broker's start time (kraftsman's, from the metadata)
  later than TIME; --incarnation-changed-from ID an incarnation id other than ID.
- With --bootstrap-controller the state comes from the metadata log: an observer catches up once, then long-polls
  the leader (Fetch waits up to 500 ms for new records), so a change is seen as soon as it commits; leader changes
  are followed with the observer's own backoff. With --bootstrap-server it comes from DescribeCluster (unfenced
  brokers only, so only --state unfenced, without --incarnation-changed-from), polled with a backoff doubling from
  250 ms to 2 s.
- --timeout bounds the whole wait (300 s when neither the flag, a variable nor a profile gives one).
- Exit 0 when reached; 75 when the time runs out first; 69 when the cluster cannot be reached at all (nothing ever
  answered); 1 for a combination the bootstrap kind cannot serve.
- On a terminal one progress line on stderr is redrawn in place; nothing else goes to stderr unless it fails.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from ..common.admin import Failure
from ..common.status import ExitStatus
from .brokers import Broker, broker_data, from_registration, iso_time

TIMED_OUT = ExitStatus.TIMED_OUT      # BSD sysexits EX_TEMPFAIL: not yet, try again later
DEFAULT_TIMEOUT_S = 300.0
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.25, 2.0


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

    def reached(self, broker: Broker | None) -> bool:
        """Tell whether `broker` (None: not registered) is in the state asked."""
        if self.state == "unregistered":
            return broker is None
        if broker is None or (self.state == "fenced" and not broker.fenced) or \
                (self.state == "unfenced" and not broker.active):
            return False
        if self.after_ms is not None and broker.start_time_ms <= self.after_ms:
            return False
        return self.incarnation is None or broker.incarnation_id != self.incarnation

    def describe(self) -> str:
        """Return the goal in words: 'unfenced, started after <time>'."""
        words = [self.state]
        if self.after_ms is not None:
            words.append(f"started after {iso_time(self.after_ms)}")
        if self.incarnation is not None:
            words.append(f"with an incarnation other than {self.incarnation}")
        return ", ".join(words)


def state_of(broker: Broker | None, missing: str = "not registered") -> str:
    """Return where a broker stands, in words (`missing` when it is not listed)."""
    if broker is None:
        return missing
    state = "in controlled shutdown" if broker.in_controlled_shutdown else "fenced" if broker.fenced else "unfenced"
    started = iso_time(broker.start_time_ms)
    details = [f"incarnation {broker.incarnation_id}"] if broker.incarnation_id else []
    details += [f"started at {started}"] if started else []
    return state + (f" ({', '.join(details)})" if details else "")


class _Metadata:
    """Broker states from the metadata log (bootstrap controllers), through one observer."""

    missing = "not registered"

    def __init__(self, ctx):
        from kraftsman.controller.client.observer import Observer

        self.ctx = ctx
        self.observer = Observer(ctx.config, bootstrap=ctx.addresses, fetch_max_wait_ms=500)
        self.caught_up = False

    def next(self, broker_id: int) -> Broker | None:
        """Return the broker as the newest committed image has it (catching up first, then one long poll)."""
        from kraftsman.controller.client.observer import ObserverUnavailable

        if not self.caught_up:
            try:
                self.observer.catch_up(self.ctx.deadline)
            except ObserverUnavailable as e:
                status = TIMED_OUT if self.observer.contacted else ExitStatus.UNAVAILABLE
                raise Failure(f"cannot read the metadata log: {e}", status) from None
            self.caught_up = True
        else:
            self.observer.poll(self.ctx.deadline)
        registration = self.observer.view.image.cluster.brokers.get(broker_id)
        return None if registration is None else from_registration(registration)

    def close(self) -> None:
        self.observer.close()


class _DescribeCluster:
    """Unfenced brokers from DescribeCluster (bootstrap servers), polled with a backoff."""

    missing = "not listed by DescribeCluster (fenced or not registered)"

    def __init__(self, ctx):
        self.ctx, self.backoff, self.answered, self.last = ctx, 0.0, False, None

    def next(self, broker_id: int) -> Broker | None:
        """Return the broker when DescribeCluster lists it, else None (fenced or not registered)."""
        from .texts import describe_cluster

        time.sleep(max(0.0, min(self.backoff, self.ctx.deadline - time.monotonic())))
        self.backoff = min(max(self.backoff * 2, FIRST_BACKOFF_S), MAX_BACKOFF_S)
        if self.answered and time.monotonic() >= self.ctx.deadline:
            return self.last
        try:
            info = describe_cluster(self.ctx, controllers=False)
        except Failure as e:
            if not self.answered or e.status != ExitStatus.UNAVAILABLE:
                raise
            return self.last    # a connection lost after the first answer: keep polling until the deadline
        self.answered = True
        node = next((n for n in info.nodes if n.node_id == broker_id), None)
        self.last = None if node is None else Broker(node.node_id, node.host, node.port, node.rack, False, False,
                                                     start_time_ms=node.start_time_ms)
        return self.last

    def close(self) -> None:
        pass


def _goal(args, ctx) -> Goal:
    after = parse_time(args.restarted_after) if args.restarted_after is not None else None
    goal = Goal(args.id, args.state, after, args.incarnation_changed_from)
    if not ctx.controllers and (goal.state != "unfenced" or goal.incarnation is not None):
        raise Failure("--bootstrap-server tells unfenced brokers only (DescribeCluster): --state registered, "
                      "unregistered and fenced, and --incarnation-changed-from, need --bootstrap-controller")
    return goal


class _Progress:
    """One progress line on a terminal (stderr), redrawn in place."""

    def __init__(self, env):
        self.env, self.shown = env, False

    def show(self, text: str) -> None:
        if self.env.stderr_isatty:
            self.env.stderr.write("\r\x1b[K" + text)
            self.env.stderr.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.env.stderr.write("\r\x1b[K")
            self.env.stderr.flush()


def wait(args, ctx) -> int:
    """Wait until broker --id reaches --state; print where it stands."""
    goal = _goal(args, ctx)
    started = time.monotonic()
    if args.timeout is None:
        ctx.deadline = started + DEFAULT_TIMEOUT_S
    source = _Metadata(ctx) if ctx.controllers else _DescribeCluster(ctx)
    progress = _Progress(ctx.env)
    try:
        broker = _loop(goal, source, ctx, progress, started)
    finally:
        progress.clear()
        source.close()
    waited = time.monotonic() - started
    ctx.emit(f"Broker {goal.broker_id} is {state_of(broker, source.missing)}, after {waited:.1f} s.",
             broker_id=goal.broker_id, state=goal.state, reached=True, waited_s=round(waited, 3),
             broker=None if broker is None else broker_data(broker, int(time.time() * 1000)))
    return ExitStatus.OK


def _loop(goal: Goal, source, ctx, progress: _Progress, started: float) -> Broker | None:
    while True:
        broker = source.next(goal.broker_id)
        if goal.reached(broker):
            return broker
        elapsed = time.monotonic() - started
        if time.monotonic() >= ctx.deadline:
            raise Failure(f"Broker {goal.broker_id} did not become {goal.describe()} within {elapsed:.0f} s: it is "
                          f"{state_of(broker, source.missing)}.", TIMED_OUT)
        state = state_of(broker, source.missing)
        progress.show(f"waiting for broker {goal.broker_id} to be {goal.describe()}: {state}, {elapsed:.0f} s")
