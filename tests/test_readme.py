"""README is true: its Python snippets run, its commands exist, its numbers match the code."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from servers import load_environment

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
pytest_plugins = ["pytester"]
CHECKED_TEMPLATE = "large_wire"
"""The one finance template the pytest-plugin snippet's ``toolgym_check`` runs on here (its first test plays it too)."""


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


def test_the_pytest_plugin_snippet_passes_in_a_project_without_configuration(pytester: pytest.Pytester) -> None:
    """A user's project as it comes: no ``asyncio_mode = "auto"`` (pytest-asyncio, when installed, is in strict
    mode and claims no unmarked test) — the toolgym plugin runs its async tests itself."""
    block = next(b for b in python_blocks() if "toolgym_episode" in b)
    pytester.makepyfile(test_snippet=block)
    pytester.makeini("[pytest]\n")
    # The snippet's check of every finance template on 2 seeds is tests/envs/finance/test_tasks.py's work (and
    # CI's, on 20 seeds): here the plugin's own fixture runs it on one template, so this test proves what it is
    # about — the snippet's tests are collected, run and pass without configuration — in seconds, not a minute.
    pytester.makeconftest(f"""
import functools

import pytest


@pytest.fixture
def toolgym_check(toolgym_check):
    return functools.partial(toolgym_check, templates=[{CHECKED_TEMPLATE!r}])
""")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_the_pytest_plugin_needs_no_async_plugin_at_all(pytester: pytest.Pytester) -> None:
    block = next(b for b in python_blocks() if "toolgym_episode" in b)
    pytester.makepyfile(test_snippet=block)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-p", "no:asyncio", "-k", "wire")
    result.assert_outcomes(passed=1, deselected=1)


def test_the_pytest_plugin_leaves_marked_and_unrelated_async_tests_to_their_plugins(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mixed="""
import asyncio
import pytest

@pytest.mark.asyncio
async def test_marked(toolgym_episode):
    episode = await toolgym_episode("finance", task="large_wire", seed=1)
    assert asyncio.get_running_loop() and episode.task is not None

async def test_unrelated():
    pass
"""
    )
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)  # pytest fails an unclaimed async test that uses no toolgym fixture
    result.stdout.fnmatch_lines(["*test_unrelated*"])


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


def _shell_commands() -> list[str]:
    """Every ``toolgym ...`` command of README's bash blocks, comments cut, in order."""
    shell = "\n".join(re.findall(r"```bash\n(.*?)```", README, flags=re.S))
    found = []
    for line in shell.splitlines():
        for part in line.split("&&"):
            command = part.split(" # ")[0].strip()
            if command.startswith("toolgym "):
                found.append(command)
    return found


def _run_folders(before: str | None = None) -> dict[str, tuple[str, list[str]]]:
    """Run folder → (the command that wrote it last, the episode names it holds), for README's ``toolgym run``
    commands in README's order, up to the command ``before`` (a later run with the same ``--out``, and every
    run without one into ``runs/latest``, replaces the folder)."""
    import shlex

    from clients.cli import build_parser
    from clients.runner import episode_name
    from clients.selection import parse_seeds, select_tasks

    parser = build_parser()
    folders: dict[str, tuple[str, list[str]]] = {}
    for command in _shell_commands():
        if command == before:
            break
        argv = shlex.split(command)[1:]
        if argv[0] != "run" or "--server" in argv or "--ray" in argv:
            continue
        args = parser.parse_args(argv)
        environment = load_environment(args.env)
        tasks = select_tasks(environment, args.tasks)
        seeds = parse_seeds(args.seeds if args.seeds is not None else [0])
        names = [episode_name(args.agent, t, s, k) for t in tasks for s in seeds for k in range(args.trials)]
        folders[str(args.out or "runs/latest")] = (command, names)
    return folders


def test_every_episode_readme_shows_is_one_its_run_produces() -> None:
    """``toolgym show runs/latest --episode X`` names an episode of the run that wrote that folder last, in README's
    order; and a comment saying it is "the first command's run" is true (issue 28: the tour's noop run had replaced
    runs/latest by then)."""
    import shlex

    first = next(c for c in _shell_commands() if c.startswith("toolgym run "))
    shown = [c for c in _shell_commands() if c.startswith("toolgym show ") and "--episode" in c]
    assert shown
    for command in shown:
        argv = shlex.split(command)
        folder, episode = argv[2], argv[argv.index("--episode") + 1]
        wrote, names = _run_folders(before=command)[folder]
        matches = [name for name in names if name == episode] or [name for name in names if episode in name]
        assert len(matches) == 1, (folder, episode, matches[:5])
        comment = next(line for line in README.splitlines() if line.startswith(command)).split(" # ", 1)[1]
        if "first command's run" in comment:
            assert wrote == first, (command, wrote)


