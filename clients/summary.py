"""The summary of a run: per task and overall pass rates, scores with confidence intervals, costs.

Computed from the results lines only (so ``summary.json`` can always be rebuilt from ``results.jsonl``).
Errored episodes (infrastructure failures, see :mod:`clients.blame`) are counted apart and excluded from
every score; graded ones say how they stopped (done, or which of the agent's limits ended them). A *problem*
is one (task, seed); its trials give the n and c of the pass@k / pass^k estimators, averaged over problems.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict
from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from clients.metrics import bootstrap_ci, mean, pass_at_k, pass_hat_k
from clients.results import ResultLine, latest_by_key

__all__ = ["Stats", "FailedCriterion", "AgentSummary", "Summary", "summarize", "render_summary"]


class Stats(BaseModel):
    """Aggregates over a group of episodes (one task, or all)."""

    model_config = ConfigDict(frozen=True)

    name: str
    episodes: int
    """Graded episodes (errored ones excluded)."""
    errored: int
    problems: int
    """Distinct (task, seed) among the graded episodes."""
    k: int
    pass_at_1: float | None
    pass_hat_k: float | None
    """Mean over problems with at least k graded trials (``problems_k`` of them); None when there is none."""
    pass_at_k: float | None
    problems_k: int = 0
    """Problems with at least k graded trials: the denominator of ``pass_hat_k`` and ``pass_at_k`` (a problem
    whose trials errored has fewer, and is left out of both)."""
    mean_score: float | None
    score_ci: tuple[float, float] | None
    """95% percentile-bootstrap interval of the mean score (seeded: the same results print the same interval)."""
    mean_tool_calls: float | None
    tool_errors: int
    tokens: int
    """Tokens of the attempts the lines report (graded and errored)."""
    failed_attempt_tokens: int = 0
    """Tokens of attempts that errored and were run again (not in ``tokens``)."""
    mean_wall_s: float | None


class FailedCriterion(BaseModel):
    """A rubric criterion and how often it failed among graded episodes."""

    model_config = ConfigDict(frozen=True)

    name: str
    failures: int
    of: int
    """Graded episodes whose grade has this criterion."""
    tasks: list[str]


class AgentSummary(BaseModel):
    """Everything about one agent's episodes in the run."""

    agent: str
    overall: Stats
    tasks: list[Stats]
    failed_criteria: list[FailedCriterion]
    error_classes: dict[str, int]
    """Errored episodes by error class (provider, provider_timeout, connection, internal, grading, kit)."""
    stop_reasons: dict[str, int] = {}
    """Graded episodes by how the agent stopped (done, max_turns, max_tool_calls, timeout, context_overflow ...)."""
    errors: list[dict[str, object]]
    """The errored episodes: task, seed, trial, error_class, error (first ones)."""


class Summary(BaseModel):
    """The ``summary.json`` of a run."""

    env: str
    k: int
    agents: list[AgentSummary]
    episodes: int = 0
    """Episodes of the run (graded and errored, the latest attempt of each)."""
    not_graded: int = 0
    """Episodes that errored, so no score counts them (the headline says so; ``toolgym run`` exits 1)."""

    def headline(self) -> str | None:
        """``3 of 40 episodes were not graded (grading: 2, provider: 1) ...`` — or None when all were graded.

        Why a headline: pass rates cover graded episodes only, so a run whose grader failed on the episodes
        an agent would have failed looks better than it is unless the count is the first thing said.
        """
        if not self.not_graded:
            return None
        classes: Counter[str] = Counter()
        for agent in self.agents:
            classes.update(agent.error_classes)
        counts = ", ".join(f"{name}: {n}" for name, n in sorted(classes.items()))
        graded = self.episodes - self.not_graded
        return (f"{self.not_graded} of {self.episodes} episodes were not graded ({counts}): every pass rate and score "
                f"below covers the {graded} graded ones only")


