"""`cmd ... > FILE` in interactive and batch lines: the command's output goes to FILE, errors to the terminal."""
from __future__ import annotations

from kraftsman.controller.image.image import EMPTY
from kraftsman.shell.runner import run_line, split_redirect
from kraftsman.shell.state import ShellState


def test_split_at_the_first_unquoted_greater_than():
    assert split_redirect("ls /image > out.txt") == ("ls /image ", "out.txt")
    assert split_redirect("ls /image >out.txt") == ("ls /image ", "out.txt")
    assert split_redirect("cat '/a>b'") == ("cat '/a>b'", None)
    assert split_redirect("cat /a\\>b") == ("cat /a\\>b", None)
    assert split_redirect("ls >") == ("ls ", "")
    assert split_redirect("ls > a b") == ("ls ", "")


def test_output_goes_to_the_file_and_errors_stay(tmp_path):
    shown, target = [], tmp_path / "out.txt"
    assert run_line(ShellState(EMPTY), f"ls / > {target}", shown.append) == 0
    assert shown == [] and target.read_text().split() == ["image", "local"]
    assert run_line(ShellState(EMPTY), f"ls /nope > {target}", shown.append) == 1
    assert "no such file or directory" in "".join(shown) and target.read_text() == ""


def test_a_bad_target_is_one_line(tmp_path):
    shown = []
    assert run_line(ShellState(EMPTY), "ls / >", shown.append) == 64
    assert run_line(ShellState(EMPTY), f"ls / > {tmp_path}/no/such/dir/f", shown.append) == 1
    assert len(shown) == 2 and all(line.endswith("\n") and line.count("\n") == 1 for line in shown)


def test_one_shot_words_are_not_redirected(tmp_path, monkeypatch):
    """In one-shot mode the operating system's shell redirects; '>' there is a word like any other."""
    monkeypatch.chdir(tmp_path)
    shown = []
    run_line(ShellState(EMPTY), "ls > x", shown.append, shell=False)
    assert not (tmp_path / "x").exists() and shown


def test_ls_into_a_file_is_one_name_a_line_even_on_a_wide_terminal(tmp_path):
    state, shown, target = ShellState(EMPTY, screen_width=200, interactive=True), [], tmp_path / "ls.txt"
    run_line(state, "ls /image", shown.append)
    names = "".join(shown).split()
    assert len(names) > 3 and "".join(shown).count("\n") == 1          # on the terminal: columns
    assert run_line(state, f"ls /image > {target}", shown.append) == 0
    assert target.read_text() == "".join(name + "\n" for name in names)
