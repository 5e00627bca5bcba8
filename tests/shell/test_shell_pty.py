"""The real kafka-metadata-shell in a pseudo-terminal (pexpect) on a real Kafka log directory: diff in colour only on
a terminal (not into '> FILE', a pipe, NO_COLOR or --no-color), ls into '> FILE' one name a line, Tab on options."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")
pytestmark = pytest.mark.skipif(shutil.which("kafka-metadata-shell") is None,
                                reason="needs the kafka-metadata-shell console script on PATH")

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data" / "kafka-temp" / "data" / "kafka1"
ENV = {"PATH": str(Path(shutil.which("kafka-metadata-shell") or "/").parent) + ":/usr/bin:/bin",
       "TERM": "xterm", "KRAFTSMAN_SHELL_HISTORY": "/dev/null", "PROMPT_TOOLKIT_NO_CPR": "1", "PAGER": "cat"}
PROMPT = ">>"
# broker 1 of this cluster was running at offset 21000 and fenced at the end of the log
BROKER = ["diff", "21000", "-p", "/image/cluster/brokers/1"]
FIELD = "    fenced: false -> true"
COLOURED = "    \033[36mfenced\033[0m: \033[31mfalse\033[0m -> \033[32mtrue\033[0m"


@pytest.fixture(scope="module", autouse=True)
def logs():
    if not LOGS.is_dir():
        pytest.skip(f"real Kafka fixtures not found at {LOGS}")


def _spawn(*args: str, env: dict | None = None):
    return pexpect.spawn("kafka-metadata-shell", [*args], env={**ENV, **(env or {})}, encoding="utf-8",
                         dimensions=(40, 160), timeout=60)


def _finish(child) -> int:
    child.sendline("exit")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_diff_is_coloured_on_a_terminal_and_plain_into_a_file(tmp_path):
    child = _spawn("--directory", str(LOGS))
    child.expect(PROMPT)
    child.sendline(" ".join(BROKER))
    child.expect_exact(COLOURED)
    child.expect(PROMPT)
    child.sendline(" ".join(BROKER) + f" > {tmp_path / 'diff.txt'}")
    child.expect(PROMPT)
    assert _finish(child) == 0
    written = (tmp_path / "diff.txt").read_text()
    assert FIELD + "\n" in written and "\033" not in written


@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_color_turns_colour_off(how):
    child = _spawn(*(["--no-color"] if how == "--no-color" else []), "--directory", str(LOGS),
                   env={"NO_COLOR": "1"} if how == "NO_COLOR" else None)
    child.expect(PROMPT)
    child.sendline(" ".join(BROKER))
    child.expect_exact(FIELD + "\r\n")
    child.expect(PROMPT)
    assert _finish(child) == 0


def test_one_shot_diff_is_coloured_on_a_terminal_only():
    child = _spawn("--directory", str(LOGS), *BROKER)
    child.expect_exact(COLOURED)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    piped = subprocess.run(["kafka-metadata-shell", "--directory", str(LOGS), *BROKER], env=ENV, capture_output=True,
                           text=True, timeout=60)
    assert piped.returncode == 0 and FIELD + "\n" in piped.stdout and "\033" not in piped.stdout


def test_ls_into_a_file_is_one_name_a_line(tmp_path):
    child = _spawn("--directory", str(LOGS))
    child.expect(PROMPT)
    child.sendline("ls /image")
    child.expect(r"acls +clientQuotas +cluster")              # on the screen: columns
    child.expect(PROMPT)
    child.sendline(f"ls /image > {tmp_path / 'ls.txt'}")
    child.expect(PROMPT)
    assert _finish(child) == 0
    names = (tmp_path / "ls.txt").read_text().splitlines()
    assert names[:3] == ["acls", "clientQuotas", "cluster"] and all(" " not in name for name in names)


def test_tab_completes_an_option_and_its_value():
    child = _spawn("--directory", str(LOGS))
    child.expect(PROMPT)
    child.send("cat --out\t")
    child.expect(r"put(\x1b\[C| )")        # the completed rest of '--output', redrawn alone; a space or a cursor move
    child.send("y\t")
    child.expect(r"aml(\x1b\[C| )")
    child.send("/image/features/metadataVersion\r")
    child.expect_exact("--- 3.5-IV2")                       # one YAML document
    child.expect(PROMPT)
    assert _finish(child) == 0
