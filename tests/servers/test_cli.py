"""The serve CLI (``python -m envs.X serve``): help, clear one-line errors, and HTTP mode end to end."""

from __future__ import annotations

import os
import signal
import socket
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import Process
from mcp import Client

from servers import read_record
from servers.cli import serve_main
from tests.toy_env import environment

REPO = Path(__file__).resolve().parents[2]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        serve_main(environment, list(argv))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_missing_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys)
    assert code == 2 and out == ""
    assert "usage: python -m toy" in err and "serve" in err


def test_unknown_subcommand_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "launch")
    assert code == 2 and "invalid choice: 'launch'" in err


def test_serve_help_describes_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "serve", "--help")
    assert code == 0
    assert "Serve the environment's tools over MCP" in out
    flags = ("--transport", "--host", "--port", "--task", "--seed", "--record", "--record-dir", "--token", "--no-token")
    limits = ("--max-episodes", "--max-sessions", "--sessions-per-episode", "--idle-timeout", "--closed-ttl", "--reap-interval")
    for flag in (*flags, *limits, "--output-schemas"):
        assert flag in out, flag
    assert "UNSAFE" in out  # --no-token says what it gives away


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--task", "nope"], "no task template 'nope'"),
        (["serve", "--transport", "http", "--record", "x.jsonl"], "--record is for stdio"),
        (["serve", "--record", "a.jsonl", "--record-dir", "d"], "either --record FILE or --record-dir DIR"),
        (["serve", "--seed", "-1"], "--seed must be >= 0"),
        (["serve", "--transport", "http", "--max-episodes", "0"], "--max-episodes must be >= 1"),
        (["serve", "--transport", "http", "--port", "70000"], "--port must be within 0-65535"),
        (["serve", "--transport", "http", "--max-sessions", "0"], "--max-sessions must be >= 1"),
        (["serve", "--transport", "http", "--token", "t", "--no-token"], "either --token T or --no-token"),
        (["serve", "--transport", "http", "--token", " "], "--token is empty"),
        (["serve", "--transport", "http", "--idle-timeout", "0"], "--idle-timeout must be a number of seconds > 0"),
        (["serve", "--transport", "http", "--closed-ttl", "-1"], "--closed-ttl must be a number of seconds > 0"),
        (["serve", "--transport", "http", "--reap-interval", "inf"], "--reap-interval must be a number of seconds > 0"),
        # Every duration flag takes the same range (issue 28: 1e308 was taken where inf was refused); --port 70000
        # after it, so that nothing is served where a flag is let through.
        (["serve", "--transport", "http", "--body-timeout", "1e308", "--port", "70000"], "--body-timeout must be a number of seconds > 0 and at most 31536000"),
        (["serve", "--transport", "http", "--head-timeout", "nan", "--port", "70000"], "--head-timeout must be a number of seconds > 0"),
        (["serve", "--transport", "http", "--idle-timeout", "inf", "--port", "70000"], "--idle-timeout must be a number of seconds > 0 and at most"),
        (["serve", "--transport", "http", "--idle-timeout", "3e7", "--closed-ttl", "4e7", "--port", "70000"], "--closed-ttl must be a number of seconds > 0 and at most"),
        (["serve", "--transport", "http", "--sessions-per-episode", "0"], "--sessions-per-episode must be >= 1"),
        (["serve", "--transport", "http", "--session-idle-timeout", "0"], "--session-idle-timeout must be a number of seconds > 0"),
        (["serve", "--transport", "http", "--max-memory", "lots"], "--max-memory: 'lots' is not a size"),
        (["serve", "--transport", "http", "--max-memory", "0"], "--max-memory: a memory size must be positive"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["serve", "--transport", "pigeon"], ["serve", "--seed", "many"]])
def test_bad_flag_values_are_argparse_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "invalid" in err and "Traceback" not in err


