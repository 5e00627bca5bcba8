"""The pipeline on Spark: the one module that imports pyspark (an optional extra).

Flow: the driver plans tasks (files or batch-aligned byte ranges, `inputs`), groups them by bytes into
about three groups per core and parallelizes the groups, so every core decodes whole files read by
the Python workers themselves (never `binaryFiles`, which packs many files into one partition). Each
worker runs the pure decoder and yields rows of one wide union schema tagged with their table; the
union is persisted, split into `records`, `batches` and `errors`, and the derived tables are Spark SQL
(`derived`) over the written `records`. Remote URIs (hdfs://, s3a://, ...) are read by Spark's
`binaryFile` source and decoded by the same function. Every table is written with mode overwrite,
so running the same command again replaces its output.

Rules:
- Only this module imports pyspark / py4j (import-linter contract in pyproject.toml), and only inside
  functions, so that the module itself imports without the extra (CI imports every module of the wheel).
- Quiet by default: log4j off before the JVM starts (a failure reaches the user as the command's
  one-line error, not as the JVM's stack traces), no console progress bar of Spark's own;
  the progress shown is ours (stage tasks done / total) on a terminal stderr.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from typing import TYPE_CHECKING

from .arrow_tables import to_arrow, write_parts
from .decode import RECORDS_ONLY, STRUCTURE
from .derived import DERIVED
from .inputs import Task, balance, is_remote, local_path
from .tables import BASE_TABLES, BATCHES, ERRORS, RECORDS, ddl, names, union_columns

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOG4J = """rootLogger.level = off
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""
FORMATS = {"parquet": "parquet", "jsonl": "json"}


def require() -> None:
    """Import what the Spark extra installs; raise ImportError (naming the missing module) if absent."""
    import pandas  # noqa: F401  (mapInArrow checks for it)
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401


