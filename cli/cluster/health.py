"""kafka-cluster health (kraftsman): a verdict and its reasons, for playbooks (rpk's `cluster health`).

Rules:
- Healthy when every check passes: the quorum has a leader; every voter is within --max-voter-lag records of the
  leader's log end and was caught up within --max-voter-lag-ms (the leader's timestamps against this host's clock);
  at most --allow-fenced brokers are fenced or in controlled shutdown; no partition is offline (leader -1) and no
  partition's ISR is smaller than its replicas.
- The quorum comes from DescribeQuorum (the active controller), the brokers and partitions from the metadata log
  (a read-only observer); both need --bootstrap-controller.
- Exit 0 healthy, 5 unhealthy (reasons printed), 69 when nothing answers at all (a controller that answers but
  knows no leader is "no leader": unhealthy, not unreachable).
- --watch redraws the verdict every --interval seconds (clearing the screen on a terminal; one text block or one
  JSON/YAML object per check into a pipe) until Ctrl-C or --timeout; --exit-when-healthy checks until healthy and
  exits 0 (each check printed with --watch, the last one otherwise). --timeout bounds each check (request.timeout.ms
  by default) and, when given, the whole run: a run still unhealthy at its end exits 5.
- Colour (rich) only when stdout is a terminal and NO_COLOR is unset.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..common.admin import Failure
from ..common.status import ExitStatus

UNHEALTHY = ExitStatus.UNHEALTHY


@dataclass
class Report:
    """One check's verdict, its reasons and what it saw."""

    reasons: list[str] = field(default_factory=list)
    leader_id: int = -1
    leader_epoch: int = -1
    voters: list[dict] = field(default_factory=list)
    brokers: dict = field(default_factory=dict)
    partitions: dict = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        """Tell whether no check failed."""
        return not self.reasons

    def data(self) -> dict:
        """Return the report as JSON-ready data."""
        return {"healthy": self.healthy, "reasons": self.reasons, "leader_id": self.leader_id,
                "leader_epoch": self.leader_epoch, "voters": self.voters, "brokers": self.brokers,
                "partitions": self.partitions}


def check(args, ctx, deadline: float) -> Report:
    """Run every check once, before `deadline`."""
    report = Report()
    quorum = _quorum(ctx, deadline, report)
    if quorum is None:
        return report
    _check_voters(args, quorum, report)
    from .brokers import read_image

    try:
        image = read_image(ctx, deadline)
    except Failure as e:
        report.reasons.append(str(e))
        return report
    _check_brokers(args, image, report)
    _check_partitions(image, report)
    return report


def _quorum(ctx, deadline: float, report: Report):
    """Return DescribeQuorum's answer, or None after adding the reason there is no leader."""
    from ..common.admin import admin_call
    from .texts import server_words

    try:
        quorum = admin_call(ctx.admin(deadline).describe_metadata_quorum, wording=server_words)
    except Failure as e:
        if e.status != ExitStatus.UNAVAILABLE:
            raise
        if not _anyone_answers(ctx):
            raise
        report.reasons.append(f"no quorum leader: {e}")
        return None
    report.leader_id, report.leader_epoch = quorum.leader_id, quorum.leader_epoch
    if quorum.leader_id < 0:
        report.reasons.append("no quorum leader: an election is going on")
        return None
    return quorum


def _anyone_answers(ctx) -> bool:
    """Tell whether some bootstrap controller accepts a connection and answers ApiVersions (within 2 s each)."""
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.active_controller import CONNECTION_ERRORS

    for host, port in ctx.addresses:
        try:
            sc.SyncConnection.open(host, port, ctx.config, time.monotonic() + 2).close()
            return True
        except CONNECTION_ERRORS:
            continue
    return False


def _check_voters(args, quorum, report: Report) -> None:
    now_ms = int(time.time() * 1000)
    leader_end = next((v.log_end_offset for v in quorum.voters if v.replica_id == quorum.leader_id),
                      quorum.high_watermark)
    lagging = []
    for v in sorted(quorum.voters, key=lambda v: v.replica_id):
        lag = max(leader_end - v.log_end_offset, 0)
        behind_ms = None if v.last_caught_up_timestamp is None else max(now_ms - v.last_caught_up_timestamp, 0)
        is_leader = v.replica_id == quorum.leader_id
        late = not is_leader and (lag > args.max_voter_lag or behind_ms is None or behind_ms > args.max_voter_lag_ms)
        report.voters.append({"id": v.replica_id, "leader": is_leader, "log_end_offset": v.log_end_offset,
                              "lag": lag, "caught_up_ms_ago": behind_ms, "lagging": late})
        if late:
            lagging.append(f"{v.replica_id} ({lag} records behind, "
                           f"{'never' if behind_ms is None else f'{behind_ms} ms since'} caught up)")
    if lagging:
        report.reasons.append(f"lagging voters: {', '.join(lagging)} (bounds: {args.max_voter_lag} records, "
                              f"{args.max_voter_lag_ms} ms)")


