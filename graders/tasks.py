"""The task format: templates build task instances (prompt, setup, oracle, rubric, negatives) from a world.

A task template is a plain function plus metadata. The function receives the freshly cloned world and a
seeded ``random.Random``; it applies the task's setup to the world directly (plant a duplicate charge,
freeze a card), reads the world to compute the oracle's calls and the rubric's expected values (never
hard-coded ids), and returns a :class:`TaskDraft`::

    def transfer_funds(world: World, rng: random.Random) -> TaskDraft:
        src, dst = rng.sample(world.query("SELECT id FROM accounts WHERE status = 'active'"), 2)
        return TaskDraft(
            prompt=f"Move 25.00 USD from account {src['id']} to {dst['id']}.",
            oracle=[call("transfer", from_account=src["id"], to_account=dst["id"], amount="25.00")],
            rubric=[ChangeSetMatch(ignore_columns={"transfers": ["id"]}, gate=True), NoCollateral()],
            negatives=[negative("wrong_amount", "moves 2.50", call("transfer", ..., amount="2.50"))],
            allowed_changes=[allow("accounts", src["id"], dst["id"], ops=["update"]), allow("transfers", ops=["insert"])],
        )

    TEMPLATES = [TaskTemplate(transfer_funds, difficulty="easy", category="payments", tools=["transfer"])]

``TaskTemplate.instantiate(world, seed)`` seeds the rng with ``f"{id}:{seed}"``, so the same (id, seed)
always yields the same instance and the same world hash. Everything in a :class:`TaskInstance` stays on the
server side: rubrics, oracles and expected values are never reachable over MCP.
"""

from __future__ import annotations

import inspect
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fixtures.errors import TaskError, ToolgymError
from fixtures.world import World
from graders.criteria import AllowedChange, Criterion
from graders.outcome import ExpectedOutcome

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = [
    "TaskRng",
    "ToolCall",
    "Negative",
    "TaskDraft",
    "TaskInstance",
    "TaskTemplate",
    "BuildFn",
    "Difficulty",
    "Split",
    "call",
    "optional_call",
    "answer_call",
    "refusal_call",
    "escalation_call",
    "negative",
]

Difficulty = Literal["easy", "medium", "hard"]
Split = Literal["train", "test"]
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,79}$")


class TaskRng(random.Random):
    """A task instance's rng: seeded by ``"<template>:<seed>"``, and knowing both (see ``graders.setup.case``)."""

    def __init__(self, template_id: str, seed: int) -> None:
        super().__init__(f"{template_id}:{seed}")
        self.template_id = template_id
        self.task_seed = seed
        self.cases_drawn = 0
        """How many ``case()`` draws this instance has made (each draw has its own offset)."""


class ToolCall(BaseModel):
    """One tool call of an oracle or a negative: the tool and its arguments as an agent would send them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    optional: bool = False
    """In an oracle: a step the task does not require (a look-around read, a note the policy allows but
    does not demand). ``toolgym check`` proves the declaration both ways: the oracle without an optional
    step still passes, and without any required step it fails."""


def call(tool: str, /, **arguments: Any) -> ToolCall:
    """Shorthand: ``call("transfer", from_account=3, amount="25.00")`` (a required step of an oracle)."""
    return ToolCall(tool=tool, arguments=arguments)


def optional_call(tool: str, /, **arguments: Any) -> ToolCall:
    """An oracle step the task does not require, e.g. ``optional_call("list_accounts", customer_id=c)``."""
    return ToolCall(tool=tool, arguments=arguments, optional=True)


ANSWER_TOOL = "submit_answer"
"""The kit's answer tool (``servers.answer.answer_tool``), whose final call an oracle ends with."""


def answer_call(text: str, **values: str) -> ToolCall:
    """The final answer declaring the task ``completed``, with the figures it asks for (``values``)."""
    arguments: dict[str, Any] = {"answer": text, "outcome": "completed"}
    if values:
        arguments["values"] = values
    return ToolCall(tool=ANSWER_TOOL, arguments=arguments)


def refusal_call(reason_code: str, text: str) -> ToolCall:
    """The final answer declaring the request ``refused`` under the policy rule ``reason_code``."""
    return ToolCall(tool=ANSWER_TOOL, arguments={"answer": text, "outcome": "refused", "reason_code": reason_code})