def _stats(name: str, lines: Sequence[ResultLine], k: int) -> Stats:
    graded = [line for line in lines if line.status == "graded"]
    errored = len(lines) - len(graded)
    by_problem: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for line in graded:
        by_problem[(line.task, line.seed)].append(bool(line.passed))
    at1 = [pass_at_k(len(p), sum(p), 1) for p in by_problem.values()]
    full = [p for p in by_problem.values() if len(p) >= k]
    scores = [float(line.score or 0.0) for line in graded]
    return Stats(
        name=name,
        episodes=len(graded),
        errored=errored,
        problems=len(by_problem),
        k=k,
        pass_at_1=mean(at1),
        pass_hat_k=mean([pass_hat_k(len(p), sum(p), k) for p in full]),
        pass_at_k=mean([pass_at_k(len(p), sum(p), k) for p in full]),
        problems_k=len(full),
        mean_score=mean(scores),
        score_ci=bootstrap_ci(scores, seed=0),
        mean_tool_calls=mean([float(line.tool_calls) for line in graded]),
        tool_errors=sum(line.tool_errors for line in graded),
        tokens=sum(line.tokens.total for line in lines),
        failed_attempt_tokens=sum(line.failed_attempt_tokens.total for line in lines),
        mean_wall_s=mean([line.wall_ms / 1000 for line in lines]),
    )


def _failed_criteria(lines: Iterable[ResultLine], top: int) -> list[FailedCriterion]:
    failures: Counter[str] = Counter()
    present: Counter[str] = Counter()
    tasks: dict[str, set[str]] = defaultdict(set)
    for line in lines:
        if line.status != "graded" or not line.grade:
            continue
        for criterion in line.grade.get("criteria") or []:
            if not isinstance(criterion, dict) or "name" not in criterion:
                continue
            name = str(criterion["name"])
            present[name] += 1
            if not criterion.get("passed", False):
                failures[name] += 1
                tasks[name].add(line.task)
    ranked = sorted(failures.items(), key=lambda item: (-item[1], item[0]))[:top]
    return [FailedCriterion(name=n, failures=f, of=present[n], tasks=sorted(tasks[n])) for n, f in ranked]


def summarize(env: str, lines: Iterable[ResultLine], *, k: int = 1, top_criteria: int = 8) -> Summary:
    """Summarize a run's results (the last line of each episode key counts)."""
    latest = latest_by_key(lines)
    by_agent: dict[str, list[ResultLine]] = defaultdict(list)
    for line in sorted(latest.values(), key=lambda r: (r.agent, r.task, r.seed, r.trial)):
        by_agent[line.agent].append(line)
    agents = []
    for agent, agent_lines in by_agent.items():
        by_task: dict[str, list[ResultLine]] = defaultdict(list)
        for line in agent_lines:
            by_task[line.task].append(line)
        errored = [line for line in agent_lines if line.status == "errored"]
        agents.append(
            AgentSummary(
                agent=agent,
                overall=_stats("overall", agent_lines, k),
                tasks=[_stats(task, by_task[task], k) for task in sorted(by_task)],
                failed_criteria=_failed_criteria(agent_lines, top_criteria),
                error_classes=dict(Counter(line.error_class or "unknown" for line in errored)),
                stop_reasons=dict(Counter(line.stop_reason or "unknown" for line in agent_lines if line.status == "graded")),
                errors=[
                    {"task": e.task, "seed": e.seed, "trial": e.trial, "error_class": e.error_class, "error": e.error}
                    for e in errored[:20]
                ],
            )
        )
    errored = sum(1 for line in latest.values() if line.status == "errored")
    return Summary(env=env, k=k, agents=agents, episodes=len(latest), not_graded=errored)


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.0f}%" if value in (0.0, 1.0) else f"{value * 100:.1f}%"


def _of(value: float | None, problems: int) -> str:
    """A pass^k / pass@k cell with its denominator: ``75% of 4`` (problems with k graded trials)."""
    return f"{_pct(value)} of {problems}"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(stats: Stats) -> str:
    if stats.score_ci is None or stats.episodes < 2:
        return "-"
    return f"{stats.score_ci[0]:.2f}–{stats.score_ci[1]:.2f}"


