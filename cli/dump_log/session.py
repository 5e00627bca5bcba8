"""One kafka-dump-log run over --files: Kafka 3.9's DumpLogSegments, byte for byte, plus `--output jsonl`.

For each file it prints `Dumping <file>` and dispatches on the text after the last '.': .log and .checkpoint
-> batches (and records with deep iteration), .index / .timeindex -> entries or checks, .snapshot -> producer
state, .txnindex -> aborted transactions, anything else -> `Ignoring unknown file` on stderr. Index
mismatches, time-index errors and non-consecutive offsets are printed on stderr after all files, as Kafka does.

Rules:
- Output is written in large chunks; garbage collection is paused while records are decoded.
- kraftsman beyond Kafka: a directory in --files is an error (exit 1, as Kafka's exception for a name with no
  '.'); a run that dumped no file at all (every one ignored as unknown) exits 1 with one line saying what
  dump-log reads; Kafka's terse texts (`For input string: ...` for a .log not named by its offset) get a hint.
- Every corrupt thing is recorded with `fail(arg, position, note)`; a run that found any ends with one
  summary line on stderr (how many batches failed and where) and exit 2 (kraftsman: Kafka exits 0).
- Heavy modules (decoders, index readers, jsonl, rich) are imported when a file needs them.
"""
from __future__ import annotations

import contextlib
import gc
import os
import re
import stat
from pathlib import Path

from kraftsman.storage.protocol.javafmt import java_path

from ..common.environment import Environment
from ..common.status import ExitStatus, ToolError
from .options import INT_MAX, DumpOptions

_FLUSH_LINES = 2000
_YAML_FLUSH_LINES = 500
_PROGRESS_BYTES = 64 << 20
_LISTED = 5  # positions named per file in the summary
FILE_KINDS = ".log, .checkpoint, .index, .timeindex, .snapshot and .txnindex"
DIRECTORY_HINT = f"--files takes files ({FILE_KINDS}), comma-separated: e.g. --files DIR/00000000000000000000.log"
NOTHING_DUMPED = (f"no file was dumped: --files takes {FILE_KINDS} files (kafka-storage info reads "
                  "meta.properties)")
SEGMENT_NAME_HINT = ("a .log segment is named by the offset of its first batch (00000000000000000000.log): Kafka "
                     "reads the offset from the name, so give a renamed copy its offset name")
PROG = "kafka-dump-log"


