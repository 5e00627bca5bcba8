"""`kraftsman --install-completion [SHELL]` and `--show-completion [SHELL]`: every tool's completion, installed.

Rules:
- SHELL is bash, zsh or fish; without it, the one $SHELL names. Anything else is a usage error (64).
- Where each shell reads completions without more set-up, as typer's --install-completion does:
  bash: one file, `$XDG_DATA_HOME/kraftsman/completion.bash` (default ~/.local/share), sourced from ~/.bashrc;
  zsh: one autoloadable `_<tool>` file a tool in ~/.zfunc, which ~/.zshrc puts on fpath before compinit;
  fish: `~/.config/fish/completions/<tool>.fish`, which fish loads by itself.
  Files are written atomically; a line is added to a start-up file only when it is not there yet.
- Installing twice changes nothing the second time; one line on stdout says where each shell's files went.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..common.environment import Environment
from ..common.status import ExitStatus, ToolError
from .tool import SHELLS, script, scripts_by_tool

BASHRC_LINE = "source '{path}'"
ZSHRC_LINES = ("fpath+=~/.zfunc", "autoload -Uz compinit && compinit")


def run(argv: list[str], env: Environment) -> int:
    """Run `--install-completion [SHELL]` or `--show-completion [SHELL]`; return the exit status."""
    flag, rest = argv[0], argv[1:]
    if len(rest) > 1:
        raise ToolError(f"{flag} takes one shell (bash, zsh or fish), not: {' '.join(rest)}", ExitStatus.USAGE)
    shell = rest[0] if rest else os.path.basename(env.env.get("SHELL", ""))
    if shell not in SHELLS:
        raise ToolError(f"{flag}: cannot complete for shell {shell or '(none: $SHELL is unset)'!r}; "
                        f"give bash, zsh or fish", ExitStatus.USAGE)
    if flag == "--show-completion":
        env.stdout.write(script(shell))
        return ExitStatus.OK
    home = Path(env.env.get("HOME") or Path.home())
    try:
        where = INSTALLERS[shell](home, env.env)
    except OSError as e:
        target = e.filename or home
        raise ToolError(f"cannot install the {shell} completion: {target}: {e.strerror or e}") from None
    env.stdout.write(f"{shell} completion of every kraftsman tool installed in {where}; "
                     f"it takes effect in a new shell\n")
    return ExitStatus.OK


def install_bash(home: Path, environ) -> Path:
    """Write every tool's bash completion in one file and source it from ~/.bashrc; return the file."""
    data = Path(environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    path = data / "kraftsman" / "completion.bash"
    _write(path, script("bash"))
    _add_lines(home / ".bashrc", [BASHRC_LINE.format(path=path)])
    return path


def install_zsh(home: Path, environ) -> Path:
    """Write each tool's `_<tool>` into ~/.zfunc and put it on fpath in ~/.zshrc; return the folder."""
    folder = home / ".zfunc"
    for prog, text in scripts_by_tool("zsh").items():
        _write(folder / f"_{prog}", text)
    _add_lines(home / ".zshrc", list(ZSHRC_LINES))
    return folder


def install_fish(home: Path, environ) -> Path:
    """Write each tool's `<tool>.fish` where fish loads completions; return the folder."""
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    folder = config / "fish" / "completions"
    for prog, text in scripts_by_tool("fish").items():
        _write(folder / f"{prog}.fish", text)
    return folder


INSTALLERS = {"bash": install_bash, "zsh": install_zsh, "fish": install_fish}


def _write(path: Path, text: str) -> None:
    from kraftsman.storage.log.atomic import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != text:
        atomic_write_text(path, text)


def _add_lines(path: Path, lines: list[str]) -> None:
    """Append the lines `path` lacks (a start-up file), keeping what it holds."""
    text = path.read_text() if path.is_file() else ""
    missing = [line for line in lines if line not in text.splitlines()]
    if missing:
        body = text + ("" if not text or text.endswith("\n") else "\n")
        _write(path, body + "# kraftsman completion\n" + "".join(f"{line}\n" for line in missing))