def active_session() -> SparkSession | None:
    """Return the SparkSession already running in this process, if any (a caller's: not ours to stop)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def start_session(master: str, conf: dict[str, str], quiet: bool = True) -> SparkSession:
    """Start (or reuse) a SparkSession on `master`; user --conf values win over our defaults."""
    from pyspark.sql import SparkSession

    defaults = {"spark.ui.showConsoleProgress": "false", "spark.sql.sources.partitionOverwriteMode": "static"}
    if master.startswith("local"):
        defaults.update({"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": str(2 * (os.cpu_count() or 2))})
    if quiet:
        path = os.path.join(tempfile.gettempdir(), "kraftsman-pipeline-log4j2.properties")
        with open(path, "w") as f:
            f.write(_LOG4J)
        defaults["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{path}"
    builder = SparkSession.builder.master(master).appName("kraftsman-pipeline")
    for key, value in {**defaults, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if quiet:
        spark.sparkContext.setLogLevel("OFF")
    return spark


def _task_rows(tasks, selected: frozenset, convert):
    """Yield the rows of the selected tables for every task (runs in a Python worker)."""
    from .decode import decode_file

    for task in tasks:
        for table, row in decode_file(task.path, task.source, start=task.start, end=task.end,
                                      cluster_id=task.cluster_id, node_id=task.node_id, tables=selected):
            yield convert(table, row)


def _input_tasks(batches):
    """Yield the tasks of the input Arrow batches: planned groups, or files Spark read (remote URIs)."""
    for batch in batches:
        if "tasks" in batch.schema.names:
            for text in batch.column("tasks").to_pylist():
                yield from (Task(*t) for t in json.loads(text))
            continue
        for path, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            with tempfile.TemporaryDirectory(prefix="kraftsman-pipeline-") as tmp:
                local = os.path.join(tmp, path.rstrip("/").rsplit("/", 1)[-1])
                with open(local, "wb") as f:
                    f.write(content)
                yield Task(local, path)


def decode_pass(selected: frozenset, columns):
    """Return the mapInArrow function decoding the input tasks into rows of `columns`."""
    def run(batches):
        from .tables import union_converters

        if selected == RECORDS_ONLY:
            def convert(table, row):
                return row
        else:
            by_table = union_converters(tuple(t for t in BASE_TABLES if t in selected))

            def convert(table, row):
                return by_table[table](row)
        with gc_paused():
            yield from to_arrow(_task_rows(_input_tasks(batches), selected, convert), columns)

    return run


def inputs_frame(spark: SparkSession, tasks: list[Task], remote: list[str]):
    """Return the DataFrame the decode passes map over: one row per task group (one group per partition)."""
    sc = spark.sparkContext
    frames = []
    if tasks:
        groups = [(json.dumps(g),) for g in balance(tasks, 3 * sc.defaultParallelism)]
        frames.append(spark.createDataFrame(sc.parallelize(groups, len(groups)), "tasks string"))
    if remote:
        files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                 .option("pathGlobFilter", "*.{log,checkpoint}").load(remote))
        frames.append(files.select("path", "content"))
    return frames


def table_path(out: str, table: str) -> str:
    """Return where a table is written below the output directory."""
    return out.rstrip("/") + "/" + table


def _write(df, out: str, table: str, fmt: str) -> None:
    df.write.mode("overwrite").format(FORMATS[fmt]).save(table_path(out, table))


def read_table(spark: SparkSession, out: str, table: str, fmt: str, columns=None):
    """Read a written table back (JSON Lines need their schema)."""
    reader = spark.read.format(FORMATS[fmt])
    if columns is not None and fmt == "jsonl":
        reader = reader.schema(ddl(columns))
    return reader.load(table_path(out, table))


def _decoded(frames, selected: frozenset, columns):
    parts = [f.mapInArrow(decode_pass(selected, columns), ddl(columns)) for f in frames]
    return functools.reduce(lambda a, b: a.unionByName(b), parts)


_RECORD_ERRORS = "SELECT source, batch_position AS position, offset, error AS message FROM records WHERE error IS NOT NULL"


def run_job(spark: SparkSession, tasks: list[Task], remote: list[str], out: str, fmt: str = "parquet",
            progress=None, derived: bool = True, direct: bool | None = None) -> dict[str, int]:
    """Decode, write every table below `out`, and return the row count of the base tables.

    Local Parquet output on a local master (or `direct=True`): one pass, each worker writing its part
    of the base tables (write_base_tables). Otherwise Spark's writers, two passes over the files:
    `records` (the full decode), then `batches` and `errors` (batch headers, CRCs and record framing
    only); record-level errors are read back from the written records.
    """
    progress = progress or Progress(spark, None)
    if direct_write(spark, remote, out, fmt) if direct is None else direct:
        counts = write_base_tables(spark, tasks, out, progress)
    else:
        frames = inputs_frame(spark, tasks, remote)
        write_records(spark, frames, out, fmt, progress)
        write_structure(spark, frames, out, fmt, progress)
        counts = {t: read_table(spark, out, t, fmt, c).count() for t, c in BASE_TABLES.items()}
    if derived:
        write_derived(spark, out, fmt, progress)
    return counts


def direct_write(spark: SparkSession, remote: list[str], out: str, fmt: str) -> bool:
    """Tell whether the workers write the base tables themselves: Parquet, local files, local master
    (every worker then sees the output folder); otherwise Spark's writers do."""
    return fmt == "parquet" and not remote and not is_remote(out) and spark.sparkContext.master.startswith("local")


def write_base_tables(spark: SparkSession, tasks: list[Task], out: str, progress) -> dict[str, int]:
    """Decode every task once on the workers, each writing its part of `records`, `batches` and
    `errors` with pyarrow into a staging folder; then move the tables into place (replacing an
    earlier run's) and register `records` as a view. Return the rows per table."""
    sc = spark.sparkContext
    root = os.path.abspath(local_path(out))
    staging = os.path.join(root, f"_staging-{uuid.uuid4().hex}")
    os.makedirs(staging)  # an output folder that cannot be written fails here, in the driver, with its OSError
    groups = list(enumerate(balance(tasks, 3 * sc.defaultParallelism))) or [(0, [])]
    try:
        with progress.phase("decoding"):
            written = sc.parallelize(groups, len(groups)).map(functools.partial(_write_group, staging)).collect()
        for table in BASE_TABLES:
            _replace(os.path.join(staging, table), os.path.join(root, table))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    read_table(spark, out, "records", "parquet").createOrReplaceTempView("records")
    return {t: sum(w[t] for w in written) for t in BASE_TABLES}


