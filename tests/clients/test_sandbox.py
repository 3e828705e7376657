"""The sandbox of ``cmd:`` agents: what it binds and hides, its refusal where it cannot run, ``--sandbox none``'s
warning, ``--sandbox-bind``, and ``toolgym doctor`` (real bubblewrap, real processes)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest

from clients.agents.base import AgentSession, Limits
from clients.agents.external import ExternalAgent
from clients.errors import AgentSpecError
from clients.sandbox import Sandbox, SandboxUnavailable, kit_paths, parse_bind, resolve_mode
from tests.clients.helpers import needs_sandbox

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clients.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


def session(name: str = "x") -> AgentSession:
    return AgentSession(episode_id="ep-0", env="toy", task="t", seed=0, prompt="the prompt", limits=Limits(episode_timeout=30),
                        mcp_url="http://127.0.0.1:9/episodes/ep-0/mcp", name=name)


def test_auto_refuses_in_one_line_where_bubblewrap_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as caught:
        resolve_mode("auto", bwrap=str(tmp_path / "no-bwrap"))
    message = str(caught.value)
    assert "\n" not in message and "bubblewrap (bwrap) is not installed" in message
    assert "apt-get install bubblewrap" in message and "--sandbox none" in message
    assert resolve_mode("none", bwrap=str(tmp_path / "no-bwrap")) == "none"
    # The same through the command line: a PATH without bwrap, a cmd: agent, one line and exit status 2.
    env = {**os.environ, "PATH": str(tmp_path)}
    done = cli("run", "tests.clients.toyenv:environment", "--agent", "cmd:/bin/true", "--out", str(tmp_path / "run"), env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "bubblewrap (bwrap) is not installed" in done.stderr
    assert not (tmp_path / "run").exists()


def test_sandbox_none_warns_once_and_names_what_the_agent_reaches(tmp_path: Path) -> None:
    done = cli("run", "tests.clients.toyenv:environment", "--agent", "cmd:/bin/true", "--sandbox", "none",
               "--tasks", "report_balance", "--seeds", "0-1", "--out", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("WARNING: --sandbox none") == 1
    assert str(REPO) in done.stderr and "oracle" in done.stderr


@needs_sandbox
def test_binds_the_program_its_interpreter_and_its_script_folder_never_the_kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "agent" / "agent.py"
    script.parent.mkdir()
    script.write_text("print('hi')\n")
    run_folder = tmp_path / "run"
    (run_folder / "logs").mkdir(parents=True)
    kit = kit_paths([run_folder])
    sandbox = Sandbox([sys.executable, str(script), str(REPO / "envs"), str(run_folder), str(tmp_path), "{prompt_file}"], kit=kit)
    venv = Path(sys.prefix)
    assert venv in sandbox.programs and Path(os.path.realpath(sys.base_prefix)) in sandbox.programs
    assert sandbox.arguments == [script.parent, tmp_path]  # the script's folder; a folder argument as it is
    assert sandbox.withheld == [REPO / "envs", run_folder]  # the kit's own: named, and not bound
    argv = sandbox.command(["python"], work=tmp_path / "w", home=tmp_path / "h", files=[])
    bound = {argv[i + 1] for i, word in enumerate(argv) if word in ("--ro-bind", "--bind")}
    assert not any(Path(b) == REPO or Path(b) in kit.core for b in bound)
    assert ["--tmpfs", str(run_folder)] == argv[argv.index(str(run_folder)) - 1: argv.index(str(run_folder)) + 1]  # masked
    # A relative path is the runner's; the agent works in a folder of its own, so it gets the absolute one.
    monkeypatch.chdir(tmp_path)
    relative = Sandbox([sys.executable, "agent/agent.py", "{prompt}"], kit=kit)
    assert relative.render_words([sys.executable, "agent/agent.py", "hello"]) == [sys.executable, str(script), "hello"]
    assert relative.arguments == [script.parent]
    with pytest.raises(AgentSpecError, match="kit's own"):
        Sandbox([sys.executable], binds=[parse_bind(str(REPO / "envs"))], kit=kit)
    with pytest.raises(AgentSpecError, match="does not exist"):
        parse_bind(str(tmp_path / "nothing:ro"))


@needs_sandbox
async def test_sandbox_bind_shows_a_folder_writable_or_read_only(tmp_path: Path) -> None:
    config, tools = tmp_path / "config", tmp_path / "tools"
    config.mkdir()
    tools.mkdir()
    (tools / "tool.txt").write_text("a tool")
    script = (
        "import os, sys\nc, t = sys.argv[1:3]\nopen(os.path.join(c, 'written'), 'w').write('x')\n"
        "print(open(os.path.join(t, 'tool.txt')).read())\n"
        "try:\n    open(os.path.join(t, 'nope'), 'w')\n    print('tools writable')\nexcept OSError:\n    print('tools read-only')\n"
    )
    words = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {config} {tools}"
    # Named as arguments, the folders are bound read-only; --sandbox-bind makes config writable.
    agent = ExternalAgent(words, log_dir=tmp_path / "logs", binds=[str(config), f"{tools}:ro"])
    with anyio.fail_after(30):
        result = await agent.run(session())
    log = (tmp_path / "logs" / "x.log").read_text()
    assert result.stop_reason == "exit:0", log
    assert "a tool" in log and "tools read-only" in log
    assert (config / "written").read_text() == "x"


@needs_sandbox
async def test_the_agent_gets_a_private_home_and_working_directory(tmp_path: Path) -> None:
    script = (
        "import json, os, sys\nopen('made-here', 'w').write('x')\nopen(os.path.expanduser('~/.agent-state'), 'w').write('y')\n"
        "print(json.dumps({'cwd': os.getcwd(), 'home': sorted(os.listdir(os.path.expanduser('~'))), 'tmp': os.listdir('/tmp'),"
        " 'prompt': open(sys.argv[1]).read(), 'pid': os.getpid()}))\n"
    )
    agent = ExternalAgent(f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{prompt_file}}", log_dir=tmp_path / "logs")
    with anyio.fail_after(30):
        result = await agent.run(session())
    log = (tmp_path / "logs" / "x.log").read_text()
    assert result.stop_reason == "exit:0", log
    seen = json.loads(log.splitlines()[-1])
    assert seen["prompt"] == "the prompt" and seen["pid"] <= 3  # its own PID namespace
    assert ".agent-state" in seen["home"] and not (Path.home() / ".agent-state").exists()
    assert seen["cwd"].endswith("/work")
    if tempfile.gettempdir() == "/tmp":
        # An empty /tmp but for mount points: its own folder's, and the interpreter's when the kit's virtual
        # environment itself lives under /tmp (a checkout cloned there)
        bound = {Path(p).parts[2] for p in (sys.executable, sys.prefix) if Path(p).parts[1:2] == ("tmp",)}
        assert set(seen["tmp"]) == {seen["cwd"].split("/")[2], *bound}


@pytest.mark.slow
@needs_sandbox
def test_doctor_finds_no_leak_in_the_default_sandbox_and_every_leak_without_one() -> None:
    done = cli("doctor", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox bubblewrap" in done.stdout and "no leak" in done.stdout and "LEAK" not in done.stdout
    for vector in ("processes", "runner memory", "kit package", "run folder", "control token", "/control without a token"):
        assert vector in done.stdout
    unsandboxed = cli("doctor", "--sandbox", "none", timeout=180)
    assert unsandboxed.returncode == 1
    leaks = [line for line in unsandboxed.stdout.splitlines() if "LEAK" in line]
    assert any("processes" in line for line in leaks) and any("kit package" in line for line in leaks)
    assert any("run folder" in line for line in leaks)
