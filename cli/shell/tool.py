"""kafka-metadata-shell: browse a metadata snapshot, log segment or log directory as a tree.

Rules:
- Kafka 3.9's flags (-s/--snapshot and the positional command) behave as in Kafka; --directory,
  --offset and the live mode (--controllers / --bootstrap-controller, -c/--config, --timeout: see
  shell.live) are kraftsman additions. Non-interactive output goes to stdout with no banner.
- Errors are one line in the suite's style, never Kafka's 'Unexpected error: ...': no source is a usage
  error (64), a missing file or an unusable directory 1, a held directory lock Kafka's 'Unable to lock <dir>.
  ...' (1); a batch whose CRC does not match is reported and skipped (one-shot and batch modes then exit 2),
  or stops the load with --strict (exit 2).
- prompt_toolkit is imported only when the interactive shell starts.
- The command line is a typer app (help, man page, completion and KRAFTSMAN_SHELL_* variables come from it);
  words after the first non-option word are the shell command, passed as typed. Live mode takes a profile's
  bootstrap controllers, client settings and timeout when no source is given (--profile, KRAFTSMAN_PROFILE,
  current-profile), and -X key=value client settings.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from ..common import profiles
from ..common.boundary import exit_with, usage_exit
from ..common.environment import Environment
from ..common.key_values import BadPair
from ..common.status import ExitStatus, ToolError
from ..common.typer_app import is_default, run_app
from ..completion import completers
from .session import HISTORY_ENV, bad_command_line, open_script, run_session

PROG = "kafka-metadata-shell"
NO_SOURCE = f"{PROG}: give --snapshot, --directory or --bootstrap-controller"
PROGRESS_MIN_BYTES = 8 << 20


app = typer.Typer(name=PROG, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"], "allow_interspersed_args": False})
Text = Optional[str]


@app.command(help="The Apache Kafka metadata shell")
def shell(ctx: typer.Context,
          snapshot: Annotated[Text, typer.Option("--snapshot", "-s", help="The snapshot file to read.")] = None,
          directory: Annotated[Text, typer.Option(
              "--directory", "-d", help="A metadata log directory: its newest snapshot, then the log after it "
                                        "(kraftsman).")] = None,
          offset: Annotated[Optional[int], typer.Option(
              "--offset", help="Show the metadata as of this log offset (kraftsman).")] = None,
          controllers: Annotated[Text, typer.Option(
              "--controllers", metavar="ID@HOST:PORT,...",
              help="Follow a running quorum as a read-only observer, given its voters in controller.quorum.voters "
                   "syntax (kraftsman).")] = None,
          bootstrap_controller: Annotated[Text, typer.Option(
              "--bootstrap-controller", "-C", metavar="HOST:PORT,...",
              help="Follow a running quorum as a read-only observer, found through these controllers "
                   "(kraftsman).")] = None,
          config: Annotated[Text, typer.Option(
              "--config", "-c", help="A property file with the client's security settings for --controllers / "
                                     "--bootstrap-controller, as kafka-cluster reads (kraftsman).")] = None,
          timeout: Annotated[Optional[float], typer.Option(
              "--timeout", metavar="SECONDS", help="Live mode: give up catching up with the quorum after this many "
                                                   "seconds (default: request.timeout.ms) (kraftsman).")] = None,
          profile: Annotated[Text, typer.Option(
              "--profile", autocompletion=profiles.complete_names,
              help="Live mode: take the bootstrap controllers, client settings and timeout from this "
                                "profile when no source is given (kraftsman).")] = None,
          client_property: Annotated[Optional[list[str]], typer.Option(
              "--client-property", "-X", metavar="KEY=VALUE",
              help="Live mode: a client setting (repeatable), over --config and the profile (kraftsman).")] = None,
          file: Annotated[Text, typer.Option(
              "--file", "-f", metavar="FILE", help="Run the commands in FILE, one a line ('-': stdin), with no "
                                                   "prompt, then exit; done too when stdin is not a terminal "
                                                   "(kraftsman).")] = None,
          keep_going: Annotated[bool, typer.Option(
              "--keep-going", help="Batch mode: run every line even after a failure; the exit status is still the "
                                   "first failure's (kraftsman).")] = False,
          strict: Annotated[bool, typer.Option(
              "--strict", help="Stop loading at the first batch whose CRC does not match (exit 2) instead of "
                               "reporting and skipping it (kraftsman).")] = False,
          output: Annotated[Literal["text", "json", "yaml"], typer.Option(
              "--output", "-o", help="The default output of cat, ls, find, tree and diff: Kafka's text, or JSON / YAML "
                                     "documents built from the records (schema: metadata-shell.schema.json) "
                                     "(kraftsman).")] = "text",
          command: Annotated[Optional[list[str]], typer.Argument(
              help="The command to run.", autocompletion=completers.metadata_paths)] = None) -> int:
    ns = argparse.Namespace(**{k: v for k, v in locals().items() if k != "ctx"})
    ns.command = list(command or [])
    return _start(ctx, ns, ctx.find_root().obj)


def _lock(directory: Path):
    """Take `<directory>/.lock` when it exists, as Kafka's shell does; return the open file (or None)."""
    from kraftsman.storage.log.dir_lock import DirectoryLockedError, lock_if_present

    try:
        return lock_if_present(directory)
    except DirectoryLockedError:
        raise ToolError(_lock_message(directory)) from None


