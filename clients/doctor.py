"""``toolgym doctor``: check from inside what a ``cmd:`` agent's sandbox lets it reach.

It starts a probe agent the way ``toolgym run`` starts a ``cmd:`` agent — same sandbox, same flags — beside a
real server sealed by a control token, and gives the probe every place it should not reach: the kit's
packages and checkout, the template cache, a run folder, every earlier output the kit registered
(``fixtures/outputs.py``), the runner's pid and the server's URL. With ``agent`` (``--agent 'cmd:...'``) the
sandbox is the one made for that very command and its ``--sandbox-bind`` folders (its program's folder, the
folders its arguments name...), and the probe runs in it in the command's place; without, the probe is the
command (this Python as its interpreter, so the runner's virtual environment is visible to it: the worst
case). The probe (standard library only) also searches the whole filesystem it can see, from ``/``, for
anything the kit wrote — marker files, records, results, SFT exports, reports, run-shaped folders — as a
hostile agent would. It reports what it could list, read and call; :func:`judge` turns that into one finding
per attack vector. Any leak makes ``toolgym doctor`` exit 1.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.agents.base import AgentSession, Limits
from clients.agents.external import ExternalAgent
from clients.sandbox import SYSTEM_PATHS, environment_sources, kit_paths
from fixtures import outputs

__all__ = ["Finding", "examine", "judge", "PROBE"]

PROBE = r'''
import json, os, re, sys, time, urllib.request, urllib.error

mcp_url, runner_pid = sys.argv[1], sys.argv[2]
with open(sys.argv[3]) as given:
    given = json.load(given)
places, registered, search_budget = given["places"], given["outputs"], given["search_budget"]
report = {"pid": os.getpid(), "processes": {}, "places": {}, "texts": [], "control": {}, "runner_memory": None,
          "registered": {}, "earlier": {}}


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError as exc:
        return None


for entry in os.listdir("/proc"):
    if entry.isdigit():
        report["processes"][entry] = (read(f"/proc/{entry}/cmdline") or "").replace("\0", " ").strip()
        report["texts"].append(read(f"/proc/{entry}/environ") or "")
        report["texts"].append(report["processes"][entry])

try:
    with open(f"/proc/{runner_pid}/maps") as maps:
        start, end = (int(x, 16) for x in maps.readline().split()[0].split("-"))
    with open(f"/proc/{runner_pid}/mem", "rb") as mem:
        mem.seek(start)
        report["runner_memory"] = len(mem.read(min(4096, end - start)))
except (OSError, ValueError) as exc:
    report["runner_memory"] = f"{type(exc).__name__}: {exc}"

for place in places:
    seen = {"exists": os.path.exists(place), "readable_files": 0, "sample": []}
    for root, dirs, files in os.walk(place):
        for name in files:
            if read(os.path.join(root, name), 64) is not None:
                seen["readable_files"] += 1
                seen["sample"].append(os.path.join(root, name))
        if seen["readable_files"] >= 200:
            break
    if os.path.isfile(place) and read(place, 64) is not None:
        seen["readable_files"] += 1
    report["places"][place] = seen

for path in registered:  # every output the kit wrote on this machine and still knows of
    if os.path.isdir(path):
        try:
            report["registered"][path] = bool(os.listdir(path))
        except OSError:
            report["registered"][path] = False
    else:
        report["registered"][path] = read(path, 64) is not None


def sniff(path):
    """What a hostile agent would take for a run's records: the kit's own formats, read from the first line."""
    head = read(path, 8192)
    if not head:
        return False
    if path.endswith(".html"):
        return '<meta name="generator" content="toolgym' in head
    if path.endswith(".json"):
        return '"pass_hat_k"' in head
    first = head.split("\n", 1)[0]
    return '"episode_id"' in first and any(key in first for key in ('"start_hash"', '"status"', '"messages"'))


# The whole filesystem the probe sees for anything the kit wrote (an earlier run, an export...): where a hostile
# agent looks first (its folder, its home, /tmp), then everything from /. Bounded: unsandboxed, / is a whole machine.
found, entries, started, complete, walked = [], 0, time.monotonic(), True, set()
for start in (os.getcwd(), os.path.expanduser("~"), "/tmp", "/"):
    for root, dirs, files in os.walk(start):
        real = os.path.realpath(root)
        if real in walked or real in ("/proc", "/sys", "/dev"):
            dirs[:] = []
            continue
        walked.add(real)
        entries += len(dirs) + len(files)
        if ".toolgym-output" in files or ("results.jsonl" in files and ({"records", "logs"} & set(dirs) or "summary.json" in files)):
            found.append(root)
        found += [os.path.join(root, f) for f in files if f.endswith((".jsonl", ".json", ".html")) and sniff(os.path.join(root, f))]
        if entries > search_budget or time.monotonic() - started > 60:
            complete = False
            break
    if not complete:
        break
report["earlier"] = {"found": found[:50], "count": len(found), "entries": entries, "complete": complete}

budget = 300  # the files a sandboxed agent has: its own few (unsandboxed, a sample is enough to tell)
for folder in {os.getcwd(), os.path.expanduser("~"), "/tmp"}:
    for root, dirs, files in os.walk(folder):
        for name in files:
            if budget <= 0:
                break
            budget -= 1
            report["texts"].append(read(os.path.join(root, name), 1 << 16) or "")
report["texts"].append(json.dumps(dict(os.environ)))

base = mcp_url.split("/mcp")[0].split("/episodes/")[0]
candidates = sorted(set(re.findall(r"[A-Za-z0-9_-]{40,}", "\n".join(report["texts"]))))[:30]
for auth in [None, *candidates]:
    request = urllib.request.Request(base + "/control/episodes", headers={"Authorization": f"Bearer {auth}"} if auth else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status = answer.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        status = str(exc)
    report["control"]["with a token found" if auth else "without a token"] = status
print(json.dumps(report))
'''
"""The probe agent (standard library only): prints one JSON report of what it reached."""

SEARCH_BUDGET = 400_000
"""Folder entries the probe's search for earlier outputs looks at (within 60 s) before it stops and says so."""


