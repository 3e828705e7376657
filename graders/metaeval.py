"""Meta-evaluation: do an environment's graders tell right from wrong? (``toolgym check``)

For every task template and several seeds, through real in-memory MCP clients:

* the rubric is well-formed here (tools, arguments and tables it names exist);
* the **oracle** plays with no tool error and scores exactly 1.0 with every graded criterion passed;
* re-grading the oracle's record offline (:func:`grade_record`) gives the same grade;
* the **no-op** (no call at all) fails, unless the task declares ``noop_may_pass``;
* every **negative** fails;
* **determinism**: the same seed twice gives the same instance, start and end hashes and grade JSON.

"Fails" means the graded criteria alone do not reach the threshold (or a gate failed), so an ungraded LLM
judge can never make a negative look caught. Ungraded criteria are reported as notes, not violations.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from fixtures.errors import ToolgymError
from graders.criteria.judge import JudgeClient
from graders.grade import Grade
from graders.grading import grade_episode, grade_record, lint_instance
from graders.play import play
from graders.tasks import TaskTemplate, ToolCall
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager

__all__ = ["TemplateCheck", "CheckReport", "check_environment", "check_template"]


@dataclass
class TemplateCheck:
    """The meta-evaluation of one template over its seeds."""

    template_id: str
    seeds: list[int]
    oracle: str = "-"
    """e.g. ``1.000`` (min score over seeds) or ``FAIL``."""
    noop: str = "-"
    negatives: str = "-"
    """e.g. ``3/3 fail``."""
    determinism: str = "-"
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No violation."""
        return not self.violations


@dataclass
class CheckReport:
    """The meta-evaluation of an environment."""

    env: str
    templates: list[TemplateCheck]

    @property
    def violations(self) -> list[str]:
        """Every violation, prefixed by its template."""
        return [f"{t.template_id}: {v}" for t in self.templates for v in t.violations]

    @property
    def ok(self) -> bool:
        """True when every template passed every check."""
        return not self.violations

    def summary(self) -> str:
        """Plain-text report: one line per template, then each violation."""
        lines = [f"toolgym check {self.env}: {len(self.templates)} templates, {len(self.violations)} violations"]
        for t in self.templates:
            lines.append(
                f"  {t.template_id}: oracle {t.oracle}, noop {t.noop}, negatives {t.negatives}, determinism {t.determinism}"
            )
        lines += [f"  VIOLATION {v}" for v in self.violations]
        return "\n".join(lines)


def _strip_id(grade: Grade) -> str:
    return grade.model_copy(update={"episode_id": None}).to_json()


def _failed_calls(episode: Episode, *, internal_only: bool = False) -> list[str]:
    return [
        f"#{e.seq} {e.tool}: {e.error.error_class}:{e.error.code}: {e.error.message}"
        for e in episode.record.tool_calls
        if e.error is not None and (not internal_only or e.error.error_class == "internal")
    ]


@dataclass
class _SeedOutcome:
    oracle_score: float | None = None
    oracle_failed: bool = False
    noop_passes: bool = False
    negatives: int = 0
    negatives_caught: int = 0
    deterministic: bool = True
    ungraded: set[str] = field(default_factory=set)


