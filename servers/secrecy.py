"""Keeping the control token out of what other processes can read: memory, environment, command line.

A process's memory, its ``/proc/<pid>/environ`` and (to every local user) its ``/proc/<pid>/cmdline`` are
readable by other processes of the same user wherever ptrace is not restricted. So a process that holds a
control token (``toolgym serve``, the runner and the servers it starts):

- marks itself non-dumpable (:func:`forbid_dumps`): same-user processes then can neither ptrace it nor read
  its ``/proc/<pid>/mem`` or ``environ`` (root still can; the agent sandbox is what keeps a root agent out);
- takes the token out of its environment *and* out of the environment block the kernel shows
  (:func:`take_from_environment`): ``os.environ.pop`` alone leaves the original bytes in
  ``/proc/<pid>/environ`` for the life of the process;
- blanks a token given on its command line (:func:`blank_argument`) once read, which is only a mitigation:
  the value was public from ``exec`` until then, hence the warning the commands print for ``--token``;
- reads a token file only when no other user can read it (:func:`read_token_file`);
- hands a token across a re-exec through an inherited pipe (:func:`hand_over` / :func:`take_over`), never
  through the environment or argv of the new image.

Everything is a no-op where Linux's ``/proc`` or ``prctl`` is missing.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from fixtures.errors import ToolgymError

__all__ = [
    "TokenFileError",
    "forbid_dumps",
    "dumpable",
    "take_from_environment",
    "blank_argument",
    "read_token_file",
    "hand_over",
    "take_over",
    "HANDOVER_VARIABLE",
    "TOKEN_VARIABLE",
    "given_token",
]

TOKEN_VARIABLE = "TOOLGYM_TOKEN"
"""The environment variable an operator may give the control token in."""

HANDOVER_VARIABLE = "TOOLGYM_TOKEN_FD"
"""Names the inherited pipe a re-executed server reads its token from (the number of a descriptor, no secret)."""

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3


class TokenFileError(ToolgymError):
    """A ``--token-file`` that cannot be used: missing, empty, or readable by other users."""


@functools.cache
def _libc() -> ctypes.CDLL | None:
    # The process's own symbols (libc among them): ctypes.util.find_library("c") runs `ldconfig -p` in a
    # subprocess, ~10 ms on every run's backend before.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl  # noqa: B018 - raises AttributeError where the symbol is not there
        return libc
    except (OSError, AttributeError):
        try:
            return ctypes.CDLL("libc.so.6", use_errno=True)
        except OSError:
            return None


def _prctl(option: int, value: int = 0) -> int | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = _libc()
    if libc is None:
        return None
    return int(libc.prctl(option, value, 0, 0, 0))


def forbid_dumps() -> bool:
    """Mark this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``); returns whether it now is.

    Why: a same-user process may otherwise attach to it or read ``/proc/<pid>/mem``, where the control token
    lives (scanning a runner's memory finds it in under a second). Children get the default back at their
    ``exec``, so an agent's own processes are unaffected. Also turns off core dumps, which would hold it too.
    """
    if _prctl(_PR_SET_DUMPABLE, 0) is None:
        return False
    return dumpable() is False


def dumpable() -> bool | None:
    """Whether this process is dumpable (None where that cannot be asked)."""
    answer = _prctl(_PR_GET_DUMPABLE)
    return None if answer is None or answer < 0 else bool(answer)


def _block(first: int, last: int) -> tuple[int, int] | None:
    """Start and end address of a region of this process named by ``/proc/self/stat`` fields ``first, last``
    (48-49: the argument block, 50-51: the environment block)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[first - 3]), int(fields[last - 3])
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def _overwrite(region: tuple[int, int] | None, needle: bytes, fill: int, *, entry: bool) -> int:
    """Overwrite ``needle`` in the region in place; returns how many times.

    ``entry``: the needle starts a NUL-separated entry (``NAME=``), and the whole entry is zeroed.
    """
    if region is None or not needle:
        return 0
    start, end = region
    data = ctypes.string_at(start, end - start)
    count, at = 0, data.find(needle)
    while at >= 0:
        if entry and at > 0 and data[at - 1] != 0:  # inside another entry (``MY_NAME=``, a value)
            at = data.find(needle, at + 1)
            continue
        stop = data.find(b"\0", at) if entry else at + len(needle)
        stop = len(data) if stop < 0 else stop
        ctypes.memset(start + at, fill, stop - at)
        count += 1
        at = data.find(needle, stop)
    return count


