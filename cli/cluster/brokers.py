"""kafka-cluster describe-brokers (kraftsman): a registered broker as the reads show it, its table and its JSON.

Rules:
- The brokers come from reads.registered: DescribeCluster (v2 with fenced brokers where the server has it;
  kraftsman's controller adds epoch, incarnation, controlled shutdown and start time), the metadata log only for
  a controller that lists no brokers (Kafka's). A server that lists unfenced brokers only (below v2) is said so
  under the table; what a server does not tell is null in JSON, "-" in text.
- A start time of -1 is unknown (a Kafka server, a broker registered by Kafka's own controller): no "started at",
  no age.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass
class Broker:
    """One registered broker as the commands show it."""

    broker_id: int
    host: str | None
    port: int | None
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool | None = None
    epoch: int | None = None
    incarnation_id: str | None = None
    start_time_ms: int = -1

    @property
    def endpoint(self) -> str:
        """Return host:port, or "-" when the broker lists no endpoint."""
        return "-" if self.host is None else f"{self.host}:{self.port}"

    @property
    def active(self) -> bool:
        """Tell whether the broker is unfenced and not shutting down."""
        return not self.fenced and not self.in_controlled_shutdown


def from_registration(registration, listener: str | None = None) -> Broker:
    """Return a Broker from a metadata image's BrokerRegistration (its first endpoint, or the one named)."""
    from kraftsman.storage.protocol.uuids import uuid_str

    r = registration.record
    endpoints = list(r.end_points or ())
    endpoint = next((e for e in endpoints if e.name == listener), endpoints[0] if endpoints else None)
    return Broker(r.broker_id, endpoint.host if endpoint else None, endpoint.port if endpoint else None, r.rack,
                  bool(r.fenced), bool(r.in_controlled_shutdown), r.broker_epoch, uuid_str(r.incarnation_id),
                  registration.start_time_ms)


def iso_time(ms: int) -> str | None:
    """Return epoch milliseconds as an ISO 8601 UTC time ('2024-10-24T19:33:01.123Z'), None when unknown."""
    if ms < 0:
        return None
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def age(seconds: float) -> str:
    """Return a duration as its two largest units: '45s', '3m12s', '2h05m', '4d03h'."""
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def broker_data(b: Broker, now_ms: int) -> dict:
    """Return a Broker as JSON-ready data (start time as ms, ISO time and age in seconds)."""
    known = b.start_time_ms >= 0
    return {"id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack, "fenced": b.fenced,
            "in_controlled_shutdown": b.in_controlled_shutdown, "epoch": b.epoch, "incarnation_id": b.incarnation_id,
            "start_time_ms": b.start_time_ms, "started_at": iso_time(b.start_time_ms),
            "age_s": round((now_ms - b.start_time_ms) / 1000, 3) if known else None}


def format_table(brokers: list[Broker], now_ms: int) -> str:
    """Return describe-brokers' text table, one row per broker, columns padded to their widest cell."""
    header = ("ID", "ENDPOINT", "RACK", "FENCED", "CONTROLLED_SHUTDOWN", "EPOCH", "INCARNATION", "STARTED_AT",
              "AGE")
    rows = [header] + [_cells(b, now_ms) for b in brokers]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "".join(" ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n" for row in rows)


def _cells(b: Broker, now_ms: int) -> tuple[str, ...]:
    def text(value) -> str:
        return "-" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    started = iso_time(b.start_time_ms)
    return (str(b.broker_id), b.endpoint, text(b.rack), text(b.fenced), text(b.in_controlled_shutdown),
            text(b.epoch), text(b.incarnation_id), text(started),
            "-" if started is None else age((now_ms - b.start_time_ms) / 1000))