def escalation_call(reason_code: str, text: str) -> ToolCall:
    """The final answer declaring the request ``escalated`` under the policy rule ``reason_code``."""
    return ToolCall(tool=ANSWER_TOOL, arguments={"answer": text, "outcome": "escalated", "reason_code": reason_code})


class Negative(BaseModel):
    """A wrong or hacking trajectory that must fail the rubric (meta-evaluation plays it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str
    """What makes it wrong, e.g. "transfers without verifying identity"."""
    calls: list[ToolCall]


def negative(name: str, description: str, *calls: ToolCall) -> Negative:
    """Shorthand: ``negative("unverified", "wires without verifying", call("transfer", ...))``."""
    return Negative(name=name, description=description, calls=list(calls))


class TaskDraft(BaseModel):
    """What a template's build function returns: a task instance without its identity (template, seed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str = Field(min_length=1)
    """What the agent is asked to do (the only part of the task it sees)."""
    oracle: list[ToolCall] = Field(min_length=1)
    """The reference solution; it must earn a full score."""
    rubric: list[Criterion] = Field(min_length=1)
    """Weighted criteria; gates zero the score when they fail."""
    negatives: list[Negative] = Field(default_factory=list)
    outcome: ExpectedOutcome | None = None
    """What the final answer must declare (``completed()``, ``refused("code")``...); graded exactly, as a gate,
    and checked against the world (``graders/standard.py``). Required when the answer tool has an outcome."""
    noop_may_pass: bool = False
    """True only for tasks where doing nothing is correct (then the no-op is not required to fail)."""
    threshold: float = Field(default=1.0, gt=0.0, le=1.0)
    """Score needed to pass."""
    allowed_changes: list[AllowedChange] = Field(default_factory=list)
    """Changes this task allows beyond what its oracle does (which is always allowed, once per oracle
    effect); ``no collateral changes`` reports every other change."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping with the instance (JSON values)."""

    @model_validator(mode="after")
    def _unique_names(self) -> TaskDraft:
        seen: set[str] = set()
        for criterion in self.rubric:
            if criterion.label in seen:
                raise ValueError(f"two rubric criteria are named {criterion.label!r}; give them distinct name=...")
            seen.add(criterion.label)
        names = [n.name for n in self.negatives]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"negatives must have distinct names; repeated: {', '.join(duplicates)}")
        return self


class TaskInstance(TaskDraft):
    """A task instance: identified by (template id, seed); held by the episode, never shown over MCP."""

    template_id: str
    seed: int

    @property
    def tools_used(self) -> set[str]:
        """Tools the oracle and the negatives call."""
        return {c.tool for c in self.oracle} | {c.tool for n in self.negatives for c in n.calls}


BuildFn = Callable[[World, random.Random], "TaskDraft | dict[str, Any]"]


def _describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:4]:
        where = ".".join(str(p) for p in err["loc"]) or "(draft)"
        parts.append(f"field {where!r}: {err['msg']}")
    more = f" (+{exc.error_count() - 4} more)" if exc.error_count() > 4 else ""
    return "; ".join(parts) + more


