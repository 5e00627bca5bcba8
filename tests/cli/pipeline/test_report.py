"""The HTML report (--report): drawn from the tables of a generated cluster history in which broker 2 is
fenced and unfenced twice, a partition is reassigned, a topic is deleted and configs change. Each
picture is in the page, and what was drawn (matplotlib artists, found by their gid) matches the events
of the scenario.
"""
from __future__ import annotations

import io
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[spark]')")

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment  # noqa: E402
from kraftsman.cli.pipeline import report  # noqa: E402
from kraftsman.cli.pipeline.command import run as pipeline  # noqa: E402
from kraftsman.storage.protocol import codec  # noqa: E402
from kraftsman.storage.protocol.uuids import Uuid  # noqa: E402
from kraftsman.storage.records.batch import build_batch  # noqa: E402
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record  # noqa: E402

T0 = datetime(2024, 5, 1, 8, 0, tzinfo=timezone.utc)
CLUSTER = "ReportClusterAAAAAAAAAA"
ORDERS, DOOMED = Uuid(bytes([1]) * 16), Uuid(bytes([2]) * 16)
CHANGE = "BrokerRegistrationChangeRecord"


def rec(record_type: str, version: int = 0, **fields) -> tuple:
    message = codec.message_class(record_type)(**fields)
    return None, write_metadata_record(ApiMessageAndVersion(message, version))


def history() -> list[tuple[str, list[tuple]]]:
    """(what happens, the batch's records), one batch a minute."""
    return [
        ("brokers register", [rec("RegisterBrokerRecord", 3, broker_id=b, broker_epoch=10 + b, fenced=True,
                                  incarnation_id=Uuid(bytes([9 + b]) * 16)) for b in (1, 2, 3)]),
        ("brokers unfenced", [rec(CHANGE, 1, broker_id=b, broker_epoch=10 + b, fenced=-1) for b in (1, 2, 3)]),
        ("topics created", [rec("TopicRecord", name="orders", topic_id=ORDERS),
                            rec("PartitionRecord", 1, partition_id=0, topic_id=ORDERS, replicas=[1, 2], isr=[1, 2],
                                leader=1),
                            rec("TopicRecord", name="doomed", topic_id=DOOMED),
                            rec("PartitionRecord", 1, partition_id=0, topic_id=DOOMED, replicas=[3], isr=[3],
                                leader=3)]),
        ("broker 2 fenced", [rec(CHANGE, 1, broker_id=2, broker_epoch=12, fenced=1),
                             rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, isr=[1])]),
        ("broker 2 unfenced", [rec(CHANGE, 1, broker_id=2, broker_epoch=12, fenced=-1),
                               rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, isr=[1, 2])]),
        ("config set", [rec("ConfigRecord", resource_type=2, resource_name="orders", name="retention.ms",
                            value="1000")]),
        ("broker 2 fenced", [rec(CHANGE, 1, broker_id=2, broker_epoch=12, fenced=1),
                             rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, isr=[1])]),
        ("broker 2 unfenced", [rec(CHANGE, 1, broker_id=2, broker_epoch=12, fenced=-1),
                               rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, isr=[1, 2])]),
        ("orders-0 reassigned to [1, 3]", [rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS,
                                               replicas=[1, 3, 2], isr=[1, 2, 3], adding_replicas=[3],
                                               removing_replicas=[2])]),
        ("reassignment done", [rec("PartitionChangeRecord", partition_id=0, topic_id=ORDERS, replicas=[1, 3],
                                   isr=[1, 3], adding_replicas=[], removing_replicas=[])]),
        ("doomed deleted", [rec("RemoveTopicRecord", topic_id=DOOMED)]),
        ("config deleted", [rec("ConfigRecord", resource_type=2, resource_name="orders", name="retention.ms",
                                value=None)]),
        ("broker 3 shuts down", [rec(CHANGE, 1, broker_id=3, broker_epoch=13, in_controlled_shutdown=1)]),
    ]


