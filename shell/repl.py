"""The interactive shell on prompt-toolkit: banner, '>> ' prompt, Tab completion, history, paging.

Rules:
- A thin adapter: completion comes from completion.suggest(), commands from runner.run_line().
- Ctrl-C at the prompt prints '^C' and clears the line; Ctrl-C while a command runs stops that command
  only (the image stays loaded) and prompts again; Ctrl-D (end of input) or `exit` ends the session.
- On a terminal, output streams as the command walks; past one screen it goes through a pager (shell/pager).
- A live source passes `prompt` (a callable, redrawn every `refresh_interval` seconds) and
  `before_command(state, write)`, called before each line runs (it swaps in the newest image).
"""
from __future__ import annotations

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory, InMemoryHistory

from .completion import suggest
from .pager import PagedOutput, PagerClosed
from .runner import run_line

BANNER = "[ Kafka Metadata Shell ]"
PROMPT = ">> "


class ShellCompleter(Completer):
    """Offer suggest()'s candidates to prompt-toolkit."""

    def __init__(self, state):
        self.state = state

    def get_completions(self, document, complete_event):
        """Yield Completions for the text before the cursor."""
        text = document.text_before_cursor
        start, candidates = suggest(text, self.state)
        for candidate, final in candidates:
            yield Completion(candidate + (" " if final else ""), start_position=start - len(text),
                             display=menu_text(candidate))


def menu_text(candidate: str) -> str:
    """Return what the completion menu shows: the last path component ('topics/'), not the whole word."""
    trailing = "/" if candidate.endswith("/") and candidate != "/" else ""
    return candidate.rstrip("/").rsplit("/", 1)[-1] + trailing if "/" in candidate.rstrip("/") else candidate


def _history(path):
    if path is None:
        return InMemoryHistory()
    try:
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()


def run_repl(state, write, *, history_path=None, input=None, output=None, pager: bool = False, prompt=PROMPT,
             before_command=None, refresh_interval: float = 0) -> int:
    """Run the read-eval-print loop until exit or end of input; return the exit status."""
    session = PromptSession(completer=ShellCompleter(state), history=_history(history_path),
                            complete_while_typing=False, input=input, output=output,
                            refresh_interval=refresh_interval)
    state.history.extend(reversed(list(session.history.load_history_strings())))
    state.interactive = True
    write(BANNER + "\n")
    while not state.exit_requested:
        try:
            line = session.prompt(prompt)
        except KeyboardInterrupt:
            write("^C\n")
            continue
        except EOFError:
            break
        if line.strip():
            state.history.append(line)
        try:
            _run_command(state, line, session.output.get_size(), write, pager, before_command)
        except KeyboardInterrupt:
            write("^C\n")
    return 0


def _run_command(state, line: str, size, write, pager: bool, before_command) -> None:
    """Run one typed line, its output streamed (through a pager when long); Ctrl-C stops only this command."""
    state.screen_width = size.columns
    if not pager:
        if before_command is not None:
            before_command(state, write)
        run_line(state, line, write, shell=True)
        return
    paged = PagedOutput(write, size.rows)
    try:
        if before_command is not None:
            before_command(state, paged.write)
        run_line(state, line, paged.write, shell=True)
    except PagerClosed:
        pass
    finally:
        paged.close()
