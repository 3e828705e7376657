"""An environment as an installable package: built into a wheel, installed beside toolgym, then listed, run,
checked and served by the CLI with no change to toolgym (its ``toolgym.environments`` entry point)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from tests.integrations.env_package import ENV_NAME, PACKAGE, write_env_package
from tests.integrations.venvs import Venv

pytestmark = pytest.mark.slow(reason="a wheel built and run in toolgym's own virtual environment, from the registry")


def _run(venv: Venv, argv: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = venv.env(TOOLGYM_CACHE_DIR=os.environ["TOOLGYM_CACHE_DIR"])
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False, **kwargs)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Installed(Venv):
    """The shared toolgym venv with the package installed into a folder of this test session's own, put on
    its path: the cached venv is shared by every worker and every concurrent test session on the machine, so
    it is never changed (an install or uninstall there would race with theirs). Entry points are found the
    same way as in site-packages (``importlib.metadata`` reads every folder on ``sys.path``)."""

    site: Path = Path()

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(PYTHONPATH=str(self.site), **extra)


@pytest.fixture(scope="module")
def installed(toolgym_venv: Venv, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The throw-away package built into a wheel and installed (``pip install --target``) for this module."""
    root = tmp_path_factory.mktemp("env-package")
    project = write_env_package(root)
    built = _run(toolgym_venv, [toolgym_venv.python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(root / "dist"), str(project)], root)
    assert built.returncode == 0, built.stderr
    wheel = glob.glob(str(root / "dist" / "tiny_bank_env-*.whl"))
    assert len(wheel) == 1, wheel
    site = root / "site"
    install = ["-m", "pip", "install", "-q", "--no-deps", "--target", str(site), wheel[0]]
    done = _run(toolgym_venv, [toolgym_venv.python, *install], root)
    assert done.returncode == 0, done.stderr
    return Installed(toolgym_venv.path, site)


def test_installed_package_is_listed_beside_the_folders(installed: Installed, tmp_path: Path) -> None:
    listed = _run(installed, [installed.bin("toolgym"), "envs"], tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    for name in (ENV_NAME, "finance", "support"):
        assert name in listed.stdout
    assert "cannot load" not in listed.stdout


def test_installed_package_runs_with_the_oracle(installed: Installed, tmp_path: Path) -> None:
    ran = _run(installed, [installed.bin("toolgym"), "run", ENV_NAME, "--agent", "oracle", "--seeds", "0-1", "--out", str(tmp_path / "run")], tmp_path)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    assert all(row["env"] == ENV_NAME and row["score"] == 1.0 for row in rows), rows


def test_installed_package_passes_toolgym_check(installed: Installed, tmp_path: Path) -> None:
    checked = _run(installed, [installed.bin("toolgym"), "check", ENV_NAME, "--seeds", "2"], tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "no violation" in checked.stdout


async def test_installed_package_serves_over_stdio(installed: Installed, tmp_path: Path) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    env = installed.env(TOOLGYM_CACHE_DIR=os.environ["TOOLGYM_CACHE_DIR"])
    replies: dict[int, dict] = {}
    async with await anyio.open_process([installed.python, "-m", PACKAGE, "serve"], cwd=tmp_path, env=env) as process:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send("".join(json.dumps(r) + "\n" for r in requests).encode())
        buffer = b""
        with anyio.fail_after(120):
            while 2 not in replies:
                buffer += await process.stdout.receive()
                *lines, buffer = buffer.split(b"\n")
                replies.update((m["id"], m) for m in map(json.loads, filter(None, lines)) if "id" in m)
        await process.stdin.aclose()
        with anyio.fail_after(30):
            await process.wait()
    assert replies[1]["result"]["serverInfo"]["name"].endswith(ENV_NAME)
    assert {t["name"] for t in replies[2]["result"]["tools"]} >= {"list_accounts", "transfer", "submit_answer"}
