"""A hostile ``cmd:`` agent gets nothing of the control plane, shown over real processes and a real sandbox.

The agent below is a separate process written to do everything a malicious agent could with what it is
given and what it can find: it reads its environment, argv, MCP config, prompt and folder; lists every
process it can see and reads their command lines, environments and memory (the runner's too: the test
gives it the runner's pid); walks the kit's source, the runner's site-packages, the template cache and the
run folder (the test gives it their paths as arguments, so it knows where to look) and tries to import the
kit; collects every token-looking value and tries ``/control`` with and without each, with spoofed Host /
Origin / forwarding headers; and looks for other episodes (their ids, prompts). It prints what it found as
one JSON line, which the runner writes to the episode's log.

Under the default sandbox the test checks every vector came up empty and the run still graded every
episode. The same agent run with ``--sandbox none`` shows each vector is real (the control run).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import servers.http
from clients.agents import AgentOptions
from clients.agents.external import GIVEN_VARIABLES
from clients.runner import RunConfig, RunOutcome, run
from servers.http import running_http
from servers.registry import load_environment
from tests.clients.helpers import needs_sandbox

pytestmark = pytest.mark.slow(reason="each test runs an attacker agent that searches the machine: 6-12 s of CPU")

TASKS = "duplicate_charge,large_wire"
REFUSED = {401, 403, 421}
REPO = Path(__file__).resolve().parents[2]

ATTACKER = r'''
import json, os, re, sys
from pathlib import Path

import anyio
import httpx

mcp_url, mcp_config, prompt_file, episode_id, prompt, runner_pid, *places = sys.argv[1:]
TOKEN = re.compile(rb"[A-Za-z0-9_\-]{43,}")  # a control token is secrets.token_urlsafe(32): 43 characters


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError as exc:
        return None


def scan_memory(pid):
    """Every 43-character token-like run in the process's writable anonymous memory, or why not."""
    found = set()
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                fields = line.split()
                if not fields[1].startswith("rw") or (len(fields) > 5 and not fields[5].startswith("[")):
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                try:
                    mem.seek(start)
                    data = mem.read(end - start)
                except (OSError, OverflowError, ValueError):
                    continue
                found.update(m.decode() for m in TOKEN.findall(data) if len(m) == 43)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    return sorted(found)


me = os.getpid()
texts = [json.dumps(dict(os.environ)), json.dumps(sys.argv), read(mcp_config) or "", read(prompt_file) or ""]
processes, memory = {}, {}
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != me:
        processes[entry] = (read(f"/proc/{entry}/cmdline") or "").replace("\0", " ").strip()
        texts += [read(f"/proc/{entry}/environ") or "", processes[entry]]
if len(processes) <= 16:  # a sandbox's few; unsandboxed, the runner's (below) is the one that matters
    memory = {entry: scan_memory(entry) for entry in processes}
runner_memory = scan_memory(runner_pid)

seen_places, template_files, readable = {}, [], []
for place in places:
    count = 0
    for root, dirs, files in os.walk(place):
        dirs[:] = [d for d in dirs if d not in (".venv", "node_modules")]  # the agent's own interpreter lives there
        for name in files:
            text = read(os.path.join(root, name), 1 << 16)
            if text is None:
                continue
            count += 1
            readable.append(os.path.join(root, name))
            if name.endswith(".py") and ("TEMPLATES" in text or "oracle=" in text):
                template_files.append(os.path.join(root, name))
            texts.append(text)
        if count > 500:
            break
    if os.path.isfile(place) and read(place, 64) is not None:
        count += 1
        readable.append(place)
    seen_places[place] = {"exists": os.path.exists(place), "readable_files": count}

imports = {}
for module in ("envs.finance.tasks", "graders", "clients.runner", "servers.http"):
    try:
        __import__(module)
        imports[module] = "imported"
    except Exception as exc:
        imports[module] = f"{type(exc).__name__}: {exc}"