class _Checker:
    """Runs one template's checks on one seed at a time, collecting violations into ``report``."""

    def __init__(self, environment: Environment, template: TaskTemplate, report: TemplateCheck, judge: JudgeClient | None, use_judge: bool) -> None:
        self.environment = environment
        self.template = template
        self.report = report
        self.judge = judge
        self.use_judge = use_judge
        self.manager = EpisodeManager(environment, max_live=16)

    def violation(self, seed: int, message: str) -> None:
        self.report.violations.append(f"seed {seed}: {message}")

    async def grade(self, episode: Episode) -> Grade:
        return await grade_episode(episode, judge=self.judge, judge_from_env=self.use_judge)

    async def run(self, seed: int, calls: Sequence[ToolCall]) -> tuple[Episode, Grade]:
        episode = self.manager.create(task=self.template.id, seed=seed)
        if calls:
            await play(episode, calls)
        self.manager.close(episode.id)
        grade = await self.grade(episode)
        self.manager.release(episode.id)  # the record stays readable; the world is not needed any more
        return episode, grade

    async def seed(self, seed: int) -> _SeedOutcome:
        out = _SeedOutcome()
        try:
            await self._seed(seed, out)
        except ToolgymError as exc:
            out.oracle_failed = True
            self.violation(seed, f"{type(exc).__name__}: {exc}")
        finally:
            self.manager.close_all()
        return out

    async def _seed(self, seed: int, out: _SeedOutcome) -> None:
        episode = self.manager.create(task=self.template.id, seed=seed)
        again = self.manager.create(task=self.template.id, seed=seed)
        instance = episode.task
        assert instance is not None and again.task is not None  # a task episode always has its instance
        if again.task.model_dump_json() != instance.model_dump_json():
            self.violation(seed, "not deterministic: instantiating the same seed twice gives different instances (use the rng argument)")
        elif again.record.header.start_hash != episode.record.header.start_hash:
            self.violation(seed, "not deterministic: the same seed gives different start worlds (setup uses unseeded randomness?)")
        else:
            await self._checks(seed, out, episode, again)
            return
        out.deterministic = False
        out.oracle_failed = True

    async def _checks(self, seed: int, out: _SeedOutcome, episode: Episode, again: Episode) -> None:
        instance = episode.task
        assert instance is not None
        problems = lint_instance(self.environment, instance)
        if self.template.tools:
            undeclared = sorted({c.tool for c in instance.oracle} - set(self.template.tools))
            if undeclared:
                problems.append(f"the oracle calls {', '.join(undeclared)}, not listed in the template's tools")
        if problems:
            out.oracle_failed = True
            for problem in problems:
                self.violation(seed, problem)
            return
        await play(episode, instance.oracle)
        self.manager.close(episode.id)
        failed = _failed_calls(episode)
        if failed:
            out.oracle_failed = True
            self.violation(seed, f"an oracle call failed: {'; '.join(failed)}")
        grade = await self.grade(episode)
        out.oracle_score = grade.score
        out.ungraded |= set(grade.ungraded)
        if grade.score < 1.0 or grade.failures:
            out.oracle_failed = True
            why = "; ".join(f"{r.name}: {r.evidence}" for r in grade.failures) or "score below 1"
            self.violation(seed, f"the oracle scores {grade.score:.3f}: {why}")
        regraded = await grade_record(self.environment, episode.record, judge=self.judge, judge_from_env=self.use_judge)
        if regraded.to_json() != grade.to_json():
            out.deterministic = False
            self.violation(seed, f"re-grading the oracle's record offline gives another grade ({regraded.score:.3f} vs {grade.score:.3f})")
        await play(again, instance.oracle)
        self.manager.close(again.id)
        grade_again = await self.grade(again)
        if grade_again.end_hash != grade.end_hash or _strip_id(grade_again) != _strip_id(grade):
            out.deterministic = False
            self.violation(seed, "not deterministic: replaying the oracle on the same seed gives another end world or grade")
        _, noop = await self.run(seed, [])
        if noop.graded_pass and not instance.noop_may_pass:
            out.noop_passes = True
            self.violation(seed, f"the no-op passes (score {noop.score:.3f}): the rubric rewards doing nothing")
        for neg in instance.negatives:
            out.negatives += 1
            played, verdict = await self.run(seed, neg.calls)
            internal = _failed_calls(played, internal_only=True)
            if internal:
                self.violation(seed, f"negative {neg.name!r} hit a kit error: {'; '.join(internal)}")
            if verdict.graded_pass:
                self.violation(
                    seed, f"negative {neg.name!r} ({neg.description}) passes with score {verdict.score:.3f}: the rubric does not catch it"
                )
            else:
                out.negatives_caught += 1


async def check_template(
    environment: Environment,
    template: TaskTemplate,
    seeds: Sequence[int],
    *,
    judge: JudgeClient | None = None,
    use_judge: bool = False,
) -> TemplateCheck:
    """Meta-evaluate one template on ``seeds`` (see the module docstring for the checks)."""
    report = TemplateCheck(template_id=template.id, seeds=list(seeds))
    started = time.perf_counter()
    checker = _Checker(environment, template, report, judge, use_judge)
    outcomes = [await checker.seed(seed) for seed in seeds]
    if not outcomes:
        report.violations.append("no seeds to check")
    scores = [o.oracle_score for o in outcomes if o.oracle_score is not None]
    worst = f"{min(scores):.3f}" if scores else "-"
    report.oracle = f"FAIL {worst}" if any(o.oracle_failed for o in outcomes) or not outcomes else worst
    passing_noops = sum(o.noop_passes for o in outcomes)
    report.noop = f"PASSES ({passing_noops}/{len(outcomes)})" if passing_noops else f"{len(outcomes)}/{len(outcomes)} fail"
    negatives = sum(o.negatives for o in outcomes)
    caught = sum(o.negatives_caught for o in outcomes)
    report.negatives = f"{caught}/{negatives} fail" if negatives else "none"
    report.determinism = "ok" if all(o.deterministic for o in outcomes) else "FAIL"
    ungraded = set().union(*(o.ungraded for o in outcomes)) if outcomes else set()
    if ungraded:
        report.notes.append(f"not graded here: {', '.join(sorted(ungraded))} (set TOOLGYM_JUDGE_* and pass --judge)")
    if outcomes and not negatives:
        report.notes.append("no negatives: add wrong or hacking trajectories the rubric must fail")
    report.seconds = time.perf_counter() - started
    return report


async def check_environment(
    environment: Environment,
    *,
    seeds: int | Sequence[int] = 3,
    templates: Sequence[str] | None = None,
    judge: JudgeClient | None = None,
    use_judge: bool = False,
) -> CheckReport:
    """Meta-evaluate ``environment``'s task templates.

    Args:
        seeds: how many seeds (0..N-1), or the exact seeds.
        templates: template ids to check (default: all).
        judge: an LLM judge to grade judge criteria with; ``use_judge`` reads ``TOOLGYM_JUDGE_*`` instead.

    Raises:
        TaskError: a requested template id is unknown, or the templates fail to load.
    """
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    available = environment.task_templates()
    chosen = [environment.task_template(t) for t in templates] if templates else list(available.values())
    results = [await check_template(environment, t, seed_list, judge=judge, use_judge=use_judge) for t in chosen]
    return CheckReport(env=environment.name, templates=results)
