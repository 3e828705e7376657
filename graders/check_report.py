"""The report of ``toolgym check``: per template and for the whole environment, and the limits it enforces.

:func:`assemble_report` pools the templates' results into environment-wide figures — the constant policies'
and the trained policies' rewards — and turns each figure over its limit into a violation; the per-template
counterfactual checks (distinct instances, varying declarations) are in :func:`counterfactual_checks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.adversary import AttackStats, empty_stats
from graders.alternatives import ALTERNATIVE_CLASSES, AlternativeStats
from graders.guessing import GUESS_LIMIT, GuessReport
from graders.priors import (
    PRIOR_CLASSES,
    PRIOR_LIMIT,
    REPLAY_CLASSES,
    REPLAY_LIMIT,
    SeedInstance,
    declaration,
    distinct_required,
    instance_key,
)
from graders.tasks import TaskTemplate

__all__ = [
    "TemplateCheck",
    "CheckReport",
    "assemble_report",
    "counterfactual_checks",
    "CONSTANT_POLICY_LIMIT",
    "ZERO_REWARD_CLASSES",
    "DEFAULT_SEEDS",
    "MAJORITY_LIMIT",
]

CONSTANT_POLICY_LIMIT = 0.02
"""Highest mean reward a task-agnostic constant policy may earn over all tasks."""
ZERO_REWARD_CLASSES = frozenset({"answer_only", "keyword_stuffing", "outcome_lie", "forbidden_then_refusal"})
"""Attack classes that must earn no reward at all, not merely fail: an answer without the work, a lie about
the outcome or a forbidden attempt is worth nothing, or a policy learns to collect the partial credit."""
DEFAULT_SEEDS = 10
"""Seeds ``toolgym check`` runs by default (CI runs at least 20 per environment)."""
MAJORITY_LIMIT = 0.7
"""Largest share of seeds one declaration may be correct on (checked over 10 seeds or more), unless the template
says why it is one-sided: lopsided twins pay a policy that always declares the usual outcome."""


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
    attacks: dict[str, AttackStats] = field(default_factory=empty_stats)
    """Per attack class: generated, counted, passed, highest reward."""
    constant_rewards: dict[str, list[float]] = field(default_factory=dict)
    """Per constant policy, the reward it earned on each seed."""
    distinct: int = 0
    """Distinct instances (prompt, oracle, expected values) over the checked seeds."""
    declarations: dict[str, int] = field(default_factory=dict)
    """How often each declaration (``refused:kyc_not_verified``) is the correct one over the checked seeds."""
    trained: dict[str, list[float]] = field(default_factory=dict)
    """Per trained-policy class (``template_prior`` ...), the reward it earned on each seed."""
    trained_passed: dict[str, int] = field(default_factory=dict)
    """Per trained-policy class, how many seeds it passed."""
    trained_seeds: dict[str, list[int]] = field(default_factory=dict)
    """Per trained-policy class, the seeds it passed (shown as notes)."""
    alternatives: dict[str, AlternativeStats] = field(default_factory=lambda: {k: AlternativeStats() for k in ALTERNATIVE_CLASSES})
    """Per alternative-path class (``graders/alternatives.py``): should-pass variants tried and passed."""
    guess: GuessReport = field(default_factory=GuessReport)
    """The guessing attack (``graders/guessing.py``)."""
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def prior_reward(self) -> float:
        """The mean reward of the prior policies on this template (0 when not played)."""
        rewards = [r for kind in PRIOR_CLASSES for r in self.trained.get(kind, [])]
        return sum(rewards) / len(rewards) if rewards else 0.0

    @property
    def replays_passed(self) -> int:
        """Seeds on which some replay of another seed's oracle passed."""
        return max((self.trained_passed.get(kind, 0) for kind in REPLAY_CLASSES), default=0)

    @property
    def ok(self) -> bool:
        """No violation."""
        return not self.violations

    @property
    def majority_share(self) -> float:
        """The share of seeds on which the most frequent correct declaration is correct (0 when none declared)."""
        total = sum(self.declarations.values())
        return max(self.declarations.values()) / total if total else 0.0

    @property
    def alternatives_summary(self) -> str:
        """``12/12`` variants passed."""
        tried = sum(s.tried for s in self.alternatives.values())
        passed = sum(s.passed for s in self.alternatives.values())
        return f"{passed}/{tried}"

    @property
    def worst_attack(self) -> float:
        """The highest reward any counted attack earned on this template."""
        return max((s.max_reward for s in self.attacks.values()), default=0.0)

    @property
    def attack_summary(self) -> str:
        """``312 counted, 0 pass`` for the table."""
        counted = sum(s.counted for s in self.attacks.values())
        passed = sum(s.passed for s in self.attacks.values())
        return f"{counted} counted, {passed} pass"