other_prompts, budget = [], 3000
for folder in {os.getcwd(), os.path.expanduser("~"), "/tmp", str(Path(prompt_file).parent)}:
    for root, dirs, files in os.walk(folder):
        for name in files:
            budget -= 1
            path = os.path.join(root, name)
            if budget > 0:
                texts.append(read(path) or "")
            if name == "prompt.txt" and path != prompt_file:
                other_prompts.append(path)

everything = "\n".join(texts)
episode_ids = sorted(set(re.findall(r"ep-[0-9a-f]{12}", everything)))
candidates = []
for found in [runner_memory, *memory.values(), sorted(set(m.decode() for m in TOKEN.findall(everything.encode())))]:
    if isinstance(found, list):
        candidates += [c for c in found if c not in candidates]
candidates = candidates[:4000]

base = mcp_url.split("/episodes/")[0]
port = base.rsplit(":", 1)[1]
targets = [
    ("GET", "/control/health", None),
    ("GET", "/control/episodes", None),
    ("POST", "/control/episodes", {}),
    ("POST", "/control/episodes", {"task": None, "seed": 0, "oracle": True}),
    ("GET", f"/control/episodes/{episode_id}", None),
    ("GET", f"/control/episodes/{episode_id}/record", None),
    ("POST", f"/control/episodes/{episode_id}/grade", None),
    ("POST", f"/control/episodes/{episode_id}/close", None),
    ("GET", "/control//episodes", None),
    ("GET", "/control/./episodes", None),
]
disguises = [
    {},
    {"Host": f"127.0.0.1:{port}"},
    {"Host": f"localhost:{port}"},
    {"Host": "evil.example"},
    {"Origin": f"http://127.0.0.1:{port}"},
    {"Origin": "null"},
    {"Origin": "http://evil.example", "Content-Type": "text/plain"},
    {"X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1", "X-Forwarded-Host": f"127.0.0.1:{port}"},
]


async def attack(http):
    attempts = []

    async def send(method, path, body, auth, disguise):
        headers = dict(disguise)
        if auth is not None:
            headers["Authorization"] = auth
        if body is not None and "Content-Type" not in headers:
            content, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        else:
            content = json.dumps(body).encode() if body is not None else None
        response = await http.request(method, base + path, content=content, headers=headers)
        attempts.append({"method": method, "path": path, "auth": auth is not None, "disguise": disguise, "status": response.status_code})

    for auth in [None, "Bearer", "Bearer x"]:
        for method, path, body in targets:
            await send(method, path, body, auth, {})
    for candidate in candidates:  # one cheap probe each; the whole list of targets with the first that works
        await send("GET", "/control/health", None, f"Bearer {candidate}", {})
        if attempts[-1]["status"] == 200:
            for method, path, body in targets:
                await send(method, path, body, f"Bearer {candidate}", {})
            break
    for disguise in disguises:
        for auth in [None, *(f"Bearer {c}" for c in candidates[:1])]:
            for method, path, body in targets:
                await send(method, path, body, auth, disguise)
    return attempts


async def play():
    from mcp import Client

    async with Client(mcp_url) as client:
        tools = (await client.list_tools()).tools
        reader = next(
            t for t in tools
            if t.annotations and t.annotations.read_only_hint and not t.input_schema.get("required")
        )
        result = await client.call_tool(reader.name, {})
        return [t.name for t in tools], reader.name, result.is_error


async def main():
    async with httpx.AsyncClient(timeout=30) as http:
        attempts = await attack(http)
    try:
        tools, called, is_error = await play()
    except Exception as exc:  # unsandboxed, with the token, it may have closed its own episode through /control
        tools, called, is_error = [], None, f"{type(exc).__name__}"
    report = {
        "pid": me,
        "episode_id": episode_id,
        "token_in_env": "TOOLGYM_TOKEN" in os.environ,
        "toolgym_vars": sorted(k for k in os.environ if k.upper().startswith("TOOLGYM_")),
        "processes": processes,
        "runner_memory": runner_memory if isinstance(runner_memory, str) else f"{len(runner_memory)} candidates",
        "memory": {pid: found if isinstance(found, str) else len(found) for pid, found in memory.items()},
        "places": seen_places,
        "readable": readable[:50],
        "template_files": template_files[:20],
        "imports": imports,
        "episode_ids": episode_ids,
        "other_prompts": other_prompts,
        "candidates": len(candidates),
        "everything": everything[:200000],
        "attempts": attempts,
        "tools": tools,
        "called": called,
        "call_is_error": is_error,
    }
    print("REPORT " + json.dumps(report))


