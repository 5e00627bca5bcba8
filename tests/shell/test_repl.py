"""The interactive shell driven through prompt-toolkit's pipe input: prompt, Tab, cd/ls/cat, history, exit."""
from __future__ import annotations

import threading
import time

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.shell.repl import BANNER, run_repl
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion


def _state():
    delta = MetadataDelta()
    delta.replay(ApiMessageAndVersion(codec.message_class("TopicRecord")(name="orders",
                                                                         topic_id=Uuid(b"\x01" * 16)), 0))
    return ShellState(delta.apply())


def _session(keys, tmp_path) -> tuple[str, ShellState, int]:
    """Type `keys` (a string, or chunks typed 0.2 s apart so that completion can run in between)."""
    state, out = _state(), []
    chunks = [keys] if isinstance(keys, str) else keys
    with create_pipe_input() as pipe:
        def typist():
            for chunk in chunks:
                time.sleep(0.2)
                pipe.send_text(chunk)
        thread = threading.Thread(target=typist, daemon=True)
        thread.start()
        status = run_repl(state, out.append, history_path=tmp_path / "history", input=pipe, output=DummyOutput())
        thread.join()
    return "".join(out), state, status


def test_session_with_completion_cd_ls_cat_history_and_exit(tmp_path):
    keys = ["cd /image/top\t", "\r",        # Tab completes to /image/topics/
            "ls\r",
            "cat byName/orders/na\t", "\r",  # Tab completes the file name
            "pwd\r", "history\r", "exit\r"]
    text, state, status = _session(keys, tmp_path)
    assert status == 0 and state.exit_requested
    assert text.startswith(BANNER + "\n")
    assert "byId  byName\n" in text  # interactive ls uses columns
    assert "orders\n" in text
    assert "/image/topics\n" in text
    assert "    0  cd /image/topics/\n" in text or "    0  cd /image/topics/ \n" in text and "    4  history\n" in text
    assert (tmp_path / "history").read_text().count("\n+") == 6


def test_ctrl_c_prints_caret_c_and_ctrl_d_exits(tmp_path):
    text, state, status = _session("pw\x03pwd\r\x04", tmp_path)
    assert status == 0 and not state.exit_requested
    assert "^C\n" in text and text.endswith("/\n")


def test_history_persists_between_sessions(tmp_path):
    _session("ls /image\rexit\r", tmp_path)
    text, _, _ = _session("history\rexit\r", tmp_path)
    assert "    0  ls /image\n" in text and "    2  history\n" in text


def test_the_completion_menu_shows_the_last_path_component():
    from kraftsman.shell.repl import menu_text

    assert [menu_text(c) for c in ("/image/topics/", "byName/orders", "cat", "/", "image/")] == \
        ["topics/", "orders", "cat", "/", "image/"]


def test_tab_completes_options_and_their_values(tmp_path):
    keys = ["cat --out\t", "j\t", "/image/topics/byName/orders/name\r", "exit\r"]
    text, _, status = _session(keys, tmp_path)
    assert status == 0 and '"orders"\n' in text       # cat --output json printed the leaf as a JSON string
    assert (tmp_path / "history").read_text().count("+cat --output json /image/topics/byName/orders/name") == 1
