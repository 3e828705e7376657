"""Meta-evaluation: do an environment's graders tell right from wrong? (``toolgym check``)

For every task template and seed (the oracle over one real in-memory MCP client shared by the whole check, every
other trajectory through dispatch directly — continued from a kept world after the calls it shares with one played
before, ``servers/setups.py`` — each instance's setup built twice, then replayed):

* the rubric is well-formed here (tools, arguments and tables it names exist), the task declares the
  outcome its answer must give when the answer tool has outcomes, no criterion name holds a value the
  agent must find (names travel with grades; values belong in evidence), and some credited criterion reads
  the world or the record — a rubric that pays only for what the answer says pays for a lie;
* the **oracle** plays with no tool error and scores exactly 1.0 with every graded criterion
  passed; re-grading its record offline gives the same grade; without any step it marks optional it still
  passes (so "optional" is true);
* the **no-op** fails (unless ``noop_may_pass``) and every hand-written **negative** fails;
* every **generated attack** that counts fails (``graders/attacks.py``, ``graders/adversary.py``), and those
  that skip the work or lie about it (:data:`ZERO_REWARD_CLASSES`) earn exactly 0;
* **determinism**: the same seed twice gives the same instance, start and end hashes and grade JSON;
* **counterfactual instances** (``graders/priors.py``): the seeds give distinct instances (at least
  :func:`~graders.priors.distinct_required` of them), the correct declaration varies by seed unless the
  template says why it is one-sided, and trained-policy attacks — a template prior alone and after generic
  reads, another seed's oracle replayed verbatim and with this prompt's facts substituted — are played on
  every seed, learning only from the other seeds of the check.

Over the whole environment, the priors must average a reward of at most :data:`~graders.priors.PRIOR_LIMIT`
and the replays pass at most :data:`~graders.priors.REPLAY_LIMIT` of the instances; and **constant policies** — the no-op, and one fixed keyword-stuffed answer per
outcome reused on every task — must average a reward of at most :data:`CONSTANT_POLICY_LIMIT`.

"Fails" means the graded criteria alone do not reach the threshold (or a gate failed), so an ungraded LLM
judge can never make a negative look caught. Ungraded criteria are reported as notes, not violations.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from fixtures.errors import ToolgymError
from graders.adversary import AttackStats, Played, answer_tool, build_vocabulary, play_calls, run_attack
from graders.alternatives import derive_variants, play_variant
from graders.attacks import Vocabulary, generate_attacks, optional_step_checks, stuffed_answers
from graders.criteria.judge import JudgeClient
from graders.consistency import consistency_problems
from graders.fuzz import fuzz_seed
from graders.guessing import guessing_attack
from graders.grade import Grade
from graders.grading import grade_episode, grade_record, lint_instance
from graders.play import play, play_direct, play_new
from graders.check_report import (
    CONSTANT_POLICY_LIMIT,
    DEFAULT_SEEDS,
    ZERO_REWARD_CLASSES,
    CheckReport,
    TemplateCheck,
    assemble_report,
    counterfactual_checks,
)
from graders.priors import SeedInstance, trained_policies
from graders.rubric_lint import rubric_problems
from graders.tasks import TaskInstance, TaskTemplate, ToolCall
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.memory import SharedClient
from servers.setups import SetupCache

__all__ = [
    "TemplateCheck",
    "CheckReport",
    "check_environment",
    "check_template",
    "assemble_report",
    "CONSTANT_POLICY_LIMIT",
    "ZERO_REWARD_CLASSES",
    "DEFAULT_SEEDS",
]


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


SETUPS_KEPT = 4096
"""Task setups one check keeps at most (its templates' instances on its seeds; each is a few dozen logged rows)."""


@dataclass
class _Context:
    """What the checks of one environment share: the MCP client, the task setups, the vocabularies per seed, the
    constant answers."""

    environment: Environment
    shared: SharedClient
    vocabularies: dict[int, Vocabulary] = field(default_factory=dict)
    constants: list[tuple[str, ToolCall]] | None = None
    setups: SetupCache | None = None
    """Every template's setups: the vocabulary of a seed builds each template's instance once, and that build
    is the first of the two a replay waits for (``servers/setups.py``)."""

    def __post_init__(self) -> None:
        if self.setups is None:
            self.setups = SetupCache(self.environment, limit=SETUPS_KEPT, confirm=True)

    def vocabulary(self, seed: int) -> Vocabulary:
        if seed not in self.vocabularies:
            self.vocabularies[seed] = build_vocabulary(self.environment, seed, self.setups)
        return self.vocabularies[seed]

    def constant_answers(self, seed: int) -> list[tuple[str, ToolCall]]:
        """One fixed stuffed answer per outcome, built once (from the first seed checked) and reused everywhere."""
        if self.constants is None:
            tool = answer_tool(self.environment)
            answers = stuffed_answers(self.environment, self.vocabulary(seed), tool) if tool else []
            self.constants = [
                (f"{'stuffed' if len(str(a.arguments)) > 200 else 'bare'} answer, {a.arguments.get('outcome', 'no outcome')}", a)
                for a in answers
            ]
        return self.constants


class _Checker:
    """Runs one template's checks on one seed at a time, collecting violations into ``report``."""

    def __init__(self, context: _Context, template: TaskTemplate, report: TemplateCheck, judge: JudgeClient | None,
                 use_judge: bool, attacks: bool) -> None:
        self.context = context
        self.environment = context.environment
        self.template = template
        self.report = report
        self.judge = judge
        self.use_judge = use_judge
        self.attacks = attacks
        self.manager = EpisodeManager(self.environment, max_live=16, history=0, setups=context.setups)
        """Every episode of this template's check, on the check's shared setups (``servers/setups.py``)."""
        self.instances: dict[int, SeedInstance] = {}
        """Every checked seed's instance (what the trained-policy attacks learn from)."""

    def collect(self, seeds: Sequence[int]) -> None:
        """Build the instance of every seed up front: the trained-policy attacks on one seed learn from the others."""
        tool = answer_tool(self.environment)
        for seed in seeds:
            try:
                world, instance = self.manager.setups.instantiate(self.template.id, seed)  # type: ignore[union-attr]
            except ToolgymError:
                continue  # the seed's own check reports it
            world.release()
            final = instance.oracle[-1] if tool is not None and instance.oracle and instance.oracle[-1].tool == tool else None
            self.instances[seed] = SeedInstance(seed=seed, instance=instance, final=final)

    def violation(self, seed: int, message: str) -> None:
        self.report.violations.append(f"seed {seed}: {message}")

    async def grade(self, episode: Episode) -> Grade:
        return await grade_episode(episode, judge=self.judge, judge_from_env=self.use_judge)

    async def play(self, episode: Episode, calls: Sequence[ToolCall]) -> None:
        """Play ``calls`` into ``episode`` over the check's shared in-memory MCP client."""
        with self.context.shared.bind(episode) as client:
            await play(episode, calls, client=client)

    async def run(self, seed: int, calls: Sequence[ToolCall]) -> tuple[Episode, Grade]:
        """Play ``calls`` (the no-op, a negative) through dispatch on a new episode of ``seed``, grade it, release it."""
        episode = await play_new(self.manager, self.template.id, seed, calls)
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
        problems += consistency_problems(self.environment, episode.world, instance)
        if self.template.tools:
            undeclared = sorted({c.tool for c in instance.oracle} - set(self.template.tools))
            if undeclared:
                problems.append(f"the oracle calls {', '.join(undeclared)}, not listed in the template's tools")
        if problems:
            out.oracle_failed = True
            for problem in problems:
                self.violation(seed, problem)
            return
        await self.play(episode, instance.oracle)
        self.manager.close(episode.id)
        failed = _failed_calls(episode)
        if failed:
            out.oracle_failed = True
            self.violation(seed, f"an oracle call failed: {'; '.join(failed)}")
        grade = await self.grade(episode)
        oracle = Played(episode=episode, grade=grade, events=list(episode.record.tool_calls), diff=episode.world.diff())
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
        await play_direct(again, instance.oracle)  # the one MCP pass per instance is the oracle's, above
        self.manager.close(again.id)
        grade_again = await self.grade(again)
        if grade_again.end_hash != grade.end_hash or _strip_id(grade_again) != _strip_id(grade):
            out.deterministic = False
            self.violation(seed, "not deterministic: replaying the oracle on the same seed gives another end world or grade")
        for problem in await rubric_problems(self.environment, instance):
            self.violation(seed, problem)
        _, noop = await self.run(seed, [])
        self.report.constant_rewards.setdefault("no-op", []).append(noop.score)
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
        if self.attacks and not out.oracle_failed:
            await self._adversarial(seed, instance, oracle)

    async def _adversarial(self, seed: int, instance: object, oracle: Played) -> None:
        tool = answer_tool(self.environment)
        assert oracle.episode.task is not None
        task = oracle.episode.task
        for step, calls in optional_step_checks(task, tool):
            played = await play_calls(self.manager, self.template.id, seed, calls)
            if not played.grade.graded_pass:
                failing = "; ".join(f"{r.name}: {r.evidence}" for r in played.grade.failures)
                self.violation(seed, f"oracle step #{step} is marked optional, but the oracle fails without it ({failing}): "
                                     "mark it required or relax the rubric")
        for name, answer in self.context.constant_answers(seed):
            played = await play_calls(self.manager, self.template.id, seed, [answer])
            self.report.constant_rewards.setdefault(name, []).append(played.grade.score)
        await self._trained(seed, tool)
        for attack in generate_attacks(self.environment, task, self.context.vocabulary(seed), tool):
            outcome = await run_attack(self.manager, self.template.id, seed, attack, oracle)
            stats = self.report.attacks.setdefault(attack.kind, AttackStats())
            stats.generated += 1
            if not outcome.counted:
                continue
            stats.counted += 1
            stats.max_reward = max(stats.max_reward, outcome.grade.score)
            if outcome.grade.graded_pass:
                stats.passed += 1
                self.violation(seed, f"attack {attack.kind}: {attack.name} passes with score {outcome.grade.score:.3f}")
            elif attack.kind in ZERO_REWARD_CLASSES and outcome.grade.score > 0:
                stats.passed += 1
                credited = "; ".join(r.name for r in outcome.grade.criteria if r.passed and r.credited and r.weight > 0)
                self.violation(seed, f"attack {attack.kind}: {attack.name} earns {outcome.grade.score:.3f} (credited: {credited}); "
                                     "it must earn nothing: gate the work it skips")
        fuzzed = await fuzz_seed(self.manager, task, tool, self.report.seeds)  # graders/fuzz.py
        self.report.attacks.setdefault("hostile_value", AttackStats()).generated += fuzzed.played
        for problem in fuzzed.violations:
            self.violation(seed, problem)
        await self._alternatives(seed, task, tool)

    async def _alternatives(self, seed: int, task: TaskInstance, tool: str | None) -> None:
        """Every should-pass variant of the oracle (``graders/alternatives.py``) must pass."""
        for variant in await derive_variants(self.manager, task, tool):
            outcome = await play_variant(self.manager, task, variant)
            stats = self.report.alternatives[variant.kind]
            stats.tried += 1
            if outcome.grade.graded_pass:
                stats.passed += 1
            else:
                self.violation(seed, f"alternative path {variant.kind} fails ({outcome.grade.score:.3f}): {variant.description}: "
                                     + "; ".join(outcome.failures[:2]))

    async def guess(self) -> None:
        """The guessing attack over every seed of the template (``graders/guessing.py``)."""
        instances = [self.instances[s] for s in sorted(self.instances)]
        if not self.attacks or len(instances) < 2:
            return
        report = self.report.guess = await guessing_attack(self.manager, answer_tool(self.environment), instances)
        if report.reward > report.share + 1e-9:
            self.report.violations.append(
                f"the guessing attack earns {report.reward:.3f} declaring {report.best} after habit reads, more than the "
                f"{report.share:.2f} share of seeds where it is right: a wrong declaration is paid somewhere"
            )


    async def _trained(self, seed: int, tool: str | None) -> None:
        """Play the trained-policy attacks on ``seed``, learnt from the other seeds (``graders/priors.py``)."""
        target = self.instances.get(seed)
        if target is None:
            return
        others = [i for s, i in sorted(self.instances.items()) if s != seed]
        for policy in trained_policies(self.environment, tool, target, others):
            played = await play_calls(self.manager, self.template.id, seed, policy.calls)
            self.report.trained.setdefault(policy.kind, []).append(played.grade.score)
            if played.grade.graded_pass:
                self.report.trained_passed[policy.kind] = self.report.trained_passed.get(policy.kind, 0) + 1
                self.report.trained_seeds.setdefault(policy.kind, []).append(seed)


async def check_template(
    environment: Environment,
    template: TaskTemplate,
    seeds: Sequence[int],
    *,
    judge: JudgeClient | None = None,
    use_judge: bool = False,
    attacks: bool = True,
    context: _Context | None = None,
) -> TemplateCheck:
    """Meta-evaluate one template on ``seeds`` (see the module docstring for the checks)."""
    report = TemplateCheck(template_id=template.id, seeds=list(seeds))
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        if context is None:
            context = _Context(environment, await stack.enter_async_context(SharedClient(environment)))
        checker = _Checker(context, template, report, judge, use_judge, attacks)
        checker.collect(seeds)
        outcomes = [await checker.seed(seed) for seed in seeds]
        counterfactual_checks(template, report, checker.instances)
        if not any(o.oracle_failed for o in outcomes):
            await checker.guess()
        checker.manager.close_all()
        assert context.setups is not None
        context.setups.forget(template.id)  # its episodes are over: its kept worlds go back to the pool
    for kind, passed in report.trained_seeds.items():
        report.notes.append(f"trained policy {kind} passes on seeds {', '.join(map(str, passed))}")
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
    seeds: int | Sequence[int] = DEFAULT_SEEDS,
    templates: Sequence[str] | None = None,
    judge: JudgeClient | None = None,
    use_judge: bool = False,
    attacks: bool = True,
) -> CheckReport:
    """Meta-evaluate ``environment``'s task templates.

    Args:
        seeds: how many seeds (0..N-1), or the exact seeds.
        templates: template ids to check (default: all).
        judge: an LLM judge to grade judge criteria with; ``use_judge`` reads ``TOOLGYM_JUDGE_*`` instead.
        attacks: play the generated attacks and constant policies (default); False checks oracles,
            no-ops and negatives only.

    Raises:
        TaskError: a requested template id is unknown, or the templates fail to load.
    """
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    available = environment.task_templates()
    chosen = [environment.task_template(t) for t in templates] if templates else list(available.values())
    async with SharedClient(environment) as shared:
        context = _Context(environment, shared)
        try:
            results = [
                await check_template(environment, t, seed_list, judge=judge, use_judge=use_judge, attacks=attacks, context=context)
                for t in chosen
            ]
        finally:
            assert context.setups is not None
            context.setups.clear()
    return assemble_report(environment.name, results)
