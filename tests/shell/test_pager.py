"""PagedOutput: short output printed as it is, long output streamed into $PAGER, a closed pager stops the command."""
from __future__ import annotations

import pytest

from kraftsman.shell.pager import PagedOutput, PagerClosed


def test_short_output_is_printed_without_a_pager(tmp_path):
    printed = []
    paged = PagedOutput(printed.append, rows=10, env={"PAGER": f"sh -c 'cat > {tmp_path / 'paged'}'"})
    for i in range(5):
        paged.write(f"line {i}\n")
    paged.close()
    assert "".join(printed) == "".join(f"line {i}\n" for i in range(5)) and not (tmp_path / "paged").exists()


def test_long_output_streams_into_the_pager(tmp_path):
    printed, target = [], tmp_path / "paged"
    paged = PagedOutput(printed.append, rows=10, env={"PAGER": f"sh -c 'cat > {target}'"})
    for i in range(1000):
        paged.write(f"line {i}\n")
        if i == 20:
            assert paged.process is not None      # started once the screen was full, not at the end
    paged.close()
    assert printed == [] and target.read_text() == "".join(f"line {i}\n" for i in range(1000))


def test_leaving_the_pager_stops_the_command():
    paged = PagedOutput([].append, rows=2, env={"PAGER": "true"})
    with pytest.raises(PagerClosed):
        for i in range(100000):
            paged.write(f"line {i}\n" * 100)
    paged.close()
