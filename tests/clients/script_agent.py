"""A small external agent: a real process that connects to an episode over HTTP with ``mcp.Client(url)``.

Usage: ``python -m tests.clients.script_agent MODE MCP_URL PROMPT_FILE`` with MODE one of

- ``solve``: read the prompt, solve the toy tasks (pay a debt back, report a balance) with real tool calls;
- ``fail``: exit with status 3 at once, without connecting (a crashing agent);
- ``hang``: start a child process, then wait forever without connecting (the runner must kill the whole
  process group); the child's pid is written to ``$SCRIPT_AGENT_CHILD_PID`` when that is set, and its
  command line ends with ``$SCRIPT_AGENT_MARKER`` (to find it from outside a sandbox's PID namespace). It
  imports nothing heavy, so it reaches its wait in milliseconds.

It imports nothing of the kit: a sandboxed agent never sees the kit, so tests run a copy of this file from
outside it (:func:`spec`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import time
from typing import Any


def _data(result: object) -> dict[str, object]:
    structured = getattr(result, "structured_content", None)
    if isinstance(structured, dict):
        return structured
    return json.loads(result.content[0].text)  # type: ignore[attr-defined]


async def solve(client: Any, prompt: str) -> None:
    """Solve the toy tasks from their prompt text alone."""
    debt = re.search(r"Account (acc-\d{3}) owes ([\d.]+) USD to (acc-\d{3})", prompt)
    if debt:
        payer, amount, payee = debt.groups()
        await client.call_tool("transfer", {"from_account": payer, "to_account": payee, "amount": amount})
        await client.call_tool("submit_answer", {"text": "paid"})
        return
    account = re.search(r"acc-\d{3}", prompt)
    if account is None:
        return
    tool = "flaky_balance" if "flaky_balance" in prompt else "get_account"
    result = _data(await client.call_tool(tool, {"account_id": account.group(0)}))
    balance = result.get("balance", result.get("result"))
    await client.call_tool("submit_answer", {"text": str(balance)})


def spec(folder: Path, mode: str, python: str = sys.executable) -> str:
    """A ``cmd:`` spec running a copy of this file, placed in ``folder`` (outside the kit), in ``mode``."""
    import shlex
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    copy = shutil.copy(__file__, folder / "script_agent.py")
    return f"cmd:{shlex.quote(python)} {shlex.quote(str(copy))} {mode} {{mcp_url}} {{prompt_file}}"


def hang() -> None:
    """Leave a child behind and never return."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ.get("SCRIPT_AGENT_MARKER", "")])
    pid_file = os.environ.get("SCRIPT_AGENT_CHILD_PID")
    if pid_file:
        Path(pid_file).write_text(str(child.pid))
    while True:
        time.sleep(60)


async def main(url: str, prompt_file: str) -> int:
    """Connect to the episode, solve it, return the exit status."""
    from mcp import Client  # imported here: the light modes must start in milliseconds

    prompt = Path(prompt_file).read_text(encoding="utf-8")
    assert os.environ["TOOLGYM_MCP_URL"] == url
    async with Client(url) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "submit_answer" in tools, tools
        await solve(client, prompt)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "hang":
        hang()
    if sys.argv[1] == "fail":
        sys.exit(3)
    import anyio

    sys.exit(anyio.run(main, *sys.argv[2:4]))
