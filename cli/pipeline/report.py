"""The HTML report of `kafka-metadata-export --report FILE.html`: pictures drawn from the tables.

Per cluster: each broker's fenced / unfenced / controlled-shutdown timeline, ISR shrinks and
expansions and reassignments over time, topic creations and deletions, config changes, and two small
tables (the brokers fenced most often, the partitions whose ISR shrank most often). The page holds
everything inline (PNG pictures as data: URIs, CSS in the page), so it opens with no network.

Input: {cluster id: {"broker_events" | "isr_changes" | "topic_events" | "config_changes": [row dict]}},
the rows gathered by spark_job.report_rows from the written tables (metadata log events only; the
copies of one cluster's log kept by each of its nodes counted once), times as datetimes in UTC.

Rules:
- No pyspark here; matplotlib (part of the Spark extra) imported inside functions, Agg backend.
- Each drawn series carries a gid naming what it shows ("broker 2 fenced", "isr shrink", ...), so
  tests count what was drawn.
"""
from __future__ import annotations

import base64
import html
import io
from collections import Counter
from datetime import datetime, timedelta, timezone

from .tables import UNKNOWN_CLUSTER

STATE_COLORS = {"fenced": "#d62728", "unfenced": "#2ca02c", "controlled_shutdown": "#ff7f0e"}
_STATE_Z = {"unfenced": 2, "controlled_shutdown": 3, "fenced": 4}
NEXT_STATE = {"fence": "fenced", "unfence": "unfenced", "controlled_shutdown": "controlled_shutdown"}
PICTURES = ("brokers", "partitions", "topics", "configs")
STACK_SLOTS = 300   # events within 1/300 of a picture's time range share a column
LABEL_SLOTS = 60    # columns within 1/60 of the range share one count above them


def broker_intervals(events: list[dict], end: datetime) -> dict[int, list[tuple[str, datetime, datetime]]]:
    """Return broker id -> [(state, start, stop)] from its events in log order; the last state of a
    registered broker runs to `end` (the last event seen in the cluster)."""
    states: dict[int, tuple[str, datetime] | None] = {}
    out: dict[int, list] = {}
    for e in events:
        broker, event, when = e["broker_id"], e["event"], e["timestamp"]
        current = states.get(broker)
        if event == "register":
            new = "fenced" if e.get("fenced") in (True, None) else "unfenced"
        elif event == "unregister":
            new = None
        else:
            new = NEXT_STATE.get(event, current[0] if current else None)
        if current is not None and (new is None or new != current[0]):
            out.setdefault(broker, []).append((current[0], current[1], when))
        if new is None:
            states[broker] = None
        elif current is None or new != current[0]:
            states[broker] = (new, when)
    for broker, current in states.items():
        if current is not None:
            out.setdefault(broker, []).append((current[0], current[1], end))
        out.setdefault(broker, [])
    return out


def _figure(title: str, rows: int):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, max(2.2, 0.45 * rows + 1.6)), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, loc="left", fontsize=11)
    return fig, ax


def _time_axis(ax) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(tz=timezone.utc)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=timezone.utc))
    ax.set_xlabel("time (UTC)")
    ax.grid(axis="x", alpha=0.3)


def broker_figure(events: list[dict]):
    """Draw each broker's states as bars over time (one bar series per broker and state)."""
    import matplotlib.dates as mdates

    times = [e["timestamp"] for e in events if e["timestamp"] is not None]
    intervals = broker_intervals([e for e in events if e["timestamp"] is not None], max(times) if times else None)
    brokers = sorted(intervals)
    fig, ax = _figure("Brokers: fenced, unfenced, in controlled shutdown", len(brokers))
    if not brokers:
        return _empty(fig, ax, "no broker events in the metadata log")
    span = (mdates.date2num(max(times)) - mdates.date2num(min(times))) or 1 / 1440
    for y, broker in enumerate(brokers):
        for state, color in STATE_COLORS.items():
            # short states (a broker restart is fenced for seconds) get a visible width, and are drawn on top
            bars = [(mdates.date2num(a), max(mdates.date2num(b) - mdates.date2num(a), span / 300))
                    for s, a, b in intervals[broker] if s == state]
            if bars:
                ax.broken_barh(bars, (y - 0.35, 0.7), facecolors=color, gid=f"broker {broker} {state}",
                               label=state.replace("_", " "), zorder=_STATE_Z[state])
    ax.set_yticks(range(len(brokers)), [f"broker {b}" for b in brokers])
    _legend(ax)
    _time_axis(ax)
    return fig


def _legend(ax) -> None:
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    if unique:
        ax.legend(unique.values(), unique.keys(), loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=len(unique),
                  fontsize=8, frameon=False)


