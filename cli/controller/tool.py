"""kafka-controller: run one KRaft controller in the foreground (`kafka-controller --config controller.properties`).

Rules:
- Logs go to stderr in Kafka's log4j layout (`[time] LEVEL message (logger)`); stdout stays empty.
- SIGTERM and SIGINT stop the controller cleanly (listener closed, pending requests failed, log
  flushed) and exit 0; a second signal exits at once with 130.
- SIGQUIT logs every thread's and task's stack and goes on (a JVM's thread dump, for a hang).
- Configuration and storage problems are one line on stderr with exit code 1, before any socket opens.
- The event loop is uvloop's when it is installed (a dependency on Linux and macOS), else asyncio's.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

import typer

from ..common.boundary import exit_with, usage_exit
from ..common.environment import Environment
from ..common.key_values import BadPair, key_values
from ..common.status import ExitStatus, ToolError
from ..common.typer_app import run_app

PROG = "kafka-controller"
DESCRIPTION = "Run a KRaft controller (process.roles=controller) in the foreground."
SIGNALS = ("SIGTERM or SIGINT stops it cleanly (exit 0; a second one exits at once with 130). SIGQUIT logs the stack "
           "of every thread and task to stderr, and the controller goes on (as a JVM's thread dump).")


app = typer.Typer(name=PROG, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.command(help=f"{DESCRIPTION} {SIGNALS}")
def controller(ctx: typer.Context,
               config: Annotated[str, typer.Option(
                   "--config", "-c", metavar="FILE", help="the server .properties file (process.roles=controller)")],
               override: Annotated[Optional[list[str]], typer.Option(
                   "--override", metavar="KEY=VALUE",
                   help="override a property of the file (repeatable), as kafka-server-start")] = None,
               log_level: Annotated[Literal["DEBUG", "INFO", "WARN", "ERROR"], typer.Option(
                   "--log-level", help="the lowest level logged to stderr (default INFO)")] = "INFO",
               version: Annotated[bool, typer.Option("--version", help="print the version and exit")] = False) -> int:
    env: Environment = ctx.find_root().obj
    if version:
        from importlib.metadata import version as installed

        env.stdout.write(f"{installed('kraftsman')}\n")
        return ExitStatus.OK
    return _run(env, config, list(override or []), log_level)


def _load_config(path: str, overrides: list[str], environ):
    """Read the server .properties file; KAFKA_* variables (KRAFTSMAN_KAFKA_ENV=1) and --override win over it."""
    from kraftsman.controller.server.config import ConfigError, from_properties

    from ..common.env_overrides import load_server_properties

    props = load_server_properties(path, environ)
    try:
        props |= key_values(overrides, strip_values=False)
    except BadPair as e:
        raise ToolError(f"Invalid override '{e.pair}': the format is key=value", ExitStatus.USAGE) from None
    try:
        return from_properties(props)
    except ConfigError as e:
        raise ToolError(str(e)) from None


def _setup_logging(env: Environment, level: str) -> None:
    import logging

    handler = logging.StreamHandler(env.stderr)
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s %(message)s (%(name)s)"))
    root = logging.getLogger("kraftsman")
    root.handlers[:] = [handler]
    root.setLevel({"WARN": "WARNING"}.get(level, level))
    root.propagate = False


async def _serve(config) -> int:
    import asyncio
    import signal

    from kraftsman.controller.server.config import ConfigError
    from kraftsman.controller.server.local_storage import StorageStartError
    from kraftsman.controller.server.node import ControllerServer
    from kraftsman.controller.server.stack_dump import log_stacks
    from kraftsman.storage.errors import StorageError

    try:
        server = ControllerServer(config)       # checks the TLS and SASL settings
        server.open_node()
    except (ConfigError, StorageStartError, StorageError) as e:
        raise ToolError(str(e)) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _on_signal, stop)
    loop.add_signal_handler(signal.SIGQUIT, log_stacks)
    try:
        await server.start()
    except OSError as e:
        await server.stop()
        raise ToolError(f"Unable to start the controller listener: {e.strerror or e}") from None
    signalled, failed = loop.create_task(stop.wait()), loop.create_task(server.stopped.wait())
    await asyncio.wait({signalled, failed}, return_when=asyncio.FIRST_COMPLETED)
    for task in (signalled, failed):
        task.cancel()
    await server.stop()
    if server.failure is not None:  # Kafka halts a controller that cannot go on (exit 1)
        raise ToolError(f"the controller stopped: {server.failure} (see the log above)")
    return ExitStatus.OK


def _on_signal(stop) -> None:
    import os

    if stop.is_set():
        os._exit(ExitStatus.INTERRUPTED)
    stop.set()


def run(argv: list[str], env: Environment) -> int:
    """Run the controller until a signal arrives."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="controller",
                   usage_status=lambda argv: usage_exit(PROG, argv))


def _run(env: Environment, path: str, overrides: list[str], log_level: str) -> int:
    """Load the configuration, then serve until a signal arrives."""
    config = _load_config(path, overrides, env.env)
    _setup_logging(env, log_level)
    return _event_loop_run(_serve(config))


def _event_loop_run(main):
    """Run `main` on uvloop when it is installed (libuv's event loop: a commit on 3 voters takes about a tenth
    less, see tests/bench/bench_commit_floor.py), else on asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(main)
    return uvloop.run(main)


def main() -> None:
    """Console entry point."""
    exit_with(run, PROG)


if __name__ == "__main__":
    main()
