"""kafka-cluster health's runs: one check, --watch and --exit-when-healthy, and how each verdict is shown.

Rules:
- The checks and the verdict's text are health.py's; this module repeats them and prints (see health.py's Rules
  for --watch, --exit-when-healthy and --timeout).
- Repeated checks share one LogReader (one observer: each check fetches only what was committed since the last).
- The verdict after --timeout is the last complete check: a check whose step failed because the end of --timeout
  had come is not one (unless no check completed), and no check starts once --timeout has passed.
- --watch: each verdict carries the time it was checked ("Checked at:" first in text, "checked_at" in JSON/YAML,
  as with --exit-when-healthy); on a terminal the screen is cleared before each. --exit-when-healthy without
  --watch: a progress line on a terminal's stderr while it waits (the first reason and the time waited), cleared
  before the verdict.
"""
from __future__ import annotations

import time

from ..common.admin import Failure
from ..common.status import ExitStatus
from . import health as checks
from .health import UNHEALTHY, Report, format_report
from .progress import ProgressLine


def health(args, ctx) -> int:
    """Check the cluster once, or again and again (--watch, --exit-when-healthy); exit 0 healthy, 5 not."""
    if not ctx.controllers:
        raise Failure("health reads the quorum and the metadata log: it needs --bootstrap-controller")
    if not (args.watch or args.exit_when_healthy):
        report = checks.check(args, ctx, ctx.deadline)
        _show(report, ctx)
        return ExitStatus.OK if report.healthy else UNHEALTHY
    verdict = _repeat(args, ctx)
    if not args.watch:
        _show(verdict, ctx, stamped=True)
    return ExitStatus.OK if verdict.healthy else UNHEALTHY


def _repeat(args, ctx) -> Report:
    """Check until healthy (--exit-when-healthy), Ctrl-C or the end of --timeout; return the verdict."""
    from .reads import LogReader

    round_s = ctx.config.request_timeout_ms / 1000           # --timeout, else request.timeout.ms
    end = ctx.deadline if args.timeout is not None else float("inf")
    reader, progress, started, verdict = LogReader(ctx, partitions=True), ProgressLine(ctx.env), time.monotonic(), None
    try:
        while True:
            deadline = min(end, time.monotonic() + round_s)
            report = _one_check(args, ctx, deadline, reader)
            if verdict is None or not (report.cut_short and deadline >= end):
                verdict = report
                if args.watch:
                    _show(report, ctx, redraw=True, stamped=True)
            if (args.exit_when_healthy and verdict.healthy) or time.monotonic() >= end:
                return verdict
            if not args.watch:
                progress.show(f"waiting for the cluster to be healthy: {verdict.reasons[0]}, "
                              f"{time.monotonic() - started:.0f} s")
            time.sleep(max(0.0, min(args.interval, end - time.monotonic())))
            if time.monotonic() >= end:
                return verdict
    finally:
        progress.clear()
        reader.close()


def _one_check(args, ctx, deadline: float, reader) -> Report:
    """Run one check; a cluster that cannot be reached is one more reason, not the end."""
    try:
        report = checks.check(args, ctx, deadline, reader)
    except Failure as e:
        if e.status != ExitStatus.UNAVAILABLE:
            raise
        report = Report(reasons=[f"cannot reach the cluster: {e}"], cut_short=time.monotonic() >= deadline)
    report.checked_at_ms = int(time.time() * 1000)
    return report


def _show(report: Report, ctx, redraw: bool = False, stamped: bool = False) -> None:
    """Print one verdict: text (redrawn on a terminal, coloured when allowed) or one JSON/YAML object."""
    from ..common.output import structured
    from .brokers import iso_time

    env = ctx.env
    if structured(ctx.args.output):
        stamp = {"checked_at": iso_time(report.checked_at_ms)} if stamped else {}
        ctx.emit("", status=ExitStatus.OK if report.healthy else UNHEALTHY, **report.data(), **stamp)
        return
    text = format_report(report, stamped=stamped and ctx.args.watch)
    if redraw and env.stdout_isatty:
        env.stdout.write("\x1b[H\x1b[2J")
    if env.stdout_isatty and not env.env.get("NO_COLOR"):
        from rich.console import Console
        from rich.text import Text

        head, first, rest = _split_healthy_line(text)
        env.stdout.write(head)
        Console(file=env.stdout, highlight=False).print(Text(first, style="bold green" if report.healthy
                                                             else "bold red"))
        env.stdout.write(rest)
    else:
        env.stdout.write(text)
    env.stdout.flush()


def _split_healthy_line(text: str) -> tuple[str, str, str]:
    """Return (the lines before the Healthy line, the Healthy line, the rest)."""
    at = text.index("Healthy:")
    line_end = text.index("\n", at)
    return text[:at], text[at:line_end], text[line_end + 1:]
