"""The fault-injection suite's disks: a small tmpfs that fills up, and one made read-only.

Mounting needs root (CI runs as root). Elsewhere these tests are skipped — except with ``CI`` set, where a
missing mount is a failure, so the suite can never silently stop running there.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["Disk"]


class Disk:
    """A small tmpfs mounted for one test: fill it, free it, make it read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / ".filler"

    def fill(self) -> None:
        """Take every free byte (a file grown until the disk says ENOSPC)."""
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (65536, 4096, 512, 64, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)

    def free(self) -> None:
        """Give the space back."""
        self._filler.unlink(missing_ok=True)

    def read_only(self) -> None:
        """Remount read-only (root ignores file modes, not a read-only mount)."""
        _mount("-o", "remount,ro", str(self.path))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _mount_or_skip(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr.decode().strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
        message = f"cannot mount a tmpfs here ({detail or exc}); the fault-injection suite needs root"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Disk]:
    """A 1 MB tmpfs at ``tmp_path/disk``, unmounted after the test."""
    path = tmp_path / "disk"
    _mount_or_skip(path, "1m")
    try:
        yield Disk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)
