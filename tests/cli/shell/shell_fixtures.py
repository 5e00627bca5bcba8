"""Helpers shared by the metadata shell's tests: generated logs and an in-process run."""
from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.shell.tool import run

REPO = Path(__file__).resolve().parents[3]


def generated_log(path: Path, topics: int, partitions: int) -> Path:
    """Write a log of `topics` batches (a TopicRecord and its PartitionRecords each) with the bench generator."""
    spec = importlib.util.spec_from_file_location("gen_metadata_log", REPO / "tests" / "bench" / "gen_metadata_log.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(path, topics=topics, partitions=partitions)


class Terminal(io.StringIO):
    """A stdin that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def shell(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    """Run kafka-metadata-shell in-process; `stdin` text means piped input, None a terminal with no input."""
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, stdin=Terminal() if stdin is None else io.StringIO(stdin), env={})
    status = run_command(run, list(argv), env, prog="kafka-metadata-shell")
    return status, out.getvalue(), err.getvalue()
