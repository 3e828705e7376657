"""Whole-line files (servers/lines.py) and the record writer on top of them (the disk cases: tests/faults)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.errors import RecordUnwritable
from servers.lines import LineFile
from servers.record import EpisodeHeader, RecordWriter


def test_lines_are_appended_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    file = LineFile(path)
    file.append(b'{"a":1}\n')
    file.append(b'{"b":2}\n')
    assert file.size == path.stat().st_size == 16
    with pytest.raises(ValueError):
        file.append(b"no newline")
    file.close(sync=True)
    file.close()  # idempotent
    with pytest.raises(ValueError):
        file.append(b"{}\n")
    assert LineFile(path).size == 16  # appending keeps what is there; truncate=True starts empty
    assert LineFile(path, truncate=True).size == 0


def test_a_record_writer_that_cannot_open_says_why(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordUnwritable, match="cannot write the record"):
        RecordWriter(blocker / "episode.jsonl")


def test_a_discarded_record_leaves_no_file(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "e.jsonl")
    writer.write(EpisodeHeader(episode_id="e", env="toy", fixture_version="v", task=None, seed=0, fixture_seed=0, start_hash="h", clock="c"))
    writer.discard()
    assert not (tmp_path / "e.jsonl").exists()