def _empty(fig, ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666")
    ax.set_xticks([])
    ax.set_yticks([])
    return fig


def stacked(times: list[datetime], slots: int = STACK_SLOTS) -> tuple[list[float], list[tuple[datetime, int]]]:
    """Return a vertical offset in (-0.4, 0.4) for each time, so that events falling in one of `slots` equal
    spans of the times' range stand in a column, one marker each, rather than on one spot; and the counts to
    write above the columns as (time, how many): neighbouring columns (within LABEL_SLOTS of the range) share
    one count, so that their numbers do not overlap."""
    if not times:
        return [], []
    low, width = min(times), (max(times) - min(times)) / slots
    spans: dict[int, list[int]] = {}
    for i, t in enumerate(times):
        spans.setdefault(int((t - low) / width) if width else 0, []).append(i)
    offsets = [0.0] * len(times)
    for members in spans.values():
        n = len(members)
        for k, i in enumerate(members):
            offsets[i] = 0.0 if n == 1 else -0.38 + 0.76 * k / (n - 1)
    labels: list[list] = []
    for span in sorted(spans):
        if labels and span - labels[-1][2] <= slots // LABEL_SLOTS:
            labels[-1][1] += len(spans[span])
            labels[-1][2] = span
        else:
            labels.append([times[spans[span][0]], len(spans[span]), span])
    return offsets, [(when, n) for when, n, _ in labels if n > 1]


def events_figure(title: str, rows: list[dict], kinds: list[tuple[str, str, str, str]], empty: str):
    """Draw events as markers on one row per kind: kinds are (kind, label, marker, color); the rows'
    `kind` names theirs. One marker per event: events close in time stand in a column, with the count of
    the column (or of neighbouring columns) above it (gid "<kind> count"). Each row's series has the gid of
    its kind."""
    fig, ax = _figure(title, len(kinds))
    rows = [r for r in rows if r["timestamp"] is not None]
    if not rows:
        return _empty(fig, ax, empty)
    for y, (kind, label, marker, color) in enumerate(kinds):
        times = [r["timestamp"] for r in rows if r["kind"] == kind]
        offsets, crowded = stacked(times)
        ax.plot(times, [y + o for o in offsets], linestyle="none", marker=marker, color=color, alpha=0.7,
                markersize=6 if crowded else 9, gid=kind, label=f"{label} ({len(times)})")
        for when, n in crowded:
            ax.annotate(f"{n}", (when, y + 0.4), xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=7, color=color, gid=f"{kind} count")
    ax.set_yticks(range(len(kinds)), [f"{label} ({sum(r['kind'] == k for r in rows)})" for k, label, _, _ in kinds])
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    _time_axis(ax)
    return fig


ISR_KINDS = [("isr shrink", "ISR shrinks", "v", "#d62728"), ("isr expand", "ISR expansions", "^", "#2ca02c"),
             ("reassignment", "reassignments", "D", "#1f77b4")]
TOPIC_KINDS = [("create", "topics created", "^", "#2ca02c"), ("partitions_added", "partitions added", "P", "#1f77b4"),
               ("delete", "topics deleted", "X", "#d62728")]


def config_kinds(rows: list[dict]) -> list[tuple[str, str, str, str]]:
    """Return one marker row per (resource type, set | delete) present in the config changes."""
    seen = sorted({(r["resource_type_name"], r["action"]) for r in rows})
    return [(f"{t} {a}", f"{t.lower()} configs {'set' if a == 'set' else 'deleted'}", "o" if a == "set" else "x",
             "#9467bd" if a == "set" else "#8c564b") for t, a in seen]


def cluster_figures(tables: dict[str, list[dict]]) -> dict[str, object]:
    """Return the pictures of one cluster: picture name -> matplotlib Figure, all on one time range."""
    configs = [dict(r, kind=f"{r['resource_type_name']} {r['action']}") for r in tables.get("config_changes", [])]
    figures = {
        "brokers": broker_figure(tables.get("broker_events", [])),
        "partitions": events_figure("Partitions: ISR shrinks, ISR expansions, reassignments",
                                    tables.get("isr_changes", []), ISR_KINDS,
                                    "no partition changes in the metadata log"),
        "topics": events_figure("Topics: created, partitions added, deleted", tables.get("topic_events", []),
                                TOPIC_KINDS, "no topic events in the metadata log"),
        "configs": events_figure("Config changes", configs, config_kinds(configs) or [("none", "configs", "o", "k")],
                                 "no config changes in the metadata log"),
    }
    times = [r["timestamp"] for rows in tables.values() for r in rows if r["timestamp"] is not None]
    if times:
        pad = (max(times) - min(times)) / 40 or timedelta(seconds=30)
        for fig in figures.values():
            if fig.axes[0].get_xticks().size:  # an empty picture has no time axis
                fig.axes[0].set_xlim(min(times) - pad, max(times) + pad)
    return figures


def png_data_uri(fig) -> str:
    """Return the figure as an inline PNG (a data: URI)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _table(title: str, header: tuple[str, ...], rows: list[tuple]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<h3>{html.escape(title)}</h3><table><tr>{head}</tr>{body}</table>"


def _summaries(tables: dict[str, list[dict]]) -> str:
    fences = Counter(e["broker_id"] for e in tables.get("broker_events", []) if e["event"] == "fence")
    return (_table("Brokers fenced most often", ("broker", "times fenced"), fences.most_common(10))
            + _table("Partitions whose ISR shrank most often", ("topic", "partition", "shrinks", "last shrink (UTC)"),
                     shrink_rows(tables.get("isr_changes", []))))


def shrink_rows(changes: list[dict], top: int = 10) -> list[tuple]:
    """Return (topic, partition, shrinks, last shrink) of the partitions whose ISR shrank most often, one row per
    partition: counted by topic id, named by the topic's name wherever a row has it (with the id when two topics
    of one name, a deleted one and its successor, would read alike)."""
    shrinks, last, names = Counter(), {}, {}
    for r in changes:
        if r["topic_name"]:
            names.setdefault(r["topic_id"], r["topic_name"])
        if r["kind"] == "isr shrink":
            key = (r["topic_id"], r["partition_id"])
            shrinks[key] += 1
            last[key] = r["timestamp"]
    ids_by_name = Counter(names.values())

    def shown(topic_id: str) -> str:
        name = names.get(topic_id)
        return topic_id if name is None else name if ids_by_name[name] == 1 else f"{name} ({topic_id})"
    return [(shown(t), p, n, _when(last[(t, p)])) for (t, p), n in shrinks.most_common(top)]


def _when(t: datetime | None) -> str:
    return "" if t is None else t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
figure{margin:1em 0}img{max-width:100%}table{border-collapse:collapse;font-size:.9em;margin-bottom:1em}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left}.note{color:#666;font-size:.9em}"""


