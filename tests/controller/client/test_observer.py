"""The read-only observer against scripted controllers: commit rule, leader changes, snapshots, the API whitelist."""
from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from kraftsman.controller.client import observer as ob
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.raft import messages as msg
from kraftsman.controller.raft import records as R
from kraftsman.controller.raft import snapshot as S
from kraftsman.controller.raft.log import SnapshotId
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion, write_metadata_record

MODULE = Path(ob.__file__)


def topic(name: str, n: int) -> bytes:
    message = codec.message_class("TopicRecord")(name=name, topic_id=Uuid(bytes([n]) * 16))
    return write_metadata_record(ApiMessageAndVersion(message, 0))


class Controller:
    """A scripted controller: answers Fetch/FetchSnapshot/DescribeQuorum from a log, a leader and a watermark."""

    def __init__(self, node_id: int, cluster: "Cluster"):
        self.node_id, self.cluster = node_id, cluster

    def answer(self, api: str, body):
        c = self.cluster
        leads = c.leader == self.node_id
        if api == "DescribeQuorum":
            cls = codec.message_class("DescribeQuorumResponse")
            part = cls.PartitionData(partition_index=0, error_code=0 if leads else 6, leader_id=c.leader,
                                     leader_epoch=c.epoch, high_watermark=c.hw)
            return cls(error_code=0, topics=[cls.TopicData(topic_name="__cluster_metadata", partitions=[part])],
                       nodes=[])
        if api == "FetchSnapshot":
            c.snapshot_replica_ids.add(body.replica_id)
            part = body.topics[0].partitions[0]
            if c.snapshot_fails_at is not None and part.position >= c.snapshot_fails_at:
                c.snapshot_fails_at = None
                return msg.fetch_snapshot_response(0, 75, c.leader, c.epoch)      # SNAPSHOT_NOT_FOUND, once
            data = c.snapshot.data[part.position:part.position + c.chunk]
            sid = (c.snapshot.snapshot_id.end_offset, c.snapshot.snapshot_id.epoch)
            return msg.fetch_snapshot_response(0, 0, c.leader, c.epoch, sid, len(c.snapshot.data), part.position, data)
        part = body.topics[0].partitions[0]
        c.fetches.append((self.node_id, part.fetch_offset, part.last_fetched_epoch, msg.fetch_replica_id(body)))
        c.waits.append(body.max_wait_ms)
        if not leads or part.current_leader_epoch != c.epoch:
            return msg.fetch_response(0, 6 if not leads else 74, c.leader, c.epoch)
        start = c.snapshot.snapshot_id.end_offset if c.snapshot else 0
        if part.fetch_offset < start:
            return msg.fetch_response(0, 0, c.leader, c.epoch, c.hw, snapshot_id=(start, c.snapshot.snapshot_id.epoch))
        if c.diverging is not None:
            diverging, c.diverging = c.diverging, None
            return msg.fetch_response(0, 0, c.leader, c.epoch, c.hw, diverging=diverging)
        batches = [b for b in c.log if b.base_offset >= part.fetch_offset][:c.max_batches]
        return msg.fetch_response(0, 0, c.leader, c.epoch, c.hw, R.join_batches(batches))


class Cluster:
    def __init__(self, ids=(1, 2, 3)):
        self.nodes = {i: Controller(i, self) for i in ids}
        self.ports = {i: 9000 + i for i in ids}
        self.leader, self.epoch, self.hw = 2, 3, 0
        self.log, self.snapshot, self.chunk, self.diverging = [], None, 100, None
        self.fetches, self.apis, self.down = [], [], set()
        self.waits, self.snapshot_replica_ids = [], set()
        self.max_batches, self.snapshot_fails_at = None, None

    def append(self, *names, epoch=None):
        base = self.log[-1].next_offset if self.log else (self.snapshot.snapshot_id.end_offset if self.snapshot else 0)
        values = [topic(n, len(self.log) + i + 1) for i, n in enumerate(names)]
        self.log.append(R.data_batch(values, base, epoch or self.epoch))
        return self.log[-1].next_offset


