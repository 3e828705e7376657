"""Declaring tools: typed async functions marked with ``@tool``, turned into specs once per environment.

A tool is ``async def name(ctx: ToolContext, arg: T, ...) -> R``. Its name comes from the function, its
description from the docstring (written for the agent, who reads it), its input schema from the type hints
of every parameter after ``ctx`` (pydantic ``Field``/``Annotated`` constraints included) and its output
schema from the return type. Nothing is hand-written JSON, so schemas cannot drift from the code.

A tool refuses an action by raising :class:`DomainError` with a code; the dispatcher rolls back whatever
the call wrote, so a refused action never leaves a partial write behind.
"""

from __future__ import annotations

import inspect
import typing
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from fixtures.world import FrozenClock, World
from servers.provenance import ResultPlan, Shown, result_plan, shown_rows

__all__ = ["tool", "ToolSpec", "ToolContext", "DomainError", "build_tool_spec", "describe_optional", "ToolMark"]

ToolFn = Callable[..., Awaitable[Any]]
F = TypeVar("F", bound=ToolFn)


class DomainError(Exception):
    """A business rule refused the action (e.g. insufficient funds); shown to the agent with its code.

    Args:
        code: a stable snake_case code graders and agents can match on, e.g. ``"insufficient_funds"``.
        message: one sentence for the agent saying what was refused and why.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ToolContext:
    """What a tool body can reach: its episode's world and clock, nothing else.

    A read-only tool's answer is remembered by the world's content (``servers/read_cache.py``), and a call can be
    taken over by a later episode that makes it on the same world (``servers/setups.py``), unless the tool looked
    at its episode's id or call number, or :meth:`reached_outside` (``personal``): those answers may differ.
    """

    __slots__ = ("world", "_episode_id", "_call_seq", "personal")

    def __init__(self, world: World, episode_id: str, call_seq: int = 0) -> None:
        self.world = world
        self._episode_id = episode_id
        self._call_seq = call_seq
        self.personal = False
        """Whether the tool read ``episode_id`` or ``call_seq``."""

    @property
    def episode_id(self) -> str:
        """The episode's id."""
        self.personal = True
        return self._episode_id

    @property
    def call_seq(self) -> int:
        """This call's number in the episode (1-based)."""
        self.personal = True
        return self._call_seq

    @property
    def clock(self) -> FrozenClock:
        """The world's frozen clock."""
        return self.world.clock

    def reached_outside(self) -> None:
        """Say that this call's answer depends on something besides the world and the arguments (a model wrote it):
        it is never remembered or taken over by another episode."""
        self.personal = True


@dataclass(frozen=True)
class ToolMark:
    """What ``@tool`` attaches to a function; read by :func:`build_tool_spec`."""

    mutates: bool
    destructive: bool
    answer: bool
    title: str | None
    process: bool = False
    escalation: bool = False
    pure: bool | Callable[[], bool] = True

    def is_pure(self) -> bool:
        """``pure`` as it stands now (a callable is asked at each call)."""
        return self.pure if isinstance(self.pure, bool) else bool(self.pure())


def tool(*, mutates: bool = False, destructive: bool = False, answer: bool = False, title: str | None = None,
         process: bool = False, escalation: bool = False, pure: bool | Callable[[], bool] = True) -> Callable[[F], F]:
    """Mark an async function as a tool of an environment.

    Args:
        mutates: the tool may write to the world (readOnlyHint is its negation).
        destructive: its writes can destroy or move value irreversibly (destructiveHint).
        answer: this is the environment's answer tool; graders read the agent's answer from its calls.
        title: a human-readable title for clients that show one.
        process: its writes are process records the policy requires or permits (a passed identity check), not
            the work: a successful call repeated is harmless, and its rows are the environment's bookkeeping
            (``Environment.bookkeeping_rows``), never an effect.
        escalation: it hands the case to another team (escalate an alert, a ticket; page the on-call): the
            final answer of an episode that escalates declares ``escalated`` (the outcome rule every policy
            states; ``toolgym check`` lints templates against it).
        pure: its answer and effects are a function of the world (rows, frozen clock) and the arguments — what
            every tool should be. The kit then remembers a read's answer by the world's content
            (``servers/read_cache.py``) and continues an episode from another's world after calls both made
            (``servers/setups.py``). False for a tool whose answer depends on anything else (a counter in the
            process, the machine's time, a delay it must really take); a tool that only sometimes reaches
            outside the world calls :meth:`ToolContext.reached_outside`, or gives a function saying whether it is
            pure now (counterpart tools: ``CustomerVoice.scripted``, false while a model words their answers).
    """

    def mark(fn: F) -> F:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__!r} must be 'async def' (tools run on the event loop)")
        fn.__toolgym_tool__ = ToolMark(mutates=mutates, destructive=destructive, answer=answer, title=title, process=process,
                                       escalation=escalation, pure=pure)  # type: ignore[attr-defined]
        return fn

    return mark


