"""Chaos on a real kraftsman quorum (issue 10): voters as processes on 127.0.0.1 behind a fault-injecting proxy,
a CreateTopics/DeleteTopics workload with simulated brokers heartbeating, one round of every fault kind
(SIGKILL of the leader, of a follower and of every voter at once, SIGSTOP/SIGCONT, cut and blackholed links,
a one-way cut, a minority partition holding the leader, a failing fsync), then every voter's log directory checked.

The harness lives in tests/chaos/; `python tests/bench/chaos.py --voters 5 --duration 600` is the long run.
"""
from __future__ import annotations

import time

import pytest

from kraftsman.controller.client.controller_client import find_leader

from ...chaos import checker
from ...chaos.faults import KINDS, ChaosQuorum
from ...chaos.harness import LoopThread, run_chaos


def _assert_healthy(report) -> None:
    text = "\n".join(report.log) + "\n" + report.summary()
    print(text)
    assert report.lost == 0, text
    assert report.divergent == 0, text
    assert not report.not_recovered, text
    assert report.final_recovery_s is not None, text
    assert not report.unexpected_exits, text
    assert not report.check.log_errors, text
    assert not report.check.epochs_with_two_leaders, text
    assert not [f for f in report.faults if f.kind == "disk_fsync_failure" and "still serving" in f.detail], text
    assert {f.kind for f in report.faults} == set(KINDS), text
    assert report.acknowledged > 50, text
    assert set(report.exit_codes.values()) == {0}, text  # SIGTERM at the end: clean shutdown everywhere


def test_chaos_three_voters(tmp_path):
    _assert_healthy(run_chaos(tmp_path, voters=3, duration_s=20, seed=310, whole_rounds=True))


def test_chaos_five_voters(tmp_path):
    _assert_healthy(run_chaos(tmp_path, voters=5, duration_s=20, seed=520, whole_rounds=True))


def test_a_failing_disk_makes_the_controller_exit(tmp_path):
    loop = LoopThread()
    quorum = ChaosQuorum(tmp_path, 1)
    try:
        quorum.format()
        quorum.start()
        quorum.wait_listening(60)
        loop.run(find_leader(quorum.addresses(), timeout_s=60), timeout=70)
        quorum.fsync_trigger(1).touch()  # the next fsync (a NoOpRecord at least every 500 ms) fails with EIO
        deadline = time.monotonic() + 20
        while quorum.procs[1].poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert quorum.procs[1].poll() not in (None, 0), quorum.log_tail(1, 10)
    finally:
        quorum.fsync_trigger(1).unlink(missing_ok=True)
        quorum.kill(1)
        quorum.close()
        loop.close()


# ---------------------------------------------------------------- the checker catches what it must
def _batch(base: int, last: int, tag: bytes = b"x") -> tuple[int, bytes]:
    return last, bytes([base % 256, last % 256]) + tag


def test_checker_flags_a_changed_committed_batch():
    logs = {1: (0, {0: _batch(0, 4), 5: _batch(5, 9)}), 2: (0, {0: _batch(0, 4), 5: _batch(5, 9)}),
            3: (0, {0: _batch(0, 4), 5: _batch(5, 9, b"y")})}
    result = checker.CheckResult(high_watermark=10)
    checker.check_prefix(result, logs, 10)
    assert set(result.divergent) == {3} and "offset 5" in result.divergent[3]


def test_checker_flags_a_hole_below_the_high_watermark_but_not_an_uncommitted_tail():
    logs = {1: (0, {0: _batch(0, 4), 5: _batch(5, 9), 10: _batch(10, 12)}),
            2: (5, {5: _batch(5, 9), 10: _batch(10, 12, b"other")}),  # starts at its snapshot; tail differs
            3: (0, {0: _batch(0, 4)})}
    result = checker.CheckResult(high_watermark=10)
    checker.check_prefix(result, logs, 10)
    assert set(result.divergent) == {3} and "missing committed offset 5" in result.divergent[3]


# ---------------------------------------------------------------- the proxy really cuts links
def test_fault_proxy_forwards_drops_and_blackholes_a_directed_link():
    import socket
    import threading

    from ...chaos.proxy import BLACKHOLE, DROP, OK, FaultProxy

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)

    def echo():
        for _ in range(3):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=conn: _echo(c), daemon=True).start()

    def _echo(conn):
        with conn:
            while data := conn.recv(1024):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    proxy = FaultProxy({1: 1, 2: server.getsockname()[1]})  # node 1's port is never dialled here
    proxy.start()
    try:
        a = socket.create_connection(("127.0.0.1", proxy.port(1, 2)), 5)
        a.settimeout(5)
        a.sendall(b"hello")
        assert a.recv(1024) == b"hello"
        proxy.set_mode(1, 2, BLACKHOLE)  # held, not lost
        a.sendall(b"late")
        a.settimeout(0.5)
        with pytest.raises(socket.timeout):
            a.recv(1024)
        proxy.set_mode(1, 2, OK)
        a.settimeout(5)
        assert a.recv(1024) == b"late"
        proxy.set_mode(1, 2, DROP)  # open connections reset, new ones refused
        with pytest.raises(OSError):
            a.sendall(b"x")
            if not a.recv(1024):
                raise ConnectionResetError("closed")
        b = socket.create_connection(("127.0.0.1", proxy.port(1, 2)), 5)
        b.settimeout(5)
        with pytest.raises(OSError):
            b.sendall(b"x")
            if not b.recv(1024):
                raise ConnectionResetError("closed")
        proxy.set_mode(1, 2, OK)
        c = socket.create_connection(("127.0.0.1", proxy.port(1, 2)), 5)
        c.settimeout(5)
        c.sendall(b"again")
        assert c.recv(1024) == b"again"
        assert "127.0.0.1:" in proxy.voters_for(1) and proxy.voters_for(1).startswith("1@127.0.0.1:1,")
        for s in (a, b, c):
            s.close()
    finally:
        proxy.close()
        server.close()