class FakeConnection:
    def __init__(self, cluster: Cluster, node_id: int, host: str, port: int):
        self.cluster, self.node, self.host, self.port = cluster, cluster.nodes[node_id], host, port

    @property
    def name(self):
        return f"{self.host}:{self.port}"

    def pick_version(self, api, wanted_max=None):
        return wanted_max if wanted_max is not None else 0

    def supports(self, api, version):
        return api != "DescribeCluster"

    def request(self, api, version, body, deadline):
        self.cluster.apis.append(api)
        if self.node.node_id in self.cluster.down:
            raise sc.NotKafka(f"{self.name} closed the connection")
        return self.node.answer(api, body)

    def send(self, api, version, body, deadline):
        return api, version, body

    def receive(self, sent, deadline):
        return self.request(*sent, deadline)

    def close(self):
        pass


@pytest.fixture
def cluster(monkeypatch):
    c = Cluster()

    def fake_open(host, port, config, deadline):
        node_id = next((i for i, p in c.ports.items() if p == port), None)
        if node_id is None or node_id in c.down:
            raise sc.Unreachable(f"cannot connect to {host}:{port}: Connection refused")
        return FakeConnection(c, node_id, host, port)

    monkeypatch.setattr(sc.SyncConnection, "open", staticmethod(fake_open))
    return c


def observer(cluster, **kwargs) -> ob.Observer:
    voters = {i: ("127.0.0.1", p) for i, p in cluster.ports.items()}
    kwargs.setdefault("backoff_ms", 1)
    return ob.Observer(sc.ClientConfig(request_timeout_ms=2000), voters=voters, **kwargs)


def names(view) -> list[str]:
    return sorted(view.image.topics.by_name)


def soon() -> float:
    return time.monotonic() + 5


# ---------------------------------------------------------------- parsing


def test_parse_controllers_reads_controller_quorum_voters_syntax():
    assert ob.parse_controllers("1@a:9093, 2@[::1]:9094") == {1: ("a", 9093), 2: ("::1", 9094)}
    for bad in ("a:9093", "x@a:9093", "1@a", ""):
        with pytest.raises(ValueError):
            ob.parse_controllers(bad)


# ---------------------------------------------------------------- commit rule and leaders


def test_only_records_below_the_high_watermark_reach_the_image(cluster):
    cluster.append("a")
    cluster.hw = cluster.append("b")
    cluster.append("uncommitted")
    o = observer(cluster)
    view = o.catch_up(soon())
    assert names(view) == ["a", "b"] and view.applied == cluster.hw == 2
    assert (view.leader_id, view.leader_epoch) == (2, 3)
    cluster.hw = 3
    o.poll(soon())
    assert names(o.view) == ["a", "b", "uncommitted"] and o.view.applied == 3


def test_fetches_as_a_non_replica_so_that_no_leader_keeps_a_row_for_it(cluster):
    cluster.hw = cluster.append("a")
    o = observer(cluster)
    o.catch_up(soon())
    replica_ids = {replica for _node, _offset, _epoch, replica in cluster.fetches}
    assert replica_ids == {-1} == {ob.NON_REPLICA}
    assert set(cluster.apis) <= ob.READ_ONLY_APIS


@pytest.mark.parametrize("version", [12, 17])
def test_the_fetch_names_no_replica_at_any_version(version):
    o = ob.Observer(sc.ClientConfig(), voters={1: ("x", 1)})
    raw = codec.encode("FetchRequest", version, o._fetch_body(version, 500))
    assert msg.fetch_replica_id(codec.decode("FetchRequest", version, raw)) == -1


