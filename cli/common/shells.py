"""Shell completion through click's machinery: the scripts, and answering a shell that asks for candidates.

Rules:
- The scripts are click's (bash, zsh, fish), for each console script: the shell runs the tool itself with
  `_<PROG>_COMPLETE=<shell>_complete` and the words typed so far; the tool answers from its own click
  definition (sub-commands, flags, choices, files) and its options' `shell_complete` callbacks
  (completion/completers.py: metadata paths, node ids, release versions, feature and profile names).
- bash splits words at ':' and '=' (COMP_WORDBREAKS): its script here also passes the line up to the
  cursor (COMP_LINE, COMP_POINT), so `--bootstrap-controller host:9093` reaches the tool whole, and
  candidates are cut to the part of the word bash replaces.
- A shell asking is answered before anything else runs (`answer`): nothing else reaches stdout, and any
  failure completes nothing; the exit status is 0.
- Typer's own classes are not registered: the instruction style is click's (`bash_complete`).
"""
from __future__ import annotations

import os
import re
import shlex

import click
from click.shell_completion import BashComplete, FishComplete, ShellComplete, ZshComplete

SHELLS = ("bash", "zsh", "fish")

_BASH_LINE = """\
%(complete_func)s() {
    local IFS=$'\\n'
    local response type value
    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD COMP_LINE="${COMP_LINE-}" \\
COMP_POINT="${COMP_POINT-}" %(complete_var)s=bash_complete "$1" 2>/dev/null)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames 2>/dev/null
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default 2>/dev/null
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value")
        fi
    done
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}

complete -o nosort -F %(complete_func)s %(prog_name)s
"""
_BREAKS = re.compile(r"""[:=]""")


class BashLineComplete(BashComplete):
    """click's bash completion, reading the line as typed (host:port and name=value stay one word)."""

    source_template = _BASH_LINE
    cut = 0             # characters of the current word before bash's own word (after its last ':' or '=')

    def get_completion_args(self) -> tuple[list[str], str]:
        """Return (words before the cursor's word, the cursor's word), from COMP_LINE when bash gave it."""
        line, point = os.environ.get("COMP_LINE"), os.environ.get("COMP_POINT", "")
        if not line:
            return super().get_completion_args()
        line = line[:int(point)] if point.isdigit() else line
        words, incomplete = split_line(line)
        self.cut = len(incomplete) - len(_bash_word(incomplete))
        return words[1:], incomplete

    def format_completion(self, item) -> str:
        """Return click's `type,value` line, the value cut to what bash replaces (after the last ':' or '=')."""
        value = item.value[self.cut:] if item.type == "plain" else item.value
        return f"{item.type},{value}"


def _bash_word(word: str) -> str:
    """Return the part of `word` bash treats as the current word (after its last ':' or '=')."""
    pieces = _BREAKS.split(word)
    return pieces[-1]


def split_line(line: str) -> tuple[list[str], str]:
    """Split a partly typed line into (words before the current one, the current word); quotes may be open."""
    words = None
    for closing in ("", '"', "'"):
        try:
            words = shlex.split(line + closing)
            break
        except ValueError:
            continue
    if words is None:
        words = line.split()
    if line and not line[-1].isspace() and words:
        return words[:-1], words[-1]
    return words, ""


CLASSES: dict[str, type[ShellComplete]] = {"bash": BashLineComplete, "zsh": ZshComplete, "fish": FishComplete}


def complete_variable(prog: str) -> str:
    """Return the variable a shell sets to ask `prog` for candidates (click's `_<PROG>_COMPLETE`)."""
    return "_" + re.sub(r"\W", "_", prog).upper() + "_COMPLETE"


def script(prog: str, shell: str) -> str:
    """Return `shell`'s completion script for console script `prog` (it asks `prog` itself for candidates)."""
    return CLASSES[shell](click.Command(prog), {}, prog, complete_variable(prog)).source()


def asked(prog: str, environ=os.environ) -> str | None:
    """Return the completion instruction a shell set for `prog` (e.g. `bash_complete`), or None."""
    return environ.get(complete_variable(prog)) or None


def answer(command: click.Command, prog: str, instruction: str, obj) -> int:
    """Print the candidates `instruction` asks for (or a script for `<shell>_source`) on the stdout of `obj`
    (the command's Environment); return 0."""
    shell, _, action = instruction.partition("_")
    cls = CLASSES.get(shell)
    if cls is None or action not in ("complete", "source"):
        return 0
    comp = cls(command, {"obj": obj}, prog, complete_variable(prog))
    try:
        out = comp.source() if action == "source" else comp.complete()
    except Exception:          # noqa: BLE001 (a half-typed line that does not parse completes nothing)
        return 0
    if out:
        click.echo(out, file=getattr(obj, "stdout", None))
    return 0