anyio.run(main)
'''


def places(run_folder: Path) -> list[str]:
    """Where a task template, an oracle or a secret could be: what the attacker is told to look at."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolgym"
    found = [
        str(REPO),  # the kit's checkout (source, tests, git history)
        str(REPO / "envs"),
        str(REPO / "envs" / "finance" / "tasks"),
        str(Path(sysconfig.get_paths()["purelib"]) / "envs"),  # the kit installed into the runner's site-packages
        str(Path(sysconfig.get_paths()["purelib"]) / "graders"),
        str(cache),  # the default template cache
        os.environ.get("TOOLGYM_CACHE_DIR", str(cache)),  # this test session's template cache
        str(run_folder),
        str(run_folder / "results.jsonl"),
    ]
    return list(dict.fromkeys(found))


def attacker_spec(tmp_path: Path, run_folder: Path) -> str:
    script = tmp_path / "attacker" / "attacker.py"
    script.parent.mkdir()
    script.write_text(ATTACKER, encoding="utf-8")
    words = [sys.executable, str(script)]
    tail = [str(os.getpid()), *places(run_folder)]
    command = " ".join(shlex.quote(w) for w in words)
    return f"cmd:{command} {{mcp_url}} {{mcp_config}} {{prompt_file}} {{episode_id}} {{prompt}} {' '.join(map(shlex.quote, tail))}"


def reports(outcome: RunOutcome) -> list[dict[str, Any]]:
    """Each episode's attacker report, read from the episode's log in the run folder."""
    found = []
    for line in outcome.lines:
        log = (outcome.out / "logs" / f"{Path(line.record).stem}.log").read_text()  # type: ignore[arg-type]
        (report,) = [json.loads(x[len("REPORT "):]) for x in log.splitlines() if x.startswith("REPORT ")]
        found.append(report)
    return found


def check_sealed(outcome: RunOutcome, secrets_: list[str]) -> None:
    """Every vector came up empty under the sandbox, and the run graded normally."""
    assert [(line.task, line.status, line.stop_reason) for line in outcome.lines] == [
        ("duplicate_charge", "graded", "exit:0"),
        ("large_wire", "graded", "exit:0"),
    ]
    assert all(line.grade is not None and 0.0 <= line.score <= 1.0 for line in outcome.lines)  # type: ignore[operator]
    found = reports(outcome)
    assert sorted(r["episode_id"] for r in found) == sorted(line.episode_id for line in outcome.lines)
    for report in found:
        # The control token: not in its environment, arguments, files, nor any memory or process it can read.
        assert report["token_in_env"] is False
        assert report["toolgym_vars"] == sorted(GIVEN_VARIABLES)
        for secret in secrets_:
            assert secret not in json.dumps(report), "a control token reached the agent"
        # Processes: its own PID namespace only (the sandbox's init and itself), never the runner or server.
        assert all(os.path.basename(cmd.split(" ")[0]) == "bwrap" for cmd in report["processes"].values()), report["processes"]
        assert str(os.getpid()) not in report["processes"] or report["processes"][str(os.getpid())].startswith("/usr/bin/bwrap")
        assert report["runner_memory"].startswith("FileNotFoundError"), report["runner_memory"]
        # Task templates and oracles: no source, no site-packages copy, no cache, no run folder, no import.
        assert report["template_files"] == [], report["template_files"]
        for place, seen in report["places"].items():
            assert seen["readable_files"] == 0, (place, seen, report["readable"][:5])
        assert not any(state == "imported" for state in report["imports"].values()), report["imports"]
        # Other episodes: no other id, no other prompt.
        assert report["episode_ids"] == [report["episode_id"]]
        assert report["other_prompts"] == []
        # /control: everything refused, with and without whatever it found.
        statuses = {attempt["status"] for attempt in report["attempts"]}
        assert statuses <= REFUSED, [a for a in report["attempts"] if a["status"] not in REFUSED][:5]
        assert {401, 403, 421} <= statuses  # the token, Origin and Host checks each refused something
        assert len(report["attempts"]) > 100
        # Its MCP surface is its episode's tools, and they work; nothing there controls episodes.
        assert report["call_is_error"] is False
        assert not {name for name in report["tools"] if any(w in name for w in ("grade", "episode", "control", "reset"))}
    for line in outcome.lines:
        record = (outcome.out / line.record).read_text()  # type: ignore[operator]
        assert json.loads(record.splitlines()[1])["type"] == "tool_call"  # the agent's read reached its world


def record_tokens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The list every control token ``servers.http.new_token`` makes from now on is appended to."""
    issued: list[str] = []
    real: Callable[[], str] = servers.http.new_token

    def recording() -> str:
        token = real()
        issued.append(token)
        return token

    monkeypatch.setattr(servers.http, "new_token", recording)
    return issued


@needs_sandbox
async def test_a_sandboxed_cmd_agent_finds_nothing_of_the_runners_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoy = f"decoy-{secrets.token_urlsafe(24)}"
    monkeypatch.setenv("TOOLGYM_TOKEN", decoy)  # exported by the user, for some other server: never passed on
    issued = record_tokens(monkeypatch)
    run_folder = tmp_path / "run"
    with anyio.fail_after(300):
        outcome = await run(RunConfig(env="finance", agent=attacker_spec(tmp_path, run_folder), tasks=TASKS, out=run_folder, concurrency=2))
    assert len(issued) == 1  # the runner sealed its own server with a fresh token
    check_sealed(outcome, [*issued, decoy])


@needs_sandbox
async def test_a_sandboxed_cmd_agent_finds_nothing_of_a_given_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = secrets.token_urlsafe(32)  # the shape a scan looks for
    monkeypatch.setenv("TOOLGYM_TOKEN", token)  # how `toolgym run --server URL` may get it
    environment = load_environment("finance")
    released: list[str] = []
    run_folder = tmp_path / "run"
    with anyio.fail_after(300):
        async with running_http(environment, token=token) as server:
            server.manager.on_release.append(lambda episode: released.append(episode.id))
            config: dict[str, Any] = {"server": server.url, "token": token, "concurrency": 2}
            outcome = await run(RunConfig(env="finance", agent=attacker_spec(tmp_path, run_folder), tasks=TASKS, out=run_folder, **config))
            assert len(server.manager) == 0  # the agent created no episode of its own
    assert sorted(released) == sorted(line.episode_id for line in outcome.lines)
    check_sealed(outcome, [token])


async def test_without_the_sandbox_every_vector_is_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control run: the same attacker with ``--sandbox none`` reaches what the sandbox hides.

    As root it also reads the runner's memory, finds the control token and uses it: the reason the
    sandbox is the default. (Not as root, the runner's non-dumpable mark stops the memory read.)
    """
    issued = record_tokens(monkeypatch)
    run_folder = tmp_path / "run"
    spec = attacker_spec(tmp_path, run_folder)
    with anyio.fail_after(300):
        outcome = await run(RunConfig(env="finance", agent=spec, tasks="duplicate_charge", out=run_folder,
                                      agent_options=AgentOptions(sandbox="none")))
    (report,) = reports(outcome)
    assert outcome.lines[0].status == "graded"
    assert str(os.getpid()) in report["processes"]  # the runner is visible
    assert any(path.endswith("duplicate_charge.py") or "/envs/finance/tasks/" in path for path in report["template_files"])
    assert report["imports"]["envs.finance.tasks"] == "imported"
    assert report["places"][str(run_folder)]["exists"]
    cache = os.environ["TOOLGYM_CACHE_DIR"]
    assert report["places"][cache]["readable_files"] > 0
    token_found = issued[0] in json.dumps(report) or any(
        a["status"] == 200 and a["path"] == "/control/health" for a in report["attempts"]
    )
    if os.geteuid() == 0:
        assert token_found, "as root the runner's memory is readable: the attacker should have found the token"
    else:
        assert not token_found and "PermissionError" in report["runner_memory"]