@dataclass(frozen=True)
class Finding:
    """One attack vector and what the probe got."""

    vector: str
    leaked: bool
    detail: str


def _places() -> dict[str, str]:
    """Path → what it is, for everything the probe must not reach."""
    kit = kit_paths()
    places = {str(p): "kit package" for p in kit.core}
    places.update({str(p): "kit checkout or template cache" for p in kit.zones})
    purelib = sysconfig.get_paths()["purelib"]
    places[purelib] = "the runner's site-packages"
    return {path: what for path, what in places.items() if os.path.exists(path)}


def judge(
    report: dict[str, Any], *, token: str, runner_pid: int, places: dict[str, str], run_folder: str, own: Sequence[Path] = ()
) -> list[Finding]:
    """One :class:`Finding` per vector from the probe's ``report``.

    ``own``: what the sandbox shows the agent of its own (its interpreter's environment...): files there are
    no leak even inside a checkout.
    """
    findings: list[Finding] = []
    probe_pid = str(report.get("pid"))
    # The sandbox's own init (bubblewrap, pid 1 of the namespace) is no leak: it holds nothing of ours.
    others = {
        pid: cmd for pid, cmd in report["processes"].items() if pid != probe_pid and os.path.basename(cmd.split(" ")[0]) != "bwrap"
    }
    findings.append(Finding(
        "processes", bool(others),
        f"sees {len(report['processes'])} process(es)" + (f", e.g. {sorted(others.items())[:2]}" if others else ": its own sandbox only"),
    ))
    memory = report.get("runner_memory")
    findings.append(Finding(f"runner memory /proc/{runner_pid}/mem", isinstance(memory, int), f"read {memory} bytes" if isinstance(memory, int) else str(memory)))
    for path, seen in report["places"].items():
        what = "run folder" if path == run_folder else places.get(path, "")
        if what.startswith("the runner's site-packages"):
            # Visible when the agent's interpreter lives in this environment; kit packages in it are
            # places of their own above, so this one is information, not a leak.
            leaked, detail = False, "visible (the probe's interpreter lives there)" if seen["exists"] else "not there"
        else:
            foreign = [f for f in seen["sample"] if not any(Path(f) == o or o in Path(f).parents for o in own)]
            leaked = bool(foreign)
            if leaked:
                detail = f"{len(foreign)}{'+' if len(seen['sample']) >= 200 else ''} readable files, e.g. {foreign[:2]}"
            elif seen["readable_files"]:
                detail = "only the agent's own files inside (its virtual environment)"
            else:
                detail = "empty" if seen["exists"] else "not there"
        findings.append(Finding(f"{what} {path}", leaked, detail))
    everything = json.dumps(report)
    findings += _earlier_findings(report)
    findings.append(Finding("control token (environment, command lines, files)", token in everything,
                            "found" if token in everything else "not found"))
    for how, status in report["control"].items():
        ok = isinstance(status, int) and 200 <= status < 300
        findings.append(Finding(f"/control {how}", ok, f"HTTP {status}" if isinstance(status, int) else str(status)))
    return findings


