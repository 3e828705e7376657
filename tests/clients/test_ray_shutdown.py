"""A local Ray cluster's workers are found by the raylet pid in their environment, and only they are."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clients.ray.shutdown import leftover_workers  # importable without the ray extra

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="workers are found through /proc")


def test_leftover_workers_are_the_processes_naming_that_raylet_only() -> None:
    fake_raylet = 2**22 + 12345  # above pid_max's default: no real raylet has it
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    ours = subprocess.Popen(sleeper, env={**os.environ, "RAY_RAYLET_PID": str(fake_raylet)})
    other = subprocess.Popen(sleeper, env={**os.environ, "RAY_RAYLET_PID": str(fake_raylet + 1)})
    try:
        assert leftover_workers(fake_raylet) == [ours.pid]
        assert leftover_workers(fake_raylet + 1) == [other.pid]
        assert leftover_workers(fake_raylet + 2) == []
    finally:
        for process in (ours, other):
            process.kill()
            process.wait()
    assert leftover_workers(fake_raylet) == []