def _table(summary: AgentSummary, k: int, env: str) -> Table:
    rows = summary.tasks + [summary.overall]
    show_tokens = any(r.tokens or r.failed_attempt_tokens for r in rows)
    show_errored = any(r.errored for r in rows)
    table = Table(
        title=f"{env} · {summary.agent}",
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("task", overflow="fold", min_width=min(32, max(len(r.name) for r in rows)))
    numeric = ["n", "pass@1"] + ([f"pass^{k}", f"pass@{k}"] if k > 1 else []) + ["score", "95% CI", "calls", "errs"]
    numeric += (["tokens"] if show_tokens else []) + ["s/ep"] + (["errored"] if show_errored else [])
    for name in numeric:
        table.add_column(name, justify="right", no_wrap=True)
    for index, stats in enumerate(rows):
        last = index == len(rows) - 1
        passed = stats.pass_at_1
        color = "dim" if passed is None else "green" if passed == 1.0 else "red" if passed == 0.0 else "yellow"
        cells: list[str | Text] = [Text(stats.name), str(stats.episodes), Text(_pct(passed), style=color)]
        if k > 1:
            cells += [_of(stats.pass_hat_k, stats.problems_k), _of(stats.pass_at_k, stats.problems_k)]
        cells += [_num(stats.mean_score, 2), _ci(stats), _num(stats.mean_tool_calls), str(stats.tool_errors)]
        if show_tokens:
            failed = f" (+{stats.failed_attempt_tokens:,} re-run)" if stats.failed_attempt_tokens else ""
            cells.append(f"{stats.tokens:,}{failed}")
        cells.append(_num(stats.mean_wall_s, 2))
        if show_errored:
            cells.append(Text(str(stats.errored), style="red" if stats.errored else "dim"))
        table.add_row(*cells, style="bold" if last else None, end_section=index == len(rows) - 2)
    return table


LEGEND = "n: graded episodes · score: mean, 95% bootstrap CI · calls: per episode · errs: failed tool calls"


def render_summary(summary: Summary, console: Console) -> None:
    """Print the run's headline (episodes not graded), its tables per task and overall, then the criteria
    that failed most, then errors."""
    headline = summary.headline()
    if headline is not None:
        console.print(Text(headline, style="bold red"), soft_wrap=True)  # one line: a terminal wraps it, a log keeps it whole
    for agent in summary.agents:
        legend = LEGEND
        if summary.k > 1:
            k = summary.k
            legend += f" · pass^{k}, pass@{k}: mean over the problems (task, seed) with {k} graded trials, 'of N' of them"
        parts: list[object] = [_table(agent, summary.k, summary.env), Text(legend, style="dim")]
        if agent.failed_criteria:
            crit = Table(title="criteria that failed most", title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
            crit.add_column("criterion", overflow="fold")
            crit.add_column("failed", justify="right", no_wrap=True)
            crit.add_column("tasks", overflow="fold")
            for item in agent.failed_criteria:
                crit.add_row(item.name, f"{item.failures}/{item.of}", ", ".join(item.tasks[:4]) + (" ..." if len(item.tasks) > 4 else ""))
            parts.append(crit)
        stops = {reason: n for reason, n in agent.stop_reasons.items() if reason not in ("done", "exit:0")}
        if stops:
            counts = ", ".join(f"{reason}: {n}" for reason, n in sorted(stops.items()))
            parts.append(Text(f"graded episodes the agent did not finish (scored as they stood) — {counts}", style="yellow"))
        if agent.error_classes:
            counts = ", ".join(f"{name}: {n}" for name, n in sorted(agent.error_classes.items()))
            lines = [Text(f"errored episodes (excluded from scores) — {counts}", style="red")]
            for error in agent.errors[:5]:
                lines.append(Text(f"  {error['task']} seed {error['seed']} trial {error['trial']}: [{error['error_class']}] {error['error']}", style="dim"))
            parts.append(Group(*lines))
        console.print(Group(*parts))