class DumpSession:
    """One run over --files: buffered stdout, deferred stderr reports, what was corrupt and where."""

    def __init__(self, opts: DumpOptions, env: Environment):
        self.opts, self.env = opts, env
        self.out: list[str] = []
        self.corrupt = False
        self.failures: dict[str, list[tuple[int | None, str | None]]] = {}
        self.index_mismatches: dict[str, list] = {}
        self.gaps: dict[str, list] = {}
        from .index import TimeIndexErrors

        self.time_errors = TimeIndexErrors()
        self.dumped = 0          # files dumped (not ignored as unknown)
        # YAML is slow to write: small chunks, so that the first documents show at once (| head, | less)
        self.flush_lines = _YAML_FLUSH_LINES if opts.output == "yaml" else _FLUSH_LINES

    # -- output
    def emit(self, line: str) -> None:
        """Queue one stdout line."""
        self.out.append(line)
        if len(self.out) >= self.flush_lines:
            self.flush()

    def emit_lines(self, lines: list) -> None:
        """Queue stdout lines."""
        self.out += lines
        if len(self.out) >= self.flush_lines:
            self.flush()

    def flush(self) -> None:
        """Write the queued stdout lines in one chunk (--output yaml: each JSON line as a YAML document)."""
        if self.out:
            if self.opts.output == "yaml":
                self.env.stdout.write(_as_yaml(self.out))
            else:
                self.out.append("")  # the last line's newline, without copying the chunk once more
                self.env.stdout.write("\n".join(self.out))
            self.out.clear()

    def report(self, message: str, corrupt: bool = True) -> None:
        """Write one stderr line now (after flushing stdout, to keep the two in order on a terminal)."""
        self.flush()
        self.env.stderr.write(message + "\n")
        self.corrupt = self.corrupt or corrupt

    def fail(self, arg: str, position: int | None = None, note: str | None = None) -> None:
        """Record something corrupt in file `arg`: a batch at `position`, or a `note` (index entries...)."""
        self.corrupt = True
        self.failures.setdefault(java_path(arg), []).append((position, note))

    def resolve(self, arg: str) -> Path:
        """Return the file an argument names, relative to the environment's working directory."""
        return Path(os.path.join(self.env.cwd, arg))

    def absolute(self, arg: str) -> str:
        """Return the path as java.io.File.getAbsolutePath prints it (no '.' removal)."""
        return java_path(arg if arg.startswith("/") else os.path.join(self.env.cwd, arg))

    # -- the run
    def run(self) -> int:
        """Dump every file and return the exit status."""
        frozen = gc.isenabled()
        gc.disable()
        gc.freeze()
        try:
            for arg in self.opts.files:
                self.dump_file(arg)
        finally:
            self.flush()
            if frozen:
                gc.unfreeze()
                gc.enable()
        self.print_deferred()
        if not self.dumped:
            self.env.stderr.write(f"{PROG}: {NOTHING_DUMPED}\n")
            return ExitStatus.ERROR
        if not self.corrupt:
            return ExitStatus.OK
        self.env.stderr.write(summary(self.failures) + "\n")
        return ExitStatus.CORRUPT

    def dump_file(self, arg: str) -> None:
        """Dump one file according to its suffix."""
        if self.resolve(arg).is_dir():
            raise ToolError(f"{java_path(arg)} is a directory", hint=DIRECTORY_HINT)
        self.dumped += 1
        jsonl = self.opts.output in ("jsonl", "yaml")
        if not jsonl:
            self.emit(f"Dumping {java_path(arg)}")
        name = Path(java_path(arg)).name
        suffix = name[name.rfind("."):] if "." in name else ""
        if suffix in (".log", ".checkpoint"):
            if jsonl:
                from .jsonl import dump_log_jsonl

                dump_log_jsonl(self, arg)
            else:
                self.dump_log(arg, name)
            return
        from . import index as idx

        if jsonl and suffix in (".index", ".timeindex", ".snapshot", ".txnindex"):
            from .jsonl import unsupported_object

            self.emit(unsupported_object(arg))
            return

        handler = {".index": idx.dump_index, ".timeindex": idx.dump_time_index,
                   ".snapshot": idx.dump_producer_snapshot, ".txnindex": idx.dump_txn_index}.get(suffix)
        if handler is None:
            self.report(f"Ignoring unknown file {java_path(arg)}", corrupt=False)
            self.dumped -= 1
        else:
            handler(self, arg)

    def log_header(self, name: str) -> str:
        """Return the line printed before the batches of a .log or .checkpoint file."""
        if name.endswith(".log"):
            return f"Log starting offset: {_java_long(name.split('.')[0])}"
        if name == "bootstrap.checkpoint":
            return "KRaft bootstrap snapshot"
        from kraftsman.storage.log.snapshot import parse_snapshot_name

        snapshot = parse_snapshot_name(name)
        if snapshot is None:
            raise ToolError(f"{name} is not a snapshot file name (<20-digit offset>-<10-digit epoch>.checkpoint)")
        return f"Snapshot end offset: {snapshot.end_offset}, epoch: {snapshot.epoch}"

    def dump_log(self, arg: str, name: str) -> None:
        """Print the batches (and records) of a .log or .checkpoint file."""
        from kraftsman.storage.log.index import DumpBatchReader

        from .format import RecordFormatter

        self.emit(self.log_header(name))
        path = self.resolve(arg)
        _require(path)
        reader = DumpBatchReader(path, max_bytes=self.opts.max_bytes, legacy=True)
        formatter = RecordFormatter(self.payload_parser(), self.opts.skip_record_metadata, self.opts.release) \
            if self.opts.deep_iteration else None
        with contextlib.closing(self.progress(reader, path)) as batches:   # a failed write (| head) clears the bar
            for batch in batches:
                self.dump_batch(batch, formatter, arg)
        if reader.error:
            self.report(f"{PROG}: {reader.error}")
            self.fail(arg, reader.error_position)
        elif reader.trailing_bytes > 0 and self.opts.max_bytes == INT_MAX:
            self.emit(f"Found {reader.trailing_bytes} invalid bytes at the end of {name}")
            self.fail(arg, reader.valid_bytes, f"{reader.trailing_bytes} invalid bytes")
        if formatter is not None and formatter.gaps:
            self.gaps.setdefault(self.absolute(arg), []).extend(formatter.gaps)

    def dump_batch(self, batch, formatter, arg: str) -> None:
        """Print one batch line and, with deep iteration, its records."""
        from kraftsman.storage.records.metadata_json import RecordError

        from .format import batch_line

        try:
            line = batch_line(batch, batch.position)
        except RecordError as e:
            self.report(f"{PROG}: {java_path(arg)}: batch at position {batch.position}: {e}")
            self.fail(arg, batch.position)
            return
        out = self.out
        out.append(line)
        failed = line.endswith("isvalid: false")
        if formatter is not None:
            failed |= self.format_records(batch, formatter, arg)
        if failed:
            self.fail(arg, batch.position)
        if len(out) >= _FLUSH_LINES:
            self.flush()

    def format_records(self, batch, formatter, arg: str) -> bool:
        """Print the records of one batch; return True when some could not be read or decoded."""
        from kraftsman.storage.records.metadata_json import RecordError

        errors = getattr(formatter.parser, "errors", 0)
        try:
            formatter.batch(batch, self.out)
        except RecordError as e:
            self.report(f"{PROG}: {java_path(arg)}: records of the batch at position {batch.position} "
                        f"(offset {batch.base_offset}) cannot be read: {e}", corrupt=False)
            return True
        return getattr(formatter.parser, "errors", 0) != errors

    def payload_parser(self):
        """Return the parser of record contents, or None when contents are not printed."""
        if not self.opts.print_data_log:
            return None
        if self.opts.decoder == "cluster-metadata":
            from kraftsman.storage.records.metadata_json import MetadataParser

            return MetadataParser()
        if self.opts.decoder == "remote-log-metadata":
            raise ToolError("--remote-log-metadata-decoder is not supported by kraftsman (RemoteLogMetadataSerde "
                            "records are not decoded); use --print-data-log to see the raw values")
        if self.opts.decoder == "share-group-state":
            raise ToolError("--share-group-state-decoder is not supported by kraftsman (Kafka 4.x's share coordinator "
                            "records are not decoded); use --print-data-log to see the raw values")
        if self.opts.decoder in ("offsets", "transaction-log"):
            from .decoders import parser_for

            return parser_for(self.opts.decoder)
        from .decoders import class_decoder_parser

        return class_decoder_parser(self.opts.key_decoder, self.opts.value_decoder)

    def progress(self, batches, path: Path):
        """Yield the batches, showing a rich progress bar on a terminal stderr for large files, unless stdout
        goes to a terminal or a pipe: there the output (or the reader's: `| head`, `| less`) lands on the
        same screen, where the bar would be left behind, cut into the lines."""
        size = path.stat().st_size
        if not self.env.stderr_isatty or size < _PROGRESS_BYTES or _shares_the_screen(self.env.stdout):
            yield from batches
            return
        from rich.progress import Progress

        with Progress(transient=True, console=rich_console(self.env)) as bar:
            task = bar.add_task(path.name, total=size)
            for i, batch in enumerate(batches):
                if not i & 63:
                    bar.update(task, completed=batch.position)
                yield batch

    def print_deferred(self) -> None:
        """Print the stderr summaries Kafka prints after all files."""
        err = self.env.stderr
        for name, pairs in self.index_mismatches.items():
            err.write(f"Mismatches in :{name}\n")
            err.writelines(f"  Index offset: {i}, log offset: {o}\n" for i, o in reversed(pairs))
        self.time_errors.print(err)
        for name, pairs in self.gaps.items():
            err.write(f"Non-consecutive offsets in {name}\n")
            err.writelines(f"  {a} is followed by {b}\n" for a, b in reversed(pairs))