def test_records_waiting_for_the_high_watermark_shorten_the_long_poll(cluster):
    cluster.hw = cluster.append("a")
    cluster.append("uncommitted")
    o = observer(cluster, fetch_max_wait_ms=500)
    o.catch_up(soon())
    cluster.waits.clear()
    o.poll(soon())
    assert o.pending and cluster.waits == [ob.PENDING_WAIT_MS]
    cluster.hw = 2
    o.poll(soon())
    assert not o.pending and names(o.view) == ["a", "uncommitted"]
    o.poll(soon())
    assert cluster.waits[-1] == 500


def test_finds_the_leader_from_a_non_leader_answer(cluster):
    cluster.hw = cluster.append("a")
    o = observer(cluster)
    o._next = 0  # node 1 first: it answers NOT_LEADER_OR_FOLLOWER naming node 2
    o.catch_up(soon())
    assert [f[0] for f in cluster.fetches][:1] == [1] and cluster.fetches[-1][0] == 2


def test_follows_a_leader_change_without_losing_committed_records(cluster):
    cluster.hw = cluster.append("a")
    o = observer(cluster)
    o.catch_up(soon())
    cluster.down.add(2)
    cluster.leader, cluster.epoch = 3, 4
    cluster.hw = cluster.append("b")
    events = []
    o.on_event = events.append
    deadline = soon()
    while o.view.applied < cluster.hw and time.monotonic() < deadline:
        o.poll(deadline)
    assert names(o.view) == ["a", "b"] and (o.view.leader_id, o.view.leader_epoch) == (3, 4)
    assert any("lost the leader (node 2)" in e for e in events)
    assert any("following node 3" in e for e in events)


def test_diverging_epoch_truncates_uncommitted_batches(cluster):
    cluster.hw = cluster.append("a")
    cluster.append("lost")
    o = observer(cluster)
    o.catch_up(soon())
    assert o.fetch_offset == 2 and len(o.pending) == 1
    cluster.log.pop()
    cluster.diverging = (3, 1)
    o.poll(soon())
    assert o.pending == [] and (o.fetch_offset, o.fetch_epoch) == (1, 3)
    cluster.epoch += 1
    cluster.leader = 2
    cluster.hw = cluster.append("kept")
    deadline = soon()
    while o.view.applied < cluster.hw and time.monotonic() < deadline:
        o.poll(deadline)
    assert names(o.view) == ["a", "kept"]


# ---------------------------------------------------------------- snapshots and time travel


def test_a_moved_log_start_makes_it_fetch_the_snapshot_in_chunks(cluster):
    values = [topic(f"s{i}", 100 + i) for i in range(20)]
    cluster.snapshot = S.build_snapshot(SnapshotId(50, 2), values, timestamp=1234)
    cluster.hw = cluster.append("after")
    o = observer(cluster)
    view = o.catch_up(soon())
    assert names(view) == sorted([f"s{i}" for i in range(20)] + ["after"])
    assert cluster.apis.count("FetchSnapshot") > 2 and view.applied == 51
    assert cluster.fetches[-1][1:3] == (50, 2)  # from the snapshot's end, in the snapshot's epoch
    assert cluster.snapshot_replica_ids == {-1}  # FetchSnapshot names no replica either


def test_a_snapshot_transfer_that_fails_midway_starts_over_from_offset_zero(cluster):
    values = [topic(f"s{i}", 100 + i) for i in range(20)]
    cluster.snapshot = S.build_snapshot(SnapshotId(50, 2), values, timestamp=1234)
    cluster.hw = cluster.append("after")
    cluster.snapshot_fails_at = 300                     # the leader refuses a chunk once, after loading began
    view = observer(cluster).catch_up(soon())
    assert names(view) == sorted([f"s{i}" for i in range(20)] + ["after"]) and view.applied == 51
    assert [f[1] for f in cluster.fetches if f[0] == cluster.leader] == [0, 0, 50]  # from 0 again: builder reset


