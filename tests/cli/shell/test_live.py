"""kafka-metadata-shell's live mode against a real 3-voter kraftsman quorum on 127.0.0.1 with simulated brokers.

One quorum serves the module; tests run in file order (the failover test kills the first leader).
The interactive test runs the real live mode (observer thread, prompt, per-command refresh) with a
scripted REPL in place of prompt-toolkit's terminal session.
"""
from __future__ import annotations

import io
import re
import shutil
import time

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.status import ExitStatus
from kraftsman.cli.demo.local_quorum import free_ports
from kraftsman.cli.shell.tool import run
from kraftsman.controller.client import observer as ob
from kraftsman.controller.client import sync_client as sc
from kraftsman.controller.client.controller_client import ActiveControllerClient
from kraftsman.shell.runner import run_line
from kraftsman.storage.log.snapshot import list_snapshots
from kraftsman.storage.protocol import codec

from ...controller.server import quorum_fixtures as fixtures
from ...controller.server.quorum_fixtures import describe_quorum

Create = codec.message_class("CreateTopicsRequest")
loop = fixtures.loop_fixture()
PROMPT = re.compile(r"\[leader (-?\d+), epoch (\d+), hw (\d+)")
TOPIC_ALREADY_EXISTS = 36


class _Terminal(io.StringIO):
    """A stdin that says it is a terminal, so that no command means the interactive shell."""

    def isatty(self) -> bool:
        return True


def shell(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=_Terminal(), env={})
    status = run_command(run, list(argv), env, prog="kafka-metadata-shell")
    return status, out.getvalue(), err.getvalue()


def wait_for(predicate, timeout: float = 20, interval: float = 0.05):
    return fixtures.wait_for(predicate, timeout, interval)


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    # metadata.max.retention.bytes=0: each new snapshot moves the log start to it (Kafka's retention would keep the
    # log), so a shell that starts after two must download the newest with FetchSnapshot
    extra = fixtures.FAST | {"metadata.max.retention.bytes": "0"}
    with fixtures.running_quorum(tmp_path_factory.mktemp("live-shell"), loop, extra=extra) as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with fixtures.running_brokers(quorum, loop, (101, 102, 103), fetch=False) as sims:
        yield sims


@pytest.fixture(scope="module")
def client(quorum, loop):
    c = ActiveControllerClient(list(quorum.addresses().values()), timeout_ms=30_000)
    yield c
    loop.run(c.close())


def create_topic(loop, client, name: str, partitions: int = 1) -> float:
    """Create a topic (retrying through a failover); return the monotonic time its commit was acknowledged."""
    body = Create(topics=[Create.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)],
                  timeout_ms=10_000, validate_only=False)
    deadline = time.monotonic() + 30
    while True:
        code = loop.run(client.request("CreateTopics", 7, body)).topics[0].error_code
        if code in (0, TOPIC_ALREADY_EXISTS):
            return time.monotonic()
        assert time.monotonic() < deadline, f"CreateTopics {name} kept failing with {code}"
        time.sleep(0.05)


def controllers(quorum) -> str:
    return ",".join(f"{i}@{h}:{p}" for i, (h, p) in quorum.addresses().items())


def newest_snapshot(quorum, node_ids):
    found = [(s.end_offset, quorum.partition_dir(n) / s.file_name) for n in node_ids
             for s in list_snapshots(quorum.partition_dir(n))]
    return max(found) if found else (-1, None)


def force_snapshot(loop, client, quorum, name: str, node_ids) -> int:
    """Write enough records for a snapshot (FAST: 4,000 bytes); return the new snapshot's end offset."""
    before = newest_snapshot(quorum, node_ids)[0]
    create_topic(loop, client, name, 64)
    return wait_for(lambda: newest_snapshot(quorum, node_ids)[0] > before and newest_snapshot(quorum, node_ids)[0])


def without_provenance(tree: str) -> str:
    return re.sub(r"(?m)^provenance:\n  .*\n", "", tree)


# ---------------------------------------------------------------- prompt and REPL wiring (no quorum)