def test_an_unwritable_record_path_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for argv in (["serve", "--record", str(blocker / "episode.jsonl")], ["serve", "--record", str(tmp_path)],
                 ["serve", "--transport", "http", "--record-dir", str(blocker / "records")]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and out == "", argv
        assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err


def test_the_reaper_flags_reach_the_server(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, object] = {}

    async def fake_serve(environment, host, port, *, manager, **options):  # type: ignore[no-untyped-def]
        seen.update(options, idle_timeout=manager.idle_timeout, closed_ttl=manager.closed_ttl)

    monkeypatch.setattr("servers.http.serve_http", fake_serve)
    argv = ["serve", "--transport", "http", "--idle-timeout", "12", "--closed-ttl", "34", "--reap-interval", "5",
            "--sessions-per-episode", "2", "--output-schemas", "none"]
    code, _, _ = run_cli(capsys, *argv)
    assert code == 0
    assert seen["idle_timeout"] == 12 and seen["closed_ttl"] == 34 and seen["reap_interval"] == 5
    assert seen["sessions_per_episode"] == 2 and seen["output_schemas"] == "none"


@pytest.mark.slow
async def test_running_out_of_file_descriptors_does_not_flood_the_log() -> None:
    command = ["bash", "-c", f"ulimit -n 40; exec {sys.executable} -m tests.toy_env serve --transport http --port 0 --no-token"]
    held: list[anyio.abc.SocketStream] = []
    rest = b""
    said = (b"out of file descriptors", b"connection limit reached")
    with anyio.fail_after(120):  # a guard against a hang, sized for a busy machine
        async with await anyio.open_process(command, cwd=REPO) as process:
            try:
                lines = await read_banner(process)
                host, port = lines["control API"].split()[0].split("//")[1].split("/")[0].rsplit(":", 1)
                for _ in range(60):  # more connections than the server has descriptors
                    held.append(await anyio.connect_tcp(host, int(port)))
                assert process.stderr is not None
                async for chunk in process.stderr:  # until it says it cannot accept (however long a busy machine takes)
                    rest += chunk
                    if any(words in rest for words in said):
                        break
                with anyio.move_on_after(3):  # then what it logs while it still cannot: a line per interval, no flood
                    async for chunk in process.stderr:
                        rest += chunk
            finally:
                for stream in held:
                    await stream.aclose()
                process.kill()
            await process.wait()
    # descriptors run out, or the connections the server keeps within them do (servers/accept.py)
    assert any(words in rest for words in said)
    assert len(rest) < 4000 and b"Traceback" not in rest


def test_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(capsys, "serve", "--transport", "http", "--port", str(port))
    assert code == 2  # a usage error like any other (issue 28: it was 1)
    assert err == f"error: cannot serve on 127.0.0.1:{port}: Address already in use\n"


def test_a_busy_health_port_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Another process on --health-port, or the server's own --port given again: one line each, exit 2 (issue 28:
    ``ValueError: read of closed file`` from the listener's start-up, exit 1)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(capsys, "serve", "--transport", "http", "--port", "0", "--health-port", str(port), "--allocator", "python")
    assert code == 2
    assert err == f"error: the health listener cannot serve 127.0.0.1:{port}: Address already in use\n"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, _, err = run_cli(capsys, "serve", "--transport", "http", "--port", str(port), "--health-port", str(port), "--allocator", "python")
    assert code == 2
    assert err == f"error: --health-port {port} is the server's own --port; give another port (or 0: any free one)\n"


def test_unknown_environment_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        serve_main("no_such_env", ["serve"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no environment 'no_such_env'") and err.count("\n") == 1


async def read_banner(process: Process) -> dict[str, str]:
    """The serve command's startup lines on stderr, as ``{label: value}``."""
    assert process.stderr is not None
    banner = ""
    async for chunk in process.stderr:
        banner += chunk.decode()
        if "claude mcp add" in banner and banner.endswith("\n"):
            break
    return {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in banner.splitlines()[1:]}


async def test_http_mode_end_to_end(tmp_path: Path) -> None:
    records = tmp_path / "records"
    command = [
        sys.executable, "-m", "tests.toy_env", "serve", "--transport", "http", "--port", "0",
        "--record-dir", str(records), "--token", "t0ken",
    ]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO, env={**os.environ, "TOOLGYM_TOKEN": ""}) as process:
            try:
                lines = await read_banner(process)
                mcp_url = lines["MCP (one episode per session)"]
                control_url = lines["control API"].split()[0].rstrip("/")
                assert lines["Claude Code"] == f"claude mcp add --transport http toy {mcp_url}"
                assert "(bearer token required" in lines["control API"]
                assert "t0ken" not in "".join(lines.values())  # a token the operator chose is not echoed
                assert "control token" not in lines

                async with httpx.AsyncClient() as http:
                    assert (await http.post(f"{control_url}/episodes", json={})).status_code == 401
                    auth = {"Authorization": "Bearer t0ken"}
                    created = await http.post(f"{control_url}/episodes", json={"task": "pay_back"}, headers=auth)
                    assert created.status_code == 201
                async with Client(mcp_url) as client:
                    result = await client.call_tool("list_accounts", {})
                    assert not result.is_error
                async with Client(created.json()["mcp_url"]) as client:
                    result = await client.call_tool("submit_answer", {"text": "done"})
                    assert not result.is_error
            finally:
                process.send_signal(signal.SIGINT)
            assert await process.wait() == 0

    files = sorted(records.glob("*.jsonl"))
    assert len(files) == 2  # the /mcp session's episode and the control-API one
    by_task = {r.header.task: r for r in (read_record(p, require_closed=True) for p in files)}
    assert [c.tool for c in by_task[None].tool_calls] == ["list_accounts"]
    assert [c.tool for c in by_task["pay_back"].tool_calls] == ["submit_answer"]


async def test_finance_http_server_generates_prints_and_requires_a_token() -> None:
    command = [sys.executable, "-m", "envs.finance", "serve", "--transport", "http", "--port", "0"]
    env = {key: value for key, value in os.environ.items() if key != "TOOLGYM_TOKEN"}
    with anyio.fail_after(120):  # the first run may build the finance fixture
        async with await anyio.open_process(command, cwd=REPO, env=env) as process:
            try:
                lines = await read_banner(process)
                token = lines["control token"]
                assert len(token) >= 43  # secrets.token_urlsafe(32)
                assert lines["control header"] == "Authorization: Bearer $TOOLGYM_TOKEN"
                assert token not in lines["runner"] and lines["runner"].startswith("TOOLGYM_TOKEN=<")  # no command line holds it
                assert "never give it to an agent" in lines["control API"]
                control_url = lines["control API"].split()[0].rstrip("/")

                async with httpx.AsyncClient(base_url=control_url) as http:
                    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {token}"}):
                        assert (await http.get("/episodes", headers=headers)).status_code == 401
                        assert (await http.post("/episodes", json={}, headers=headers)).status_code == 401
                    auth = {"Authorization": f"Bearer {token}"}
                    health = await http.get("/health", headers=auth)
                    assert health.status_code == 200 and health.json()["env"] == "finance"
                    created = await http.post("/episodes", json={"seed": 0}, headers=auth)
                    assert created.status_code == 201, created.text
                    listing = (await http.get("/episodes", headers=auth)).json()["episodes"]
                    assert [e["id"] for e in listing] == [created.json()["id"]]
            finally:
                process.terminate()
            await process.wait()


async def test_no_token_is_an_explicit_opt_out() -> None:
    command = [sys.executable, "-m", "tests.toy_env", "serve", "--transport", "http", "--port", "0", "--no-token"]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO, env={**os.environ, "TOOLGYM_TOKEN": "ignored"}) as process:
            try:
                lines = await read_banner(process)
                assert "no token" in lines["control API"] and "control token" not in lines
                assert "an agent included" in lines["warning"]
                control_url = lines["control API"].split()[0].rstrip("/")
                async with httpx.AsyncClient(base_url=control_url) as http:
                    assert (await http.post("/episodes", json={})).status_code == 201
                    # Even open, the control API refuses what a web page could send it.
                    page = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
                    assert (await http.post("/episodes", content=b"{}", headers=page)).status_code == 403
                    assert len((await http.get("/episodes")).json()["episodes"]) == 1
            finally:
                process.terminate()
            await process.wait()
