"""Session fixtures: the integration tests' virtual environments (cached, see ``venvs.py``) and servers."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from tests.integrations.venvs import REPO, Venv, ensure_venv
from tests.session_cache import build_once

VERIFIERS = "verifiers==0.4.0"
OPENENV = "openenv==0.10.0"
# inspect's MCP tools take mcp 1.x or 2.x; openai for its openai-api provider (the scripted provider); quicktok-v1
# (toolgym-inspect's `offline` extra) for tiktoken's o200k_base, which inspect's mock model counts tokens with
ATROPOS = "atroposlib==0.4.0"
# torch pinned first: the CPU wheel on this machine's disk (any other resolution pulls a CUDA build of several GB)
TRL = ["torch==2.13.0", "trl==1.16.0", "httpx==0.29.0"]
INSPECT = ["inspect-ai==0.3.285", "openai==3.60.0", "mcp==2.3.0", "quicktok-v1==0.4.0"]
CORE_PACKAGES = ("fixtures", "servers", "envs", "graders", "clients", "toolgym")


@pytest.fixture(scope="session")
def verifiers_venv() -> Venv:
    """verifiers from the registry (and uv, which its chat harness runs with), plus toolgym-verifiers."""
    return ensure_venv("verifiers", [VERIFIERS, "uv"], [REPO / "integrations" / "remote", REPO / "integrations" / "verifiers"])


@pytest.fixture(scope="session")
def openenv_venv() -> Venv:
    """OpenEnv from the registry, plus toolgym-openenv."""
    return ensure_venv("openenv", [OPENENV], [REPO / "integrations" / "remote", REPO / "integrations" / "openenv"])


@pytest.fixture(scope="session")
def inspect_venv() -> Venv:
    """inspect-ai from the registry (with toolgym-inspect's ``offline`` extra), plus toolgym-inspect."""
    return ensure_venv("inspect", INSPECT, [REPO / "integrations" / "remote", REPO / "integrations" / "inspect"])


@pytest.fixture(scope="session")
def atropos_venv() -> Venv:
    """Atropos (atroposlib) from the registry, plus toolgym-atropos."""
    return ensure_venv("atropos", [ATROPOS], [REPO / "integrations" / "remote", REPO / "integrations" / "atropos"])


@pytest.fixture(scope="session")
def trl_venv() -> Venv:
    """TRL (and the CPU build of torch) from the registry, plus toolgym-trl."""
    return ensure_venv("trl", TRL, [REPO / "integrations" / "remote", REPO / "integrations" / "trl"])


@pytest.fixture(scope="session")
def core_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of toolgym's installable source (pyproject, README, packages): what ``pip install`` builds. Copied
    once per test session (``build_once``), so every worker installs the same files."""

    def copy(root: Path) -> None:
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(REPO / name, root / name)
        for package in CORE_PACKAGES:
            shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))

    return build_once(tmp_path_factory, "toolgym-source", copy)


@pytest.fixture(scope="session")
def toolgym_venv(core_source: Path) -> Venv:
    """toolgym installed as a user installs it (its dependencies from the registry, the code of this checkout)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return ensure_venv("toolgym", list(project["dependencies"]), [core_source])