def _earlier_findings(report: dict[str, Any]) -> list[Finding]:
    """Earlier outputs of the kit: those it registered, and anything of its formats the probe's search found."""
    registered = report.get("registered") or {}
    readable = sorted(path for path, seen in registered.items() if seen)
    findings = [Finding(
        f"earlier runs registered on this machine ({len(registered)})", bool(readable),
        f"{len(readable)} readable, e.g. {readable[:2]}" if readable else ("none readable" if registered else "none registered"),
    )]
    earlier = report.get("earlier") or {}
    count = int(earlier.get("count", 0))
    searched = f"searched {earlier.get('entries', 0):,} entries (its folder, home, /tmp, then all of /)" + (
        "" if earlier.get("complete", True) else ", stopped at its budget"
    )
    findings.append(Finding(
        "earlier runs, records, results, exports, reports anywhere the agent can see", count > 0,
        f"{count} found, e.g. {earlier.get('found', [])[:3]}; {searched}" if count else f"none found; {searched}",
    ))
    return findings


def _probe_python(agent: ExternalAgent) -> tuple[str, str]:
    """An interpreter for the probe that the agent's sandbox already shows, and a note when there is none."""
    if agent.sandbox is None:
        return sys.executable, ""
    shown = [*agent.sandbox.visible(), *(Path(p) for p in SYSTEM_PATHS)]
    for candidate in ("/usr/bin/python3", sys.executable):
        if os.path.exists(candidate) and any(Path(candidate) == p or p in Path(candidate).parents for p in shown):
            return candidate, ""
    return sys.executable, f" (the sandbox shows no Python; {sys.executable} may not start in it)"


async def examine(
    *, sandbox: str = "auto", binds: tuple[str, ...] = (), env: str = "finance", agent: str | None = None
) -> tuple[list[Finding], str]:
    """Run the probe under ``sandbox`` against a real server; returns the findings and a line saying how it ran.

    Args:
        agent: a ``cmd:`` agent's command line: the probe then runs in that command's own sandbox (with
            ``binds``), exactly as ``toolgym run --agent`` would make it, in the command's place.

    Raises:
        AgentSpecError: an unusable ``agent`` (one that ``toolgym run`` refuses too: a bind or a program that
            would expose the kit or an earlier run...), or (``SandboxUnavailable``) no sandbox here and
            ``sandbox`` is not ``none``.
    """
    from clients.selection import resolve_environment
    from servers.http import new_token, running_http

    environment = resolve_environment(env)
    token = new_token()
    with tempfile.TemporaryDirectory(prefix="toolgym-doctor-") as tmp:
        run_folder = Path(tmp) / "run"
        (run_folder / "logs").mkdir(parents=True)
        (run_folder / "results.jsonl").write_text(json.dumps({"canary": secrets.token_hex(8)}) + "\n")
        probe = Path(tmp) / "probe" / "probe.py"
        probe.parent.mkdir()
        probe.write_text(PROBE, encoding="utf-8")
        places = _places()
        # What to look for travels in a file of the probe's own: named as paths, the sandbox would hide them.
        given = probe.with_name("places.json")
        registered = [str(output.path) for output in outputs.registered()]
        hidden = [run_folder, *environment_sources(environment)]
        probe_words = ["{mcp_url}", str(os.getpid()), str(given)]
        if agent is None:
            command = " ".join(_quote(w) for w in [sys.executable, str(probe), *probe_words])
            subject = "the probe itself"
        else:
            command = agent.strip().removeprefix("cmd:").strip()
            subject = f"cmd:{command}"
        external = ExternalAgent(command, log_dir=run_folder / "logs", sandbox=sandbox, binds=binds, hidden=hidden)
        # Sandboxed, the search covers what the agent sees (system folders and its own: ~150,000 entries here);
        # unsandboxed it would be the whole machine, and the registered outputs already show the leak.
        budget = SEARCH_BUDGET if external.sandbox is not None else SEARCH_BUDGET // 8
        given.write_text(json.dumps({"places": [*places, str(run_folder)], "outputs": registered, "search_budget": budget}))
        instead: list[str] | None = None
        note = ""
        python = sys.executable
        if agent is not None:
            python, note = _probe_python(external)
            instead = [python, str(probe), *probe_words]
        how = f"sandbox {'bubblewrap' if external.sandbox is not None else 'none'} of {subject}; probe {python}{note}"
        async with running_http(environment, token=token) as server:
            session = AgentSession(
                episode_id="doctor", env=environment.name, task=None, seed=0, prompt="probe", name="probe",
                limits=Limits(episode_timeout=300), mcp_url=server.mcp_url,
            )
            result = await external.run(session, instead=instead, files=[probe, given] if instead is not None else ())
        log = (run_folder / "logs" / "probe.log").read_text(errors="replace")
    lines = [line for line in log.splitlines() if line.startswith("{")]
    if result.stop_reason != "exit:0" or not lines:
        return [Finding("probe", True, f"the probe did not report ({result.stop_reason}): {log[-500:]}")], how
    own = external.sandbox.visible() if external.sandbox is not None else []
    report = json.loads(lines[-1])
    return judge(report, token=token, runner_pid=os.getpid(), places=places, run_folder=str(run_folder), own=own), how


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)
