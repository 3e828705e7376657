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
