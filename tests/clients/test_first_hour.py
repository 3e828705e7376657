"""A new user's first hour with the ``toolgym`` command: wrong addresses and tokens fail fast with one line,
piped output keeps every table whole, ``grade`` and ``export`` say what a reader needs, ``view --open`` says
where the file is when no browser can open.

Commands run as a user runs them — the real ``toolgym`` entry point, often in a subprocess with its output
piped — against real runs, a real HTTP server and scripted providers.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import anyio
import pytest

from clients.cli import main
from clients.console import output_console
from clients.errors import RunError
from clients.ray.reach import check_reachable, split_address
from clients.results import ResultLine, Tokens
from clients.runner import RunConfig, run
from clients.summary import render_summary, summarize
from servers.http import running_http
from tests.clients.llm_scenarios import run_llm, solution, tool_turn
from tests.clients.toyenv import environment

REPO = Path(__file__).resolve().parents[2]
TOY = "tests.clients.toyenv:environment"


async def _toolgym(*argv: str, env: dict[str, str] | None = None, timeout: float = 90) -> tuple[int, str, str]:
    """``toolgym ARGV`` in a subprocess, stdout and stderr piped: exit status, stdout, stderr."""
    with anyio.fail_after(timeout):
        done = await anyio.run_process([sys.executable, "-m", "clients.cli", *argv], cwd=REPO, env={**os.environ, **(env or {})}, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _closed_port() -> socket.socket:
    """A bound port nobody listens on (connections to it are refused), held until the caller closes it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


# --- --ray HOST:PORT ------------------------------------------------------------------------------------------


def test_ray_addresses_are_split_like_ray_reads_them() -> None:
    assert split_address("local") is None and split_address("auto") is None
    assert split_address("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert split_address("ray://head:10001") == ("head", 10001)
    assert split_address("[::1]:7000") == ("::1", 7000)
    assert split_address("head") == ("head", 6379)
    with pytest.raises(RunError, match="not a cluster address"):
        split_address("head:port")


async def test_ray_at_an_address_nobody_listens_on_fails_within_seconds_with_one_line(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    sock = _closed_port()
    address = f"127.0.0.1:{sock.getsockname()[1]}"
    try:
        argv = ("run", TOY, "--ray", address, "--quiet", "--out", str(tmp_path / "run"))
        status, out, err = await _toolgym(*argv, timeout=300)
    finally:
        sock.close()
    assert status == 2, (out, err)
    assert err.strip().splitlines() == [f"toolgym run: error: cannot reach a Ray cluster at {address} (Connection refused within 3s); "
                                        "start one with `ray start --head` on its head node, or use --ray alone to start one on this machine"]
    # The probe, not ray.init, gave up: ray.init would have logged connection warnings and waited a minute or
    # more. Evidence, not a stopwatch: a stopwatch fails on a busy machine (importing Ray is most of the time).
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_an_address_that_does_not_answer_is_given_up_after_the_probe_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[object, float]] = []

    def silent(address: tuple[str, int], timeout: float) -> socket.socket:
        asked.append((address, timeout))
        raise TimeoutError("timed out")  # what a host that drops packets gives after `timeout`

    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(RunError, match=r"cannot reach a Ray cluster at head:6379 \(no answer within 3s\)"):
        check_reachable("head:6379")
    assert asked == [(("head", 6379), 3.0)]


# --- --server URL --token ------------------------------------------------------------------------------------


async def test_a_wrong_token_is_said_to_be_refused_and_a_missing_one_to_be_needed(tmp_path: Path) -> None:
    async with running_http(environment, token="the-right-token") as server:
        with pytest.raises(RunError, match=r"refused the control token given \(--token or TOOLGYM_TOKEN\): it is not the server's"):
            await run(RunConfig(env=environment, agent="oracle", server=server.url, token="wrong", out=tmp_path / "a"))
        with pytest.raises(RunError, match=r"needs a control token \(its startup banner prints it\): pass --token or set TOOLGYM_TOKEN"):
            await run(RunConfig(env=environment, agent="oracle", server=server.url, token=None, out=tmp_path / "b"))
        status, out, err = await _toolgym("run", TOY, "--server", server.url, "--out", str(tmp_path / "c"), env={"TOOLGYM_TOKEN": "wrong"})
    assert status == 2 and len(err.strip().splitlines()) == 1 and "refused the control token" in err, (out, err)


# --- piped output --------------------------------------------------------------------------------------------


def test_a_piped_summary_keeps_every_column_and_cell(capsys: pytest.CaptureFixture[str]) -> None:
    """rich assumes 80 columns when output is not a terminal; the summary table is wider than that."""
    lines = [
        ResultLine(
            env="finance", task="a_rather_long_task_template_name_like_real_ones_" + str(n), seed=0, trial=trial, agent="openai:gpt-4.1",
            episode_id=f"e{n}{trial}", status="graded", score=1.0, passed=True, tool_calls=12, tool_errors=1,
            tokens=Tokens(prompt=446_300, completion=12_345, total=458_645), wall_ms=12_345.0, attempts=1, stop_reason="done",
        )
        for n in range(3)
        for trial in range(3)
    ]
    console = output_console()
    assert not console.is_terminal
    render_summary(summarize("finance", lines, k=3), console)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "pass@1" in line)
    assert "tokens" in header.split() and "pass^3" in header and "pass@3" in header, header
    assert "1,375,935" in out and "4,127,805" in out and "…" not in out  # tokens per task (3 trials) and overall
    assert "a_rather_long_task_template_name_like_real_ones_2" in out


