"""The shell's commands (Kafka 3.9's cat, cd, exit, find, help, history, ls, man, pwd, tree; kraftsman adds
diff, clear, quit, `help <cmd>`, `cd -` and `tree` of the working directory).

Rules:
- One registry: each Command has its name, description, whether it is shell-only, its argument
  spec, run(state, args, out), complete(state, words) -> candidates and optional details for man;
  help, man, the parser and completion (options and their values included) all read the same entries.
- Messages and layouts are Kafka's, word for word; text goes through `out(...)`, errors through
  `out.fail(...)` (which sets the exit status of one-shot and batch modes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import printer
from .completion_paths import complete_path
from .diff import DETAILS, MARK_DETAILS, run_diff, run_mark
from .parsing import Arg, Option, Spec, help_text
from .paths import visit


@dataclass(frozen=True)
class Command:
    """One shell command."""

    name: str
    description: str
    shell_only: bool
    spec: Spec
    run: Callable
    complete: Callable | None = complete_path
    details: str = ""


def _structured(state, args) -> str | None:
    """Return 'json' or 'yaml' when the command's output is structured (its -o, else the shell's default)."""
    output = args.get("output") or state.output
    return None if output == "text" else output


def _documents(state, info, output: str, out) -> None:
    out(printer.dump(info.node.data(), output))


def _cat(state, args, out) -> None:
    output = _structured(state, args)
    for target in args["targets"]:
        found = visit(state.root, state.working_directory, target)
        if not found:
            out.fail(f"cat: {target}: No such file or directory.\n")
        for info in found:
            if output:
                _documents(state, info, output, out)
            elif info.node.is_directory:
                out.fail(f"cat: {target}: Is a directory\n")
            else:
                printer.print_node(info.node, out)


def _cd(state, args, out) -> None:
    target = args["target"] or "/"
    if target == "-":
        target = state.previous_directory
        out(target + "\n")
    found = visit(state.root, state.working_directory, target)
    if not found:
        out.fail(f"cd: {target}: no such directory.\n")
    for info in found:
        if info.node.is_directory:
            state.previous_directory, state.working_directory = state.working_directory, info.absolute_path
        else:
            out.fail(f"cd: {target}: not a directory.\n")


def _exit(state, args, out) -> None:
    state.exit_requested = True


def _find(state, args, out) -> None:
    output = _structured(state, args)
    for path in args["paths"] or ["."]:
        found = visit(state.root, state.working_directory, path)
        if not found:
            out.fail(f"find: {path}: no such file or directory.\n")
        for info in found:
            if output:
                paths = []
                _find_from(path, info.node, lambda line: paths.append(line[:-1]))
                out(printer.dump(paths, output))
            else:
                _find_from(path, info.node, out)


def _find_from(path: str, node, out) -> None:
    out(path + "\n")
    if node.is_directory:
        for name in sorted(node.child_names()):
            child = node.child(name)
            if child is not None:
                _find_from(path + name if path == "/" else path + "/" + name, child, out)


def _help(state, args, out) -> None:
    if args.get("cmd"):
        _man(state, args, out)
        return
    out("Welcome to the Apache Kafka metadata shell.\n\n")
    out(commands_help(shell=True) + "\n")


def _clear(state, args, out) -> None:
    if state.interactive:
        out("\033[H\033[2J\033[3J")


def _history(state, args, out) -> None:
    count = args["numEntriesToShow"]
    entries = list(enumerate(state.history))
    if count is not None:
        entries = entries[-count:] if count > 0 else []
    for index, line in entries:
        out(f"{index:5d}  {line}\n")


def _ls(state, args, out) -> None:
    output = _structured(state, args)
    files, directories = [], []
    for target in args["targets"] or ["."]:
        found = visit(state.root, state.working_directory, target)
        if not found:
            out.fail(f"ls: {target}: no such file or directory.\n")
        for info in found:
            if output:
                out(printer.dump(_ls_entry(info), output))
            elif info.node.is_directory:
                directories.append((info.last_component, sorted(info.node.child_names())))
            else:
                files.append(info.last_component)
    width = state.screen_width if state.interactive and out.terminal is not False else None
    for line in printer.format_ls(files, directories, width):
        out(line + "\n")


def _ls_entry(info) -> dict:
    if not info.node.is_directory:
        return {"path": info.absolute_path, "type": "file"}
    return {"path": info.absolute_path, "type": "directory", "children": sorted(info.node.child_names())}


def _man(state, args, out) -> None:
    name = args["cmd"]
    command = COMMANDS.get(name)
    if command is None:
        out.fail(f"man: unknown command {name}. Type help to get a list of commands.\n")
        return
    out(f"{name}: {command.description}\n\n")
    out(help_text(name, command.spec) + "\n")
    if command.details:
        out("\n" + command.details + "\n")


def _pwd(state, args, out) -> None:
    out(state.working_directory + "\n")


def _tree(state, args, out) -> None:
    output = _structured(state, args)
    for target in args["targets"] or ["."]:
        found = visit(state.root, state.working_directory, target)
        if not found:
            out.fail(f"tree: {target}: No such file or directory.\n")
        for info in found:
            if output:
                _documents(state, info, output, out)
            else:
                printer.print_node(info.node, out)


def complete_diff(state, words):
    """Complete diff's sources: @marks, else node paths for --path."""
    word = words[-1] if words else ""
    if len(words) > 1 and words[-2] in ("--path", "-p"):
        return complete_path(state, words)
    return [("@" + name, True) for name in state.images.marks if ("@" + name).startswith(word)] \
        if word.startswith("@") else []