def _lock_message(directory: Path) -> str:
    return (f"{PROG}: Unable to lock {os.path.abspath(directory)}. Please ensure that no broker or "
            "controller process is using this directory before proceeding.")


def _lock_directory(ns) -> object:
    if ns.snapshot:
        return _lock(Path(os.path.abspath(ns.snapshot)).parent.parent)
    directory = Path(os.path.abspath(ns.directory))
    return _lock(directory if (directory / "__cluster_metadata-0").is_dir() else directory.parent)


class _Progress:
    """Show loading progress on a terminal, at most four times a second."""

    def __init__(self, stream):
        self.stream, self.last, self.shown = stream, 0.0, False

    def __call__(self, done: int, total: int, records: int) -> None:
        now = time.monotonic()
        if total < PROGRESS_MIN_BYTES or now - self.last < 0.25:
            return
        self.last, self.shown = now, True
        percent = 100 * done // max(total, 1)
        self.stream.write(f"\rLoading: {percent}% ({done >> 20} of {total >> 20} MB, {records} records)")
        self.stream.flush()

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _load(ns, env: Environment, checks, offset=None, path=None):
    """Load the image of --snapshot / --directory (or `path`), CRCs checked by `checks`; return it."""
    from kraftsman.controller.image.loader import CorruptBatchError, LoadError, load

    progress = _Progress(env.stderr) if env.stderr_isatty else None
    try:
        if path is not None:
            result = load(path, offset=offset, progress=progress, on_fault=_warn(env), checks=checks)
        else:
            result = load(ns.snapshot, directory=ns.directory, offset=offset, progress=progress,
                          on_fault=_warn(env), checks=checks)
    except CorruptBatchError as e:
        raise ToolError(f"{PROG}: {e}", ExitStatus.CORRUPT) from None
    except LoadError as e:
        raise ToolError(f"{PROG}: {e}") from None
    except OSError as e:
        raise ToolError(f"{PROG}: {e.filename or path or ns.snapshot or ns.directory}: "
                        f"{e.strerror or e}") from None
    finally:
        if progress is not None:
            progress.clear()
    for message in result.warnings:
        _warn(env)(message)
    return result.image


def _warn(env: Environment):
    return lambda message: env.stderr.write(f"{PROG}: warning: {message}\n")


def crc_checks(ns, env: Environment):
    """Return the CRC checks of a load: bad batches reported on stderr and skipped, or fatal with --strict."""
    from kraftsman.controller.image.loader import CrcChecks

    return CrcChecks(on_corrupt=_warn(env), strict=ns.strict)


def _opener(ns, env: Environment, checks):
    def open_image(spec: str):
        if spec.lstrip("-").isdigit():
            return _load(ns, env, checks, offset=int(spec))
        return _load(ns, env, checks, path=spec)
    return open_image


def _local() -> dict:
    """Return /local's leaves (computed when read): kraftsman's version and the git commit it runs from."""
    from ..common.boundary import package_version

    return {"version": package_version, "commitId": _commit_id}


