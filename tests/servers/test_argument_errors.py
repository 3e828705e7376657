"""Arguments simple clients can send, and errors that say what to send instead (issue 19).

Every environment's money-typed argument given a JSON number names the decimal-string format; the answer
tool's ``values`` is a plain object (MCP Inspector 0.15 cannot fill an ``anyOf``) with the same meaning as
before: missing, ``{}`` and ``null`` all declare no values.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from servers import EpisodeManager
from servers.dispatch import call_tool
from servers.memory import connect_in_memory
from servers.registry import environment_names, load_environment

SAMPLE = "125.00"


def _effective(schema: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str):
        prop = schema["$defs"][ref.removeprefix("#/$defs/")]
    for option in prop.get("anyOf", ()):
        if option.get("type") != "null":
            return _effective(schema, option)
    return prop


def money_arguments(name: str) -> list[tuple[str, str]]:
    """(tool, argument) of every top-level argument typed as a decimal amount in environment ``name``."""
    environment = load_environment(name)
    found = []
    for tool, spec in sorted(environment.tool_specs.items()):
        schema = spec.arguments.model_json_schema()
        for argument, prop in schema.get("properties", {}).items():
            pattern = _effective(schema, prop).get("pattern")
            if pattern and re.search(pattern, SAMPLE) and not re.search(pattern, "ABC-001"):
                found.append((tool, argument))
    return found


@pytest.mark.parametrize("name", environment_names())
async def test_a_number_for_money_names_the_decimal_string_format(name: str) -> None:
    arguments = money_arguments(name)
    if name in ("finance", "support"):
        assert len(arguments) >= 3, arguments  # the sweep must find the amounts these environments take
    environment = load_environment(name)
    for tool, argument in arguments:
        episode = EpisodeManager(environment).create()
        event = await call_tool(episode, tool, {argument: 125})
        assert event.error is not None and event.error.code == "invalid_arguments"
        assert f'{argument} must be a decimal string such as "125.00"; got the number 125' in event.error.message, (tool, event.error.message)
        rounded = await call_tool(episode, tool, {argument: 12.345})
        assert rounded.error is not None
        # never a rounded figure the agent did not mean
        assert f'{argument} must be a decimal string such as "125.00"; got the number 12.345' in rounded.error.message


async def test_the_message_reaches_an_mcp_client() -> None:
    environment = load_environment("finance")
    episode = EpisodeManager(environment).create()
    async with connect_in_memory(episode) as client:
        result = await client.call_tool("search_transactions", {"min_amount": 125})
    assert result.is_error
    message = json.loads(result.content[0].text)["message"]  # type: ignore[union-attr]
    assert message == 'min_amount must be a decimal string such as "125.00"; got the number 125'



@pytest.mark.parametrize("name", environment_names())
def test_answer_values_is_a_plain_object_with_a_default(name: str) -> None:
    environment = load_environment(name)
    for spec in environment.tool_specs.values():
        if not spec.mark.answer:
            continue
        values = spec.input_schema["properties"]["values"]
        assert "anyOf" not in values and values["type"] == "object" and values["default"] == {}
        assert "values" not in spec.input_schema.get("required", [])


async def test_answer_values_missing_empty_or_null_mean_the_same() -> None:
    environment = load_environment("finance")
    episode = EpisodeManager(environment).create()
    async with connect_in_memory(episode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "anyOf" not in listed["submit_answer"].input_schema["properties"]["values"]
        for values in ({}, None, "missing"):
            arguments: dict[str, Any] = {"answer": "done", "outcome": "completed"}
            if values != "missing":
                arguments["values"] = values
            result = await client.call_tool("submit_answer", arguments)
            assert not result.is_error, result
            assert result.structured_content is not None and result.structured_content["value_names"] == []
        given = await client.call_tool("submit_answer", {"answer": "done", "outcome": "completed", "values": {"balance": "1.00"}})
        assert given.structured_content is not None and given.structured_content["value_names"] == ["balance"]
