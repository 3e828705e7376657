"""The external agent: a real subprocess on the episode's HTTP MCP URL, graded from the server's record.

The agent runs in the default sandbox (bubblewrap) unless a test says otherwise: it is a copy of
``tests/clients/script_agent.py`` placed outside the kit, as any agent of a user would be.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest

from clients.agents import AgentOptions
from clients.agents.base import AgentSession, Limits
from clients.agents.external import GIVEN_VARIABLES, ExternalAgent, agent_environment
from clients.runner import RunConfig, run
from servers.record import read_record
from tests.clients import script_agent
from tests.clients.helpers import needs_sandbox
from tests.clients.toyenv import environment


@needs_sandbox
async def test_script_agent_solves_tasks_over_http(tmp_path: Path) -> None:
    spec = script_agent.spec(tmp_path / "agent", "solve")
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks="pay_back,report_balance", out=tmp_path / "run", concurrency=2))
    assert [(l.task, l.status, l.passed, l.stop_reason) for l in outcome.lines] == [
        ("pay_back", "graded", True, "exit:0"),
        ("report_balance", "graded", True, "exit:0"),
    ]
    for line in outcome.lines:
        record = read_record(tmp_path / "run" / line.record, require_closed=True)  # type: ignore[operator]
        assert record.header.episode_id == line.episode_id and line.episode_id.startswith("ep-")
        assert [c.tool for c in record.tool_calls][-1] == "submit_answer"
        assert (tmp_path / "run" / "logs" / f"{Path(line.record).stem}.log").exists()  # type: ignore[arg-type]


@needs_sandbox
async def test_a_failing_command_is_graded_not_errored(tmp_path: Path) -> None:
    spec = script_agent.spec(tmp_path / "agent", "fail")
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks="report_balance", out=tmp_path / "run"))
    (line,) = outcome.lines
    assert (line.status, line.passed, line.stop_reason, line.tool_calls) == ("graded", False, "exit:3", 0)


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.slow  # waits out a 3 s episode timeout
async def test_timeout_kills_the_whole_process_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("SCRIPT_AGENT_CHILD_PID", str(pid_file))  # TOOLGYM_* never reach an agent
    spec = script_agent.spec(tmp_path / "agent", "hang")
    options = AgentOptions(sandbox="none")  # the child writes its pid where the test reads it
    with anyio.fail_after(60):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks="report_balance", out=tmp_path / "run",
                                      limits=Limits(episode_timeout=3.0), agent_options=options))  # time to start a child
        (line,) = outcome.lines
        assert (line.status, line.passed, line.stop_reason, line.tool_calls) == ("graded", False, "timeout", 0)
        child = int(pid_file.read_text())
        while not _gone(child):  # the kernel finishes a SIGTERMed process asynchronously
            await anyio.sleep(0.02)


def _marked(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and not _gone(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@needs_sandbox
async def test_timeout_kills_a_sandboxed_agent_and_everything_it_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"toolgym-test-{os.getpid()}-{tmp_path.name}"
    monkeypatch.setenv("SCRIPT_AGENT_MARKER", marker)
    spec = script_agent.spec(tmp_path / "agent", "hang")
    with anyio.fail_after(60):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks="report_balance", out=tmp_path / "run", limits=Limits(episode_timeout=2.0)))
        (line,) = outcome.lines
        assert (line.status, line.stop_reason) == ("graded", "timeout")
        while _marked(marker):  # the sandbox's PID namespace dies with its first process
            await anyio.sleep(0.05)


def test_placeholders_are_rendered_word_by_word(tmp_path: Path) -> None:
    agent = ExternalAgent(f"{shlex.quote(sys.executable)} --task {{prompt}} --config={{mcp_config}} {{episode_id}} {{mcp_url}} {{prompt_file}}")
    session = AgentSession(
        episode_id="ep-1", env="toy", task="t", seed=0, prompt='Pay "acc-001" 5.00 {now}', limits=Limits(), mcp_url="http://127.0.0.1:1/episodes/ep-1/mcp"
    )
    argv = agent.render(session, tmp_path / "mcp.json", tmp_path / "prompt.txt")
    assert argv == [
        sys.executable, "--task", 'Pay "acc-001" 5.00 {now}', f"--config={tmp_path / 'mcp.json'}", "ep-1",
        "http://127.0.0.1:1/episodes/ep-1/mcp", str(tmp_path / "prompt.txt"),
    ]


def test_a_mistyped_placeholder_stops_the_run_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``{mcp_ur}`` once reached the agent as literal text and scored 0 (issue 28); now nothing runs."""
    from clients.cli import main

    with pytest.raises(SystemExit) as done:
        main(["run", "tests.clients.toyenv:environment", "--agent", "cmd:echo {mcp_ur} {prompt}", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1, err
    assert err == (
        "toolgym run: error: cmd: unknown placeholder {mcp_ur} (did you mean {mcp_url}?); the placeholders are "
        "{mcp_url}, {mcp_config}, {prompt}, {prompt_file}, {episode_id}\n"
    )
    assert not (tmp_path / "run").exists()
    # A brace that is no placeholder name is the command's own business (JSON in an argument, a shell's ${X}).
    ExternalAgent(f"{shlex.quote(sys.executable)} -c 'print({{1: 2}})' --json='{{\"a\": 1}}' {{prompt}}", sandbox="none")


@needs_sandbox
async def test_generated_mcp_config_is_claude_style(tmp_path: Path) -> None:
    script = "import sys; print(open(sys.argv[1]).read())"
    agent = ExternalAgent(f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{mcp_config}}", log_dir=tmp_path / "logs")
    session = AgentSession(episode_id="ep-9", env="toy", task="t", seed=0, prompt="p", limits=Limits(episode_timeout=30), mcp_url="http://127.0.0.1:5/episodes/ep-9/mcp", name="x.t.s0.t0")
    with anyio.fail_after(30):
        result = await agent.run(session)
    assert result.stop_reason == "exit:0"
    seen = (tmp_path / "logs" / "x.t.s0.t0.log").read_text()
    assert json.loads(seen) == {"mcpServers": {"toolgym": {"type": "http", "url": "http://127.0.0.1:5/episodes/ep-9/mcp"}}}
    assert os.environ.get("TOOLGYM_MCP_URL") is None  # the command's environment, not ours


def test_the_command_sees_no_toolgym_variable_but_its_episode(tmp_path: Path) -> None:
    session = AgentSession(episode_id="ep-3", env="toy", task="t", seed=0, prompt="p", limits=Limits(), mcp_url="http://127.0.0.1:7/episodes/ep-3/mcp")
    inherited = {
        "PATH": "/usr/bin",
        "TOOLGYM_TOKEN": "s3cret",
        "toolgym_token": "s3cret",
        "TOOLGYM_CACHE_DIR": "/tmp/cache",
        "TOOLGYM_MCP_URL": "http://127.0.0.1:7/control",
    }
    env = agent_environment(session, tmp_path / "prompt.txt", inherited)
    assert env == {
        "PATH": "/usr/bin",
        "TOOLGYM_MCP_URL": "http://127.0.0.1:7/episodes/ep-3/mcp",
        "TOOLGYM_EPISODE_ID": "ep-3",
        "TOOLGYM_PROMPT_FILE": str(tmp_path / "prompt.txt"),
    }
    assert sorted(k for k in env if k.startswith("TOOLGYM_")) == sorted(GIVEN_VARIABLES)
