"""SIGTERM stops a run the way Ctrl-C does (issue 28): agents killed, the summary of what finished written, one line,
exit status 143 — never a traceback (seen: a 53-line uvicorn one), never a process killed with its run half-kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.clients.helpers import needs_sandbox

REPO = Path(__file__).resolve().parents[2]

AGENT = r'''
import json, sys, time, urllib.request

url = sys.argv[1]
print("started", flush=True)
envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "a", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
for ident in range(100000):  # busy with its episode's server until it is stopped
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": "list_accounts", "arguments": {}, "_meta": envelope}}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_accounts"})
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except OSError as exc:
        print("call failed:", exc, flush=True)
    time.sleep(0.02)
'''


@needs_sandbox
def test_sigterm_during_a_cmd_episode_stops_the_run_in_one_line(tmp_path: Path) -> None:
    agent = tmp_path / "agent" / "busy.py"
    agent.parent.mkdir()
    agent.write_text(AGENT)
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "clients.cli", "run", "tests.clients.toyenv:environment", "--agent",
        f"cmd:{sys.executable} {agent} {{mcp_url}}", "--tasks", "report_balance", "--seeds", "0-3", "--out", str(out), "--quiet",
    ]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # mid-episode: the agent is calling tools
            logs = list((out / "logs").glob("*.log")) if (out / "logs").is_dir() else []
            if any("started" in log.read_text() for log in logs):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the agent never started")
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert err == "toolgym run: stopped by SIGTERM; what finished is kept (--resume completes the run)\n"
    assert (out / "summary.json").is_file()
    # The agent went with the run: no process of it is left behind.
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and str(agent) in _cmdline(pid)]
    assert left == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
