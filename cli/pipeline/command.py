"""kafka-metadata-export (= `kraftsman pipeline`): decode metadata logs and snapshots into tables with Spark.

    kafka-metadata-export -o OUT [--format parquet|jsonl] [--mode overwrite|append] [--master URL]
                          [--conf K=V ...] [--report FILE.html] PATH...

PATH is a file, a directory (every .log and .checkpoint below it), a glob, or any URI Spark reads
(hdfs://, s3a://, file://, ...). Writes OUT/<table>/cluster_id=<id>/ for batches, records, errors,
broker_events, partition_history, topic_lifecycle, config_changes, acl_changes and feature_changes,
replacing what a previous run wrote there (or adding new files' rows, --mode append).

Exit codes: 0 = done; 2 = done, but some input was unreadable or corrupt (see the `errors` table);
64 = bad arguments (a PATH that names nothing, nothing to decode); 69 = pyspark is not installed or Spark
cannot start; 1 = the job failed, or the output folder or the report cannot be written (one line: the
Python worker's exception, not a JVM stack trace). Paths and outputs are checked before Spark starts.

Rules:
- pyspark is imported only here, lazily, through `spark_job`; without it the command says how to
  install it and exits 69.
- Spark's own logging is quiet unless --verbose; the progress shown is one line per phase.
"""
from __future__ import annotations

import argparse
import re
import time
from typing import Annotated, Literal, Optional

import typer

from kraftsman.cli.common.boundary import exit_with, usage_exit
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.common.key_values import BadPair, key_values
from kraftsman.cli.common.status import ExitStatus, ToolError
from kraftsman.cli.common.typer_app import run_app

PROG = "kafka-metadata-export"
DESCRIPTION = ("Decode KRaft metadata log segments and snapshots into queryable tables (Parquet or JSON Lines) "
               "with Spark: local[*] by default, any cluster with --master.")
INSTALL_HINT = ("pyspark is not installed: the metadata pipeline needs the Spark extra, "
                "pip install 'kraftsman[spark]' (and Java 17 or newer)")


app = typer.Typer(name=PROG, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})
Text = Optional[str]


@app.command(help=DESCRIPTION)
def export(ctx: typer.Context,
           paths: Annotated[Optional[list[str]], typer.Argument(
               metavar="PATH", help="files, directories, globs or URIs of .log segments and .checkpoint "
                                    "snapshots")] = None,
           output_dir: Annotated[Text, typer.Option(
               "--output-dir", "-o", metavar="DIR", help="where the tables are written (required)")] = None,
           format: Annotated[Literal["parquet", "jsonl"], typer.Option(
               "--format", help="table format (parquet)")] = "parquet",
           master: Annotated[str, typer.Option(
               "--master", help="Spark master URL (local[*]: every core of this machine)")] = "local[*]",
           conf: Annotated[Optional[list[str]], typer.Option(
               "--conf", metavar="KEY=VALUE", help="a Spark configuration property, passed through "
                                                   "(repeatable)")] = None,
           mode: Annotated[Literal["overwrite", "append"], typer.Option(
               "--mode", help="overwrite: replace the tables (default); append: add the files whose source is not "
                              "in the tables yet (a re-run over the same files adds nothing), derived tables "
                              "recomputed")] = "overwrite",
           report: Annotated[Text, typer.Option(
               "--report", metavar="FILE.html",
               help="also write an HTML report with pictures of the tables (brokers fenced and unfenced, ISR shrinks "
                    "and expansions, topics created and deleted, config changes), per cluster")] = None,
           split_bytes: Annotated[Optional[int], typer.Option(
               "--split-bytes", metavar="N",
               help="cut local segments larger than N bytes into batch-aligned ranges (128 MiB)")] = None,
           verbose: Annotated[bool, typer.Option("--verbose", help="keep Spark's own logging")] = False) -> int:
    args = argparse.Namespace(paths=list(paths or []), output_dir=output_dir, format=format, master=master,
                              conf=list(conf or []), mode=mode, report=report, split_bytes=split_bytes,
                              verbose=verbose)
    return _export(args, ctx.find_root().obj)


def parse_conf(items: list[str]) -> dict[str, str]:
    """Return the --conf pairs as a dict; a pair without '=' is a usage error."""
    try:
        return key_values(items, strip_values=False)
    except BadPair as e:
        raise ToolError(f"Invalid --conf '{e.pair}': the format is key=value", ExitStatus.USAGE) from None


