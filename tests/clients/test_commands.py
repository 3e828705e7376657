"""``toolgym run`` / ``grade`` / ``export``: thin commands over the runner, with clear one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.cli import main

TOY = "tests.clients.toyenv:environment"


def toolgym(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_run_prints_the_summary_and_writes_the_run_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = toolgym(capsys, "run", TOY, "--seeds", "0-1", "--trials", "2", "--quiet")
    assert code == 0
    assert "toy-tasks · oracle" in out and "pass^2" in out and "pay_back" in out and "overall" in out
    assert "12 episodes run → runs/latest/results.jsonl" in out
    lines = (tmp_path / "runs/latest/results.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["passed"] for line in lines)
    code, out, _ = toolgym(capsys, "run", TOY, "--seeds", "0-1", "--trials", "2", "--resume", "--quiet")
    assert code == 0 and "0 episodes run, 12 kept from before" in out


def test_grade_and_export_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert toolgym(capsys, "run", TOY, "--agent", "noop", "--out", str(run_dir), "--quiet")[0] == 0
    code, out, _ = toolgym(capsys, "grade", str(run_dir), "--env", TOY)
    assert code == 1  # some record does not pass
    assert "report_balance" in out and "right balance" in out
    code, out, _ = toolgym(capsys, "grade", str(run_dir / "records"), "--env", TOY, "--json")
    grades = [json.loads(line) for line in out.splitlines()]
    assert len(grades) == 3 and all(g["record"].endswith(".jsonl") and g["passed"] is False for g in grades)
    # the no-op earns nothing (criteria inaction satisfies are not credited), so only --min-score 0 exports it
    code, out, _ = toolgym(capsys, "export", "sft", str(run_dir), "--env", TOY, "--min-score", "0.3", "--out", str(tmp_path / "none.jsonl"))
    assert code == 0 and "0 of 3 graded episodes scored >= 0.3; 0 written" in out
    code, out, _ = toolgym(capsys, "export", "sft", str(run_dir), "--env", TOY, "--min-score", "0", "--out", str(tmp_path / "sft.jsonl"))
    assert code == 0 and "3 of 3 graded episodes scored >= 0; 3 written" in out
    example = json.loads((tmp_path / "sft.jsonl").read_text().splitlines()[0])
    assert example["messages"][1]["role"] == "user"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no-such-env"], "toolgym run: error: no environment 'no-such-env'; available:"),
        (["run", TOY, "--agent", "gpt"], "toolgym run: error: unknown agent 'gpt'; agents: oracle, noop"),
        (["run", TOY, "--tasks", "nope"], "toolgym run: error: environment 'toy-tasks' has no task 'nope'"),
        (["run", TOY, "--server", "http://127.0.0.1:9"], "toolgym run: error: cannot reach a toolgym server at http://127.0.0.1:9"),
        (["run", "tests.clients.nope:environment"], "cannot import module 'tests.clients.nope'"),
        (["run", "tests.clients.toyenv:FLAKY"], "tests.clients.toyenv.FLAKY is not an Environment"),
        (["grade", "missing.jsonl"], "toolgym grade: error: no record file or run folder at missing.jsonl"),
        (["export", "sft", "."], "toolgym export: error: . is not a run folder (no results.jsonl)"),
    ],
)
def test_bad_arguments_are_one_line_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = toolgym(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


FRAGILE = "tests.graders.fragile:environment"


def test_a_run_with_episodes_not_graded_says_so_first_and_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The grader fails on odd seeds (the agent reported "1e999999999" to a careless custom check): replayed by
    ``toolgym run``, the headline counts them and the exit status is 1; ``toolgym grade`` says it in one line."""
    import anyio

    from clients.runner import RunConfig, run
    from tests.clients.test_runner import BreaksTheGraderOnOddSeeds

    first = anyio.run(lambda: run(RunConfig(env=FRAGILE, agent=BreaksTheGraderOnOddSeeds(), seeds="0-1", out=tmp_path / "first")))
    odd = next(l for l in first.lines if l.seed == 1)
    assert odd.error_class == "grading" and odd.record is not None
    code, out, _ = toolgym(capsys, "run", FRAGILE, "--agent", f"replay:{tmp_path / 'first'}", "--out", str(tmp_path / "again"), "--quiet")
    assert code == 1
    assert out.splitlines()[0] == "1 of 2 episodes were not graded (grading: 1): every pass rate and score below covers the 1 graded ones only"
    assert "1 of 2 episodes not graded: exit status 1" in out
    code, out, err = toolgym(capsys, "grade", str(tmp_path / "first" / odd.record), "--env", FRAGILE)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"toolgym grade: error: record {tmp_path / 'first' / odd.record} could not be graded (a bug of the grader")
    assert "careless_amount' crashed: Overflow" in err