def test_while_catching_up_the_next_fetch_goes_out_before_the_records_are_replayed(cluster, monkeypatch):
    for name in "abcdef":
        cluster.append(name)
    cluster.hw, cluster.max_batches = 6, 2
    o = observer(cluster)
    order = []
    real_send, real_commit = FakeConnection.send, ob.Observer._commit
    monkeypatch.setattr(FakeConnection, "send", lambda self, *a: (order.append("send"), real_send(self, *a))[1])
    monkeypatch.setattr(ob.Observer, "_commit", lambda self: (order.append("commit"), real_commit(self))[0])
    view = o.catch_up(soon())
    assert names(view) == list("abcdef") and [f[1] for f in cluster.fetches if f[0] == cluster.leader] == [0, 2, 4]
    # node 1's refusal, the leader's first fetch, then the second one before the first answer's records are replayed
    assert order[:4] == ["send", "send", "send", "commit"]


def test_offset_stops_the_replay_there(cluster):
    for name in "abcd":
        cluster.append(name)
    cluster.hw = 4
    view = observer(cluster, stop_offset=1).catch_up(soon())
    assert view.stopped and names(view) == ["a", "b"] and view.image.provenance.offset == 1


def test_offset_before_the_snapshot_is_no_longer_in_the_log(cluster):
    cluster.snapshot = S.build_snapshot(SnapshotId(50, 2), [topic("s", 1)])
    cluster.hw = cluster.append("after")
    with pytest.raises(ob.ObserverError, match="offset 10 is no longer in the log"):
        observer(cluster, stop_offset=10).catch_up(soon())


# ---------------------------------------------------------------- failures


def test_unreachable_controllers_fail_after_one_round(cluster):
    cluster.down.update({1, 2, 3})
    started = time.monotonic()
    with pytest.raises(ob.ObserverUnavailable, match="cannot reach any controller"):
        observer(cluster).catch_up(soon())
    assert time.monotonic() - started < 1


def test_catch_up_gives_up_at_its_deadline_when_no_leader_is_elected(cluster):
    cluster.leader = -1
    with pytest.raises(ob.ObserverUnavailable, match=r"^every controller answered NOT_LEADER_OR_FOLLOWER and none "
                                                     r"named the leader within 0\.3 s \(last answer from 127"):
        observer(cluster).catch_up(time.monotonic() + 0.3)


# ---------------------------------------------------------------- read-only by construction


class _Recorder:
    name, host, port = "x:1", "x", 1

    def __init__(self):
        self.sent = []

    def pick_version(self, api, wanted_max=None):
        return 0

    def send(self, api, version, body, deadline):
        self.sent.append(api)

    def request(self, api, version, body, deadline):
        self.sent.append(api)


def test_request_refuses_any_api_outside_the_whitelist():
    o = ob.Observer(sc.ClientConfig(), voters={1: ("x", 1)})
    conn = _Recorder()
    for api in ("CreateTopics", "Vote", "BeginQuorumEpoch", "BrokerRegistration", "AddRaftVoter"):
        with pytest.raises(ob.ObserverError, match="read-only"):
            o._request(conn, api, lambda version: None, 0)
    assert conn.sent == []
    assert ob.READ_ONLY_APIS == {"ApiVersions", "DescribeQuorum", "DescribeCluster", "Fetch", "FetchSnapshot",
                                 "SaslHandshake", "SaslAuthenticate"}


def test_the_module_names_only_whitelisted_apis_in_its_requests():
    tree = ast.parse(MODULE.read_text())
    sent = {call.args[1].value for call in ast.walk(tree) if isinstance(call, ast.Call)
            and getattr(call.func, "attr", None) in ("_request", "_send") and isinstance(call.args[1], ast.Constant)}
    assert sent == {"Fetch", "FetchSnapshot", "DescribeQuorum", "DescribeCluster"}
    raw = [call for call in ast.walk(tree) if isinstance(call, ast.Call)
           and getattr(call.func, "attr", None) in ("request", "send")]
    assert len(raw) == 1  # the one conn.send inside _send