@dataclass(frozen=True)
class TaskTemplate:
    """A parameterised task: metadata plus a build function ``(world, rng) -> TaskDraft``.

    Args:
        build: applies the setup to the world and returns the draft; its name is the default id.
        id: stable identifier (lower-case letters, digits, ``_ . -``); part of every record and grade.
        difficulty: ``easy`` | ``medium`` | ``hard``.
        category: a free-form family, e.g. ``payments``.
        split: ``train`` or ``test`` (keep evaluation tasks out of training).
        tags: free-form labels for filtering.
        tools: the tools the task needs (checked against the environment when templates load).
        description: one line for ``toolgym tasks``.
        one_sided: why the declaration never varies by seed, for a template that is inherently one-sided.

    Raises:
        TaskError: a malformed definition, naming the template and the field.
    """

    build: BuildFn
    id: str = ""
    difficulty: Difficulty = "medium"
    category: str = "general"
    split: Split = "train"
    tags: Sequence[str] = ()
    tools: Sequence[str] = ()
    description: str = ""
    one_sided: str = ""
    """Why this template's correct declaration (outcome and reason code) is the same on every seed, when it is
    inherently so (e.g. an injected instruction that must always be ignored). Empty, the default, means the
    world of each instance decides the outcome, and ``toolgym check`` requires the declaration to vary."""
    _expected: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _noop_satisfied: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Cache of the oracle's expected change set per (env, fixture version, seed, scale); see graders.expected."""

    def __post_init__(self) -> None:
        name = self.id or getattr(self.build, "__name__", "")
        set_ = object.__setattr__  # frozen: normalise once, at definition time
        set_(self, "id", name)
        label = f"task template {name!r}"
        if not isinstance(name, str) or not _ID.match(name):
            raise TaskError(f"{label}: field 'id' must match {_ID.pattern} (lower-case, digits, _ . -)")
        if not callable(self.build):
            raise TaskError(f"{label}: field 'build' must be a function (world, rng) -> TaskDraft")
        try:
            params = [
                p for p in inspect.signature(self.build).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            params = []
        if len(params) != 2:
            raise TaskError(f"{label}: field 'build' must take exactly (world, rng), it takes {len(params)} positional parameters")
        if self.difficulty not in ("easy", "medium", "hard"):
            raise TaskError(f"{label}: field 'difficulty' must be 'easy', 'medium' or 'hard', got {self.difficulty!r}")
        if self.split not in ("train", "test"):
            raise TaskError(f"{label}: field 'split' must be 'train' or 'test', got {self.split!r}")
        if not isinstance(self.category, str) or not self.category:
            raise TaskError(f"{label}: field 'category' must be a non-empty string, got {self.category!r}")
        if not isinstance(self.one_sided, str):
            raise TaskError(f"{label}: field 'one_sided' must be a string saying why the outcome never varies, got {self.one_sided!r}")
        for attr in ("tags", "tools"):
            value = getattr(self, attr)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise TaskError(f"{label}: field {attr!r} must be a list of non-empty strings, got {value!r}")
            set_(self, attr, tuple(value))

    def check_environment(self, environment: Environment) -> None:
        """Validate the template against its environment (called when the environment loads its templates).

        Raises:
            TaskError: ``tools`` names a tool the environment does not have.
        """
        known = environment.tool_specs
        unknown = [t for t in self.tools if t not in known]
        if unknown:
            raise TaskError(
                f"task template {self.id!r}: field 'tools' names unknown tool(s) {', '.join(map(repr, unknown))}; "
                f"environment {environment.name!r} has {', '.join(sorted(known))}"
            )

    def rng(self, seed: int) -> random.Random:
        """The template's rng for ``seed`` (string-seeded: stable across processes and Python versions); it knows
        its (template, seed), so ``graders.setup.case`` spreads the cases evenly over consecutive seeds."""
        return TaskRng(self.id, seed)

    def instantiate(self, world: World, seed: int) -> TaskInstance:
        """Apply the task's setup to ``world`` and return the instance for ``seed``.

        Raises:
            TaskError: the build function crashed or returned a malformed draft (the message names the field).
        """
        label = f"task template {self.id!r} (seed {seed})"
        # ids of rows created from here on (setup and agent alike) depend on the instance (fixtures/ids.py)
        world.id_salt = f"{self.id}:{seed}"
        try:
            draft = self.build(world, self.rng(seed))
        except ToolgymError:
            raise
        except ValidationError as exc:  # the draft's own constructor refused it: name the field
            raise TaskError(f"{label}: malformed task: {_describe_validation(exc)}") from None
        except Exception as exc:
            raise TaskError(f"{label}: build failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(draft, TaskDraft):
            data = {name: getattr(draft, name) for name in TaskDraft.model_fields}
        elif isinstance(draft, dict):
            data = dict(draft)
        else:
            raise TaskError(f"{label}: build must return a TaskDraft, got {type(draft).__name__}")
        try:
            return TaskInstance.model_validate({**data, "template_id": self.id, "seed": seed})
        except ValidationError as exc:
            raise TaskError(f"{label}: malformed task: {_describe_validation(exc)}") from None

    def summary(self) -> dict[str, Any]:
        """Metadata for listings (``toolgym tasks``)."""
        return {
            "id": self.id,
            "difficulty": self.difficulty,
            "category": self.category,
            "split": self.split,
            "tags": list(self.tags),
            "tools": list(self.tools),
            "description": self.description or (inspect.getdoc(self.build) or "").split("\n", 1)[0],
            "one_sided": self.one_sided,
        }