# ---------------------------------------------------------------- a fix found by the chaos run
def test_a_raft_step_that_fails_on_a_peer_response_stops_the_controller():
    """Seen in a chaos run: a follower installing a snapshot on a failing disk (FetchSnapshot response ->
    store_snapshot -> EIO) logged `on_response failed` and fetched the snapshot again every ~40 ms for good,
    still serving; a failing step now stops the controller, as a failing tick already did."""
    import asyncio

    from kraftsman.controller.server.config import from_properties
    from kraftsman.controller.server.node import ControllerServer

    server = ControllerServer(from_properties({
        "process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093",
        "listeners": "CONTROLLER://127.0.0.1:9093", "controller.listener.names": "CONTROLLER"}))

    class FailingDriver:
        def step(self, env):
            raise OSError(5, "Input/output error")

    stopped = []

    async def stop():
        stopped.append(True)

    server.driver, server.stop = FailingDriver(), stop

    async def deliver():
        server._on_peer_response(object())
        await asyncio.sleep(0.01)

    asyncio.run(deliver())
    assert stopped == [True]


def test_a_network_close_that_hangs_still_lets_sigterm_close_the_log(tmp_path, monkeypatch):
    """A peer task that misses its cancel (Python 3.11's wait_for could swallow one) made router.close() wait
    for good, so a SIGTERM'd controller never exited. The network now gets STOP_GRACE_S; then the driver
    stops and the log closes regardless."""
    import asyncio
    import time

    from kraftsman.cli.demo.local_quorum import LocalQuorum
    from kraftsman.controller.server import local_storage
    from kraftsman.controller.server import node as node_module
    from kraftsman.controller.server.config import from_properties
    from kraftsman.controller.server.node import ControllerServer

    quorum = LocalQuorum(tmp_path, 1)
    quorum.format()
    server = ControllerServer(from_properties(quorum.properties(1)))
    monkeypatch.setattr(node_module, "STOP_GRACE_S", 0.3)

    async def body():
        await server.start()
        closed = []

        async def hang():
            await asyncio.Event().wait()
        server.router.close = hang
        monkeypatch.setattr(local_storage, "close_log", lambda store, **kwargs: closed.append(True))
        started = time.monotonic()
        await server.stop()
        return closed, time.monotonic() - started

    closed, took = asyncio.run(body())
    assert closed == [True] and server.stopped.is_set() and server.driver.stopped
    assert 0.3 <= took < 3


class _LogQuorum:
    """The part of a ChaosQuorum check_logs reads: voter ids and their directories."""

    def __init__(self, base, logs: dict[int, str]):
        self.base, self.ids = base, sorted(logs)
        for voter, text in logs.items():
            self.node_dir(voter).mkdir()
            (self.node_dir(voter) / "controller.log").write_text(text)

    def node_dir(self, voter: int):
        return self.base / f"node-{voter}"


_START = "[t] INFO node 2 serving CONTROLLER (PLAINTEXT) on 127.0.0.1:1 (cluster c) (kraftsman.server)\n"
_INJECTED_FAILURE = (
    "[t] ERROR node 2: raft driver failed; shutting down (kraftsman.server)\nTraceback (most recent call last):\n"
    '  File "x.py", line 1, in sync\nOSError: [Errno 5] Input/output error (chaos: injected fsync failure)\n')
_STOPPED = "[t] INFO node 2 stopped (kraftsman.server)\nkafka-controller: the controller stopped: raft driver failed\n"
_UNAWAITED = ("events.py:80: RuntimeWarning: coroutine 'answer' was never awaited\n  self._context.run()\n"
              "RuntimeWarning: Enable tracemalloc to get the object allocation traceback\n")


def test_checker_lets_an_injected_fsync_failure_explain_its_run_however_long_the_shutdown(tmp_path):
    padding = "".join(f"[t] INFO node 2: forwarding BrokerHeartbeat to 3 failed ({i})\n" for i in range(40))
    quorum = _LogQuorum(tmp_path, {2: _START + _INJECTED_FAILURE + padding + _STOPPED + _START})
    result = checker.CheckResult()
    checker.check_logs(result, quorum)
    assert result.log_errors == {}


def test_checker_flags_an_unawaited_coroutine_even_after_an_injected_failure(tmp_path):
    quorum = _LogQuorum(tmp_path, {2: _START + _INJECTED_FAILURE + _UNAWAITED + _STOPPED + _START})
    result = checker.CheckResult()
    checker.check_logs(result, quorum)
    assert "never awaited" in result.log_errors[2]


def test_checker_flags_a_traceback_in_a_run_without_an_injected_failure(tmp_path):
    crash = "[t] ERROR node 2: raft driver failed; shutting down\nTraceback (most recent call last):\nKeyError: 7\n"
    quorum = _LogQuorum(tmp_path, {1: _START, 2: _START + _INJECTED_FAILURE + _STOPPED + _START + crash})
    result = checker.CheckResult()
    checker.check_logs(result, quorum)
    assert set(result.log_errors) == {2} and "KeyError: 7" in result.log_errors[2]
