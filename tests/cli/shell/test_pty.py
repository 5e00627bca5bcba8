"""kafka-metadata-shell in a pseudo-terminal (pexpect): Ctrl-C during a command, while loading, at the prompt.

The log is generated (tests/bench/gen_metadata_log.py) big enough that `tree /image/topics` runs for
more than a second, so a Ctrl-C sent after one second lands while the command runs.
"""
from __future__ import annotations

import importlib.util
import shutil
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")
pytestmark = pytest.mark.skipif(shutil.which("kafka-metadata-shell") is None,
                                reason="needs the kafka-metadata-shell console script on PATH")

REPO = Path(__file__).resolve().parents[3]
ENV = {"PATH": str(Path(shutil.which("kafka-metadata-shell") or "/").parent) + ":/usr/bin:/bin",
       "TERM": "xterm", "KRAFTSMAN_SHELL_HISTORY": "/dev/null", "PROMPT_TOOLKIT_NO_CPR": "1", "PAGER": "cat"}
PROMPT = ">>"


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    """Return a generated 2,000-topic log (202,000 records, 24 MB)."""
    spec = importlib.util.spec_from_file_location("gen_metadata_log", REPO / "tests" / "bench" / "gen_metadata_log.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(tmp_path_factory.mktemp("pty") / "big.log", topics=2000, partitions=100)


def _spawn(log: Path):
    return pexpect.spawn("kafka-metadata-shell", ["--snapshot", str(log)], env=ENV, encoding="utf-8",
                         dimensions=(40, 120), timeout=120)


def _finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_ctrl_c_cancels_the_running_command_and_keeps_the_image(big_log):
    child = _spawn(big_log)
    child.expect(PROMPT)
    child.sendline("tree /image/topics")
    time.sleep(1)
    child.sendintr()
    child.expect(r"\^C")
    child.expect(PROMPT)
    assert "PartitionRegistration" not in child.before     # the cancelled listing printed nothing
    child.sendline("pwd")
    child.expect(r"2004l/\r\n")                            # after the bracketed-paste reset: pwd's '/'
    child.sendline("cat /image/topics/byName/bench-topic-01999/name /image/topics/byName/bench-topic-00000/99")
    child.expect(r"bench-topic-01999\r\nPartitionRegistration\(replicas=\[")
    child.expect(PROMPT)
    child.sendline("exit")
    assert _finish(child) == 0


def test_ctrl_c_at_the_prompt_clears_the_line(big_log):
    child = _spawn(big_log)
    child.expect(PROMPT)
    child.send("tree /ima")
    child.sendintr()
    child.expect(r"\^C")
    child.sendline("pwd")
    child.expect(r"2004l/\r\n")
    child.sendline("exit")
    assert _finish(child) == 0


def test_ctrl_c_while_loading_exits_130(big_log):
    child = _spawn(big_log)
    child.expect(r"Loading: \d+%")          # the progress line: the load is under way, not merely announced
    child.sendintr()
    if child.expect([pexpect.EOF, PROMPT]) == 1:
        child.sendline("exit")
        pytest.skip("the log loaded before Ctrl-C arrived")
    child.close()
    seen = (child.exitstatus, child.signalstatus, child.before)
    assert child.exitstatus == 130, seen
    assert "Traceback" not in child.before and "Interrupted." in child.before, seen


def test_long_output_pages_at_once_and_q_returns_to_the_prompt(big_log):
    child = pexpect.spawn("kafka-metadata-shell", ["--snapshot", str(big_log)], env={**ENV, "PAGER": "less -FRX"},
                          encoding="utf-8", dimensions=(40, 120), timeout=120)
    child.expect(PROMPT)
    started = time.monotonic()
    child.sendline("tree /image/topics")
    child.expect("PartitionRegistration")
    first_line = time.monotonic() - started
    time.sleep(0.5)
    child.send("q")
    child.expect(PROMPT)
    child.sendline("pwd")
    child.expect(r"2004l/\r\n")
    child.sendline("exit")
    assert _finish(child) == 0
    assert first_line < 5, first_line            # the pager shows the first screen, not the whole listing