@dataclass
class CheckReport:
    """The meta-evaluation of an environment."""

    env: str
    templates: list[TemplateCheck]
    constant_policies: dict[str, float] = field(default_factory=dict)
    """Mean reward of each task-agnostic constant policy over every checked task and seed."""
    trained_policies: dict[str, tuple[float, int, int]] = field(default_factory=dict)
    """Per trained-policy class: (mean reward, instances passed, instances played) over every template and seed."""
    guess_mean: float = 0.0
    """Mean over templates of the guessing attack's best reward (limit :data:`GUESS_LIMIT`)."""
    env_violations: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        """Every violation, prefixed by its template (environment-wide ones first)."""
        return [*self.env_violations, *(f"{t.template_id}: {v}" for t in self.templates for v in t.violations)]

    @property
    def ok(self) -> bool:
        """True when every template passed every check."""
        return not self.violations

    @property
    def attacks(self) -> dict[str, AttackStats]:
        """Per attack class, the totals over every template."""
        totals = empty_stats()
        for t in self.templates:
            for kind, stats in t.attacks.items():
                totals.setdefault(kind, AttackStats()).add(stats)
        return totals

    @property
    def alternatives(self) -> dict[str, AlternativeStats]:
        """Per alternative-path class, variants tried and passed over every template."""
        totals = {kind: AlternativeStats() for kind in ALTERNATIVE_CLASSES}
        for t in self.templates:
            for kind, stats in t.alternatives.items():
                totals.setdefault(kind, AlternativeStats()).add(stats)
        return totals

    @property
    def majority_share(self) -> tuple[str, float]:
        """The template whose most frequent declaration has the largest share of seeds, and that share."""
        if not self.templates:
            return "-", 0.0
        worst = max(self.templates, key=lambda t: (t.majority_share, t.template_id))
        return worst.template_id, worst.majority_share

    def summary(self) -> str:
        """Plain-text report: one line per template, the attack classes, then each violation."""
        lines = [f"toolgym check {self.env}: {len(self.templates)} templates, {len(self.violations)} violations"]
        for t in self.templates:
            lines.append(
                f"  {t.template_id}: oracle {t.oracle}, noop {t.noop}, negatives {t.negatives}, attacks {t.attack_summary} "
                f"(max reward {t.worst_attack:.3f}), determinism {t.determinism}, distinct {t.distinct}/{len(t.seeds)}, "
                f"prior {t.prior_reward:.3f}, replays passed {t.replays_passed}, "
                f"hostile values {t.attacks['hostile_value'].generated if 'hostile_value' in t.attacks else 0}, "
                f"alternative paths {t.alternatives_summary}, majority {t.majority_share:.2f}, "
                f"guess {t.guess.best} {t.guess.reward:.3f} (share {t.guess.share:.2f})"
            )
        for kind, stats in self.attacks.items():
            lines.append(f"  attack {kind}: {stats.generated} generated, {stats.counted} counted, {stats.passed} pass, "
                         f"max reward {stats.max_reward:.3f}")
        for name, mean in self.constant_policies.items():
            lines.append(f"  constant policy {name}: mean reward {mean:.4f}")
        for kind, (mean, passed, played) in self.trained_policies.items():
            lines.append(f"  trained policy {kind}: mean reward {mean:.4f}, passed {passed}/{played}")
        for kind, stats in self.alternatives.items():
            lines.append(f"  alternative path {kind}: {stats.passed}/{stats.tried} passed")
        template, share = self.majority_share
        lines.append(f"  guessing attack: mean best reward {self.guess_mean:.4f} (limit {GUESS_LIMIT}); "
                     f"largest majority share {share:.2f} ({template})")
        lines += [f"  VIOLATION {v}" for v in self.violations]
        return "\n".join(lines)


