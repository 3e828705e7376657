"""Ordinary external agents play and pass tasks under the default sandbox, with no extra flag.

Each is what a user would point ``--agent cmd:...`` at: a Python MCP client in a virtual environment of its
own (the ``mcp`` 1.x SDK, not toolgym's), started as the README shows (``--mcp-config {mcp_config}
--prompt-file {prompt_file}``), and a Node client on the npm package ``@modelcontextprotocol/sdk``, started
as an executable script beside its ``node_modules``. Their environments are built from the registries and
cached under ``~/.cache/toolgym-test-venvs`` (``tests/integrations/venvs.py``); the sandbox finds what each
needs from its command line alone.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import anyio
import pytest

from clients.runner import RunConfig, RunOutcome, run
from servers.record import read_record
from tests.clients.helpers import needs_sandbox
from tests.clients.toyenv import environment
from tests.integrations.venvs import ensure_npm, ensure_venv

OUTSIDE = Path(__file__).parent / "outside"
MCP_PYTHON = "mcp==1.30.0"
MCP_NODE = "@modelcontextprotocol/sdk@1.32.2"
TASKS = "pay_back,report_balance"

pytestmark = [
    needs_sandbox,
    pytest.mark.slow(reason="each test builds (once, cached) an agent's virtual environment or npm package from the registry"),
]


def check_passed(outcome: RunOutcome) -> None:
    assert [(line.task, line.status, line.passed, line.stop_reason) for line in outcome.lines] == [
        ("pay_back", "graded", True, "exit:0"),
        ("report_balance", "graded", True, "exit:0"),
    ], [(line.stop_detail, (outcome.out / "logs").iterdir()) for line in outcome.lines]
    for line in outcome.lines:
        record = read_record(outcome.out / line.record, require_closed=True)  # type: ignore[operator]
        assert [c.tool for c in record.tool_calls][-1] == "submit_answer"


async def test_a_python_agent_in_its_own_virtual_environment_passes_sandboxed(tmp_path: Path) -> None:
    venv = ensure_venv("mcp1-agent", [MCP_PYTHON])
    agent = tmp_path / "my-agent" / "agent.py"
    agent.parent.mkdir()
    shutil.copy(OUTSIDE / "python_agent.py", agent)
    spec = f"cmd:{shlex.quote(venv.python)} {shlex.quote(str(agent))} --mcp-config {{mcp_config}} --prompt-file {{prompt_file}}"
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks=TASKS, out=tmp_path / "run", concurrency=2))
    check_passed(outcome)
    log = next((tmp_path / "run" / "logs").iterdir()).read_text()
    assert f"done with mcp from {venv.path}" in log  # its own environment, not the runner's


async def test_a_node_agent_passes_sandboxed(tmp_path: Path) -> None:
    folder = ensure_npm("mcp-node-agent", [MCP_NODE])
    agent = folder / "agent.mjs"
    if not agent.exists() or agent.read_bytes() != (OUTSIDE / "node_agent.mjs").read_bytes():
        shutil.copy(OUTSIDE / "node_agent.mjs", agent)
    os.chmod(agent, 0o755)
    spec = f"cmd:{shlex.quote(str(agent))} {{mcp_url}} {{prompt_file}}"  # found by its #! line: node on PATH
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=environment, agent=spec, tasks=TASKS, out=tmp_path / "run", concurrency=2))
    check_passed(outcome)
