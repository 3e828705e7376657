"""The runner's folder on a bad filesystem: a file in the way, a read-only mount, a disk that fills up
mid-run. Each failure is one clear line (never a traceback), no line of ``results.jsonl`` is ever torn, the
summary is never left empty, and ``--resume`` completes the run once the disk is fixed. Flags are checked
up front, and a legitimately huge seed range starts at once in little memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from clients.cli import main
from clients.errors import RunError
from clients.progress import SilentReporter
from clients.results import ResultLine, read_results
from clients.runner import RunConfig, run
from tests.faults.conftest import Disk
from tests.faults.processes import REPO

TOY = "tests.toy_env:environment"


def toolgym(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``toolgym ARGV`` in this process: exit status and stderr."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    return int(exited.value.code or 0), capsys.readouterr().err


def assert_one_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(n in lines[0] for n in needles), lines[0]


def whole_results(path: Path) -> list[ResultLine]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"torn line: {data[-80:]!r}"
    found = read_results(path)
    assert not found.torn_tail
    return found.lines


def test_out_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    code, err = toolgym(capsys, "run", TOY, "--out", str(taken), "--quiet")
    assert code == 2
    assert_one_line(err, "is a file, not a folder")


def test_read_only_run_folder(small_disk: Disk, capsys: pytest.CaptureFixture[str]) -> None:
    out = small_disk.path / "run"
    assert toolgym(capsys, "run", TOY, "--out", str(out), "--quiet")[0] == 0  # a finished run to resume
    small_disk.read_only()
    for extra in ([], ["--resume"], ["--overwrite"]):
        target = small_disk.path / "fresh" if not extra else out
        code, err = toolgym(capsys, "run", TOY, "--seeds", "0-1", "--out", str(target), "--quiet", *extra)
        assert code == 2, (extra, err)
        assert_one_line(err, "Read-only file system")
    assert len(whole_results(out / "results.jsonl")) == 1  # untouched


class _FillAfter(SilentReporter):
    """A reporter that fills the disk once ``count`` episodes have finished (disk full mid-run)."""

    def __init__(self, disk: Disk, count: int) -> None:
        self.disk, self.count, self.seen = disk, count, 0

    def finished(self, line: ResultLine) -> None:
        self.seen += 1
        if self.seen == self.count:
            self.disk.fill()


async def test_disk_full_mid_run_then_resume(small_disk: Disk) -> None:
    out = small_disk.path / "run"
    config = RunConfig(env=TOY, agent="oracle", seeds="0-11", out=out, concurrency=2)
    with anyio.fail_after(120):
        with pytest.raises(RunError) as stopped:
            await run(config, reporter=_FillAfter(small_disk, 3))
    message = str(stopped.value)
    assert "No space left on device" in message and "--resume" in message and "\n" not in message, message
    kept = whole_results(out / "results.jsonl")
    assert 3 <= len(kept) < 12
    summary = out / "summary.json"
    assert not summary.exists() or json.loads(summary.read_text())  # never left empty
    small_disk.free()
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=TOY, agent="oracle", seeds="0-11", out=out, concurrency=2, resume=True))
    lines = whole_results(out / "results.jsonl")
    assert sorted(line.seed for line in lines if line.status == "graded") == list(range(12))  # each once
    assert outcome.summary.episodes == 12 and json.loads(summary.read_text())["episodes"] == 12


def test_absurd_flags_are_refused_up_front(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for flag, value in (("--timeout", "-1"), ("--timeout", "nan"), ("--max-turns", "0"), ("--retries", "-1"),
                        ("--trials", "0"), ("--concurrency", "0"), ("--max-tool-calls", "0"), ("--seeds", "0-99999999999999999999")):
        code, err = toolgym(capsys, "run", TOY, flag, value, "--quiet")
        assert code == 2, (flag, value, err)
        assert flag in err and "Traceback" not in err, err
    assert not (tmp_path / "runs").exists()


def test_every_duration_flag_takes_the_same_range(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Seconds above 0 and at most a year, for `run` as for `serve` (issue 28: `1e308` was taken where `inf` was
    refused; a socket timeout that large overflows where it lands)."""
    monkeypatch.chdir(tmp_path)
    for flag, value in (("--timeout", "1e308"), ("--provider-timeout", "inf"), ("--request-timeout", "4e7"), ("--timeout", "0")):
        code, err = toolgym(capsys, "run", TOY, flag, value, "--quiet")
        assert code == 2 and "Traceback" not in err, (flag, value, err)
        assert err.splitlines()[-1].endswith(f"argument {flag}: must be a number of seconds > 0 and at most 31536000 (a year), not {value!r}")
    assert not (tmp_path / "runs").exists()


def test_a_huge_seed_range_starts_at_once_in_little_memory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [sys.executable, "-m", "clients.cli", "run", TOY, "--seeds", "0-100000000", "--out", str(out), "--quiet"]
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ), stderr=stderr)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            results = out / "results.jsonl"
            if results.exists() and results.read_bytes().count(b"\n") >= 3:
                break
            assert process.poll() is None, log.read_text()
            time.sleep(0.2)
        else:
            pytest.fail("no episode finished within 60 s of starting a run of 100,000,001 seeds")
        peak_kb = next(int(line.split()[1]) for line in Path(f"/proc/{process.pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
        assert peak_kb < 400 * 1024, f"planning took {peak_kb / 1024:.0f} MB"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert whole_results(out / "results.jsonl")  # interrupted: whole lines, a summary of what finished
    assert json.loads((out / "summary.json").read_text())["episodes"] >= 3
