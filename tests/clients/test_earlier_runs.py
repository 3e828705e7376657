"""No earlier run reaches a ``cmd:`` agent (issue 28): a hostile agent searching everything its sandbox shows, from a
folder holding ``runs/``, finds no record, result or export; binds into one are refused; ``toolgym doctor`` probes
the agent's own sandbox. Real bubblewrap, real runs, real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clients.agents import AgentOptions
from clients.doctor import examine
from clients.errors import AgentSpecError
from clients.runner import RunConfig, run
from clients.selection import resolve_environment
from clients.sft import export_sft
from tests.clients.helpers import needs_sandbox

REPO = Path(__file__).resolve().parents[2]
TOY = "tests.clients.toyenv:environment"

HUNTER = r'''
import json, os, sys

# What a policy would look for: anything holding an episode's record, result line or exported conversation — a
# JSON line naming an episode (third-party code that merely mentions "episode_id", in the agent's own virtual
# environment, is no record).
NEEDLES = (b'"episode_id"', b'"start_hash"', b'toolgym-output')


def keys(value, depth=0):
    if isinstance(value, dict) and depth < 6:
        for key, item in value.items():
            yield key
            yield from keys(item, depth + 1)
    elif isinstance(value, list) and depth < 6:
        for item in value[:20]:
            yield from keys(item, depth + 1)


def holds_a_record(head):
    for line in head.splitlines():
        if any(needle in line for needle in NEEDLES[:2]):
            try:
                if {"episode_id", "start_hash"} & set(keys(json.loads(line))):
                    return True
            except ValueError:
                pass
    return b'toolgym-output' in head and head.lstrip().startswith(b"{")

SKIP = {"/proc", "/sys", "/dev", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}
found, seen, looked = [], set(), 0
for start in [os.getcwd(), os.path.expanduser("~"), "/tmp", "/", *sys.argv[1:]]:
    for root, dirs, files in os.walk(start, followlinks=True):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        for name in files:
            path = os.path.join(root, name)
            if os.path.realpath(path) == os.path.realpath(__file__):
                continue  # its own source names the needles
            looked += 1
            try:
                with open(path, "rb") as handle:
                    head = handle.read(1 << 16)
            except OSError:
                continue
            if name == ".toolgym-output" or holds_a_record(head):
                found.append(path)
# Relative paths from where the runner was started, as a replay agent guessed them.
for guess in ("runs/oracle/records", "../runs", "runs"):
    if os.path.isdir(guess):
        found += [os.path.join(guess, n) for n in os.listdir(guess) if n.endswith(".jsonl")]
print(json.dumps({"found": sorted(set(found)), "looked": looked, "own": os.path.exists(os.path.abspath(__file__))}))
'''


async def _oracle_run(out: Path) -> None:
    await run(RunConfig(env=TOY, agent="oracle", tasks="report_balance", seeds="0-1", out=out, overwrite=True))


@pytest.fixture
async def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent's folder that holds earlier runs every way a user leaves them, plus a bound folder with one more.

    - ``runs/oracle``: a run of the oracle, written by the kit (marked, registered);
    - ``elsewhere/renamed``: a run folder moved after the fact (its registry line is stale; the marker travelled);
    - ``legacy/run``: a run folder as an older kit left it (no marker, not registered: its shape and first lines);
    - ``sft.jsonl``: an SFT export written beside the agent (registered);
    - ``../bound/r1``: a run inside a folder the agent is given with ``--sandbox-bind``.
    """
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    (folder / "hunter.py").write_text(HUNTER)
    await _oracle_run(Path("runs/oracle"))
    await _oracle_run(Path("runs/tmp"))
    (folder / "elsewhere").mkdir()
    os.rename("runs/tmp", "elsewhere/renamed")
    shutil.copytree("runs/oracle", "legacy/run")
    (folder / "legacy" / "run" / ".toolgym-output").unlink(missing_ok=True)  # fixtures.outputs.MARKER
    export_sft(Path("runs/oracle"), folder / "sft.jsonl", environment=resolve_environment(TOY))
    await _oracle_run(tmp_path / "bound" / "r1")
    return folder


