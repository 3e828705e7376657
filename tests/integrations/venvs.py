"""Virtual environments of their own for the integration tests, cached across test sessions.

verifiers (``mcp==2.0.0``) and OpenEnv (``fastmcp>=3``) cannot share toolgym's environment, and an
environment package must be installed like a user would install it, so these tests run in separate
virtual environments. Installing a framework takes minutes, so each environment lives under a cache
directory (``$TOOLGYM_TEST_VENVS``, default ``~/.cache/toolgym-test-venvs``) keyed by its requirements;
the repository's own small packages are reinstalled (no dependencies, no build isolation: seconds) only
when their files change. A file lock keeps concurrent test sessions from building one environment twice.

Node packages for tests of Node agents are installed the same way, with npm, into cached folders
(:func:`ensure_npm`). When the package registry cannot be reached the tests are skipped locally; under CI
(``$CI`` set) that is a failure, never a skip.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Venv", "ensure_venv", "ensure_npm", "install_local", "REPO"]

REPO = Path(__file__).resolve().parents[2]
BASE_TOOLS = ["pip>=24", "setuptools>=75"]
"""Installed first in every environment: a pip that builds local packages without the ``wheel`` package."""


@dataclass(frozen=True)
class Venv:
    """A ready virtual environment."""

    path: Path

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    def bin(self, name: str) -> str:
        """Path of console script ``name``."""
        return str(self.path / "bin" / name)

    def env(self, **extra: str) -> dict[str, str]:
        """A process environment with this venv's ``bin`` first on ``PATH``."""
        return {**os.environ, "PATH": f"{self.path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def cache_dir() -> Path:
    """Where the environments live (kept between sessions)."""
    given = os.environ.get("TOOLGYM_TEST_VENVS")
    return Path(given) if given else Path.home() / ".cache" / "toolgym-test-venvs"


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI: integration tests must run, never skip)")
    pytest.skip(message)


def _run(argv: list[str], *, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def _registry_reachable(python: str, package: str) -> bool:
    probe = _run([python, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"], timeout=120)
    return probe.returncode == 0


def _files_digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for root in paths:
        for file in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)):
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def ensure_venv(name: str, requirements: list[str], local: list[Path] = ()) -> Venv:  # type: ignore[assignment]
    """A virtual environment with ``requirements`` from the registry and ``local`` package folders installed.

    Skips the calling test (fails it under CI) when the registry cannot be reached.
    """
    key = hashlib.sha256(f"{sys.version_info[:2]}|{sorted(requirements)}".encode()).hexdigest()[:12]
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}-{key}"
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = path / ".toolgym-ready"
        if not ready.exists():
            shutil.rmtree(path, ignore_errors=True)
            created = _run([sys.executable, "-m", "venv", str(path)], timeout=300)
            assert created.returncode == 0, created.stderr
            python = str(path / "bin" / "python")
            first = requirements[0].split("=")[0].split(">")[0].split("<")[0].strip()
            if not _registry_reachable(python, first):
                shutil.rmtree(path, ignore_errors=True)
                _unavailable(f"the package registry is unreachable: cannot install {first} for the {name} tests")
            for group in (BASE_TOOLS, requirements):
                done = _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *group])
                if done.returncode != 0:
                    shutil.rmtree(path, ignore_errors=True)
                    pytest.fail(f"installing {group} into the {name} test venv failed:\n{done.stderr[-3000:]}")
            ready.write_text(" ".join(requirements))
            _prune(root, name, keep=path)
        ready.touch()  # last use: what pruning goes by
        venv = Venv(path)
        if local:
            marker = path / ".toolgym-local"
            digest = _files_digest(list(local))
            if not marker.exists() or marker.read_text() != digest:
                install_local(venv, list(local))
                marker.write_text(digest)
        return venv


def ensure_npm(name: str, packages: list[str]) -> Path:
    """A folder with ``packages`` installed by npm into its ``node_modules`` (cached like the environments).

    Skips the calling test (fails it under CI) when Node.js / npm are missing or the registry cannot be reached.
    """
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        _unavailable(f"Node.js and npm are needed for the {name} tests")
    key = hashlib.sha256(f"{sorted(packages)}".encode()).hexdigest()[:12]
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}-{key}"
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = path / ".toolgym-ready"
        if not ready.exists():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            (path / "package.json").write_text(json.dumps({"name": f"toolgym-test-{name}", "private": True, "type": "module"}) + "\n")
            first = packages[0].rsplit("@", 1)[0] if packages[0].count("@") > 1 else packages[0]
            probe = _run([npm, "view", first, "version"], timeout=120)  # type: ignore[list-item]
            if probe.returncode != 0:
                shutil.rmtree(path, ignore_errors=True)
                _unavailable(f"the npm registry is unreachable: cannot install {first} for the {name} tests")
            done = _run([npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(path), *packages], timeout=900)  # type: ignore[list-item]
            if done.returncode != 0:
                shutil.rmtree(path, ignore_errors=True)
                pytest.fail(f"npm install {packages} for the {name} tests failed:\n{done.stderr[-3000:]}")
            ready.write_text(" ".join(packages))
            _prune(root, name, keep=path)
        ready.touch()
        return path


def _prune(root: Path, name: str, keep: Path, days: float = 3.0) -> None:
    """Remove environments of ``name`` built for other requirements and unused for ``days``."""
    horizon = time.time() - days * 86400
    for other in root.glob(f"{name}-*"):
        ready = other / ".toolgym-ready"
        if other != keep and other.is_dir() and (not ready.exists() or ready.stat().st_mtime < horizon):
            shutil.rmtree(other, ignore_errors=True)


def install_local(venv: Venv, folders: list[Path]) -> None:
    """Install package folders into ``venv`` (no dependencies, no build isolation) from copies, so building
    leaves no ``build/`` or ``*.egg-info`` in the working tree."""
    with tempfile.TemporaryDirectory(prefix="toolgym-pkg-") as scratch:
        copies = []
        for folder in folders:
            copy = Path(scratch) / folder.name
            shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".venv"))
            copies.append(str(copy))
        done = _run([
            venv.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
            "--no-build-isolation", "--force-reinstall", *copies,
        ], timeout=600)
    if done.returncode != 0:
        pytest.fail(f"installing {[str(f) for f in folders]} into {venv.path} failed:\n{done.stderr[-3000:]}")