def _image(*names: str):
    from kraftsman.controller.image.delta import MetadataDelta
    from kraftsman.storage.protocol.uuids import Uuid
    from kraftsman.storage.records.metadata import ApiMessageAndVersion

    delta = MetadataDelta()
    for i, name in enumerate(names):
        message = codec.message_class("TopicRecord")(name=name, topic_id=Uuid(bytes([i + 1]) * 16))
        delta.replay(ApiMessageAndVersion(message, 0))
    return delta.apply()


def test_prompt_shows_leader_epoch_and_high_watermark():
    from kraftsman.cli.shell.live import prompt_text

    assert prompt_text(ob.View(leader_id=2, leader_epoch=7, high_watermark=1234)) == "[leader 2, epoch 7, hw 1234] >> "
    assert prompt_text(ob.View(leader_id=-1, leader_epoch=8)) == "[no leader, epoch 8, hw 0] >> "
    assert prompt_text(ob.View(leader_id=1, leader_epoch=3, high_watermark=50, stopped=True)).endswith(", at -1] >> ")


def test_each_command_reads_the_newest_image_through_prompt_toolkit(tmp_path):
    import threading

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from kraftsman.shell.repl import run_repl
    from kraftsman.shell.state import ShellState

    images = iter([_image("a"), _image("a", "b"), _image("a", "b")])
    state, out, prompts = ShellState(_image()), [], []

    def before_command(state, write):
        write("event line\n")
        state.set_image(next(images))

    def prompt():
        prompts.append(1)
        return "[leader 1, epoch 1, hw 5] >> "

    with create_pipe_input() as pipe:
        typist = threading.Thread(target=lambda: (time.sleep(0.2), pipe.send_text("ls /image/topics/byName\r"),
                                                  time.sleep(0.2), pipe.send_text("ls /image/topics/byName\r"),
                                                  time.sleep(0.2), pipe.send_text("exit\r")), daemon=True)
        typist.start()
        status = run_repl(state, out.append, history_path=tmp_path / "h", input=pipe, output=DummyOutput(),
                          prompt=prompt, before_command=before_command, refresh_interval=0.1)
        typist.join()
    assert status == 0 and prompts
    assert "".join(out).split("\n")[1:] == ["event line", "a", "event line", "a  b", "event line", ""]


# ---------------------------------------------------------------- unreachable


def test_unreachable_address_is_one_line_and_exit_69():
    port = free_ports(1)[0]
    for flags in (["--bootstrap-controller", f"127.0.0.1:{port}"], ["--controllers", f"1@127.0.0.1:{port}"]):
        started = time.monotonic()
        status, out, err = shell(*flags, "ls", "/image/topics/byName")
        assert status == ExitStatus.UNAVAILABLE == 69 and out == ""
        assert err == f"kafka-metadata-shell: cannot reach any controller: cannot connect to 127.0.0.1:{port}: " \
                      "Connection refused\n"
        assert time.monotonic() - started < 5


def test_a_real_process_exits_69_without_importing_asyncio():
    import subprocess
    import sys

    port = free_ports(1)[0]
    code = ("import sys\nfrom kraftsman.cli.shell.tool import main\n"
            "try:\n    main()\nfinally:\n    print('asyncio' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, "-C", f"127.0.0.1:{port}", "ls"], capture_output=True,
                          text=True, timeout=30)
    assert (done.returncode, done.stdout) == (69, "False\n")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_bad_controllers_flag_is_one_line():
    status, out, err = shell("--controllers", "127.0.0.1:9093", "ls")
    assert status == 1 and err.count("\n") == 1 and "expected id@host:port" in err and "Traceback" not in err
    status, out, err = shell("--snapshot", "x.checkpoint", "-C", "127.0.0.1:9093", "ls")   # a bad command line: 1
    assert status == 1 and err == ("kafka-metadata-shell: give only one of --snapshot, --directory, --controllers "
                                   "and --bootstrap-controller\n")


# ---------------------------------------------------------------- interactive: follow creation and failover


