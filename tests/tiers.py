"""How the suite is split and scheduled: the quick tier, the worker count, the order modules are sent in.

- **Tiers.** ``@pytest.mark.slow`` marks a test that costs seconds (a virtual environment or npm tool from the
  registry, a Ray cluster, a grader check over many templates or seeds, a generated environment, a timeout
  waited out). ``python -m pytest -m "not slow"`` is the quick tier, the inner loop; ``python -m pytest`` is the
  whole suite, which CI runs. Every test module keeps at least one quick test (``tests/test_tiers.py``), and
  a run prints which quick tests took longer than :data:`QUICK_BUDGET` seconds, to be marked or made cheaper.
- **Workers.** ``-n auto`` (pyproject's ``addopts``) asks :func:`pytest_xdist_auto_num_workers`: one worker
  per core the process may use, at most :data:`MAX_WORKERS`; none (in-process) when the command names tests
  of one module only, where workers would only add start-up time. ``-n N`` and
  ``$PYTEST_XDIST_AUTO_NUM_WORKERS`` override it; ``--pdb`` runs in-process.
- **Order.** With ``--dist loadscope`` a module is one unit of work, sent to a worker in collection order;
  :func:`pytest_collection_modifyitems` sends the modules that hold slow tests first, so the run never ends
  with one worker alone on a long module while the other idles.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

__all__ = ["MAX_WORKERS", "QUICK_BUDGET"]

MAX_WORKERS = 8
"""Past this, the whole suite is bound by its longest modules (about a minute each), not by the worker count,
and every worker holds its own worlds in memory."""

QUICK_BUDGET = 3.0
"""Seconds (setup + call + teardown, wall clock) past which a quick-tier test is reported as a candidate for
``@pytest.mark.slow``: a hint on a busy machine, never a failure."""


def _modules_named(args: list[str]) -> set[str] | None:
    """The test files the command line names, or None when it names a folder (or nothing: the testpaths)."""
    files = set()
    for arg in args:
        path = arg.split("::", 1)[0]
        if not path.endswith(".py"):
            return None
        files.add(path)
    return files or None


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: the usable cores (at most ``MAX_WORKERS``), or 0 when one module is all the run holds."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own reading of it
    named = _modules_named(list(config.args))
    if named is not None and len(named) == 1:
        return 0
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


def _is_slow(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is not None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers: modules holding slow tests first (each module's tests stay together, in order)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return  # in one process the order a reader expects: the files' own
    modules: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        modules[item.nodeid.split("::", 1)[0]].append(item)
    heavy = [name for name, group in modules.items() if any(_is_slow(i) for i in group)]
    light = [name for name in modules if name not in heavy]
    items[:] = [item for name in heavy + light for item in modules[name]]


class _QuickBudget:
    """Collects quick-tier tests' wall time (on the controller too: xdist forwards each worker's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "slow" not in report.keywords:
            self.seconds[report.nodeid] += report.duration

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        over = sorted(((s, n) for n, s in self.seconds.items() if s > QUICK_BUDGET), reverse=True)
        if not over:
            return
        advice = "mark them @pytest.mark.slow or make them cheaper; on a busy machine, all run longer"
        terminalreporter.write_sep("-", f"quick-tier tests over {QUICK_BUDGET:g} s of wall clock ({advice})")
        for seconds, nodeid in over[:15]:
            terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")
        if len(over) > 15:
            terminalreporter.write_line(f"... and {len(over) - 15} more")


def pytest_configure(config: pytest.Config) -> None:
    """Register the quick-tier budget report, once, where the terminal is (not on xdist workers)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_QuickBudget(), "toolgym-quick-budget")