def _commit_id() -> str:
    """Return the git commit of the checkout kraftsman runs from (an editable install), else 'unknown'."""
    import subprocess

    here = Path(__file__).resolve().parent
    if not any((folder / ".git").exists() for folder in (here, *here.parents)):
        return "unknown"
    try:
        done = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=2)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


# --snapshot as Kafka 4.1+ words it (MetadataShell); 3.9 and 4.0 say what the option declares
SNAPSHOT_HELP_4_1 = "The metadata snapshot file to read."


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-metadata-shell with `argv`."""
    from ..common.kafka_release import kafka_release

    texts = {(None, "snapshot"): SNAPSHOT_HELP_4_1} if kafka_release(env) in ("4.1", "4.2") else None
    return run_app(app, argv, env, prog=PROG, tool_env_name="shell", usage_status=lambda argv: usage_exit(PROG, argv),
                   help_texts=texts)


def _start(ctx: typer.Context, ns: argparse.Namespace, env: Environment) -> int:
    """Check the sources (a profile may give the live one), then run the live or the file shell."""
    try:
        ns.client = _client_overrides(ns.client_property or [])
        sources = [s for s in (ns.snapshot, ns.directory, ns.controllers, ns.bootstrap_controller) if s]
        if not sources:
            _apply_profile(ctx, ns, env)
            sources = [ns.bootstrap_controller] if ns.bootstrap_controller else []
        if not sources:
            raise ToolError(NO_SOURCE, bad_command_line(ns))
        if len(sources) > 1:
            raise ToolError(f"{PROG}: give only one of --snapshot, --directory, --controllers and "
                            "--bootstrap-controller", bad_command_line(ns))
        if ns.controllers or ns.bootstrap_controller:
            from .live import run_live

            return run_live(ns, env, _local())
        lock = _lock_directory(ns)
        try:
            return _run(ns, env)
        finally:
            if lock is not None:
                lock.close()
    except ToolError as e:  # Kafka's messages are printed verbatim, not as kraftsman one-liners
        env.stderr.write(e.message + "\n")
        return e.status


def _client_overrides(pairs: list[str]) -> dict[str, str]:
    from ..common import client_settings

    try:
        return client_settings.overrides(pairs)
    except BadPair as e:
        raise ToolError(f"{PROG}: --client-property: expected KEY=VALUE, got {e.pair!r}", ExitStatus.ERROR) from None
    except client_settings.UnknownSetting as e:
        raise ToolError(f"{PROG}: --client-property: {e}", ExitStatus.ERROR) from None


def _apply_profile(ctx: typer.Context, ns: argparse.Namespace, env: Environment) -> None:
    """Take the live source and client settings from the profile in use (flag > variable > profile); a
    profile without controllers gives the shell nothing (it follows a quorum, not brokers)."""
    chosen = profiles.select(profiles.load(env.env), ns.profile, env.env)
    if chosen is not None and chosen.bootstrap_controller:
        profiles.fill(ns, chosen, lambda name: not is_default(ctx, name), servers=False, output=False)


def _run(ns, env: Environment) -> int:
    from kraftsman.shell.state import ShellState

    script = open_script(ns, env)
    if script is None and not ns.command:
        env.stdout.write("Loading...\n")
        env.stdout.flush()
    checks = crc_checks(ns, env)
    from ..common.kafka_release import kafka_release

    state = ShellState(_load(ns, env, checks, offset=ns.offset), local=_local(), open_image=_opener(ns, env, checks),
                       output=ns.output, release=kafka_release(env))
    status = run_session(state, ns, env, script, lambda: _interactive(state, env))
    return corrupt_status(status, checks, ns, script)


def corrupt_status(status: int, checks, ns, script) -> int:
    """Return 2 (CORRUPT) after a one-shot or batch run that skipped a corrupt batch, else `status`."""
    if checks.corrupt and (ns.command or script is not None):
        return ExitStatus.CORRUPT
    return status


def _interactive(state, env: Environment) -> int:
    from kraftsman.shell.repl import run_repl

    env.stdout.write("Starting...\n")
    env.stdout.flush()
    history = env.env.get(HISTORY_ENV) or str(Path.home() / ".kafka-metadata-shell_history")
    return run_repl(state, env.stdout.write, history_path=history, pager=env.stdout_isatty)


def main() -> None:
    """Console script entry point."""
    exit_with(run, PROG)