def test_live_shell_follows_creations_and_a_failover(quorum, brokers, loop, client, monkeypatch, tmp_path):
    force_snapshot(loop, client, quorum, "seed", quorum.ids)  # the shell must start from FetchSnapshot: the
    force_snapshot(loop, client, quorum, "seed-again", quorum.ids)  # second one moves the log start (retention)
    sent = []
    real_send = sc.SyncConnection.send

    def recording(self, api_name, version, body, deadline):
        sent.append(api_name)
        return real_send(self, api_name, version, body, deadline)

    monkeypatch.setattr(sc.SyncConnection, "send", recording)        # every request goes out through send()
    results = {}

    def scripted_repl(state, write, *, prompt, before_command, **_kwargs):
        def ask(line: str) -> str:
            out = io.StringIO()
            before_command(state, out.write)
            run_line(state, line, out.write, shell=True)
            return out.getvalue()
        results.update(_script(quorum, loop, client, ask, prompt, tmp_path))
        return 0

    monkeypatch.setattr("kraftsman.shell.repl.run_repl", scripted_repl)
    status, out, err = shell("--controllers", controllers(quorum))
    assert (status, err) == (0, "") and out.startswith("Loading...\nStarting...\n")
    print({k: v for k, v in results.items() if k != "tree_mismatch"})
    assert results["creation_latency"] < 1.0, results
    assert results["new_leader"] != results["old_leader"] and results["new_epoch"] > results["old_epoch"]
    assert results["tree_matches_snapshot"], results["tree_mismatch"]
    assert "FetchSnapshot" in sent and "Fetch" in sent and set(sent) <= ob.READ_ONLY_APIS, sorted(set(sent))
    assert results["observers"] == [] and results["voters"] == {1, 2, 3}     # the live shell left no observer row


def _script(quorum, loop, client, ask, prompt, tmp_path) -> dict:
    results = {}
    assert "seed" in ask("ls /image/topics/byName").split()
    old_leader, old_epoch, _hw = map(int, PROMPT.match(prompt()).groups())
    results.update(old_leader=old_leader, old_epoch=old_epoch)
    committed = create_topic(loop, client, "live-1")
    wait_for(lambda: "live-1" in ask("ls /image/topics/byName").split(), timeout=10, interval=0.01)
    results["creation_latency"] = time.monotonic() - committed
    part = loop.run(describe_quorum(*quorum.addresses()[old_leader]))
    results["observers"] = [o.replica_id for o in part.observers]   # brokers do not fetch here: only a shell could
    results["voters"] = {v.replica_id for v in part.current_voters}

    quorum.kill(old_leader)
    create_topic(loop, client, "after-failover")
    wait_for(lambda: "after-failover" in ask("ls /image/topics/byName").split(), timeout=20)
    new_leader, new_epoch, _hw = map(int, PROMPT.match(prompt()).groups())
    results.update(new_leader=new_leader, new_epoch=new_epoch)

    alive = [n for n in quorum.ids if n != old_leader]
    force_snapshot(loop, client, quorum, "snapshot-me", alive)
    results.update(_compare_with_snapshot(quorum, alive, ask, tmp_path))
    return results


def _compare_with_snapshot(quorum, alive, ask, tmp_path) -> dict:
    """Compare `tree /image` with --snapshot on the newest snapshot (retried: the brokers may still move)."""
    deadline, mismatch = time.monotonic() + 15, ""
    while time.monotonic() < deadline:
        _end, path = newest_snapshot(quorum, alive)
        copy = tmp_path / "copy" / "__cluster_metadata-0" / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        status, expected, err = shell("--snapshot", str(copy), "tree", "/image")
        assert status == 0, err
        live = ask("tree /image")
        if without_provenance(live) == without_provenance(expected):
            return {"tree_matches_snapshot": True, "tree_mismatch": ""}
        mismatch = f"live:\n{live}\nsnapshot {path.name}:\n{expected}"
        time.sleep(0.5)
    return {"tree_matches_snapshot": False, "tree_mismatch": mismatch}


# ---------------------------------------------------------------- non-interactive


