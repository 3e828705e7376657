"""The results file: strict reading, torn tails from interrupted writes, appends that never lose a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.errors import RunError
from clients.results import ResultLine, ResultsWriter, Tokens, latest_by_key, read_results


def line(task: str = "t", seed: int = 0, trial: int = 0, *, passed: bool = True, status: str = "graded") -> ResultLine:
    outcome: dict[str, object] = {"score": 1.0 if passed else 0.0, "passed": passed}
    if status == "errored":
        outcome = {"error_class": "provider", "error": "down"}
    return ResultLine(
        env="toy", task=task, seed=seed, trial=trial, agent="oracle", episode_id=f"e-{task}-{seed}-{trial}",
        record=f"records/{task}.jsonl", status=status,  # type: ignore[arg-type]
        tool_calls=2, tokens=Tokens(prompt=3, completion=1, total=4), **outcome,  # type: ignore[arg-type]
    )


def test_written_lines_read_back(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    writer = ResultsWriter(path)
    writer.write(line("a"))
    writer.write(line("b", passed=False))
    writer.close()
    found = read_results(path)
    assert [r.task for r in found.lines] == ["a", "b"]
    assert found.lines[1].passed is False and found.lines[0].tokens.total == 4
    assert not found.torn_tail and found.valid_bytes == path.stat().st_size


def test_missing_file_is_an_empty_run(tmp_path: Path) -> None:
    found = read_results(tmp_path / "nope.jsonl")
    assert found.lines == [] and not found.torn_tail


def test_torn_last_line_is_reported_and_cut_on_append(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    writer = ResultsWriter(path)
    writer.write(line("a"))
    writer.close()
    whole = path.read_bytes()
    path.write_bytes(whole + line("b").model_dump_json().encode()[:40])
    found = read_results(path)
    assert [r.task for r in found.lines] == ["a"]
    assert found.torn_tail and found.valid_bytes == len(whole)
    writer = ResultsWriter(path, truncate_to=found.valid_bytes)
    writer.write(line("c"))
    writer.close()
    assert [r.task for r in read_results(path).lines] == ["a", "c"]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(line("a").model_dump_json())
    assert [r.task for r in read_results(path).lines] == ["a"]
    writer = ResultsWriter(path)
    writer.write(line("b"))
    writer.close()
    assert [r.task for r in read_results(path).lines] == ["a", "b"]


@pytest.mark.parametrize("garbage", ["{not json}\n", '{"env": "toy"}\n', "[1, 2]\n"])
def test_corrupt_line_is_a_clear_error(tmp_path: Path, garbage: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(line("a").model_dump_json() + "\n" + garbage + line("b").model_dump_json() + "\n")
    before = path.read_bytes()
    with pytest.raises(RunError, match=r"results file .* is corrupt at line 2 .*left untouched"):
        read_results(path)
    assert path.read_bytes() == before


def test_latest_line_of_a_key_wins() -> None:
    first = line("a", status="errored", passed=False)
    again = line("a")
    latest = latest_by_key([first, line("b"), again])
    assert latest[("a", 0, 0, "oracle")] is again
    assert len(latest) == 2


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "graded", "score": 0.0, "passed": False, "error_class": "provider"},
        {"status": "errored", "error_class": "provider", "score": 0.0},
        {"status": "errored", "error_class": "provider", "grade": {"score": 0.0}},
        {"status": "errored"},
    ],
)
def test_a_line_is_graded_or_errored_never_both(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="never both"):
        ResultLine(env="toy", task="t", seed=0, trial=0, agent="a", episode_id="e", **fields)  # type: ignore[arg-type]
