"""An environment, declared: its fixture, its tools, its resources and where its task templates live.

Each ``envs/<name>/__init__.py`` exposes ``environment = Environment(...)``. Tool specs (the expensive
pydantic part) are built on first use and then shared by every episode of the process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.fixture import Fixture
from servers.provenance import environment_facts
from servers.tools import ToolFn, ToolSpec, build_tool_spec

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance, TaskTemplate

__all__ = ["Environment", "ResourceSpec"]


@dataclass(frozen=True)
class ResourceSpec:
    """A read-only document the agent may read over MCP (e.g. the policy)."""

    uri: str
    name: str
    description: str
    path: Path
    mime_type: str = "text/markdown"

    def read(self) -> str:
        """The document's text."""
        return self.path.read_text(encoding="utf-8")


@dataclass(eq=False)
class Environment:
    """One domain: a fixture, typed tools acting on its worlds, resources, and task templates."""

    name: str
    description: str
    fixture: Fixture
    tools: Sequence[ToolFn]
    resources: Sequence[ResourceSpec] = ()
    tasks_module: str | None = None
    """Dotted module whose ``TEMPLATES`` list holds the task templates; imported only when needed."""
    instructions: str = ""
    """Server instructions shown to MCP clients (how to use this environment)."""
    task_fixture_seed: int = 0
    """Fixture seed every task episode is cloned from; the task seed then drives the task's own rng."""
    version: str = "1"
    volatile_columns: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Table → columns whose values do not say what an action did: ids the world generates (``transfer_id``
    of a new transfer, references derived from it) and free text the agent words itself (memos, reasons,
    note bodies). Graders compare an episode's effects with the oracle's without them, so an agent that
    words a memo differently or creates rows in another order does the same thing as the oracle."""
    bookkeeping_tables: Sequence[str] = ()
    """Tables whose inserts only record other changes (an audit log): never effects, never collateral."""
    bookkeeping_rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Table → column values of inserts that are process the policy requires or permits (a passed identity
    check: ``{"verifications": {"outcome": "passed"}}``): never effects, so verifying before sharing, or twice,
    is never collateral. Other inserts into the table (a failed check, which counts toward a lock-out) stay
    effects."""
    currency: str | None = None
    """The currency every amount is in when the environment has one (a shop in US dollars): a figure the agent
    labels with another currency fails, whatever the oracle's answer says (None: each figure's own, as the
    oracle gives it)."""
    timeline: Mapping[str, str] = field(default_factory=dict)
    """Table → the column saying when a row came to be or happened (``cards: issued_on``): ``toolgym check`` lints
    that a task's planted rows never happen before the rows they reference (``graders/consistency.py``)."""
    persona_topics: Sequence[str] = ()
    """Topics any counterpart of this environment can speak to (what they would like, why they called): a task's
    counterpart must answer each with a fact or a line that fits, never the generic fallback (``toolgym check``)."""
    consistency: Callable[[World, TaskInstance], Sequence[str]] | None = None
    """Domain checks of one instance's world after its setup (e.g. a date the prompt names against its record),
    each problem a sentence; ``toolgym check`` reports them as violations."""
    _templates: dict[str, TaskTemplate] | None = field(default=None, repr=False)

    @cached_property
    def tool_specs(self) -> dict[str, ToolSpec]:
        """Specs of every tool by name, built once per process."""
        specs: dict[str, ToolSpec] = {}
        for fn in self.tools:
            spec = build_tool_spec(fn)
            if spec.name in specs:
                raise TypeError(f"environment {self.name!r}: two tools are named {spec.name!r}")
            specs[spec.name] = spec
        return specs

    @cached_property
    def facts(self) -> dict[str, frozenset[str]]:
        """Every fact (field of a row) some tool can show, by table: what a read gate may name."""
        return environment_facts(self.tool_specs.values())

    @property
    def answer_tools(self) -> list[str]:
        """Names of the tools through which the agent gives its answer."""
        return [s.name for s in self.tool_specs.values() if s.mark.answer]

    def answer_choices(self, field_name: str) -> tuple[str, ...]:
        """The values the answer tool's ``field_name`` argument accepts (its ``Literal``), or ``()``.

        Why: the declared outcomes (``outcome``) and the policy's reason codes (``reason_code``) are the
        answer tool's own type hints, so the schema the agent reads and the codes graders accept can never
        drift apart.
        """
        tools = self.answer_tools
        if len(tools) != 1:
            return ()
        schema = self.tool_specs[tools[0]].input_schema
        prop = schema.get("properties", {}).get(field_name)
        if prop is None:
            return ()
        options = [prop, *prop.get("anyOf", [])]
        for option in options:
            ref = option.get("$ref", "")
            if ref.startswith("#/$defs/"):
                option = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
            if "enum" in option:
                return tuple(str(v) for v in option["enum"])
            if "const" in option:  # a Literal of one value (a policy with a single reason code) is a const, not an enum
                return (str(option["const"]),)
        return ()

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcomes a final answer may declare (``outcome`` of the answer tool), e.g. completed/refused."""
        return self.answer_choices("outcome")

    @property
    def reason_codes(self) -> tuple[str, ...]:
        """The policy's reason codes a final answer may give (``reason_code`` of the answer tool)."""
        return self.answer_choices("reason_code")

    def resource(self, uri: str) -> ResourceSpec | None:
        """The resource with ``uri``, if any."""
        return next((r for r in self.resources if r.uri == uri), None)

    def task_templates(self) -> dict[str, TaskTemplate]:
        """Every task template of the environment by id (imports the tasks module on first call)."""
        if self._templates is None:
            templates: dict[str, Any] = {}
            if self.tasks_module:
                module = importlib.import_module(self.tasks_module)
                for template in getattr(module, "TEMPLATES", []):
                    if template.id in templates:
                        raise TaskError(f"environment {self.name!r}: duplicate task template id {template.id!r}")
                    templates[template.id] = template
            for template in templates.values():
                check = getattr(template, "check_environment", None)
                if check is not None:
                    check(self)  # e.g. graders.tasks.TaskTemplate: its declared tools must exist here
            self._templates = templates
        return self._templates

    def with_templates(self, templates: Sequence[TaskTemplate], *, name: str | None = None) -> Environment:
        """A copy of this environment whose task templates are exactly ``templates`` (tests, experiments).

        Raises:
            TaskError: two templates share an id, or one fails its check against this environment.
        """
        by_id: dict[str, Any] = {}
        for template in templates:
            if template.id in by_id:
                raise TaskError(f"environment {self.name!r}: duplicate task template id {template.id!r}")
            by_id[template.id] = template
        copy = Environment(
            name=name or self.name,
            description=self.description,
            fixture=self.fixture,
            tools=self.tools,
            resources=self.resources,
            tasks_module=None,
            instructions=self.instructions,
            task_fixture_seed=self.task_fixture_seed,
            version=self.version,
            volatile_columns=self.volatile_columns,
            bookkeeping_tables=self.bookkeeping_tables,
            bookkeeping_rows=self.bookkeeping_rows,
            currency=self.currency,
            timeline=self.timeline,
            persona_topics=self.persona_topics,
            consistency=self.consistency,
        )
        for template in by_id.values():
            check = getattr(template, "check_environment", None)
            if check is not None:
                check(copy)
        copy._templates = by_id
        return copy

    def task_template(self, template_id: str) -> TaskTemplate:
        """The template with ``template_id``.

        Raises:
            TaskError: no such template; the message lists a few that exist.
        """
        templates = self.task_templates()
        try:
            return templates[template_id]
        except (KeyError, TypeError):
            known = ", ".join(sorted(templates)[:8]) or "none"
            raise TaskError(
                f"environment {self.name!r} has no task template {_shorten(template_id)!r} (known: {known}"
                f"{', ...' if len(templates) > 8 else ''}); `toolgym tasks {self.name}` lists them"
            ) from None

    def new_world(self, seed: int) -> World:
        """A fresh world for free play on fixture seed ``seed``."""
        return self.fixture.world(seed)

    def instantiate_task(self, template_id: str, seed: int) -> tuple[World, TaskInstance]:
        """A fresh world with the task's setup applied, and the task instance (prompt, oracle, rubric...)."""
        template = self.task_template(template_id)
        world = self.fixture.world(self.task_fixture_seed)
        try:
            instance = template.instantiate(world, seed)
        except BaseException:
            world.release()
            raise
        return world, instance


def _shorten(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters: an error must never echo a request's whole payload back."""
    text = str(text)
    return text if len(text) <= limit else f"{text[: limit - 20]}…({len(text)} characters)"
