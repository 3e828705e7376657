"""README is true: its Python snippets run, its commands exist, its numbers match the code."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from servers import load_environment

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
pytest_plugins = ["pytester"]


def python_blocks() -> list[str]:
    """The ```python blocks of README, in order."""
    return re.findall(r"```python\n(.*?)```", README, flags=re.S)


async def test_the_rl_snippet_runs() -> None:
    block = next(b for b in python_blocks() if "open_episode" in b)
    source = "async def snippet():\n" + textwrap.indent(block, "    ") + "\n    return ep, obs, done\n"
    namespace: dict[str, object] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    ep, obs, done = await namespace["snippet"]()  # type: ignore[operator]
    assert ep.prompt and ep.tools and not obs.is_error
    assert not done.passed and done.reward < 1.0  # one search is not the task


def test_the_pytest_plugin_snippet_passes(pytester: pytest.Pytester) -> None:
    block = next(b for b in python_blocks() if "toolgym_episode" in b)
    pytester.makepyfile(test_snippet=block)
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_readme_counts_match_the_finance_environment() -> None:
    environment = load_environment("finance")
    assert f"Its {len(environment.tool_specs)} tools" in README
    assert f"{len(environment.task_templates())} task templates" in README


def test_every_toolgym_command_in_readme_exists() -> None:
    from clients.cli import build_parser

    shell = "\n".join(re.findall(r"```bash\n(.*?)```", README, flags=re.S))
    commands = set(re.findall(r"(?:^|&& |\.\.\. )toolgym (\w+)", shell, flags=re.M))
    parser = build_parser()
    known = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert commands and commands <= known, commands - known