def counterfactual_checks(template: TaskTemplate, report: TemplateCheck, instances: dict[int, SeedInstance]) -> None:
    """Distinct instances and varying declarations (graders/README.md, "Tasks where the world decides")."""
    seeds = len(report.seeds)
    report.distinct = len({instance_key(i.instance) for i in instances.values()})
    # environments whose answers declare no outcome have nothing to vary here
    declared = [declaration(i.final) for i in instances.values() if i.final is not None and declaration(i.final)[0] is not None]
    report.declarations = {}
    for outcome, code in declared:
        label = f"{outcome}:{code}" if code else str(outcome)
        report.declarations[label] = report.declarations.get(label, 0) + 1
    needed = distinct_required(seeds)
    if len(instances) == seeds and report.distinct < needed:
        report.violations.append(
            f"only {report.distinct} distinct instances over {seeds} seeds (needs {needed}): draw the facts that matter from the "
            "world per seed, planting seeded values where candidates are few"
        )
    if seeds >= 10 and len(declared) == seeds and len(report.declarations) == 1 and not template.one_sided:
        only = next(iter(report.declarations))
        report.violations.append(
            f"the correct declaration is {only!r} on every seed: let the world of each instance decide the outcome "
            "(graders.setup.case), or say why the template is inherently one-sided (TaskTemplate(one_sided=...))"
        )
    elif seeds >= 10 and len(declared) == seeds and report.majority_share > MAJORITY_LIMIT and not template.one_sided:
        label, count = max(report.declarations.items(), key=lambda kv: kv[1])
        report.violations.append(
            f"{label!r} is the correct declaration on {count} of {seeds} seeds (limit {MAJORITY_LIMIT:.0%}): balance the "
            "cases (graders.setup.case weights) so a policy that always declares the usual outcome is not paid"
        )


def assemble_report(env: str, results: list[TemplateCheck]) -> CheckReport:
    """The environment's report from its templates' checks: pools the constant policies' rewards over every
    task and seed, and adds a violation for each policy over :data:`CONSTANT_POLICY_LIMIT`."""
    report = CheckReport(env=env, templates=results)
    pooled: dict[str, list[float]] = {}
    for t in results:
        for name, rewards in t.constant_rewards.items():
            pooled.setdefault(name, []).extend(rewards)
    report.constant_policies = {name: sum(r) / len(r) for name, r in pooled.items() if r}
    for kind in (*PRIOR_CLASSES, *REPLAY_CLASSES):
        rewards = [r for t in results for r in t.trained.get(kind, [])]
        if rewards:
            passed = sum(t.trained_passed.get(kind, 0) for t in results)
            report.trained_policies[kind] = (sum(rewards) / len(rewards), passed, len(rewards))
    for kind, (mean, passed, played) in report.trained_policies.items():
        if kind in PRIOR_CLASSES and mean > PRIOR_LIMIT:
            worst = sorted(results, key=lambda t: -sum(t.trained.get(kind, [])))[:5]
            report.env_violations.append(
                f"trained policy {kind!r} averages a reward of {mean:.4f} (limit {PRIOR_LIMIT}): a policy that memorised the "
                f"other seeds is paid without reading; worst templates: "
                + ", ".join(f"{t.template_id} {sum(t.trained.get(kind, [])) / max(1, len(t.trained.get(kind, []))):.2f}" for t in worst)
            )
        if kind in REPLAY_CLASSES and passed > REPLAY_LIMIT * played:
            worst = sorted(results, key=lambda t: -t.trained_passed.get(kind, 0))[:5]
            report.env_violations.append(
                f"trained policy {kind!r} passes {passed}/{played} instances (limit {REPLAY_LIMIT:.0%}): another seed's oracle is "
                "paid here; worst templates: " + ", ".join(f"{t.template_id} {t.trained_passed.get(kind, 0)}" for t in worst)
            )
    guessed = [t.guess.reward for t in results if t.guess.best != "-"]
    report.guess_mean = sum(guessed) / len(guessed) if guessed else 0.0
    if report.guess_mean > GUESS_LIMIT:
        worst = sorted(results, key=lambda t: -t.guess.reward)[:5]
        report.env_violations.append(
            f"the guessing attack averages {report.guess_mean:.4f} over the templates (limit {GUESS_LIMIT}): declaring each "
            "template's best-paying outcome after habit reads is paid; balance the twins, spread refusals over reasons, keep "
            "deciding facts beyond habit reads; worst: " + ", ".join(f"{t.template_id} {t.guess.best} {t.guess.reward:.2f}" for t in worst)
        )
    for name, mean in report.constant_policies.items():
        if mean > CONSTANT_POLICY_LIMIT:
            report.env_violations.append(
                f"constant policy {name!r} averages a reward of {mean:.4f} over every task (limit {CONSTANT_POLICY_LIMIT}): "
                "some rubric pays for an answer that does not depend on the task"
            )
    return report
