"""What the file and live metadata shells share: batch scripts and running one session (one-shot, batch, REPL).

Rules:
- A command on the command line is one-shot; -f FILE ('-': stdin), or stdin that is not a terminal, is batch
  mode; otherwise the REPL. A command and --file together are a bad command line (1, whatever --output asks:
  common.boundary.usage_exit's rule).
- No prompt_toolkit here: the REPL is started by the caller's `interactive()`.
"""
from __future__ import annotations

from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.status import ToolError

PROG = "kafka-metadata-shell"
HISTORY_ENV = "KRAFTSMAN_SHELL_HISTORY"


def bad_command_line(ns) -> int:
    """Return the suite's status for a bad command line (boundary.usage_exit): Kafka's 1, whatever --output asks."""
    return usage_exit(PROG)


def open_script(ns, env: Environment):
    """Return the lines of batch mode (-f FILE, or stdin when it is not a terminal), or None for the REPL."""
    if ns.command:
        if ns.file:
            raise ToolError(f"{PROG}: give either a command or --file, not both", bad_command_line(ns))
        return None
    if ns.file and ns.file != "-":
        try:
            return open(ns.file, encoding="utf-8")
        except OSError as e:
            raise ToolError(f"{PROG}: cannot read {ns.file}: {e.strerror or e}") from None
    stdin_tty = bool(getattr(env.stdin, "isatty", lambda: False)())
    return env.stdin if ns.file == "-" or not stdin_tty else None


def run_session(state, ns, env: Environment, script, interactive) -> int:
    """Run the one-shot command, the batch `script`, or `interactive()`; return the exit status."""
    if ns.command:
        from kraftsman.shell.runner import run_words

        return run_words(state, list(ns.command), env.stdout.write, shell=False)
    if script is not None:
        from kraftsman.shell.batch import run_batch

        try:
            return run_batch(state, script, env.stdout.write, env.stderr.write, keep_going=ns.keep_going)
        finally:
            if script is not env.stdin:
                script.close()
    return interactive()