def test_non_interactive_matches_the_file_modes_at_the_same_offset(quorum, brokers, loop, client, tmp_path):
    alive = [n for n in quorum.ids if quorum.procs[n].poll() is None]
    force_snapshot(loop, client, quorum, "before-o1", alive)
    create_topic(loop, client, "o1")
    status, provenance, err = shell("--bootstrap-controller", quorum.bootstrap(), "cat", "/image/provenance")
    assert status == 0, err
    offset = int(re.match(r"offset (\d+)", provenance).group(1))
    create_topic(loop, client, "o2")
    live_now = shell("--bootstrap-controller", quorum.bootstrap(), "ls", "/image/topics/byName")
    live_then = shell("--bootstrap-controller", quorum.bootstrap(), "--offset", str(offset),
                      "ls", "/image/topics/byName")
    leader = wait_for(lambda: next((n for n in alive if _leads(loop, quorum, n)), None))
    copy = tmp_path / "logdir"
    shutil.copytree(quorum.partition_dir(leader), copy / "__cluster_metadata-0")
    assert live_now[0] == live_then[0] == 0, (live_now, live_then)
    file_now = shell("--directory", str(copy), "ls", "/image/topics/byName")
    file_then = shell("--directory", str(copy), "--offset", str(offset), "ls", "/image/topics/byName")
    assert live_now[1] == file_now[1] and "o2" in live_now[1].split()
    assert live_then[1] == file_then[1] and "o1" in live_then[1].split() and "o2" not in live_then[1].split()


def test_a_profile_gives_the_live_source(quorum, brokers, tmp_path):
    """No source on the command line: the current profile's bootstrap-controller is followed (issue 19)."""
    from kraftsman.cli.common import profiles

    config = tmp_path / "kraftsman" / "config.yaml"
    config.parent.mkdir()
    config.write_text(f"current-profile: q\nprofiles:\n  q:\n    bootstrap-controller: '{quorum.bootstrap()}'\n"
                      "    timeout: 20\n")
    assert profiles.load({"XDG_CONFIG_HOME": str(tmp_path)}).current == "q"
    out, err = io.StringIO(), io.StringIO()
    status = run(["ls", "/image/cluster"], Environment(stdout=out, stderr=err, stdin=_Terminal(),
                                                   env={"XDG_CONFIG_HOME": str(tmp_path)}))
    assert (status, err.getvalue()) == (0, "") and "brokers" in out.getvalue().split()
    status = run(["ls", "/image/cluster"], Environment(stdout=io.StringIO(), stderr=err, stdin=_Terminal(), env={}))
    assert status == 1 and "give --snapshot, --directory or --bootstrap-controller" in err.getvalue()


def _leads(loop, quorum, node_id) -> bool:
    try:
        part = loop.run(describe_quorum(*quorum.addresses()[node_id]))
    except OSError:
        return False
    return part is not None and part.leader_id == node_id


# ---------------------------------------------------------------- a real terminal


def test_interactive_process_in_a_terminal_shows_the_live_prompt(quorum, brokers, tmp_path):
    import os
    import pty
    import select
    import sys

    alive = [f"{i}@{h}:{p}" for i, (h, p) in quorum.addresses().items() if quorum.procs[i].poll() is None]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real console entry point on a terminal
        os.environ["KRAFTSMAN_SHELL_HISTORY"] = str(tmp_path / "history")
        os.environ["PROMPT_TOOLKIT_NO_CPR"] = "1"
        os.execv(sys.executable, [sys.executable, "-c", "from kraftsman.cli.shell.tool import main; main()",
                                  "--controllers", ",".join(alive)])
    screen = ""

    def read_until(text: str, timeout: float = 15) -> None:
        nonlocal screen
        deadline = time.monotonic() + timeout
        while text not in screen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    screen += os.read(fd, 65536).decode(errors="replace")
                except OSError:
                    break
        assert text in screen, screen[-500:]

    try:
        read_until("[leader ")
        os.write(fd, b"ls /image/topics/byName\r")
        read_until("after-failover")
        os.write(fd, b"exit\r")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert re.search(r"\[leader \d+, epoch \d+, hw \d+\] >> ", screen) and "Traceback" not in screen
