"""The quick tier (``pytest -m "not slow"``) covers every test module, and every wholly slow module says why.

Read from the source (no collection: this runs in the quick tier in milliseconds): a test module must keep at
least one test without ``@pytest.mark.slow``, unless its module mark gives the reason every test needs the
time — ``pytestmark = pytest.mark.slow(reason="...")`` — e.g. each one needs a virtual environment built
from the registry, or a Ray cluster. ``tests/tiers.py`` says what counts as slow.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from tests import tiers

TESTS = Path(__file__).resolve().parent


def _is_slow(node: ast.expr) -> bool:
    """``pytest.mark.slow`` or ``pytest.mark.slow(...)`` (any spelling ending in ``.mark.slow``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if not (isinstance(node, ast.Attribute) and node.attr == "slow"):
        return False
    return isinstance(node.value, ast.Attribute) and node.value.attr == "mark"


def _slow_reason(node: ast.expr) -> str | None:
    """The ``reason`` of a ``pytest.mark.slow(reason=...)`` mark, if it has one."""
    if isinstance(node, ast.Call) and _is_slow(node):
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "reason" and isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value.strip() or None
    return None


def _marks(value: ast.expr) -> list[ast.expr]:
    return list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]


def _pytestmark(body: list[ast.stmt]) -> list[ast.expr]:
    """The marks a ``pytestmark = ...`` assignment in ``body`` (a module's or a class's) gives."""
    return [
        mark
        for node in body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        for mark in _marks(node.value)
    ]


def _tests(tree: ast.Module) -> list[tuple[str, bool]]:
    """(name, marked slow) of each test function and test method."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append((node.name, any(_is_slow(d) for d in node.decorator_list)))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_slow = any(_is_slow(m) for m in [*node.decorator_list, *_pytestmark(node.body)])
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    slow = class_slow or any(_is_slow(d) for d in item.decorator_list)
                    found.append((f"{node.name}.{item.name}", slow))
    return found


def _module_verdict(path: Path) -> str | None:
    """Why ``path`` breaks the rule, or None."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tests = _tests(tree)
    if not tests:
        return None
    module_slow = [m for m in _pytestmark(tree.body) if _is_slow(m)]
    if module_slow:
        if not any(_slow_reason(m) for m in module_slow):
            return "every test is slow (module mark) and the mark gives no reason=: say why, or keep one quick test"
        return None
    if all(slow for _, slow in tests):
        return (
            "every test is marked slow, so the quick tier never runs this module: keep one quick test, or mark the "
            "module pytest.mark.slow(reason=...) saying why none can be quick"
        )
    return None


def test_every_test_module_has_a_quick_test_or_says_why_not() -> None:
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 100, modules  # the whole suite was found
    problems = {str(p.relative_to(TESTS.parent)): why for p in modules if (why := _module_verdict(p))}
    assert problems == {}, "\n".join(f"{path}: {why}" for path, why in problems.items())


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("import pytest\n\ndef test_a(): pass\n\n@pytest.mark.slow\ndef test_b(): pass\n", None),
        ("import pytest\n\n@pytest.mark.slow\ndef test_a(): pass\n", "every test is marked slow"),
        ("import pytest\n\npytestmark = pytest.mark.slow\n\ndef test_a(): pass\n", "gives no reason="),
        (
            "import pytest\n\npytestmark = [pytest.mark.skipif(False, reason='x'), "
            "pytest.mark.slow(reason='a cluster')]\n\ndef test_a(): pass\n",
            None,
        ),
        ("import pytest\n\n@pytest.mark.slow\nclass TestA:\n    def test_a(self): pass\n", "every test is marked slow"),
        ("def helper(): pass\n", None),
    ],
)
def test_the_rule_reads_marks_as_pytest_does(tmp_path: Path, source: str, verdict: str | None) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(source)
    found = _module_verdict(path)
    assert (found is None) if verdict is None else (found is not None and verdict in found), found


class _Item:
    """What the scheduling hooks read of a ``pytest.Item``."""

    def __init__(self, nodeid: str, slow: bool = False) -> None:
        self.nodeid = nodeid
        self.slow = slow

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


def test_modules_holding_slow_tests_are_sent_first_each_module_kept_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [_Item("a.py::x"), _Item("b.py::x"), _Item("b.py::y", True), _Item("c.py::x"), _Item("d.py::x", True)]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    tiers.pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["b.py::x", "b.py::y", "d.py::x", "a.py::x", "c.py::x"]
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    tiers.pytest_collection_modifyitems(None, items[::-1])  # type: ignore[arg-type]  # in one process: untouched


@pytest.mark.parametrize(
    ("args", "workers"),
    [([], "cores"), (["tests"], "cores"), (["tests/a.py", "tests/b.py"], "cores"), (["tests/a.py"], 0),
     (["tests/a.py::test_x", "tests/a.py::test_y"], 0), (["tests/a.py::test_x", "tests/servers"], "cores")],
)
def test_workers_start_only_when_more_than_one_module_can_run(
    args: list[str], workers: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)

    class Config:
        pass

    config = Config()
    config.args = args  # type: ignore[attr-defined]
    expected = min(tiers.MAX_WORKERS, len(os.sched_getaffinity(0))) if workers == "cores" else workers
    assert tiers.pytest_xdist_auto_num_workers(config) == expected  # type: ignore[arg-type]
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert tiers.pytest_xdist_auto_num_workers(config) is None  # type: ignore[arg-type]  # xdist reads it itself