def _check_brokers(args, image, report: Report) -> None:
    brokers = image.cluster.brokers
    fenced = sorted(i for i, b in brokers.items() if b.record.fenced)
    shutting = sorted(i for i, b in brokers.items() if b.record.in_controlled_shutdown and not b.record.fenced)
    report.brokers = {"registered": sorted(brokers), "fenced": fenced, "in_controlled_shutdown": shutting,
                      "allowed": args.allow_fenced}
    if len(fenced) + len(shutting) > args.allow_fenced:
        parts = ([f"fenced brokers {fenced}"] if fenced else []) + \
                ([f"brokers in controlled shutdown {shutting}"] if shutting else [])
        report.reasons.append(f"{' and '.join(parts)} (--allow-fenced {args.allow_fenced})")


def _check_partitions(image, report: Report) -> None:
    offline, under, total = [], [], 0
    for name in sorted(image.topics.by_name):
        topic = image.topics.by_name[name]
        for partition_id in sorted(topic.partitions):
            p, total = topic.partition(partition_id), total + 1
            if p.leader < 0:
                offline.append(f"{name}-{partition_id}")
            if len(p.isr) < len(p.replicas):
                under.append(f"{name}-{partition_id}")
    report.partitions = {"total": total, "offline": offline, "under_replicated": under}
    if offline:
        report.reasons.append(f"offline partitions: {_listed(offline)}")
    if under:
        report.reasons.append(f"under-replicated partitions (ISR smaller than replicas): {_listed(under)}")


def _listed(names: list[str], most: int = 10) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def format_report(report: Report) -> str:
    """Return the text verdict: a Healthy line, what was seen and the reasons."""
    lagging = [v["id"] for v in report.voters if v["lagging"]]
    leader = f"{report.leader_id} (epoch {report.leader_epoch})" if report.leader_id >= 0 else "none"
    rows = [("Healthy:", str(report.healthy).lower()), ("Quorum leader:", leader),
            ("Lagging voters:", str(lagging) if report.voters else "-")]
    if report.brokers:
        rows += [("Fenced brokers:", str(report.brokers["fenced"])),
                 ("Brokers in controlled shutdown:", str(report.brokers["in_controlled_shutdown"]))]
    if report.partitions:
        rows += [("Offline partitions:", str(len(report.partitions["offline"]))),
                 ("Under-replicated partitions:", str(len(report.partitions["under_replicated"])))]
    width = max(len(label) for label, _ in rows) + 1
    lines = [f"{label:<{width}}{value}" for label, value in rows]
    lines += [f"Reason: {reason}" for reason in report.reasons]
    return "\n".join(lines) + "\n"


def health(args, ctx) -> int:
    """Check the cluster once, or again and again (--watch, --exit-when-healthy); exit 0 healthy, 5 not."""
    if not ctx.controllers:
        raise Failure("health reads the quorum and the metadata log: it needs --bootstrap-controller")
    repeat = args.watch or args.exit_when_healthy
    round_s = ctx.config.request_timeout_ms / 1000           # --timeout, else request.timeout.ms
    end = ctx.deadline if args.timeout is not None or not repeat else float("inf")
    while True:
        report = _one_check(args, ctx, min(end, time.monotonic() + round_s), repeat)
        done = not repeat or (args.exit_when_healthy and report.healthy) or time.monotonic() >= end
        if args.watch or done:
            _show(report, ctx, redraw=args.watch)
        if done:
            return ExitStatus.OK if report.healthy else UNHEALTHY
        time.sleep(max(0.0, min(args.interval, end - time.monotonic())))


def _one_check(args, ctx, deadline: float, repeat: bool) -> Report:
    """Run one check; when repeating, a cluster that cannot be reached is one more reason, not the end."""
    try:
        return check(args, ctx, deadline)
    except Failure as e:
        if not repeat or e.status != ExitStatus.UNAVAILABLE:
            raise
        return Report(reasons=[f"cannot reach the cluster: {e}"])


def _show(report: Report, ctx, redraw: bool) -> None:
    """Print one verdict: text (redrawn on a terminal, coloured when allowed) or one JSON/YAML object."""
    from ..common.output import structured

    env = ctx.env
    if structured(ctx.args.output):
        ctx.emit("", status=ExitStatus.OK if report.healthy else UNHEALTHY, **report.data())
        return
    text = format_report(report)
    if redraw and env.stdout_isatty:
        env.stdout.write("\x1b[H\x1b[2J")
    if env.stdout_isatty and not env.env.get("NO_COLOR"):
        from rich.console import Console
        from rich.text import Text

        first, rest = text.split("\n", 1)
        Console(file=env.stdout, highlight=False).print(Text(first, style="bold green" if report.healthy
                                                             else "bold red"))
        env.stdout.write(rest)
    else:
        env.stdout.write(text)
    env.stdout.flush()