def take_from_environment(name: str) -> str | None:
    """Remove ``name`` from this process's environment and from the block ``/proc/self/environ`` shows.

    Returns its value (None when unset). Children started afterwards do not inherit it either.
    """
    value = os.environ.pop(name, None)
    if value is not None and sys.platform.startswith("linux"):
        # The kernel shows the environment the process was started with, from its own memory; the C
        # library's ``environ`` no longer points at this entry (unsetenv above), so it can be zeroed.
        _overwrite(_block(50, 51), f"{name}=".encode(), 0, entry=True)
    return value


def blank_argument(value: str) -> int:
    """Replace ``value`` by asterisks in the command line ``/proc/self/cmdline`` shows; returns how many times.

    ``sys.argv`` keeps its own copy. Only a mitigation: the argument was readable from the process start.
    """
    if not value or not sys.platform.startswith("linux"):
        return 0
    return _overwrite(_block(48, 49), value.encode(), ord("*"), entry=False)


def read_token_file(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace removed).

    Raises:
        TokenFileError: the file is missing, not a regular file, empty, or readable or writable by its group
            or others (mode 0600 or stricter is required, as ssh does for private keys).
    """
    try:
        info = path.stat()
    except OSError as exc:
        raise TokenFileError(f"--token-file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"--token-file {path}: not a regular file")
    if info.st_mode & 0o077:
        raise TokenFileError(
            f"--token-file {path}: mode {stat.S_IMODE(info.st_mode):04o} lets other users read the token; "
            f"run `chmod 600 {path}`"
        )
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise TokenFileError(f"--token-file {path} is empty; write the token into it")
    return token


def hand_over(token: str, generated: bool) -> int:
    """A pipe's read end, inheritable across ``exec``, already holding the token (and whether it was generated).

    The caller names it in the new image's environment as :data:`HANDOVER_VARIABLE`.
    """
    read_end, write_end = os.pipe()
    payload = json.dumps({"token": token, "generated": generated}).encode()
    os.write(write_end, payload)  # far below a pipe's capacity: never blocks
    os.close(write_end)
    os.set_inheritable(read_end, True)
    return read_end


def take_over() -> tuple[str, bool] | None:
    """The token (and whether it was generated) a previous image of this process handed over, else None."""
    named = take_from_environment(HANDOVER_VARIABLE)
    if not named:
        return None
    try:
        descriptor = int(named)
        with os.fdopen(descriptor, "rb") as pipe:
            data = json.loads(pipe.read().decode())
        return str(data["token"]), bool(data["generated"])
    except (ValueError, OSError, KeyError, TypeError):
        return None


def attached_token(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """``argv`` with ``--token VALUE`` written ``--token=VALUE`` when VALUE begins with ``-``.

    A generated token begins with ``-`` once in 64 (``secrets.token_urlsafe``'s alphabet), and argparse takes
    such a word for an option: ``--token -k3...`` failed with "expected one argument". A word that is one of
    ``parser``'s own options (its commands' included) is left as it is, so ``--token --no-token`` still fails
    as a missing value.
    """
    options = _option_strings(parser)
    words = list(argv)
    joined: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        if word == "--token" and following is not None and following.startswith("-") and len(following) > 2 \
                and following.split("=", 1)[0] not in options:
            joined.append(f"--token={following}")
            i += 2
            continue
        joined.append(word)
        i += 1
    return joined


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its subcommands' parsers."""
    found: set[str] = set()
    for action in parser._actions:  # noqa: SLF001 - argparse keeps no public list
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for command in action.choices.values():
                found |= _option_strings(command)
    return found


_argument_warned = False


def given_token(argument: str | None, file: Path | None) -> str | None:
    """The control token the operator gave, kept out of what other processes can read.

    ``--token-file`` first, then ``--token`` (blanked from ``/proc/self/cmdline``, with a warning, once per
    process, that it was visible until then), then ``$TOOLGYM_TOKEN``; the variable is taken out of this
    process's environment in every case, so neither ``/proc/self/environ`` nor a child shows it.

    Raises:
        TokenFileError: an unusable ``--token-file``.
    """
    global _argument_warned
    variable = take_from_environment(TOKEN_VARIABLE)
    if file is not None:
        return read_token_file(file)
    if argument is not None:
        blank_argument(argument)
        if not _argument_warned:
            _argument_warned = True
            print(
                "toolgym: warning: --token on the command line is visible to every local process (ps, "
                "/proc/PID/cmdline) until it is read; prefer --token-file FILE (mode 0600) or TOOLGYM_TOKEN",
                file=sys.stderr,
                flush=True,
            )
        return argument
    return (variable or "").strip() or None