async def test_a_piped_run_prints_its_table_whole(tmp_path: Path) -> None:
    status, out, err = await _toolgym("run", TOY, "--trials", "3", "--out", str(tmp_path / "run"))
    assert status == 0, err
    assert "…" not in out and "pass^3" in out and "s/ep" in out
    assert "9 episodes run" in out


# --- toolgym grade -------------------------------------------------------------------------------------------


async def test_grade_prints_whole_ids_and_a_total(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await run(RunConfig(env=environment, agent="noop", seeds="0-1", out=tmp_path / "noop"))
    await run(RunConfig(env=environment, agent="oracle", tasks="pay_back", out=tmp_path / "oracle"))
    names = sorted(p.name for p in (tmp_path / "noop" / "records").glob("*.jsonl"))
    status, out, err = await _toolgym("grade", str(tmp_path / "noop"), str(tmp_path / "oracle"), "--env", TOY)
    assert status == 1, err  # some record failed
    for name in names:
        assert name in out, (name, out)
    assert "…" not in out
    assert out.strip().splitlines()[-1] == f"{len(names) + 1} records · 1 passed · {len(names)} failed · mean score 0.14"


# --- toolgym export sft ----------------------------------------------------------------------------------------


async def test_export_writes_metadata_and_drops_duplicate_conversations_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await run(RunConfig(env=environment, agent="oracle", seeds="0-1", trials=3, out=tmp_path / "run"))
    capsys.readouterr()
    main_status = _main(["export", "sft", str(tmp_path / "run"), "--out", str(tmp_path / "all.jsonl"), "--env", TOY])
    assert main_status == 0
    everything = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert len(everything) == 18  # 3 tasks × 2 seeds × 3 trials
    first = everything[0]["metadata"]
    assert first == {"env": "toy-tasks", "task": first["task"], "seed": 0, "trial": 0, "agent": "oracle", "score": 1.0, "episode_id": first["episode_id"]}
    assert {(e["metadata"]["task"], e["metadata"]["seed"], e["metadata"]["trial"]) for e in everything} == {
        (t, s, k) for t in ("flaky_report", "pay_back", "report_balance") for s in (0, 1) for k in range(3)
    }
    capsys.readouterr()
    assert _main(["export", "sft", str(tmp_path / "run"), "--out", str(tmp_path / "unique.jsonl"), "--dedupe", "--env", TOY]) == 0
    said = capsys.readouterr().out
    unique = [json.loads(line) for line in (tmp_path / "unique.jsonl").read_text().splitlines()]
    assert len(unique) == 6 and {e["metadata"]["trial"] for e in unique} == {0}  # the oracle repeats itself per seed
    assert "6 written" in said and "dropped 12 duplicate conversation(s) (--dedupe)" in said


async def test_exported_arguments_are_strict_json_never_nan(tmp_path: Path) -> None:
    """Python's json reads ``NaN``; no other parser does. A conversation holding it is not exported."""
    from clients.sft import export_sft

    first = tool_turn("openai", [("n1", "get_account", '{"account_id": NaN}')])
    outcome = await run_llm(tmp_path / "run", [first, *solution("openai")])
    assert outcome.line.passed
    stats = export_sft(tmp_path / "run", tmp_path / "sft.jsonl", environment=environment)
    assert (stats.passing, stats.written, stats.skipped) == (1, 0, {"arguments": 1})
    assert "NaN" not in (tmp_path / "sft.jsonl").read_text()


def _main(argv: list[str]) -> int:
    """``toolgym ARGV`` in this process (no event loop may be running: call from a thread or a sync test)."""
    import concurrent.futures

    def call() -> int:
        try:
            main(argv)
        except SystemExit as exited:
            return int(exited.code or 0)
        return 0

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


# --- toolgym view --open ---------------------------------------------------------------------------------------


async def test_view_open_without_a_display_says_where_the_file_is(tmp_path: Path) -> None:
    await run(RunConfig(env=environment, agent="oracle", tasks="pay_back", out=tmp_path / "run"))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "clients.cli", "view", str(tmp_path / "run"), "--open"], cwd=REPO, env=env, check=False)
    out = done.stdout.decode()
    report = (tmp_path / "run" / "report.html").resolve()
    assert done.returncode == 0, done.stderr.decode()
    assert out.splitlines() == [
        f"run report: 1 episode, {report.stat().st_size / 1e6:.1f} MB → {tmp_path / 'run' / 'report.html'}",
        f"no display here to open a browser on (DISPLAY and WAYLAND_DISPLAY are unset): open {report.as_uri()} on a machine with one",
    ]