def _spark_module():
    from . import spark_job

    try:
        spark_job.require()
    except ImportError as e:
        if (e.name or "").split(".")[0] in ("pyspark", "py4j", "pyarrow", "pandas"):
            raise ToolError(INSTALL_HINT, ExitStatus.UNAVAILABLE) from None
        raise
    return spark_job


def _start(spark_job, args, conf: dict[str, str], env: Environment):
    try:
        return spark_job.start_session(args.master, conf, quiet=not args.verbose)
    except Exception as e:  # noqa: BLE001 (py4j / pyspark errors: no Java, bad master URL...)
        if env.debug:
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ToolError(f"cannot start Spark on {args.master}: {first}", ExitStatus.UNAVAILABLE) from None


def run(argv: list[str], env: Environment) -> int:
    """Run the pipeline with `argv` in `env`; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="pipeline",
                   usage_status=lambda argv: usage_exit(PROG, argv))


def _export(args: argparse.Namespace, env: Environment) -> int:
    """Decode the inputs into the tables (and the report); return the exit status."""
    if not args.paths or not args.output_dir:
        raise ToolError("PATH and --output-dir are required (see --help)", ExitStatus.USAGE)
    conf = parse_conf(args.conf)
    from .inputs import DEFAULT_SPLIT_BYTES, expand, plan

    files, remote = expand(args.paths)
    spark_job = _spark_module()
    _preflight(args, files, remote)
    tasks = plan(files, args.split_bytes or DEFAULT_SPLIT_BYTES)
    started = time.monotonic()
    borrowed = spark_job.active_session() is not None
    spark = _start(spark_job, args, conf, env)
    env.stderr.write(f"pipeline: Spark {spark.version} on {args.master} ready in {time.monotonic() - started:.1f} s; "
                     f"{len(files)} local files ({len(tasks)} tasks), {len(remote)} URIs\n")
    progress = spark_job.progress_for(spark, env.stderr, live=env.stderr_isatty, color=env.color)
    try:
        counts = _run_job(spark_job, spark, tasks, remote, args, progress)
        if args.report:
            with progress.phase("drawing the report"):
                write_report(spark_job, spark, args)
    finally:
        if not borrowed:
            spark.stop()
    env.stdout.write(" ".join(f"{table}={n}" for table, n in counts.items()) + f" written to {args.output_dir}\n")
    if args.report:
        env.stdout.write(f"report written to {args.report}\n")
    return ExitStatus.CORRUPT if counts.get("errors") else ExitStatus.OK


def _preflight(args: argparse.Namespace, files: list[str], remote: list[str]) -> None:
    """Check the inputs and outputs before Spark starts (preflight.py)."""
    from . import preflight

    preflight.check_inputs(args.paths, files, remote)
    preflight.check_output_dir(args.output_dir)
    if args.report:
        preflight.check_report(args.report, args.output_dir)


def write_report(spark_job, spark, args) -> None:
    """Draw the report from the written tables and write it to args.report."""
    from .report import render
    from .report_sources import cluster_names

    clusters, notes = spark_job.report_rows(spark, args.output_dir, args.format)
    page = render(clusters, notes=notes, names=cluster_names(spark_job, spark, args.output_dir, args.format))
    try:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        raise ToolError(f"cannot write the report to {args.report}: {e.strerror or e}") from None


def _run_job(spark_job, spark, tasks, remote, args, progress) -> dict[str, int]:
    try:
        return spark_job.run_job(spark, tasks, remote, args.output_dir, args.format, progress, mode=args.mode)
    except OSError as e:
        raise ToolError(f"cannot write the tables to {args.output_dir}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 (a failed Spark job is one line, not a Java stack trace)
        if type(e).__module__.startswith(("pyspark", "py4j")):
            raise ToolError(f"the Spark job failed: {failure_line(str(e), type(e).__name__)}") from None
        raise


_PYTHON_ERROR = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception)): (.*)$")


def failure_line(text: str, name: str) -> str:
    """Return the line telling what failed in a Spark error: the Python worker's exception (the last
    `SomeError: message` line of its traceback) when there is one, else the first line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    python = [line for line in lines if _PYTHON_ERROR.match(line)]
    if python:
        return python[-1]
    return lines[0] if lines else name


def main() -> None:
    """Console script entry point (`kafka-metadata-export`)."""
    exit_with(run, PROG)
