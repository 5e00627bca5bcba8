"""kafka-metadata-shell end to end in-process: flags, Kafka's messages, --directory, --offset, diff, the lock."""
from __future__ import annotations

import fcntl
import io
import shutil
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.shell.tool import run

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
KAFKA_TEMP = DATA / "kafka-temp" / "data" / "kafka1"


def shell(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_command(run, list(argv), Environment(stdout=out, stderr=err, env={}), prog="kafka-metadata-shell")
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def logdir() -> Path:
    if not KAFKA_TEMP.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {DATA}")
    return KAFKA_TEMP


def test_no_source_is_a_usage_error():
    """A bad command line: Kafka's 1, whatever --output asks (the suite's rule: common.boundary.usage_exit)."""
    status, out, err = shell("ls")
    assert (status, out) == (1, "")
    assert shell("--output", "json", "ls")[0] == 1
    assert err == "kafka-metadata-shell: give --snapshot, --directory or --bootstrap-controller\n"


ERRORS = [
    (["--snapshot", "/nonexistent/x.checkpoint"], "kafka-metadata-shell: /nonexistent/x.checkpoint: No such file or "
     "directory\n"),
    (["--directory", "/nonexistent"], "kafka-metadata-shell: /nonexistent: No such file or directory\n"),
    (["--directory", "/etc/hostname"], "kafka-metadata-shell: /etc/hostname: not a directory\n"),
]


@pytest.mark.parametrize("flags, message", ERRORS, ids=[e[0][1] for e in ERRORS])
def test_missing_sources_are_one_line(flags, message):
    assert shell(*flags, "ls") == (1, "", message)


def test_a_freshly_formatted_directory_loads_its_bootstrap_checkpoint(tmp_path):
    from kraftsman.cli.storage.tool import run as storage

    props = tmp_path / "server.properties"
    props.write_text(f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
                     f"listeners=CONTROLLER://localhost:9093\ncontroller.listener.names=CONTROLLER\n"
                     f"log.dirs={tmp_path / 'logs'}\n")
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={})
    assert run_command(storage, ["format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", str(props),
                                 "--release-version", "3.9-IV0"], env, prog="kafka-storage") == 0, env.stderr.getvalue()
    status, out, err = shell("--directory", str(tmp_path / "logs"), "cat", "/image/features/metadataVersion")
    assert (status, out, err) == (0, "3.9-IV0\n", "")


def test_directory_loads_newest_snapshot_plus_log(logdir):
    status, out, err = shell("--directory", str(logdir), "cat", "/image/provenance")
    assert status == 0, err
    newest = max(p.name for p in (logdir / "__cluster_metadata-0").glob("*.checkpoint"))
    assert int(out.split(",")[0].split()[1]) >= int(newest.split("-")[0]) - 1


def test_offset_travels_back_in_time(logdir):
    _, early, _ = shell("--directory", str(logdir), "--offset", "10", "cat", "/image/provenance")
    assert early.startswith("offset 10, ")
    _, topics_early, _ = shell("--directory", str(logdir), "--offset", "10", "ls", "/image/topics/byName")
    _, topics_late, _ = shell("--directory", str(logdir), "ls", "/image/topics/byName")
    assert len(topics_early.splitlines()) <= len(topics_late.splitlines())


def test_diff_between_two_offsets(logdir):
    status, out, err = shell("--directory", str(logdir), "diff", "21000", "30000", "--path", "/image/topics")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("--- 21000 (offset 21000,") and lines[1].startswith("+++ 30000 (offset 30000,")
    changed = [line for line in lines[2:] if not line.startswith("    ")]
    assert changed and all(line[:2] in ("- ", "+ ", "~ ") and line[2:].startswith("/image/topics/byName/")
                           for line in changed)


def test_diff_shows_the_changed_fields_of_real_records(logdir):
    status, out, err = shell("--directory", str(logdir), "diff", "21000")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("+++ current (offset ")
    broker = lines.index("~ /image/cluster/brokers/1")
    assert "    fenced: false -> true" in lines[broker:broker + 6]
    partition = lines.index("~ /image/topics/byName/__consumer_offsets/0")
    assert [line.split(":")[0] for line in lines[partition + 1:partition + 3]] == ["    isr", "    leader"]


def test_cat_json_of_a_subtree(logdir):
    import json
    snapshot = sorted((logdir / "__cluster_metadata-0").glob("*.checkpoint"))[-1]
    status, out, _ = shell("--snapshot", str(snapshot), "cat", "--output", "json", "/image/features")
    assert status == 0 and json.loads(out)["metadataVersion"] == "3.5-IV2"


def test_held_lock_is_refused_with_kafkas_message(logdir, tmp_path):
    copy = tmp_path / "logs"
    shutil.copytree(logdir, copy)
    (copy / ".lock").touch()
    snapshot = sorted((copy / "__cluster_metadata-0").glob("*.checkpoint"))[-1]
    import multiprocessing
    ready, done = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(copy / ".lock", ready, done))
    holder.start()
    try:
        ready.wait(10)
        status, _, err = shell("--snapshot", str(snapshot), "ls")
    finally:
        done.set()
        holder.join()
    assert status == 1
    assert err == (f"kafka-metadata-shell: Unable to lock {copy}. Please ensure that no broker or controller process "
                   "is using this directory before proceeding.\n")
    assert shell("--snapshot", str(snapshot), "ls", "/")[1] == "image\nlocal\n"


def _hold_lock(path, ready, done):
    with open(path, "a") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX)
        ready.set()
        done.wait(10)


def test_local_shows_kraftsmans_version_and_commit(tmp_path):
    import re

    from .shell_fixtures import generated_log

    log = generated_log(tmp_path / "one.log", topics=1, partitions=1)
    status, out, _ = shell("--snapshot", str(log), "cat", "/local/version", "/local/commitId")
    version, commit = out.splitlines()
    assert status == 0 and version not in ("", "unknown")
    assert re.fullmatch(r"[0-9a-f]{40}", commit) if (REPO / ".git").exists() else commit == "unknown"
