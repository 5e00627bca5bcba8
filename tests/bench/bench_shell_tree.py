"""Benchmark: `tree /image/topics` in kafka-metadata-shell on the 1,010,000-record generated log (issue 20).

Run: python tests/bench/bench_shell_tree.py [--topics 10000 --partitions 100] [--keep DIR]

Measures, in one run:
- a plain read of the log file (the floor any loader pays), and `python -c pass`;
- one-shot: `--snapshot LOG pwd` (load + nothing: the load time and the loaded image's peak RSS) and
  `--snapshot LOG tree /image/topics` to a pipe (time to its first output line, the whole run, peak RSS);
- interactive, in a pseudo-terminal through the default pager (`less -FRX`): from the prompt (the image is
  loaded) to the first line of `tree /image/topics` on the screen, then `q`, `exit`; the process's peak RSS.
Targets (issue 20): the first line under 1 s after loading; peak RSS within the loaded image + 100 MB.
Prints the figures and the ratios to the plain read. Not a timed assertion.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_metadata_shell import plain_read, shell_command  # noqa: E402  (sibling benchmark module)
from gen_metadata_log import generate  # noqa: E402

PROMPT = ">>"  # prompt_toolkit draws the space as a cursor move


def one_shot(argv: list[str]) -> tuple[float, float, int]:
    """Run argv with stdout piped; return (seconds to the first output line, seconds in all, peak RSS bytes)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    first = time.perf_counter() - start
    for _ in proc.stdout:
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return first, time.perf_counter() - start, usage.ru_maxrss * 1024


def interactive(log: Path) -> tuple[float, float, int]:
    """Return (seconds to load, seconds from `tree /image/topics` to its first line on screen, peak RSS bytes)."""
    import pexpect

    # PROMPT_TOOLKIT_NO_CPR: a pty under pexpect never answers prompt-toolkit's cursor position request, whose
    # time-out (about 1 s) a real terminal never waits for
    env = dict(os.environ, PAGER="less -FRX", TERM="xterm", KRAFTSMAN_SHELL_HISTORY=os.devnull,
               PROMPT_TOOLKIT_NO_CPR="1")
    command = shell_command()
    start = time.perf_counter()
    child = pexpect.spawn(command[0], command[1:] + ["--snapshot", str(log)], env=env, encoding="utf-8",
                          dimensions=(40, 120), timeout=300)
    child.expect_exact(PROMPT)
    loaded = time.perf_counter() - start
    child.sendline("tree /image/topics")
    sent = time.perf_counter()
    child.expect("byId")
    first = time.perf_counter() - sent
    rss = _peak_rss(child.pid)
    child.send("q")
    child.expect_exact(PROMPT)
    child.sendline("exit")
    child.expect(pexpect.EOF)
    return loaded, first, rss


def _peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--keep", help="a directory to keep (and reuse) the generated log in")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench-shell-tree-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "00000000000000000000.log"
    if not log.exists():
        generate(log, args.topics, args.partitions)
    read = min(plain_read(log) for _ in range(3))
    shell = shell_command() + ["--snapshot", str(log)]
    _, load, image_rss = one_shot(shell + ["pwd"])
    first, whole, tree_rss = one_shot(shell + ["tree", "/image/topics"])
    loaded, first_tty, tty_rss = interactive(log)
    mb = 1 << 20
    print(f"log: {log.stat().st_size / mb:.0f} MB, {args.topics * (args.partitions + 1)} records; "
          f"plain read {read * 1000:.0f} ms; load average {os.getloadavg()[0]:.2f}")
    print(f"one-shot pwd (load only):  {load:6.2f} s = {load / read:5.1f}x the plain read, peak RSS "
          f"{image_rss / mb:.0f} MB (the loaded image)")
    print(f"one-shot tree to a pipe:   first line {first:6.2f} s ({first - load:+.2f} s after loading: target < 1 s), "
          f"all {whole:.2f} s, peak RSS {tree_rss / mb:.0f} MB ({(tree_rss - image_rss) / mb:+.0f} MB over the "
          f"image: target < +100 MB)")
    print(f"interactive, less -FRX:    loaded in {loaded:.2f} s; first line {first_tty:.2f} s after the command "
          f"(target < 1 s), peak RSS {tty_rss / mb:.0f} MB ({(tty_rss - image_rss) / mb:+.0f} MB over the image)")


if __name__ == "__main__":
    main()