def _complete_command(state, words):
    if len(words) > 1:
        return []
    prefix = words[-1] if words else ""
    return [(name, True) for name in sorted(COMMANDS) if name.startswith(prefix)]


_OUTPUT = Option(("--output", "-o"), "output", "Print text (as Kafka), json or yaml (built from the records).",
                 ("text", "json", "yaml"), None)
COMMANDS = {c.name: c for c in [
    Command("cat", "Show the contents of metadata files.", False,
            Spec((Arg("targets", "+", "The metadata files to display."),), (_OUTPUT,)), _cat),
    Command("cd", "Set the current working directory.", True,
            Spec((Arg("target", "?", "The directory to change to ('-': the previous one)."),)), _cd),
    Command("diff", "Show what changed between two images, field by field (kraftsman).", False,
            Spec((Arg("sources", "*", "Up to two offsets, @marks or files (none: the newest mark and now)."),),
                 (Option(("--path", "-p"), "path", "The subtree to compare (default /image).", (), "/image"),
                  _OUTPUT)), run_diff, complete_diff, DETAILS),
    Command("clear", "Clear the screen (kraftsman).", True, Spec(), _clear, None),
    Command("exit", "Exit the metadata shell.", True, Spec(), _exit, None),
    Command("find", "Search for nodes in the directory hierarchy.", False,
            Spec((Arg("paths", "*", "The paths to start at."),), (_OUTPUT,)), _find),
    Command("help", "Display this help message.", True,
            Spec((Arg("cmd", "?", "A command to show the help text of (kraftsman)."),)), _help, _complete_command),
    Command("history", "Print command history.", True,
            Spec((Arg("numEntriesToShow", "?", "The number of entries to show.", int),)), _history, None),
    Command("ls", "List metadata nodes.", False,
            Spec((Arg("targets", "*", "The metadata node paths to list."),), (_OUTPUT,)), _ls),
    Command("mark", "Keep the current image under a name for diff (kraftsman).", True,
            Spec((Arg("name", "?", "The mark's name (default: the next number); diff takes it as @NAME."),)),
            run_mark, None, MARK_DETAILS),
    Command("man", "Show the help text for a specific command.", True,
            Spec((Arg("cmd", "1", "The command to get help text for."),)), _man, _complete_command),
    Command("pwd", "Print the current working directory.", True, Spec(), _pwd, None),
    Command("quit", "Exit the metadata shell (as exit; kraftsman).", True, Spec(), _exit, None),
    Command("tree", "Show the contents of metadata nodes in a tree structure.", False,
            Spec((Arg("targets", "*", "The metadata nodes to display (default: the working directory)."),),
                 (_OUTPUT,)), _tree),
]}
KAFKA_NAMES = ("cat", "cd", "exit", "find", "help", "history", "ls", "man", "pwd", "tree")


def available(shell: bool) -> dict:
    """Return the commands of interactive (shell=True) or non-interactive mode."""
    return {n: c for n, c in COMMANDS.items() if shell or not c.shell_only}


def commands_help(shell: bool) -> str:
    """Return the command list shown by `help`, argparse4j style."""
    names = sorted(available(shell))
    choices = "{" + ",".join(names) + "}"
    lines = [f"usage: {choices} ...", "", "positional arguments:", f"  {choices}"]
    lines += [f"    {name:<20} {COMMANDS[name].description}" for name in names]
    return "\n".join(lines)
