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


def _counterfactual(tasks: str) -> str:
    """The toy's ``pay_back`` as a packaged environment must write it: the amount owed is on the payer's account
    (read it), not in the prompt, so another seed's oracle replayed with this prompt's ids pays the wrong sum
    and ``toolgym check``'s trained-policy attacks earn nothing (graders/README.md)."""
    replacements = {
        """world.execute("UPDATE accounts SET owner = owner || ' (owes)' WHERE id = ?", (payer,))
    amount = format_minor(minor, "USD")""": """amount = format_minor(minor, "USD")
    world.execute("UPDATE accounts SET owner = owner || ? WHERE id = ?", (f" (owes {amount} USD)", payer))""",
        'prompt=f"Account {payer} owes {amount} USD to {payee}. Pay the debt back, then say so with submit_answer.",':
            'prompt=f"Account {payer} owes money to account {payee} (the sum is noted on {payer}). Pay the debt back, then say so with submit_answer.",',
        """        oracle=[
            call("transfer", from_account=payer, to_account=payee, amount=amount),""": """        oracle=[
            call("get_account", account_id=payer),
            call("transfer", from_account=payer, to_account=payee, amount=amount),""",
        'tools=["transfer", "submit_answer"]': 'tools=["get_account", "transfer", "submit_answer"]',
        'rubric=[paid, ToolCalled(tool="submit_answer", name="answered")],':
            'rubric=[paid, ToolCalled(tool="submit_answer", name="answered"),\n'
            '                ToolCalled(tool="get_account", args={"account_id": payer}, gate=True, name="read the sum owed")],',
    }
    for old, new in replacements.items():
        if old not in tasks:
            raise AssertionError(f"tests/toy_env/tasks.py changed; update env_package._counterfactual ({old[:40]!r})")
        tasks = tasks.replace(old, new)
    return tasks


def write_env_package(root: Path) -> Path:
    """Write the package's project folder under ``root``; returns it."""
    project = root / "tiny-bank-env"
    package = project / PACKAGE
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT)
    for name in ("__init__.py", "fixture.py", "tools.py", "tasks.py", "policy.md"):
        text = (_TOY / name).read_text()
        text = text.replace("tests.toy_env", PACKAGE).replace('name="toy"', f'name="{ENV_NAME}"')
        if name == "tasks.py":
            text = _counterfactual(text)
        (package / name).write_text(text)
    (package / "__main__.py").write_text(MAIN)
    return project
