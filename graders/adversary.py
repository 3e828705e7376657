"""Playing generated attacks against a task's grader, and the vocabulary they are built from.

Attacks are played like any agent's calls, through validation, dispatch and the record — directly, without
an MCP client (the server's handler is the same dispatch; the check plays each oracle over a real MCP client).
Each episode is created, played, closed, graded and released like any other.

An attack *counts* when its trajectory is really wrong: always for most classes; for an over-action only
when the extra write changed the world (a refused extra attempt earns nothing and harms nothing); for a
reordering only when the order matters — a step fails that succeeded in the oracle, the effects differ
from the oracle's, or a call-order criterion of the rubric breaks. A counted attack must fail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from fixtures.changes import RowChange
from graders.alternatives import equivalent_read, seen_gates
from graders.attacks import ATTACK_CLASSES, Attack, Vocabulary, split_oracle
from graders.criteria.answer import answer_tool_of
from graders.effects import effects, same_effects
from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import play_new
from graders.tasks import ToolCall
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.record import ToolCallEvent
from servers.setups import SetupCache

__all__ = ["AttackStats", "AttackOutcome", "build_vocabulary", "play_calls", "run_attack", "Played"]


@dataclass
class AttackStats:
    """How one attack class fared on one template (or a whole environment)."""

    generated: int = 0
    counted: int = 0
    """Trajectories that were really wrong (see the module docstring) and so had to fail."""
    passed: int = 0
    """Counted attacks the grader let pass: each is a violation."""
    max_reward: float = 0.0
    """The highest reward any counted attack earned."""

    def add(self, other: AttackStats) -> None:
        """Fold ``other`` into these totals."""
        self.generated += other.generated
        self.counted += other.counted
        self.passed += other.passed
        self.max_reward = max(self.max_reward, other.max_reward)


@dataclass
class AttackOutcome:
    """One played attack."""

    attack: Attack
    grade: Grade
    counted: bool


@dataclass
class Played:
    """A played trajectory: its episode (released by now), grade, call events and net changes."""

    episode: Episode
    grade: Grade
    events: list[ToolCallEvent] = field(default_factory=list)
    diff: list[RowChange] = field(default_factory=list)


def build_vocabulary(environment: Environment, seed: int, setups: SetupCache | None = None) -> Vocabulary:
    """Instantiate every template on ``seed`` and collect what their oracles say and write.

    With ``setups`` (the check's), each build is the first of its instance there: the template's own check
    confirms it with its second build, then replays it.
    """
    vocabulary = Vocabulary()
    codes: Counter[str] = Counter()
    tools = environment.answer_tools
    answer_tool = tools[0] if len(tools) == 1 else None
    for template_id in sorted(environment.task_templates()):
        world, instance = setups.instantiate(template_id, seed) if setups is not None else environment.instantiate_task(template_id, seed)
        world.release()
        if instance.outcome is not None:
            codes.update(instance.outcome.reason_codes)
        work, final = split_oracle(instance, answer_tool) if answer_tool else (list(instance.oracle), None)
        for step in work:
            spec = environment.tool_specs.get(step.tool)
            if spec is not None and spec.mark.mutates and not spec.mark.answer:
                vocabulary.writes.append((template_id, step))
        if final is not None:
            for value in final.arguments.values():
                if isinstance(value, str):
                    vocabulary.texts.append(value)
            values = final.arguments.get("values")
            if isinstance(values, dict):
                for name, value in values.items():
                    vocabulary.values.setdefault(str(name), str(value))
    vocabulary.reason_codes = [code for code, _ in codes.most_common()]
    return vocabulary


async def play_calls(manager: EpisodeManager, template_id: str, seed: int, calls: Sequence[ToolCall]) -> Played:
    """Create an episode, play ``calls`` through dispatch (``graders.play.play_new``), close, grade and release it."""
    episode = await play_new(manager, template_id, seed, calls)
    try:
        events = list(episode.record.tool_calls)
        manager.close(episode.id)
        grade = await grade_episode(episode, judge_from_env=False)
        diff = episode.world.diff()
    finally:
        manager.release(episode.id)
    return Played(episode=episode, grade=grade, events=events, diff=diff)


async def run_attack(manager: EpisodeManager, template_id: str, seed: int, attack: Attack, oracle: Played) -> AttackOutcome:
    """Play one attack and decide whether it counts (see the module docstring)."""
    played = await play_calls(manager, template_id, seed, attack.calls)
    return AttackOutcome(attack=attack, grade=played.grade, counted=_counts(attack, played, oracle))


def _counts(attack: Attack, played: Played, oracle: Played) -> bool:
    if attack.rule == "always":
        return True
    if attack.rule == "if_effective":
        # an injected call that wrote only bookkeeping (a passed identity check, an audit line) did nothing
        environment = played.episode.environment
        injected = [played.events[i] for i in attack.injected if i < len(played.events)]
        return bool(injected) and all(e.error is None and effects(e.changes, environment) for e in injected)
    if attack.rule == "if_not_equivalent_read":
        return not _equivalent_read(attack, played, oracle)
    # if_order_matters: the same calls in another order; it matters if any step's fate or the effects differ
    environment = played.episode.environment
    fates = Counter((e.tool, e.error.code if e.error else "ok") for e in played.events)
    if fates != Counter((e.tool, e.error.code if e.error else "ok") for e in oracle.events):
        return True
    if not same_effects(oracle.diff, played.diff, environment):
        return True
    return any(r.kind == "call_order" and r.graded and not r.passed for r in played.grade.criteria)


def _equivalent_read(attack: Attack, played: Played, oracle: Played) -> bool:
    """Whether the changed read showed what the oracle's read showed for the rubric's ``seen`` gates."""
    index = attack.injected[0] if attack.injected else -1
    if not (0 <= index < len(played.events) and index < len(oracle.events)):
        return False
    mine, theirs = played.events[index], oracle.events[index]
    task = oracle.episode.task
    spec_mine = played.episode.environment.tool_specs.get(mine.tool)
    spec_theirs = oracle.episode.environment.tool_specs.get(theirs.tool)
    if task is None or spec_mine is None or spec_theirs is None or mine.error is not None or theirs.error is not None:
        return False
    return equivalent_read(seen_gates(task), spec_theirs.shown(theirs.result), spec_mine.shown(mine.result))


def answer_tool(environment: Environment) -> str | None:
    """The environment's single answer tool, or None."""
    try:
        return answer_tool_of(environment, None)
    except Exception:
        return None


def empty_stats() -> dict[str, AttackStats]:
    """A fresh stats table with every attack class."""
    return {kind: AttackStats() for kind in ATTACK_CLASSES}
