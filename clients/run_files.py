"""Writing into a run folder: whole files or nothing, and one clear line when the disk says no.

A run folder may sit on a full disk, a read-only mount, or behind a path that is a file. Each write here
either lands whole — a file is written beside its target and renamed over it, so ``summary.json`` is never
left empty and a record never half-written — or raises a :class:`~clients.errors.RunError` whose one
line names the path, the system's reason and what to do (finished episodes are kept; ``--resume`` completes
the run). Results lines have their own whole-line writer (``clients/results.py``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from clients.errors import RunError

__all__ = ["folder_error", "write_file"]


def folder_error(path: Path, exc: OSError, doing: str = "write") -> RunError:
    """The one-line error for a run-folder operation the system refused."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "free some space, then run again with --resume: finished episodes are kept"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = "the run folder is not writable: choose another --out (or make it writable, then --resume)"
    elif exc.errno in (errno.ENOTDIR, errno.EEXIST):
        hint = "a file stands where the run folder should be: choose another --out"
    else:
        hint = "fix the folder, then run again with --resume: finished episodes are kept"
    return RunError(f"cannot {doing} {path}: {reason}; {hint}")


def write_file(path: Path, text: str, *, sync: bool = True) -> None:
    """Replace ``path`` with ``text`` whole (a temporary file beside it, renamed over it).

    ``sync`` fsyncs the file before the rename, so it survives a power cut, not only a crash of the process.
    Episode records pass False: a runner writes one per episode on its event loop, where the fsync blocked
    every other episode for its whole wait (0.1-0.2 ms on an idle local disk, far more on a busy or network
    one), and they need not outlive the machine — ``results.jsonl``, fsynced when the run ends, is what
    ``--resume`` trusts, as for the in-process runner's records (``LocalBackend``: ``sync_records=False``).

    Raises:
        RunError: the system refused (the previous content of ``path``, if any, is untouched).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            data = memoryview(text.encode("utf-8"))
            while data:
                data = data[os.write(fd, data):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise folder_error(path, exc) from None