_SHOWN: OrderedDict[tuple[int, int], tuple[Any, Shown]] = OrderedDict()
"""(tool spec, result) object ids → (the result, what it showed); the result is held so its id stays its own."""
_SHOWN_LIMIT = 2048


@dataclass(frozen=True)
class ToolSpec:
    """A tool with its schemas built: what the MCP layer lists and the dispatcher validates against."""

    name: str
    description: str
    fn: ToolFn
    arguments: type[BaseModel]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wraps_result: bool
    """True when the return type is not a model and is wrapped as ``{"result": value}``."""
    result_adapter: TypeAdapter[Any]
    mark: ToolMark
    parameter_names: tuple[str, ...] = field(default=())

    def dump_result(self, value: Any) -> dict[str, Any]:
        """The structured content for a return value (JSON-compatible dict)."""
        dumped = self.result_adapter.dump_python(value, mode="json")
        return {"result": dumped} if self.wraps_result else dumped

    @cached_property
    def result_plan(self) -> ResultPlan:
        """Where the rows this tool's results show sit in them (``servers/provenance.py``), built once."""
        return result_plan(self)

    def shown(self, result: Any) -> Shown:
        """The rows and fields a successful call's recorded ``result`` showed the agent (read provenance).

        Remembered per result object (the last few thousand): an event's result is walked once, however many
        grades read it (``toolgym check`` grades the events of a shared prefix in every episode it starts).
        """
        key = (id(self), id(result))
        entry = _SHOWN.get(key)
        if entry is not None and entry[0] is result:
            return entry[1]
        shown = shown_rows(self.result_plan, result)
        _SHOWN[key] = (result, shown)
        if len(_SHOWN) > _SHOWN_LIMIT:
            _SHOWN.popitem(last=False)
        return shown


def describe_optional(schema: dict[str, Any]) -> dict[str, Any]:
    """Give every optional parameter its description at the top of its property, not only inside ``anyOf``.

    pydantic writes ``account_id: AccountId | None = None`` as ``{"anyOf": [{"description": ..., "pattern": ...},
    {"type": "null"}]}``: the description sits in the non-null branch (or in the ``$defs`` entry it refers
    to), where clients that read a property's own ``description`` (most agents' tool lists) never look.
    Copied up (with ``examples``), it is read by both kinds; the branch keeps its copy. Returns ``schema``.
    """
    definitions = schema.get("$defs", {})
    for prop in schema.get("properties", {}).values():
        branches = prop.get("anyOf") if isinstance(prop, dict) else None
        if not isinstance(branches, list) or "description" in prop:
            continue
        for branch in branches:
            if not isinstance(branch, dict) or branch.get("type") == "null":
                continue
            ref = branch.get("$ref", "")
            source = branch
            if "description" not in branch and ref.startswith("#/$defs/"):
                source = definitions.get(ref.rsplit("/", 1)[-1], {})  # the referenced model's own docstring
            if "description" in source:
                prop["description"] = source["description"]
                if "examples" in source and "examples" not in prop:
                    prop["examples"] = source["examples"]
                break
    return schema


def build_tool_spec(fn: ToolFn) -> ToolSpec:
    """Build the spec of one ``@tool`` function (pydantic schema generation: do this once per process).

    Raises:
        TypeError: the function is not marked, lacks a ``ctx`` first parameter, or has an unannotated one.
    """
    mark: ToolMark | None = getattr(fn, "__toolgym_tool__", None)
    if mark is None:
        raise TypeError(f"{fn.__qualname__} is not marked with @tool")
    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].name != "ctx":
        raise TypeError(f"tool {fn.__name__!r}: first parameter must be 'ctx: ToolContext'")
    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.name not in hints:
            raise TypeError(f"tool {fn.__name__!r}: parameter {param.name!r} needs a type annotation")
        default = param.default if param.default is not inspect.Parameter.empty else ...
        if isinstance(default, FieldInfo):
            fields[param.name] = (hints[param.name], default)
        else:
            fields[param.name] = (hints[param.name], default)
    arguments = create_model(
        f"{fn.__name__}_arguments",
        __config__=ConfigDict(extra="forbid", str_strip_whitespace=False),
        **fields,
    )
    returns = hints.get("return", Any)
    wraps = not (inspect.isclass(returns) and issubclass(returns, BaseModel))
    adapter: TypeAdapter[Any] = TypeAdapter(returns)
    if wraps:
        output_schema = {"type": "object", "properties": {"result": adapter.json_schema()}, "required": ["result"]}
    else:
        output_schema = adapter.json_schema()
    input_schema = describe_optional(arguments.model_json_schema())
    input_schema.pop("title", None)
    description = inspect.cleandoc(fn.__doc__ or "").strip()
    if not description:
        raise TypeError(f"tool {fn.__name__!r} needs a docstring: it is the description the agent reads")
    return ToolSpec(
        name=fn.__name__,
        description=description,
        fn=fn,
        arguments=arguments,
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_result=wraps,
        result_adapter=adapter,
        mark=mark,
        parameter_names=tuple(p.name for p in params[1:]),
    )
