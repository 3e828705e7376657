"""Line files that never hold a torn line: record files (``servers/record.py``) and a run's results.

A JSONL file is read line by line, and a line cut short by a full disk (ENOSPC after part of a write)
makes the whole file "corrupt" to a strict reader. Buffered text files make this likely: a partial flush
leaves half a line on disk and the rest in the buffer, written (or not) at some later flush. So a
:class:`LineFile` writes each line with one unbuffered ``write`` on an ``O_APPEND`` descriptor, finishes a
short write itself, and when the system refuses the rest it truncates the file back to the end of the
last whole line before raising: the file always ends at a line boundary. ``sync`` (fsync) is for the
moments that matter — a record's footer, a run's end — not every line.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LineFile", "append_synced"]


class LineFile:
    """An append-only file of whole lines.

    Args:
        path: the file; its folder must exist.
        truncate: start empty (a record) rather than append to what is there (a results file).

    Raises:
        OSError: the file cannot be opened for writing (read-only filesystem, a folder in the way...).
    """

    def __init__(self, path: Path, *, truncate: bool = False) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | (os.O_TRUNC if truncate else 0)
        self.path = path
        self._fd: int | None = os.open(path, flags, 0o644)
        self.size = os.fstat(self._fd).st_size
        """Bytes of whole lines in the file (where it is truncated back to after a failed write)."""

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._fd is None

    def append(self, line: bytes) -> None:
        """Append ``line`` (which must end with a newline) whole, or not at all.

        Raises:
            OSError: the system refused the write (ENOSPC, EROFS, EIO...); the file is as it was before.
            ValueError: the file is closed, or ``line`` does not end with a newline.
        """
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        if not line.endswith(b"\n"):
            raise ValueError("a line must end with a newline")
        view = memoryview(line)
        written = 0
        try:
            while written < len(line):
                written += os.write(self._fd, view[written:])
        except OSError:
            if written:
                self._cut_back()
            raise
        self.size += written

    def _cut_back(self) -> None:
        """Drop the part of a line a refused write left behind (best effort: the disk may refuse this too)."""
        try:
            os.ftruncate(self._fd, self.size)  # type: ignore[arg-type]
        except OSError:
            pass

    def sync(self) -> None:
        """Flush the file to the disk (fsync).

        Raises:
            OSError: the system reports that written data could not be stored.
        """
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self, *, sync: bool = False) -> None:
        """Close (after an fsync when ``sync``); idempotent.

        Raises:
            OSError: the fsync failed (the descriptor is closed all the same).
        """
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


def append_synced(path: Path, line: bytes) -> None:
    """Append one whole line to a small append-only file (created, with its folder, when missing) and fsync it.

    For files a person may also edit by hand (a validation file, a play session): when the file does not end with
    a newline, one is added first, so the new line never joins the last one.

    Raises:
        OSError: the system refused (the file ends at a line boundary, as before).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    file = LineFile(path)
    try:
        if file.size:
            with path.open("rb") as current:
                current.seek(-1, os.SEEK_END)
                if current.read(1) != b"\n":
                    file.append(b"\n")
        file.append(line)
    finally:
        file.close(sync=True)