async def test_the_shown_episode_is_found_in_a_real_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    from clients.runner import RunConfig, run

    argv = next(shlex.split(c) for c in _shell_commands() if c.startswith("toolgym show runs/latest --episode"))
    episode = argv[argv.index("--episode") + 1]
    task = episode.split(".")[0]
    await run(RunConfig(env="finance", agent="oracle", tasks=task, out=tmp_path / "latest"))
    from clients.view.terminal import find_episode

    shown = find_episode(tmp_path / "latest", episode)
    assert shown.line is not None and shown.line.task == task and shown.line.passed


def test_the_quick_start_names_bubblewrap_for_cmd_agents_and_doctor() -> None:
    quick = README[README.index("## Two commands"): README.index("## A 30-second tour")]
    assert "bubblewrap" in quick and "apt-get install bubblewrap" in quick
    assert "cmd:" in quick and "toolgym doctor" in quick


async def test_the_stdio_client_json_works_outside_the_virtual_environment(tmp_path: Path) -> None:
    """README's JSON for Claude Desktop / Cursor, started as those clients start it: from a folder of their own,
    with a ``PATH`` that has no virtual environment in it (issue 28: ``"command": "python"`` failed with nothing but
    "Connection closed")."""
    import json
    import os
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    block = next(b for b in re.findall(r"```json\n(.*?)```", README, flags=re.S) if "mcpServers" in b)
    server = json.loads(block)["mcpServers"]["toolgym-finance"]
    assert server["command"].startswith("/") and server["command"].endswith("/.venv/bin/python"), server
    assert "absolute path" in README and "Connection closed" in README
    # This checkout's own virtual environment stands in for /path/to/toolgym/.venv.
    parameters = StdioServerParameters(
        command=sys.executable, args=server["args"], cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)), "TOOLGYM_CACHE_DIR": os.environ["TOOLGYM_CACHE_DIR"]},
    )
    with anyio.fail_after(120):
        async with Client(parameters) as client:
            tools = await client.list_tools()
    assert any(t.name == "search_customers" for t in tools.tools)


def test_the_gymnasium_snippet_plays_the_seed_it_is_given() -> None:
    pytest.importorskip("gymnasium")
    block = next(b for b in python_blocks() if "gymnasium.make" in b)
    assert "reset(seed=3" in block and "task seed 3" in block
    head, step, tail = block.partition("obs, reward, terminated, truncated, info = env.step(")
    namespace: dict[str, object] = {}
    exec(compile(head, "README.md", "exec"), namespace)  # up to the reset
    info = namespace["info"]
    assert isinstance(info, dict) and info["seed"] == 3 and info["task"] == "duplicate_charge"
    exec(compile(step + tail, "README.md", "exec"), namespace)  # the step and close()
    assert namespace["reward"] == 0.0 and not namespace["terminated"]


def test_readme_says_what_the_tests_cost() -> None:
    """How long the suite and its quick tier take, and the adapter environments it builds, where and how big."""
    from tests.integrations.venvs import cache_dir

    assert str(cache_dir()) == str(Path.home() / ".cache" / "toolgym-test-venvs") or "TOOLGYM_TEST_VENVS" in __import__("os").environ
    assert "~/.cache/toolgym-test-venvs" in README and "TOOLGYM_TEST_VENVS" in README
    assert re.search(r"~\d+(\.\d+)? GB under `~/.cache/toolgym-test-venvs`", README)
    assert re.search(r"python -m pytest\s+# the whole suite: .*\d+ minutes on 2 cores", README)
    assert re.search(r'python -m pytest -m "not slow"\s+# the quick tier: .*\d+ minutes on 2 cores', README)
    assert "tests/README.md" in README  # the tiers, the workers, the marker rules


@pytest.mark.slow
def test_readme_gives_a_quick_check_and_says_how_long_the_full_one_takes() -> None:
    tour = next(b for b in re.findall(r"```bash\n(.*?)```", README, flags=re.S) if "A 30-second" in README and "toolgym envs" in b)
    checks = [line for line in tour.splitlines() if line.startswith("toolgym check finance")]
    quick, full = checks
    assert "--templates" in quick and "--seeds" in quick and re.search(r"~\d+ s\)", quick), quick
    assert re.search(r"the full check: .*\d+(\.\d+)? min", full), full
    import shlex
    import subprocess
    import sys

    argv = shlex.split(quick.split(" # ")[0])[1:]
    done = subprocess.run([sys.executable, "-m", "clients.cli", *argv], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "no violation" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
