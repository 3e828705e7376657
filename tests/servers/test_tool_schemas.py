"""Tool input schemas as clients read them (issue 28): an optional parameter carries its description at the top of
its property, not only inside ``anyOf`` where clients reading a property's own description never look."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from servers.mcp_server import mcp_tools
from servers.registry import load_environment
from servers.tools import ToolContext, build_tool_spec, tool


def _undescribed(schema: dict[str, Any]) -> list[str]:
    """Optional properties whose description sits only inside their ``anyOf``."""
    return [
        name for name, prop in schema.get("properties", {}).items()
        if "anyOf" in prop and "description" not in prop and any("description" in branch for branch in prop["anyOf"])
    ]


@pytest.mark.parametrize("env", ["finance", "support", "workspace"])
def test_every_optional_parameter_is_described_at_the_top(env: str) -> None:
    tools = mcp_tools(load_environment(env))
    missing = {t.name: _undescribed(t.input_schema) for t in tools if _undescribed(t.input_schema)}
    assert missing == {}


class Window(BaseModel):
    """A window of days."""

    days: int


def test_a_tool_built_anywhere_gets_it_refs_included() -> None:
    """Where schemas are built (``build_tool_spec``), so hand-written and generated environments alike get it."""

    @tool()
    async def search(
        ctx: ToolContext,
        account_id: Annotated[str, Field(description="ACC id, e.g. ACC-100231", examples=["ACC-100231"])] | None = None,
        status: Annotated[Literal["open", "closed"], Field(description="Only accounts in this status")] | None = None,
        window: Annotated[Window, Field(description="How far back to look")] | None = None,
        given: Annotated[str | None, Field(description="Described by its author already")] = None,
    ) -> str:
        """Search accounts."""
        return ""

    properties = build_tool_spec(search).input_schema["properties"]
    assert properties["account_id"]["description"] == "ACC id, e.g. ACC-100231"
    assert properties["account_id"]["examples"] == ["ACC-100231"]
    assert properties["status"]["description"] == "Only accounts in this status"
    assert properties["window"]["description"] == "How far back to look"
    assert properties["given"]["description"] == "Described by its author already"
    assert all("anyOf" in properties[name] for name in ("account_id", "status", "window"))  # the branches stay as they were