def summary(failures: dict[str, list[tuple[int | None, str | None]]]) -> str:
    """Return the last stderr line of a corrupt run: how many batches failed (and other problems), and where."""
    found = [position for each in failures.values() for position, _ in each]
    batches, others = sum(p is not None for p in found), sum(p is None for p in found)
    counts = [_count(batches, "batch", "batches") + " failed"] if batches or not others else []
    counts += [_count(others, "other problem" if batches else "problem", "other problems" if batches else "problems")]\
        if others else []
    places = "; ".join(f"{file} {_places(each)}" for file, each in failures.items())
    return f"{PROG}: {', '.join(counts)}: {places}" if places else f"{PROG}: corrupt data (see the messages above)"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _places(found: list[tuple[int | None, str | None]]) -> str:
    """Return where things failed in one file: `at positions 91, 236 (135 invalid bytes at position 381)`."""
    plain = [str(p) for p, note in found if note is None and p is not None]
    notes = [f"{note} at position {p}" if p is not None else note for p, note in found if note]
    words = [f"at position{'s' if len(plain) > 1 else ''} {_listed(plain)}"] if plain else []
    words += [f"({_listed(notes)})"] if notes else []
    return " ".join(words) or "(unreadable)"


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:_LISTED])
    return shown if len(items) <= _LISTED else f"{shown} and {len(items) - _LISTED} more"


def rich_console(env: Environment):
    """Return a rich console on env's stderr (colour as the environment allows)."""
    from rich.console import Console

    return Console(file=env.stderr, no_color=not env.color)


def _as_yaml(lines: list[str]) -> str:
    """Return the JSON objects of --output jsonl as YAML documents."""
    import json

    from ..common.output import yaml_document

    return "".join(yaml_document(json.loads(line)) for line in lines)


def _shares_the_screen(stream) -> bool:
    """Tell whether what is written to `stream` may reach the terminal: a terminal, or a pipe."""
    try:
        return stream.isatty() or stat.S_ISFIFO(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _java_long(text: str) -> int:
    if not re.fullmatch(r"[-+]?\d+", text):
        raise ToolError(f'For input string: "{text}"', hint=SEGMENT_NAME_HINT)
    return int(text)


def _require(path: Path) -> None:
    if not path.is_file():
        raise ToolError(f"{path.absolute()} (No such file or directory)")
