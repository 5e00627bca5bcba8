"""Shared by the tests of tools run with a profiles file: an Environment whose XDG_CONFIG_HOME is a test folder, and
running a tool's run() while keeping each call's output apart."""
from __future__ import annotations

import io

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment


def config_home_env(home, **variables) -> Environment:
    """Return an Environment with captured streams and XDG_CONFIG_HOME=`home` (plus `variables`)."""
    return Environment(stdout=io.StringIO(), stderr=io.StringIO(), env={"XDG_CONFIG_HOME": str(home), **variables})


def run_tool(fn, prog: str, env: Environment, *argv) -> tuple[int, str, str]:
    """Run `fn(argv, env)` behind the error boundary; return (status, stdout, stderr) and empty the streams."""
    status = run_command(fn, list(argv), env, prog=prog)
    out, err = env.stdout.getvalue(), env.stderr.getvalue()
    env.stdout.seek(0), env.stdout.truncate(), env.stderr.seek(0), env.stderr.truncate()
    return status, out, err
