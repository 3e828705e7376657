"""Blame at its edges (issue 19), each reproduced with a scripted provider over real local HTTP, through the runner.

- A 400 is the model's only when it is about what the model produced: a refused key after a model fault is
  the provider's, and repaired call ids are never held against the model.
- A tool name no provider takes back (``functions.get_account``) is the model's output: sent back as a
  function name, graded, never errored.
- Arguments that are not text or not strict JSON (a lone surrogate, NaN) are the model's malformed output:
  rejected, recorded, graded, on every transport; no value crashes a record or a request.
- A context overflow on an episode's first request is the run's configuration: errored, not re-run, with
  what to change.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from clients.agents._provider import about_model_output
from clients.agents.base import Limits
from clients.agents.openai import OpenAIAgent
from clients.runner import RunConfig, run
from servers.http import running_http
from servers.record import MessageEvent, RejectedCallEvent
from tests.clients.fake_provider import (
    Reply,
    anthropic_error,
    openai_error,
    openai_message,
    running_provider,
    validate_anthropic,
    validate_openai,
)
from tests.clients.llm_scenarios import ACCOUNT, Outcome, Protocol, RecordingSleep, run_llm, solution, tool_turn
from tests.clients.toyenv import environment

PROTOCOLS: list[Protocol] = ["openai", "anthropic"]
KEY_NOT_VALID = "API key not valid. Please pass a valid API key."
"""How an OpenAI-compatible gateway (Google's) answers a revoked key: HTTP 400, not 401."""


def _error(protocol: Protocol, message: str, code: str | None = None) -> dict[str, Any]:
    return openai_error(message, code=code) if protocol == "openai" else anthropic_error(message)


def _args(protocol: Protocol, value: dict[str, Any]) -> Any:
    return json.dumps(value) if protocol == "openai" else value


_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def validate_names(protocol: Protocol) -> Any:
    """A provider that also checks the function names sent back, in OpenAI's and Anthropic's wording."""
    base = validate_openai if protocol == "openai" else validate_anthropic

    def validate(body: Any) -> str | None:
        for index, message in enumerate(body.get("messages", [])):
            if protocol == "openai":
                names = [c.get("function", {}).get("name") for c in message.get("tool_calls") or []]
            else:
                content = message.get("content")
                names = [b.get("name") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] if isinstance(content, list) else []
            for position, name in enumerate(names):
                if isinstance(name, str) and not _NAME.match(name):
                    return (
                        f"Invalid 'messages[{index}].tool_calls[{position}].function.name': string does not match pattern. "
                        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                    )
        return base(body)

    return validate


def _consistent(outcome: Outcome) -> None:
    """The results line counts exactly the calls the record holds."""
    record = outcome.record
    line = outcome.line
    assert line.tool_calls == len(record.tool_calls) + len(record.rejected_calls)
    assert line.rejected_calls == len(record.rejected_calls)


# -- a 400 is the model's only when it is about what the model produced --------------------------------------


FAULTS = {
    "duplicate id": lambda p: [("dup", "get_account", _args(p, {"account_id": ACCOUNT})), ("dup", "list_accounts", _args(p, {}))],
    "missing id": lambda p: [(None, "get_account", _args(p, {"account_id": ACCOUNT}))],
    "non-JSON arguments": lambda p: [("c1", "get_account", '{"account_id": ' if p == "openai" else ACCOUNT)],
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_refused_key_after_a_model_fault_is_the_providers(tmp_path: Path, protocol: Protocol, fault: str) -> None:
    script = [tool_turn(protocol, FAULTS[fault](protocol)), Reply(_error(protocol, KEY_NOT_VALID), status=400)] * 3
    outcome = await run_llm(tmp_path / "run", script, protocol, retries=2)
    line = outcome.line
    assert (line.status, line.error_class, line.stop_reason, line.attempts) == ("errored", "provider", None, 1)
    assert KEY_NOT_VALID in (line.error or "")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_repaired_call_ids_are_never_held_against_the_model(tmp_path: Path, protocol: Protocol) -> None:
    """Even a refusal naming the conversation's tool calls: ids are the serving stack's, the model wrote none."""
    refusal = Reply(_error(protocol, "messages.1.tool_calls.0: invalid tool call"), status=400)
    outcome = await run_llm(tmp_path / "run", [tool_turn(protocol, FAULTS["duplicate id"](protocol)), refusal], protocol)
    assert (outcome.line.status, outcome.line.error_class) == ("errored", "provider")


@pytest.mark.parametrize(
    ("message", "model"),
    [
        ("messages.1.content.0: invalid tool call", True),
        ("Invalid 'messages[2].tool_calls[0].function.name': string does not match pattern.", True),
        ("messages.3.content.1.tool_use.input: Input should be a valid dictionary", True),
        (KEY_NOT_VALID, False),
        ("Incorrect API key provided for function calling", False),
        ("unknown parameter: temprature", False),
        ("Invalid 'tools[0].function.parameters': invalid schema for function 'get_account'", False),
        ("Your organization must be verified to use this model", False),
    ],
)
def test_only_refusals_about_the_models_output_are_the_models(message: str, model: bool) -> None:
    assert about_model_output(message) is model


# -- a tool name no provider takes back ------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_tool_name_providers_refuse_is_sent_back_as_a_function_name_and_graded(tmp_path: Path, protocol: Protocol) -> None:
    odd = tool_turn(protocol, [("c0", "functions.get_account", _args(protocol, {"account_id": ACCOUNT}))])
    outcome = await run_llm(tmp_path / "run", [odd, *solution(protocol)], protocol, validate=validate_names(protocol))
    line = outcome.line
    assert outcome.provider.rejected == []
    assert (line.status, line.passed, line.tool_calls, line.tool_errors) == ("graded", True, 3, 1)
    # the record keeps what the model wrote; the server answered it as an unknown tool
    first = outcome.record.tool_calls[0]
    assert first.tool == "functions.get_account" and first.error is not None and first.error.code == "unknown_tool"
    assistant = json.dumps([m for m in outcome.conversation() if m["role"] == "assistant"])
    assert "functions_get_account" in assistant and "functions.get_account" not in assistant
    _consistent(outcome)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_refusal_of_the_models_tool_name_is_graded_not_errored(tmp_path: Path, protocol: Protocol) -> None:
    """Should a provider refuse the name even so, the refusal is of the model's output: graded, in pass@1."""
    odd = tool_turn(protocol, [("c0", "functions.get_account", _args(protocol, {"account_id": ACCOUNT}))])
    refusal = Reply(_error(protocol, "Invalid 'messages[2].tool_calls[0].function.name': string does not match pattern."), status=400)
    outcome = await run_llm(tmp_path / "run", [odd, refusal], protocol, retries=2)
    line = outcome.line
    assert (line.status, line.stop_reason, line.passed, line.attempts) == ("graded", "model_output_rejected", False, 1)
    assert "functions.get_account" in (line.stop_detail or "")


# -- arguments that are not text, or not strict JSON -----------------------------------------------------------

SURROGATE = {"openai": '{"account_id":"\\ud800Carlos"}', "anthropic": {"account_id": "\ud800Carlos"}}


@pytest.mark.parametrize("over_http", [False, True], ids=["memory", "http"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_lone_surrogate_is_the_models_malformed_output_recorded_and_graded(tmp_path: Path, protocol: Protocol, over_http: bool) -> None:
    script = [tool_turn(protocol, [("c1", "get_account", SURROGATE[protocol])]), *solution(protocol)]
    validate = validate_openai if protocol == "openai" else validate_anthropic
    if over_http:
        async with running_http(environment) as server:
            outcome = await run_llm(tmp_path / "run", script, protocol, validate=validate, server=server)
            assert len(server.manager) == 0  # the episode was released
    else:
        outcome = await run_llm(tmp_path / "run", script, protocol, validate=validate)
    line = outcome.line
    assert outcome.provider.rejected == []
    assert (line.status, line.passed, line.error_class) == ("graded", True, None)
    assert (line.tool_calls, line.rejected_calls, line.tool_errors) == (3, 1, 1)
    (rejected,) = outcome.record.rejected_calls
    assert rejected.error.code == "invalid_arguments" and "surrogate" in rejected.error.message
    _consistent(outcome)


# Each a shape a model (or a provider's JSON decoder) can hand over; none may crash a request or a record.
HOSTILE_OPENAI = [
    '{"account_id":"\\udfff"}',
    '{"\\ud800":"x"}',
    '{"account_id":["a", {"b": "\\ud83d"}]}',
    '{"account_id": NaN}',
    '{"account_id": -Infinity}',
    '{"account_id": 1e400}',
    '{"account_id": 1' + "0" * 5000 + "}",
    '{"account_id":"\ud800"}',  # the surrogate itself, not its escape, in the arguments text
    '{"account_id":"\\u0000\\u202e"}',
    "[" * 200 + "]" * 200,
    '{"account_id": ' + "[" * 300 + "]" * 300 + "}",  # deeper than pydantic serialises
    '{"account_id": ' + "[" * 5000 + "]" * 5000 + "}",  # deeper than Python's json parses
]
HOSTILE_ANTHROPIC: list[Any] = [
    {"account_id": "\udfff"},
    {"\ud800": "x"},
    {"account_id": [{"b": "\ud83d"}]},
    {"account_id": float("nan")},
    {"account_id": float("-inf")},
    "\ud800",
    [float("inf")],
    {"account_id": json.loads("[" * 300 + "]" * 300)},
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_no_hostile_argument_shape_crashes_a_request_or_the_record(tmp_path: Path, protocol: Protocol) -> None:
    shapes = HOSTILE_OPENAI if protocol == "openai" else HOSTILE_ANTHROPIC
    calls = [(f"h{index}", "get_account", shape) for index, shape in enumerate(shapes)]
    validate = validate_openai if protocol == "openai" else validate_anthropic
    outcome = await run_llm(tmp_path / "run", [tool_turn(protocol, calls), *solution(protocol)], protocol, validate=validate)
    line = outcome.line
    assert outcome.provider.rejected == []
    assert (line.status, line.passed, line.error_class) == ("graded", True, None)
    rejected = outcome.record.rejected_calls
    assert len(rejected) == line.rejected_calls and line.tool_errors >= len(rejected)
    # a call that was not rejected reached the episode, which answered it as an error
    assert len(rejected) + len(outcome.record.tool_calls) - 2 == len(shapes)
    assert all(isinstance(e, MessageEvent | RejectedCallEvent) or e.type in ("tool_call", "closed") for e in outcome.record.events)
    for request in outcome.provider.requests:  # every body went out as strict JSON
        json.dumps(request.body, allow_nan=False).encode("utf-8")
    _consistent(outcome)


# -- a first request that cannot fit ---------------------------------------------------------------------------

FIRST_REFUSALS = [
    (
        "openai",
        "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context length is 4096 tokens "
        "and your request has 312 input tokens (8192 > 4096 - 312).",
        None,
        "--max-tokens",
    ),
    ("openai", "This model's maximum context length is 4096 tokens. However, your messages resulted in 5120 tokens.", "context_length_exceeded", "--max-model-len"),
    ("anthropic", "prompt is too long: 210000 tokens > 200000 maximum", None, "longer context"),
    ("anthropic", "input length and `max_tokens` exceed context limit: 199000 + 4096 > 200000", None, "--max-tokens"),
]


@pytest.mark.parametrize(("protocol", "message", "code", "change"), FIRST_REFUSALS)
async def test_a_first_request_that_cannot_fit_errors_once_and_says_what_to_change(
    tmp_path: Path, protocol: Protocol, message: str, code: str | None, change: str
) -> None:
    script = [Reply(_error(protocol, message, code), status=400)] * 3
    outcome = await run_llm(tmp_path / "run", script, protocol, retries=2)
    line = outcome.line
    assert (line.status, line.error_class, line.stop_reason, line.attempts) == ("errored", "provider", None, 1)
    assert len(outcome.provider.requests) == 1
    error = line.error or ""
    assert "first request" in error and change in error and "\n" not in error


async def test_a_max_tokens_refusal_says_to_lower_max_tokens(tmp_path: Path) -> None:
    message = "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000."
    outcome = await run_llm(tmp_path / "run", [Reply(openai_error(message), status=400)], retries=2)
    assert (outcome.line.status, outcome.line.error_class, outcome.line.attempts) == ("errored", "provider", 1)
    assert "lower --max-tokens" in (outcome.line.error or "")


# -- retries of episodes a rate limit stopped together ---------------------------------------------------------


async def test_sixteen_episodes_told_retry_after_1_do_not_come_back_together(tmp_path: Path) -> None:
    """Jitter relative to the wait: 16 retries after ``Retry-After: 1`` spread over ~0.5 s, never before 1 s."""
    sleep = RecordingSleep()
    limited = [Reply(openai_error("rate limited"), status=429, headers={"retry-after": "1"}) for _ in range(16)]
    with anyio.fail_after(60):
        async with running_provider([*limited, *(Reply(openai_message("Done.")) for _ in range(16))]) as provider:
            agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", api_key="k", sleep=sleep, rng=random.Random(19))
            config = RunConfig(
                env=environment, agent=agent, tasks="report_balance", seeds=",".join(str(s) for s in range(16)), out=tmp_path / "run",
                concurrency=16, retries=0, limits=Limits(request_timeout=5, max_retries=16),
            )
            outcome = await run(config)
    assert [line.status for line in outcome.lines] == ["graded"] * 16
    delays = sorted(sleep.delays)
    assert len(delays) == 16 and delays[0] >= 1.0 and delays[-1] <= 1.5
    assert delays[-1] - delays[0] >= 0.3
    bunch = max(sum(1 for d in delays if start <= d < start + 0.1) for start in delays)
    assert bunch <= 8, f"{bunch} of 16 retries within 0.1 s: {delays}"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_refusal_quoting_a_lone_surrogate_is_written_like_any_other(tmp_path: Path, protocol: Protocol) -> None:
    """The provider's own text lands in the results line; a surrogate in it must not crash the run."""
    body = json.dumps(_error(protocol, "unknown model \ud800x")).encode()  # json.dumps writes it as \\ud800
    outcome = await run_llm(tmp_path / "run", [Reply(raw=body, status=404)], protocol)
    assert (outcome.line.status, outcome.line.error_class) == ("errored", "provider")
    assert "unknown model" in (outcome.line.error or "")
    (written,) = [json.loads(text) for text in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written["error"] == outcome.line.error
