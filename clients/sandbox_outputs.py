"""Earlier runs inside a ``cmd:`` agent's sandbox: found, masked, and never bound.

Hiding the current run folder is not enough: an agent whose own folder holds ``runs/`` (it was started from
there, so its script's folder is bound) reads an earlier run's records, replays the oracle's calls found there
and scores 1.0 (seen: issue 28). So every output the kit ever wrote — run folders, records, results, SFT
exports, reports, caches, generated environments (``fixtures/outputs.py``) — is hidden, wherever it is:

- found by the registry (every path the kit wrote, read again before each episode) and by walking each folder
  the sandbox shows (markers, and the shape of what an older kit wrote unmarked);
- masked where it appears inside a shown folder (an empty folder over it, ``/dev/null`` over a file), at the
  path the agent sees, however the folder was reached (through a symbolic link: by real paths);
- never bound: ``--sandbox-bind`` of an output or of a folder inside one is refused in one line, so is a
  program kept inside one; an argument naming one is withheld like the kit's own files. A folder too large to
  walk whole (:data:`~fixtures.outputs.SCAN_BUDGET` entries) is refused too: what was not looked at cannot be
  promised clean.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from clients.errors import AgentSpecError
from fixtures import outputs
from fixtures.outputs import Output

__all__ = ["OutputGuard", "describe"]

_NAMES = {
    "run": "a run folder",
    "records": "a folder of records",
    "export": "an SFT export",
    "report": "a report",
    "cache": "the template cache",
    "environment": "a generated environment",
}


_FILE_NAMES = {"run": "a run's results", "records": "a record"}
"""What a file of a kind named after folders is."""


def describe(output: Output) -> str:
    """``a run folder (/path)``: what an output is, for messages."""
    names = _FILE_NAMES if output.path.is_file() and output.kind in _FILE_NAMES else _NAMES
    return f"{names.get(output.kind, 'an output')} ({output.path})"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class OutputGuard:
    """The kit's outputs that one sandbox must hide, and the checks on what it binds.

    Args:
        registered: outputs known up front (default: :func:`fixtures.outputs.registered`).
        budget: folder entries the walk of one shown folder may look at.
    """

    def __init__(self, registered: Iterable[Output] | None = None, *, budget: int = outputs.SCAN_BUDGET) -> None:
        self.found: dict[Path, Output] = {}
        """Real path → output, for everything found so far."""
        self.budget = budget
        self._stamp: tuple[tuple[str, float], ...] | None = None
        self._add(outputs.registered() if registered is None else registered)
        if registered is None:
            self._stamp = self._registry_stamp()

    def _add(self, found: Iterable[Output]) -> None:
        for output in found:
            real = _real(output.path)
            self.found.setdefault(real, Output(real, output.kind))

    def holder(self, path: Path) -> Output | None:
        """The output that is or holds ``path`` (a marked folder above it, or a found output), or None."""
        return outputs.enclosing(path, self.found.values())

    def refuse_bind(self, path: Path) -> None:
        """``--sandbox-bind PATH`` must show no output: refused when ``path`` is, or lies inside, one.

        Raises:
            AgentSpecError: one line naming the output.
        """
        held = self.holder(path)
        if held is not None:
            raise AgentSpecError(
                f"--sandbox-bind {path}: that is inside {describe(held)}, which toolgym wrote; agents never see an "
                "earlier run's records: bind another folder"
            )

    def refuse_program(self, path: Path) -> None:
        """A ``cmd:`` program kept inside an output cannot run sandboxed (its folder would show the output).

        Raises:
            AgentSpecError: one line naming the output and the fix.
        """
        held = self.holder(path)
        if held is not None:
            raise AgentSpecError(
                f"cmd: {path} lies inside {describe(held)}, which the sandbox hides from agents; move the agent out of it"
            )

    def walk(self, roots: Sequence[tuple[Path, str]]) -> None:
        """Walk the folders the sandbox shows (each with what it is, for messages), adding what they hold.

        Raises:
            AgentSpecError: a folder is itself an output, or too large to walk within the budget.
        """
        for root, what in roots:
            if not root.is_dir():
                kind = outputs.sniff(root) if root.is_file() else None
                if kind is not None:  # a record, results or export file an older kit left unmarked
                    raise AgentSpecError(
                        f"{what} {root}: that is {describe(Output(root, kind))}, which toolgym wrote; agents never see an "
                        "earlier run's records: use another file"
                    )
                continue
            found = outputs.scan(root, budget=self.budget)
            if not found.complete:
                raise AgentSpecError(
                    f"{what} {root}: too many files to make sure no earlier run of toolgym is among them (over "
                    f"{self.budget:,} entries); give the agent a smaller folder (move it, or --sandbox-bind only what it needs)"
                )
            for output in found.outputs:
                if _real(output.path) == _real(root):
                    raise AgentSpecError(
                        f"{what} {root}: that is {describe(output)}, which toolgym wrote; agents never see an earlier run's "
                        "records: use another folder"
                    )
            self._add(found.outputs)

    def refresh(self) -> None:
        """Read the registry again when it changed (a run started meanwhile registers its folder)."""
        stamp = self._registry_stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            self._add(outputs.registered())

    @staticmethod
    def _registry_stamp() -> tuple[tuple[str, float], ...]:
        stamps = []
        for path in outputs.registry_paths():
            try:
                stamps.append((str(path), os.stat(path).st_mtime))
            except OSError:
                stamps.append((str(path), -1.0))
        return tuple(stamps)

    def under(self, shown: Path) -> list[Path]:
        """Where outputs appear inside the shown folder ``shown``, as paths the agent sees (``shown``'s own
        spelling, whichever real folder it is)."""
        real = _real(shown)
        found = []
        for path in self.found:
            if path != real and _within(path, real):
                found.append(shown / path.relative_to(real))
        return sorted(found)
