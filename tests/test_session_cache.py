"""``build_once``: one build per session however many workers ask at once; a failed build is never reused."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.session_cache import build_once, session_root


class _Factory:
    """What ``build_once`` reads of ``pytest.TempPathFactory``: the base folder."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def test_concurrent_callers_share_one_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    factory = _Factory(tmp_path)
    builds: list[str] = []
    started = threading.Barrier(6)

    def build(folder: Path) -> None:
        builds.append(folder.name)
        (folder / "made").write_text("once")

    results: list[Path] = []

    def ask() -> None:
        started.wait()  # all six ask together; the lock, not the timing, decides who builds
        results.append(build_once(factory, "thing", build))  # type: ignore[arg-type]

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["thing"] and len(results) == 6 and set(results) == {tmp_path / "shared" / "thing"}
    assert sorted(p.name for p in (tmp_path / "shared" / "thing").iterdir()) == ["made"]  # nothing of ours inside


def test_a_failed_build_leaves_nothing_and_the_next_caller_builds(tmp_path: Path) -> None:
    factory = _Factory(tmp_path)

    def broken(folder: Path) -> None:
        (folder / "half").write_text("x")
        raise RuntimeError("the registry is down")

    with pytest.raises(RuntimeError, match="registry is down"):
        build_once(factory, "thing", broken)  # type: ignore[arg-type]
    assert not (tmp_path / "shared" / "thing").exists()
    folder = build_once(factory, "thing", lambda f: (f / "whole").write_text("y"))  # type: ignore[arg-type]
    assert [p.name for p in folder.iterdir()] == ["whole"]


def test_workers_share_the_session_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = tmp_path / "popen-gw1"  # how xdist names a worker's base folder inside the session's
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert session_root(_Factory(worker)) == tmp_path  # type: ignore[arg-type]
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert session_root(_Factory(tmp_path)) == tmp_path  # type: ignore[arg-type]