def write_history(folder: Path) -> Path:
    log_dir = folder / "__cluster_metadata-0"
    log_dir.mkdir(parents=True)
    (folder / "meta.properties").write_text(f"version=1\ncluster.id={CLUSTER}\nnode.id=1\n")
    parts, offset = [], 0
    for i, (_, values) in enumerate(history()):
        when = int((T0 + timedelta(minutes=i)).timestamp() * 1000)
        parts.append(build_batch(values, offset, timestamp=when, partition_leader_epoch=1))
        offset += len(values)
    (log_dir / "00000000000000000000.log").write_bytes(b"".join(parts))
    return log_dir


def happened(what: str) -> int:
    return sum(1 for name, _ in history() if name == what)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Run the command once with --report over two nodes' copies of the log; return (page, rows)."""
    folder = tmp_path_factory.mktemp("report")
    for node in ("node-1", "node-2"):
        write_history(folder / node)
    page = folder / "report.html"
    out, err = io.StringIO(), io.StringIO()
    argv = [str(folder), "-o", str(folder / "tables"), "--master", "local[2]", "--report", str(page)]
    status = run_command(pipeline, argv, Environment(stdout=out, stderr=err), prog="kafka-metadata-export")
    assert status == 0, err.getvalue()
    assert f"report written to {page}" in out.getvalue()
    from kraftsman.cli.pipeline import spark_job

    spark = spark_job.start_session("local[2]", {})
    try:
        clusters, notes = spark_job.report_rows(spark, str(folder / "tables"), "parquet")
    finally:
        spark.stop()
    return page.read_text(), clusters


def test_the_page_holds_every_picture_inline(exported):
    page, clusters = exported
    assert list(clusters) == [CLUSTER]
    for picture in report.PICTURES:
        assert re.search(f"<figure id='{CLUSTER}-{picture}'><img alt='[^']+' src='data:image/png;base64,", page)
    assert not re.search(r"(src|href)=['\"](?!data:|#)", page)  # nothing fetched (in-page links aside)
    assert "Brokers fenced most often" in page and "<td>2</td><td>2</td>" in page


def drawn(figure, gid: str):
    found = [a for a in figure.axes[0].get_children() if a.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


def test_the_broker_picture_draws_each_fence_interval(exported):
    """Broker 2: registered fenced, then fenced twice more, each time unfenced: three fenced bars, three
    unfenced; broker 3 ends in controlled shutdown. Copies of the log on two nodes are drawn once."""
    _, clusters = exported
    figure = report.cluster_figures(clusters[CLUSTER])["brokers"]
    fenced = 1 + happened("broker 2 fenced")  # it registers fenced
    assert len(drawn(figure, "broker 2 fenced").get_paths()) == fenced == 3
    assert len(drawn(figure, "broker 2 unfenced").get_paths()) == 1 + happened("broker 2 unfenced")
    assert len(drawn(figure, "broker 1 fenced").get_paths()) == 1
    assert len(drawn(figure, "broker 3 controlled_shutdown").get_paths()) == happened("broker 3 shuts down")


def test_the_partition_topic_and_config_pictures_show_the_events(exported):
    _, clusters = exported
    figures = report.cluster_figures(clusters[CLUSTER])

    def points(picture: str, gid: str) -> int:
        return len(drawn(figures[picture], gid).get_xdata())

    assert points("partitions", "isr shrink") == happened("broker 2 fenced") + 1  # + replica 2 leaving orders-0
    assert points("partitions", "isr expand") == happened("broker 2 unfenced") + 1  # + replica 3 joining
    assert points("partitions", "reassignment") == happened("orders-0 reassigned to [1, 3]")
    assert points("topics", "create") == 2 and points("topics", "delete") == happened("doomed deleted")
    assert points("configs", "TOPIC set") == happened("config set")
    assert points("configs", "TOPIC delete") == happened("config deleted")


def test_broker_intervals_follow_the_events():
    t = [T0 + timedelta(minutes=i) for i in range(5)]
    events = [{"broker_id": 1, "event": "register", "fenced": True, "timestamp": t[0]},
              {"broker_id": 1, "event": "unfence", "fenced": False, "timestamp": t[1]},
              {"broker_id": 1, "event": "controlled_shutdown", "fenced": None, "timestamp": t[2]},
              {"broker_id": 1, "event": "unregister", "fenced": None, "timestamp": t[3]}]
    assert report.broker_intervals(events, t[4]) == {1: [("fenced", t[0], t[1]), ("unfenced", t[1], t[2]),
                                                         ("controlled_shutdown", t[2], t[3])]}
