"""Private task templates (a held-out split kept outside the package): loaded, run, checked, served, and hidden
from sandboxed agents."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from clients.cli import main
from clients.errors import RunError
from clients.runner import RunConfig, run
from fixtures.errors import TaskError
from servers.private_tasks import load_private_templates, with_private_tasks
from tests.clients.helpers import needs_sandbox
from tests.servers.test_cli import read_banner
from tests.toy_env import environment

REPO = Path(__file__).resolve().parents[2]
ENV = "tests.toy_env:environment"
PRIVATE = "held_out_pay_back"

COMMON = '''
def usd_accounts(world):
    return [r["id"] for r in world.query("SELECT id FROM accounts WHERE currency = 'USD' ORDER BY id")]
'''

HELD_OUT = '''
from fixtures.money import format_minor
from graders.criteria import ToolCalled, state
from graders.tasks import TaskDraft, TaskTemplate, call

from ._common import usd_accounts


def held_out_pay_back(world, rng):
    """A held-out twin of the toy's pay_back: a debt of a few dollars, paid back."""
    payer, payee = rng.sample(usd_accounts(world), 2)
    minor = rng.randint(11, 19) * 100
    amount = format_minor(minor, "USD")
    paid = state("SELECT count(*) FROM transfers WHERE from_account = ? AND to_account = ? AND amount_minor = ?",
                 payer, payee, minor, expect=1, name="debt paid once", gate=True)
    return TaskDraft(
        prompt=f"Account {payer} owes {amount} USD to {payee}. Pay the debt back, then say so with submit_answer.",
        oracle=[call("transfer", from_account=payer, to_account=payee, amount=amount),
                call("submit_answer", text=f"paid {amount} USD")],
        rubric=[paid, ToolCalled(tool="submit_answer", name="answered")],
    )


TEMPLATES = [TaskTemplate(held_out_pay_back, split="test", tools=["transfer", "submit_answer"])]
'''


@pytest.fixture
def private(tmp_path: Path) -> Path:
    folder = tmp_path / "held-out"
    folder.mkdir(mode=0o700)
    (folder / "_common.py").write_text(COMMON)
    (folder / "payments.py").write_text(HELD_OUT)
    return folder


def test_a_folder_a_file_and_errors(private: Path, tmp_path: Path) -> None:
    merged = with_private_tasks(environment, [private])
    assert list(merged.task_templates()) == [*environment.task_templates(), PRIVATE]
    assert merged.task_template(PRIVATE).split == "test"
    assert [t.id for t in load_private_templates(private / "payments.py")] == [PRIVATE]
    assert with_private_tasks(environment, []) is environment
    with pytest.raises(TaskError, match="duplicate task template id 'held_out_pay_back'"):
        with_private_tasks(environment, [private, private / "payments.py"])
    with pytest.raises(TaskError, match="no such folder"):
        load_private_templates(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskError, match="no module there defines TEMPLATES"):
        load_private_templates(tmp_path / "empty")


async def test_toolgym_run_plays_and_grades_private_tasks(private: Path, tmp_path: Path) -> None:
    with anyio.fail_after(60):
        outcome = await run(RunConfig(env=ENV, agent="oracle", tasks=PRIVATE, seeds="0-1", out=tmp_path / "run", private_tasks=[private]))
    assert [(line.task, line.status, line.passed) for line in outcome.lines] == [(PRIVATE, "graded", True)] * 2
    with pytest.raises(RunError, match="has no task"):
        await run(RunConfig(env=ENV, agent="oracle", tasks=PRIVATE, out=tmp_path / "public"))


def test_toolgym_check_checks_private_tasks(private: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", ENV, "--private-tasks", str(private), "--templates", PRIVATE, "--seeds", "2", "--no-attacks", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [t["template"] for t in report["templates"]] == [PRIVATE]
    assert report["templates"][0]["oracle"] == "1.000" and report["ok"] and exited.value.code == 0


async def test_toolgym_serve_serves_private_tasks(private: Path) -> None:
    command = [sys.executable, "-m", "tests.toy_env", "serve", "--transport", "http", "--port", "0",
               "--private-tasks", str(private), "--task", PRIVATE, "--token", "t0ken-for-this-test"]
    with anyio.fail_after(120):
        async with await anyio.open_process(command, cwd=REPO) as process:
            try:
                lines = await read_banner(process)
                control_url = lines["control API"].split()[0].rstrip("/")
                async with httpx.AsyncClient(base_url=control_url, headers={"Authorization": "Bearer t0ken-for-this-test"}) as http:
                    created = await http.post("/episodes", json={"task": PRIVATE, "seed": 3})
                    assert created.status_code == 201, created.text
                    assert "owes" in created.json()["prompt"]
            finally:
                process.terminate()
                await process.wait()


@needs_sandbox
async def test_a_sandboxed_agent_cannot_see_the_private_folder(private: Path, tmp_path: Path) -> None:
    script = "import os, sys; print('sees', [p for p in sys.argv[1:] if os.path.exists(p)])"
    spec = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(script)} {private} {private / 'payments.py'}"
    with anyio.fail_after(60):
        outcome = await run(RunConfig(env=ENV, agent=spec, tasks=PRIVATE, out=tmp_path / "run", private_tasks=[private]))
    (line,) = outcome.lines
    log = (tmp_path / "run" / "logs" / f"{Path(line.record).stem}.log").read_text()  # type: ignore[arg-type]
    assert "sees []" in log, log

