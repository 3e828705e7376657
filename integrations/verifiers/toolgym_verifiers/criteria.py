"""Criterion metrics averaged over the rollouts where each criterion applied.

A rubric's criteria differ from task to task (and, where the world decides, from seed to seed), so a
rollout reports ``criterion/<name>`` only for the criteria its grade has. Averaged over *every* rollout — as
vf-eval's live dashboard does, reading an absent metric as 0 — a criterion that passed each of the 2 times it
applied among 24 rollouts would read 0.08. Its figure is its mean over the rollouts that report it, as
verifiers' own run summary (``prime_runs.metrics.from_episodes``) computes ``avg_metrics``: this module
computes the same, for the summary :class:`~toolgym_verifiers.env.ToolgymEnv` logs when an evaluation
ends and for a ``traces.jsonl`` read afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PREFIX", "CriteriaTally", "criteria_means", "criteria_from_traces"]

PREFIX = "criterion/"
"""The metric names of rubric criteria."""


@dataclass
class CriteriaTally:
    """Sums and counts of each criterion's score over the rollouts that reported it."""

    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    rollouts: int = 0

    def add(self, metrics: Mapping[str, float | None]) -> None:
        """Count one rollout's metrics (only its ``criterion/<name>`` entries matter)."""
        self.rollouts += 1
        for name, value in metrics.items():
            if name.startswith(PREFIX) and value is not None:
                self.sums[name] = self.sums.get(name, 0.0) + float(value)
                self.counts[name] = self.counts.get(name, 0) + 1

    def means(self) -> dict[str, tuple[float, int]]:
        """``criterion/<name>`` → (mean over the rollouts where it applied, how many those were)."""
        return {name: (self.sums[name] / self.counts[name], self.counts[name]) for name in sorted(self.sums)}

    def lines(self) -> list[str]:
        """The summary as text: one line per criterion, worst first."""
        means = sorted(self.means().items(), key=lambda item: (item[1][0], item[0]))
        head = f"toolgym criteria over the rollouts where each applied ({self.rollouts} rollouts):"
        return [head] + [f"  {name} {mean:.2f} ({count}/{self.rollouts} rollouts)" for name, (mean, count) in means]


def criteria_means(metrics: Iterable[Mapping[str, float | None]]) -> dict[str, tuple[float, int]]:
    """Each criterion's mean over the rollouts (metrics dicts) that report it, with their number."""
    tally = CriteriaTally()
    for item in metrics:
        tally.add(item)
    return tally.means()


def criteria_from_traces(path: str | Path) -> dict[str, tuple[float, int]]:
    """:func:`criteria_means` of the traces of a vf-eval ``traces.jsonl`` (one episode per line)."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            rows.extend(trace.get("metrics") or {} for trace in json.loads(line).get("traces", []))
    return criteria_means(rows)
