"""The report's layout, drawn from hand-made rows (no Spark): one marker per event even when many share a moment
(51 ISR shrinks of one fencing), clusters named by their brokers or folders as well as their id, a table of
contents linking every section and picture."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[spark]')")

from kraftsman.cli.pipeline import report  # noqa: E402
from kraftsman.cli.pipeline.tables import UNKNOWN_CLUSTER  # noqa: E402

T0 = datetime(2024, 5, 1, 8, 0, tzinfo=timezone.utc)


def shrink(minute: float, partition: int) -> dict:
    return {"timestamp": T0 + timedelta(minutes=minute), "kind": "isr shrink", "topic_id": "t", "topic_name": "orders",
            "partition_id": partition, "cluster_id": "c", "offset": int(minute * 100) + partition}


def markers(figure, gid: str) -> list[tuple[float, float]]:
    (series,) = [a for a in figure.axes[0].get_children() if a.get_gid() == gid]
    return list(zip(series.get_xdata(), series.get_ydata()))


def test_51_shrinks_of_one_fencing_are_51_markers_with_their_count():
    rows = [shrink(10, p) for p in range(51)] + [shrink(40, 0), shrink(70, 1)]
    figure = report.events_figure("isr", rows, report.ISR_KINDS, "none")
    points = markers(figure, "isr shrink")
    assert len(points) == 53 and len(set(points)) == 53     # no two markers on one spot
    counts = [a.get_text() for a in figure.axes[0].get_children() if a.get_gid() == "isr shrink count"]
    assert counts == ["51"]                                  # the column says how many it holds
    alone = [y for x, y in points if x == points[-1][0]]
    assert alone == [0.0]                                    # a lone event stays on its row's line


@pytest.mark.parametrize("spread_seconds, columns", [(0, 1), (3600 * 24, 10)])
def test_stacked_offsets_stay_inside_the_row(spread_seconds, columns):
    times = [T0 + timedelta(seconds=spread_seconds * i / 9) for i in range(10) for _ in range(3)]
    offsets, crowded = report.stacked(times)
    assert all(-0.4 < o < 0.4 for o in offsets)
    assert len(crowded) == columns and sum(n for _, n in crowded) == 30


@pytest.mark.parametrize("cluster_id, identity, name", [
    ("MkU3OEVBNTcwNTJENDM2Qg", {"hosts": ["b2:9092", "b1:9092"], "folders": ["/d"]},
     "MkU3OEVBNTcwNTJENDM2Qg (brokers b1:9092, b2:9092)"),
    ("MkU3OEVBNTcwNTJENDM2Qg", {"folders": ["/var/lib/kafka/n1/__cluster_metadata-0"]},
     "MkU3OEVBNTcwNTJENDM2Qg (files in /var/lib/kafka/n1/__cluster_metadata-0)"),
    (UNKNOWN_CLUSTER, {"folders": [f"/f{i}" for i in range(6)]},
     "with no id (no meta.properties) (files in /f0, /f1, /f2, /f3 and 2 more)"),
    (None, None, "with no id (no meta.properties)"),
])
def test_clusters_are_named_by_hosts_or_folders_as_well_as_id(cluster_id, identity, name):
    assert report.cluster_name(cluster_id, identity) == name


def test_the_page_opens_with_contents_linking_each_section_and_picture():
    clusters = {"B" * 22: {"isr_changes": [shrink(1, 0)]}, "A" * 22: {"broker_events": []}}
    names = {"A" * 22: {"hosts": ["a1:9092"]}, "B" * 22: {"folders": ["/b"]}}
    page = report.render(clusters, names=names)
    contents = page[page.index("<nav>"):page.index("</nav>")]
    assert re.findall(r"<li><a href='#cluster-(\w+)'>([^<]+)</a>", contents) == [
        ("A" * 22, f"{'A' * 22} (brokers a1:9092)"), ("B" * 22, f"{'B' * 22} (files in /b)")]
    for cluster_id in clusters:
        assert f"<section id='cluster-{cluster_id}'>" in page
        for picture in report.PICTURES:
            assert f"<a href='#{cluster_id}-{picture}'>{picture}</a>" in contents
            assert f"<figure id='{cluster_id}-{picture}'>" in page
    assert page.index("</nav>") < page.index("<section")


def test_neighbouring_columns_share_one_count():
    # two bursts a minute apart in a day of history: two columns, too close for two numbers, one count of 7
    times = [T0] * 4 + [T0 + timedelta(minutes=1)] * 3 + [T0 + timedelta(days=1)]
    offsets, counts = report.stacked(times)
    assert len(set(zip(times, offsets))) == len(times)
    assert counts == [(T0, 7)]


def test_the_shrink_table_has_one_row_per_partition_named_once():
    rows = [dict(shrink(1, 0), topic_name=None), shrink(2, 0), shrink(3, 0),            # one partition, named late
            dict(shrink(4, 0), topic_id="t2"), dict(shrink(5, 1), topic_id="t2")]       # orders again, a new id
    table = report.shrink_rows(rows)
    assert table == [("orders (t)", 0, 3, "2024-05-01 08:03:00.000"), ("orders (t2)", 0, 1, "2024-05-01 08:04:00.000"),
                     ("orders (t2)", 1, 1, "2024-05-01 08:05:00.000")]
    assert len(set(table)) == len(table)
