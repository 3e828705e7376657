"""Writes a throw-away environment package (the toy bank, renamed) laid out as envs/README.md says."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_env_package", "PACKAGE", "ENV_NAME"]

ENV_NAME = "tiny-bank"
PACKAGE = "tiny_bank_env"
_TOY = Path(__file__).resolve().parents[1] / "toy_env"

PYPROJECT = f"""\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-bank-env"
version = "0.1.0"
description = "A throw-away toolgym environment package (tests)"
requires-python = ">=3.11"
dependencies = []   # toolgym itself: already installed where this environment is used

[project.entry-points."toolgym.environments"]
{ENV_NAME} = "{PACKAGE}:environment"

[tool.setuptools]
packages = ["{PACKAGE}"]

[tool.setuptools.package-data]
{PACKAGE} = ["*.md"]
"""

MAIN = f'''"""``python -m {PACKAGE} serve ...``: the environment's tools over MCP (stdio or HTTP)."""

from servers.cli import serve_main

from {PACKAGE} import environment

serve_main(environment)
'''


def write_env_package(root: Path) -> Path:
    """Write the package's project folder under ``root``; returns it."""
    project = root / "tiny-bank-env"
    package = project / PACKAGE
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT)
    for name in ("__init__.py", "fixture.py", "tools.py", "tasks.py", "policy.md"):
        text = (_TOY / name).read_text()
        text = text.replace("tests.toy_env", PACKAGE).replace('name="toy"', f'name="{ENV_NAME}"')
        (package / name).write_text(text)
    (package / "__main__.py").write_text(MAIN)
    return project