@needs_sandbox
async def test_a_hostile_agent_finds_no_earlier_run_from_a_folder_holding_them(project: Path) -> None:
    bound = project.parent / "bound"
    outcome = await run(RunConfig(
        env=TOY, agent=f"cmd:{sys.executable} hunter.py {bound}", tasks="report_balance", out=Path("runs/hunt"),
        agent_options=AgentOptions(sandbox_binds=(f"{bound}:ro",)),
    ))
    log = next((project / "runs" / "hunt" / "logs").iterdir()).read_text()
    report = json.loads(log.strip().splitlines()[-1])
    assert outcome.lines[0].stop_reason == "exit:0", log
    assert report["own"] and report["looked"] > 0  # it did see its own folder (where runs/ is), and searched
    assert report["found"] == []


@needs_sandbox
def test_a_bind_into_an_earlier_run_is_refused_in_one_line(project: Path) -> None:
    for bind, said in (
        ("runs/oracle/records", "inside a run folder"),
        ("sft.jsonl", "inside an SFT export"),
        ("legacy/run", "is a run folder"),  # an older kit's: found by its shape when the bind is walked
    ):
        done = subprocess.run(
            [sys.executable, "-m", "clients.cli", "run", TOY, "--agent", f"cmd:{sys.executable} hunter.py", "--sandbox-bind", bind,
             "--tasks", "report_balance", "--out", "runs/refused"],
            capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr and "Traceback" not in done.stderr
        assert not (project / "runs" / "refused").exists()


@needs_sandbox
async def test_doctor_probes_the_agents_own_sandbox_and_reports_what_it_reaches(project: Path) -> None:
    bound = project.parent / "bound"
    findings, how = await examine(agent=f"cmd:{sys.executable} hunter.py", binds=(f"{bound}:ro",), env=TOY)
    assert "bubblewrap of cmd:" in how and "hunter.py" in how
    by_vector = {f.vector: f for f in findings}
    assert not [f for f in findings if f.leaked], [f for f in findings if f.leaked]
    registered = next(f for v, f in by_vector.items() if v.startswith("earlier runs registered"))
    assert "none readable" in registered.detail
    searched = next(f for v, f in by_vector.items() if v.startswith("earlier runs, records"))
    assert searched.detail.startswith("none found; searched") and "stopped" not in searched.detail
    # The same agent with a bind that shows an earlier run: refused before anything runs, as `run` refuses it.
    with pytest.raises(AgentSpecError, match="inside a run folder"):
        await examine(agent=f"cmd:{sys.executable} hunter.py", binds=("runs/oracle",), env=TOY)


def test_what_cannot_be_walked_or_is_an_unmarked_record_is_never_shown(tmp_path: Path) -> None:
    """A folder too large to walk whole cannot be promised free of earlier runs; a record file an older kit left
    unmarked is known by its first line. Both refused before anything runs."""
    from clients.sandbox import Sandbox, kit_paths, parse_bind
    from clients.sandbox_outputs import OutputGuard

    big = tmp_path / "big"
    big.mkdir()
    for index in range(20):
        (big / f"f{index}.txt").write_text("x")
    with pytest.raises(AgentSpecError, match="too many files to make sure no earlier run"):
        Sandbox([sys.executable, "-c", "pass"], binds=[parse_bind(str(big))],
                kit=kit_paths(), guard=OutputGuard(registered=[], budget=10))
    record = tmp_path / "old.jsonl"
    record.write_text('{"type":"episode","episode_id":"oracle.t.s0.t0","env":"toy","start_hash":"sha256:0"}\n')
    with pytest.raises(AgentSpecError, match="that is a record"):
        Sandbox([sys.executable, "-c", "pass", str(record)], kit=kit_paths(), guard=OutputGuard(registered=[]))
