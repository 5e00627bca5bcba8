"""kafka-cluster health (kraftsman): a verdict and its reasons, for playbooks (rpk's `cluster health`).

Rules:
- Healthy when every check passes: the quorum has a leader; every voter is within --max-voter-lag records of the
  leader's log end and was caught up within --max-voter-lag-ms (the leader's timestamps against this host's clock);
  at most --allow-fenced brokers are fenced or in controlled shutdown; no partition is offline (leader -1) and no
  partition's ISR is smaller than its replicas.
- The quorum comes from DescribeQuorum (the active controller), the brokers from DescribeCluster and the partition
  counts from the metadata log, read as a non-replica into counts (reads.py): nothing is left on the cluster.
  All need --bootstrap-controller.
- Exit 0 healthy, 5 unhealthy (reasons printed), 69 when nothing answers at all (a controller that answers but
  knows no leader is "no leader": unhealthy, not unreachable).
- --watch redraws the verdict every --interval seconds (clearing the screen on a terminal; one text block or one
  JSON/YAML object per check into a pipe), each with the time it was checked, until Ctrl-C or --timeout;
  --exit-when-healthy checks until healthy and exits 0 (each check printed with --watch, the last one otherwise,
  a progress line on a terminal's stderr meanwhile). Repeated checks keep one log reader: each fetches only what
  was committed since the previous one.
- --timeout bounds each check (request.timeout.ms by default) and, when given, the whole run: no check starts after
  it, and a run still unhealthy at its end exits 5 with the verdict of its last complete check (a check the end of
  --timeout cut short is no verdict, unless it is the only one).
- Colour (rich) only when stdout is a terminal and NO_COLOR is unset.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..common.admin import Failure
from ..common.status import ExitStatus

UNHEALTHY = ExitStatus.UNHEALTHY
LISTED = 10


@dataclass
class Report:
    """One check's verdict, its reasons and what it saw."""

    reasons: list[str] = field(default_factory=list)
    leader_id: int = -1
    leader_epoch: int = -1
    voters: list[dict] = field(default_factory=list)
    brokers: dict = field(default_factory=dict)
    partitions: dict = field(default_factory=dict)
    counts: tuple[int, int] | None = None   # offline and under-replicated partitions, when fewer are named
    cut_short: bool = False                 # a step failed once its deadline had passed
    checked_at_ms: int = -1

    @property
    def healthy(self) -> bool:
        """Tell whether no check failed."""
        return not self.reasons

    def data(self) -> dict:
        """Return the report as JSON-ready data."""
        return {"healthy": self.healthy, "reasons": self.reasons, "leader_id": self.leader_id,
                "leader_epoch": self.leader_epoch, "voters": self.voters, "brokers": self.brokers,
                "partitions": self.partitions}


def check(args, ctx, deadline: float, reader=None) -> Report:
    """Run every check once, before `deadline` (partitions through `reader`, a reads.LogReader, made when None)."""
    from .reads import LogReader

    report = Report()
    quorum = _quorum(ctx, deadline, report)
    if quorum is None:
        return report
    _check_voters(args, quorum, report)
    own = reader is None
    reader = LogReader(ctx, partitions=True) if own else reader
    try:
        _check_log(args, ctx, deadline, reader, report)
    except Failure as e:
        report.reasons.append(str(e))
        report.cut_short = time.monotonic() >= deadline
    finally:
        if own:
            reader.close()
    return report


def _check_log(args, ctx, deadline: float, reader, report: Report) -> None:
    """Check the brokers (DescribeCluster, else the log) and the partitions (the log)."""
    from .reads import described, image_brokers

    found = described(ctx, deadline)
    view = reader.read(deadline)
    _check_brokers(args, found if found is not None else image_brokers(view.image), report)
    _check_partitions(reader.counts, view.image, args.output, report)


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
        report.cut_short = time.monotonic() >= deadline
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


def _check_brokers(args, found, report: Report) -> None:
    brokers = found.by_id
    fenced = sorted(i for i, b in brokers.items() if b.fenced)
    shutting = sorted(i for i, b in brokers.items() if b.in_controlled_shutdown and not b.fenced)
    report.brokers = {"registered": sorted(brokers), "fenced": fenced, "in_controlled_shutdown": shutting,
                      "allowed": args.allow_fenced}
    if len(fenced) + len(shutting) > args.allow_fenced:
        parts = ([f"fenced brokers {fenced}"] if fenced else []) + \
                ([f"brokers in controlled shutdown {shutting}"] if shutting else [])
        report.reasons.append(f"{' and '.join(parts)} (--allow-fenced {args.allow_fenced})")


def _check_partitions(counts, image, output: str, report: Report) -> None:
    """Name the offline and under-replicated partitions: all of them for JSON/YAML, the first LISTED for text."""
    from ..common.output import structured

    names = {t.topic_id: t.name for t in image.topics.by_id.values()}
    limit = None if structured(output) else LISTED
    offline, under = counts.names(names, True, limit), counts.names(names, False, limit)
    report.partitions = {"total": counts.total, "offline": offline, "under_replicated": under}
    report.counts = (counts.offline, counts.under_replicated)
    if counts.offline:
        report.reasons.append(f"offline partitions: {_listed(offline, counts.offline)}")
    if counts.under_replicated:
        report.reasons.append(f"under-replicated partitions (ISR smaller than replicas): "
                              f"{_listed(under, counts.under_replicated)}")


def _listed(names: list[str], count: int) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {count - LISTED} more" if count > LISTED else "")


def format_report(report: Report, stamped: bool = False) -> str:
    """Return the text verdict: a Healthy line, what was seen and the reasons (first the check's time, stamped)."""
    from .brokers import iso_time

    lagging = [v["id"] for v in report.voters if v["lagging"]]
    leader = f"{report.leader_id} (epoch {report.leader_epoch})" if report.leader_id >= 0 else "none"
    rows = [("Healthy:", str(report.healthy).lower()), ("Quorum leader:", leader),
            ("Lagging voters:", str(lagging) if report.voters else "-")]
    if report.brokers:
        rows += [("Fenced brokers:", str(report.brokers["fenced"])),
                 ("Brokers in controlled shutdown:", str(report.brokers["in_controlled_shutdown"]))]
    if report.partitions:
        offline, under = report.counts or (len(report.partitions["offline"]),
                                           len(report.partitions["under_replicated"]))
        rows += [("Offline partitions:", str(offline)), ("Under-replicated partitions:", str(under))]
    if stamped:
        rows.insert(0, ("Checked at:", iso_time(report.checked_at_ms)))
    width = max(len(label) for label, _ in rows) + 1
    lines = [f"{label:<{width}}{value}" for label, value in rows]
    lines += [f"Reason: {reason}" for reason in report.reasons]
    return "\n".join(lines) + "\n"