def _write_group(staging: str, group) -> dict[str, int]:
    """Write one task group's parts (runs in a Python worker, garbage collection paused)."""
    index, tasks = group
    with gc_paused():
        return write_parts([Task(*t) for t in tasks], staging, index)


@contextlib.contextmanager
def gc_paused():
    """Pause the garbage collector while a worker decodes (rows are freed by reference counting; the
    collector would only walk the long-lived decoders again and again), then restore it."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replace(staged: str, final: str) -> None:
    """Put a staged table folder in place of `final`, marked complete with _SUCCESS as Spark does."""
    with open(os.path.join(staged, "_SUCCESS"), "wb"):
        pass
    old = None
    if os.path.lexists(final):
        old = f"{final}.old-{uuid.uuid4().hex}"
        os.rename(final, old)
    os.rename(staged, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_records(spark: SparkSession, frames, out: str, fmt: str, progress) -> None:
    """Decode the records and write them; register the written table as the view `records`."""
    with progress.phase("decoding records"):
        _write(_decoded(frames, RECORDS_ONLY, RECORDS), out, "records", fmt)
    read_table(spark, out, "records", fmt, RECORDS).createOrReplaceTempView("records")


def write_structure(spark: SparkSession, frames, out: str, fmt: str, progress) -> None:
    """Write `batches`, and `errors` (the structure pass's plus the records' own, from the view `records`)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    structure = _decoded(frames, STRUCTURE, union_columns(("batches", "errors")))
    structure = structure.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with progress.phase("decoding batches"):
            _write(structure.where(F.col("table") == "batches").select(*names(BATCHES)), out, "batches", fmt)
        with progress.phase("writing errors"):
            errors = structure.where(F.col("table") == "errors").select(*names(ERRORS))
            _write(errors.unionByName(spark.sql(_RECORD_ERRORS)), out, "errors", fmt)
    finally:
        structure.unpersist()


def write_derived(spark: SparkSession, out: str, fmt: str, progress) -> None:
    """Write the derived tables, Spark SQL over the view `records`: their jobs are submitted together
    (one driver thread each) so that the small ones' planning and commits overlap the big ones' tasks;
    each table's own time is kept in progress.timings as 'table <name>'."""
    from concurrent.futures import ThreadPoolExecutor

    def write(name: str) -> None:
        started = time.monotonic()
        _write(spark.sql(DERIVED[name]), out, name, fmt)
        progress.timings[f"table {name}"] = time.monotonic() - started

    with progress.phase("writing derived tables"), ThreadPoolExecutor(len(DERIVED)) as pool:
        for future in [pool.submit(write, name) for name in DERIVED]:
            future.result()


class Progress:
    """Show the running phase and its stage's tasks done / total on a terminal stream, else one line each."""

    def __init__(self, spark: SparkSession, stream, live: bool = False):
        self.tracker = spark.sparkContext.statusTracker()
        self.stream, self.live = stream, live
        self.timings: dict[str, float] = {}

    def phase(self, name: str):
        """Return a context manager that reports the phase while it runs."""
        return _Phase(self, name)

    def line(self, text: str, final: bool = False) -> None:
        """Write a status line (rewritten in place on a terminal)."""
        if self.stream is None:
            return
        if self.live:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        elif final:
            self.stream.write(text + "\n")
        self.stream.flush()

    def tasks(self) -> str:
        """Return 'done/total tasks' over the active stages."""
        done = total = 0
        for stage in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage)
            if info is not None:
                done, total = done + info.numCompletedTasks, total + info.numTasks
        return f"{done}/{total} tasks" if total else ""


class _Phase:
    def __init__(self, progress: Progress, name: str):
        self.progress, self.name = progress, name
        self.stop = threading.Event()

    def __enter__(self):
        self.started = time.monotonic()
        if self.progress.live:
            threading.Thread(target=self._poll, daemon=True).start()
        return self

    def _poll(self) -> None:
        while not self.stop.wait(0.5):
            elapsed = time.monotonic() - self.started
            self.progress.line(f"pipeline: {self.name} {self.progress.tasks()} {elapsed:.0f} s")

    def __exit__(self, *exc) -> None:
        self.stop.set()
        elapsed = self.progress.timings[self.name] = time.monotonic() - self.started
        if exc[0] is None:
            self.progress.line(f"pipeline: {self.name} done in {elapsed:.1f} s", final=True)