def cluster_name(cluster_id: str | None, identity: dict | None = None) -> str:
    """Return how the report names a cluster: its id (or that it has none), then its brokers' host:port, or
    its log folders when no broker registered in what was read (at most 4 of either, then how many more)."""
    name = cluster_id if cluster_id not in (None, UNKNOWN_CLUSTER) else "with no id (no meta.properties)"
    identity = identity or {}
    for key, word in (("hosts", "brokers"), ("folders", "files in")):
        found = sorted(identity.get(key) or ())
        if found:
            more = f" and {len(found) - 4} more" if len(found) > 4 else ""
            return f"{name} ({word} {', '.join(found[:4])}{more})"
    return name


def _contents(clusters, names: dict) -> str:
    """Return the table of contents: one line per cluster, linking to its section and pictures."""
    items = []
    for cluster_id in clusters:
        links = " · ".join(f"<a href='#{html.escape(f'{cluster_id}-{p}')}'>{p}</a>" for p in PICTURES)
        items.append(f"<li><a href='#cluster-{html.escape(str(cluster_id))}'>"
                     f"{html.escape(cluster_name(cluster_id, names.get(cluster_id)))}</a>: {links}</li>")
    return "<nav><h2>Contents</h2><ul>" + "".join(items) + "</ul></nav>"


def render(clusters: dict[str | None, dict[str, list[dict]]], title: str = "KRaft metadata history",
           notes: list[str] = (), names: dict | None = None) -> str:
    """Return the report page: a table of contents, then one section per cluster with its pictures and
    summaries, all inline. `names` holds each cluster's {"hosts": [...], "folders": [...]} (cluster_name)."""
    names = names or {}
    clusters = dict(sorted(clusters.items(), key=lambda kv: kv[0] or ""))
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p class='note'>{len(clusters)} cluster(s); metadata log events only (snapshots hold state, not "
             f"history); generated {_when(datetime.now(timezone.utc))} UTC.</p>"]
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in notes]
    parts.append(_contents(clusters, names))
    for cluster_id, tables in clusters.items():
        name = cluster_name(cluster_id, names.get(cluster_id))
        parts.append(f"<section id='cluster-{html.escape(str(cluster_id))}'><h2>Cluster {html.escape(name)}</h2>")
        for picture, fig in cluster_figures(tables).items():
            alt = f"{picture} of cluster {name}"
            parts.append(f"<figure id='{html.escape(f'{cluster_id}-{picture}')}'><img alt='{html.escape(alt)}' "
                         f"src='{png_data_uri(fig)}'></figure>")
        parts.append(_summaries(tables) + "</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
