"""What a player types, parsed against the tools an agent sees, and a tool's schema in words (``help TOOL``)."""

from __future__ import annotations

import pytest

from clients.play.lines import PlayInputError, incomplete_json, parse_line
from clients.play.schema_text import arguments_of
from servers.mcp_server import mcp_tools
from servers.registry import load_environment
from tests.toy_env import environment as toy

TOOLS = {tool.name: tool for tool in mcp_tools(toy)}


@pytest.mark.parametrize(
    ("line", "kind", "tool", "arguments"),
    [
        ("", "empty", "", {}),
        ("   # a note to self", "empty", "", {}),
        ("tools", "tools", "", {}),
        ("help", "help", "", {}),
        ("help transfer", "help", "transfer", {}),
        ("exit", "quit", "", {}),
        ("list_accounts", "call", "list_accounts", {}),
        ("list_accounts {}", "call", "list_accounts", {}),
        ('get_account   {"account_id": "acc-001"}  ', "call", "get_account", {"account_id": "acc-001"}),
        ('get_account\n{"account_id":\n "acc-002"}', "call", "get_account", {"account_id": "acc-002"}),  # pasted over lines
        ('call get_account {"account_id": "acc-003"}', "call", "get_account", {"account_id": "acc-003"}),
    ],
)
def test_lines_that_play(line: str, kind: str, tool: str, arguments: dict[str, str]) -> None:
    command = parse_line(line, TOOLS)
    assert (command.kind, command.tool, command.arguments) == (kind, tool, arguments)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("get_acount {}", "no tool or command 'get_acount' (did you mean get_account?)"),
        ("get_account {'account_id': 'acc-001'}", "the arguments are not valid JSON"),
        ('get_account "acc-001"', "must be a JSON object"),
        ("get_account " + "[" * 5000 + "]" * 5000, "the arguments nest too deeply"),
        ("get_account", "'account_id' is a required property"),
        ('get_account {"account_id": "ACC-1"}', "account_id: 'ACC-1' does not match"),
        ('get_account {"account_id": 7}', "account_id: 7 is not of type 'string'"),
        ('transfer {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00", "note": "x"}', "'note' was unexpected"),
        ("submit_answer {\"text\": \"" + "x" * 5000 + "\"}", "is too long"),
        ("policy please", "`policy` takes no arguments"),
        ("help nosuch", "no tool named 'nosuch'"),
        ("x" * 10_000, "no tool or command 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…(10000 characters)'"),
    ],
)
def test_lines_that_do_not_play_say_why_in_one_line(line: str, message: str) -> None:
    with pytest.raises(PlayInputError) as raised:
        parse_line(line, TOOLS)
    text = str(raised.value)
    assert message in text and "\n" not in text and len(text) < 600


def test_an_object_cut_short_waits_for_more_lines() -> None:
    assert incomplete_json('{"a": ')
    assert incomplete_json('{"a": [1,\n 2')
    assert not incomplete_json('{"a": 1}')
    assert not incomplete_json('{"a": 1}}')  # an error before the end: more lines would not help
    assert not incomplete_json("")


def test_help_reads_arguments_from_the_schema_an_agent_sees() -> None:
    finance = {tool.name: tool for tool in mcp_tools(load_environment("finance"))}
    answer = {a.name: a for a in arguments_of(finance["submit_answer"].input_schema)}
    assert [a.name for a in arguments_of(finance["submit_answer"].input_schema)][:2] == ["answer", "outcome"]  # required first
    assert answer["outcome"].required and answer["outcome"].type == "one of: completed, refused, escalated"
    assert not answer["reason_code"].required and "not_pending" in answer["reason_code"].type
    assert answer["values"].type == "object of name → string" and answer["values"].default == "{}"
    search = {a.name: a for a in arguments_of(finance["search_transactions"].input_schema)}
    assert search["limit"].type == "integer" and "≤ 100" in search["limit"].constraints
    assert search["account_id"].constraints.startswith("pattern ^ACC-[0-9]{6}$") and "e.g. ACC-100231" in search["account_id"].constraints
    assert search["date_from"].constraints == "format date" and search["date_from"].description == "A date as YYYY-MM-DD"
