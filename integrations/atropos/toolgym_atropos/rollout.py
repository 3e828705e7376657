"""One rollout = one toolgym episode, played by the environment's OpenAI-compatible inference server.

The loop is the one toolgym's own LLM agent runs: the environment's instructions as system prompt, the
instance's prompt, the episode's tools as OpenAI function tools; each tool call goes to the episode's MCP
endpoint; the episode ends when the model answers without a tool call, when a call of an answer tool
succeeds, or after ``max_turns`` model calls. A call the model botches (arguments that are not a JSON object,
a tool that does not exist) is answered as an error and the episode goes on: the model's doing. An inference
failure, an unreachable server, a grade toolgym cannot give or a crashed toolgym tool is infrastructure:
:class:`RolloutFailed`, never a score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from toolgym_remote import ControlClient, EpisodeSession, MCPRefused, graded, record_jsonl

__all__ = ["Rollout", "RolloutFailed", "Toolset", "play"]


class RolloutFailed(Exception):
    """A rollout lost to infrastructure (the message says what failed); its episode was released."""


@dataclass(frozen=True)
class Toolset:
    """What every episode of the server shows the model (read once)."""

    instructions: str
    tools: list[dict[str, Any]]
    """OpenAI function tools (name, description, JSON-schema parameters)."""
    answer_tools: frozenset[str]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(t["function"]["name"] for t in self.tools)


@dataclass
class Rollout:
    """A finished, graded episode."""

    task: str
    seed: int
    episode_id: str
    messages: list[dict[str, Any]]
    grade: dict[str, Any]
    finish_reason: str = "stop"
    record: str | None = None
    """Path of the record file written for it, when records are kept."""
    turns: int = 0
    tool_calls: int = field(default=0)


async def play(
    chat: Any, control: ControlClient, http: httpx.AsyncClient, toolset: Toolset, task: str, seed: int, *,
    max_turns: int, sampling: dict[str, Any], records_dir: str | None = None,
) -> Rollout:
    """Play and grade one episode of (``task``, ``seed``); ``chat`` is Atropos's server manager (``chat_completion``).

    Raises:
        RolloutFailed: infrastructure failed (the episode is released, or kept by the server when it could not
            be graded: its world is the evidence).
    """
    try:
        created = await control.create(task, seed)
    except Exception as exc:
        raise RolloutFailed(f"{task}#{seed}: could not open an episode: {exc}") from exc
    finished = False
    try:
        messages: list[dict[str, Any]] = []
        if toolset.instructions:
            messages.append({"role": "system", "content": toolset.instructions})
        messages.append({"role": "user", "content": created.prompt})
        finish_reason, turns, calls = "stop", 0, 0
        async with EpisodeSession(created.mcp_url, client=http) as session:
            for turns in range(1, max_turns + 1):
                try:
                    completion = await chat.chat_completion(messages=messages, tools=toolset.tools, n=1, **sampling)
                except Exception as exc:
                    raise RolloutFailed(f"{task}#{seed}: the inference server failed: {type(exc).__name__}: {exc}") from exc
                choice = completion.choices[0]
                finish_reason = choice.finish_reason or "stop"
                message = _assistant(choice.message)
                messages.append(message)
                if not message.get("tool_calls"):
                    break
                answered = False
                for call in message["tool_calls"]:
                    calls += 1
                    text, ok = await _call(session, toolset, call)
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
                    answered = answered or (ok and call["function"]["name"] in toolset.answer_tools)
                if answered:
                    break
        try:
            done = await control.finish(created.id, record=records_dir is not None)
        except Exception as exc:
            raise RolloutFailed(f"{task}#{seed}: episode {created.id} could not be finished: {exc}") from exc
        finished = True
        try:
            grade = graded(done)
        except Exception as exc:
            raise RolloutFailed(str(exc)) from exc
        path = None
        if records_dir is not None and done.get("record"):
            target = Path(records_dir) / f"{created.id}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(record_jsonl(done["record"]), encoding="utf-8")
            path = str(target)
        return Rollout(task, seed, created.id, messages, grade, finish_reason, path, turns, calls)
    except RolloutFailed:
        raise
    except Exception as exc:
        raise RolloutFailed(f"{task}#{seed}: episode {created.id}: {type(exc).__name__}: {exc}") from exc
    finally:
        if not finished:
            try:
                await control.release(created.id)
            except Exception:  # best effort: the server reaps what we could not release
                pass


def _assistant(message: Any) -> dict[str, Any]:
    """The model's message as a plain OpenAI chat message (tool calls with JSON-text arguments)."""
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = call.function
        calls.append({
            "id": call.id or f"call_{index}", "type": "function",
            "function": {"name": function.name or "", "arguments": function.arguments or "{}"},
        })
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        out["tool_calls"] = calls
    return out


async def _call(session: EpisodeSession, toolset: Toolset, call: dict[str, Any]) -> tuple[str, bool]:
    """Run one tool call on the episode: (the text the model is shown, whether it succeeded)."""
    name = call["function"]["name"]
    if name not in toolset.names:
        return f"Error: unknown tool {name!r}; the tools are {', '.join(sorted(toolset.names))}", False
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except ValueError as exc:
        return f"Error: the arguments of {name} are not valid JSON ({exc})", False
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {name} must be a JSON object", False
    try:
        result = await session.call_tool(name, arguments)
    except MCPRefused as exc:
        return f"Error: {exc}", False
    return result.text, not result.is_error