# ---------------------------------------------------------------- security settings through -c/--config


def test_live_shell_authenticates_with_sasl_from_the_client_config(tmp_path):
    import io

    from kraftsman.cli.common.boundary import run_command
    from kraftsman.cli.common.environment import Environment
    from kraftsman.cli.shell.tool import run

    from ..server.sync_fakes import FakeServer, body

    batch = R.data_batch([topic("secure", 1)], 0, 1)

    def handler(header, request):
        if header.request_api_key == 17:
            return body("SaslHandshakeResponse", error_code=0, mechanisms=["PLAIN"])
        if header.request_api_key == 36:
            ok = request.auth_bytes == b"\0alice\0pw"
            return body("SaslAuthenticateResponse", error_code=0 if ok else 58, error_message=None if ok else "bad")
        return msg.fetch_response(0, 0, 1, 1, 1, R.join_batches([batch]))

    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
                      'username="alice" password="pw";\n')
    with FakeServer(handler, ranges={18: (0, 4), 17: (0, 1), 36: (0, 2), 1: (0, 17)}) as server:
        out, err = io.StringIO(), io.StringIO()
        status = run_command(run, ["--controllers", f"1@{server.address}", "-c", str(config), "ls",
                                   "/image/topics/byName"], Environment(stdout=out, stderr=err, env={}))
        assert (status, out.getvalue(), err.getvalue()) == (0, "secure\n", "")
        assert [h.request_api_key for h, _ in server.requests] == [18, 17, 36, 1]


def test_the_view_moves_with_the_high_watermark_even_without_new_records(cluster):
    cluster.hw = cluster.append("a")
    cluster.append("b")
    o = observer(cluster)
    o.catch_up(soon())
    cluster.hw = 2
    o.poll(soon())
    assert (o.view.high_watermark, o.view.applied) == (2, 2) and names(o.view) == ["a", "b"]
    cluster.hw = 3  # e.g. a control batch elsewhere: no record for us, the prompt still moves
    o.poll(soon())
    assert o.view.high_watermark == 3


def test_bootstrap_mode_probes_past_a_dead_address_to_the_leader(cluster):
    cluster.hw = cluster.append("a")
    cluster.down.add(1)
    bootstrap = [("127.0.0.1", cluster.ports[i]) for i in (1, 3, 2)]
    o = ob.Observer(sc.ClientConfig(request_timeout_ms=2000), bootstrap=bootstrap, backoff_ms=1)
    view = o.catch_up(soon())
    assert names(view) == ["a"] and view.leader_id == 2
    assert o.endpoints == {2: ("127.0.0.1", cluster.ports[2])}  # learnt: node 2 answered DescribeQuorum as leader
    # node 3 names leader 2 without its endpoint (no Nodes, no NodeEndpoints): its Fetch refusal sends us on
    assert [f[0] for f in cluster.fetches][:1] == [3] and {f[0] for f in cluster.fetches[1:]} == {2}


def test_follower_reports_a_quorum_that_stopped_answering_once_and_keeps_trying(cluster):
    import threading

    cluster.hw = cluster.append("a")
    events = []
    o = observer(cluster, on_event=events.append)
    o.catch_up(soon())
    cluster.down.update({1, 2, 3})
    stop = threading.Event()
    thread = threading.Thread(target=o.follow, args=(stop,), daemon=True)
    thread.start()
    wait = time.monotonic() + 5
    while not any("no controller answers" in e for e in events) and time.monotonic() < wait:
        time.sleep(0.01)
    cluster.down.clear()
    cluster.hw = cluster.append("b")
    while names(o.view) != ["a", "b"] and time.monotonic() < wait:
        time.sleep(0.01)
    stop.set()
    thread.join(5)
    assert names(o.view) == ["a", "b"] and not thread.is_alive()
    assert sum("no controller answers" in e for e in events) == 1 and any("lost the leader" in e for e in events)
