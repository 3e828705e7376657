"""toolgym's grade as an inspect score: the value is ``{"score", "passed"}``, the metadata the whole grade
(every criterion with its evidence), the explanation the failed criteria.

A grade the server cannot give, or an episode in which a toolgym tool crashed, raises: inspect records the
sample as an error (retried with ``--retry-on-error``), never as a score the model earned.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState
from toolgym_remote import ControlClient, RemoteError, graded

from toolgym_inspect.solvers import EPISODE_KEY, FINISHED_KEY

__all__ = ["toolgym_grade", "release_episode", "explanation"]


@scorer(metrics={"score": [mean(), stderr()], "passed": [mean()]})
def toolgym_grade(server: str, token_variable: str = "TOOLGYM_TOKEN", answer_tools: list[str] | None = None) -> Scorer:
    """Close, grade and release the sample's episode; the score is toolgym's grade.

    Args:
        server: the toolgym server's base URL.
        token_variable: environment variable holding the control token.
        answer_tools: the environment's answer tools (the score's ``answer`` is the last successful call's arguments).
    """
    ends = set(answer_tools or ())

    async def score(state: TaskState, target: Target) -> Score:
        episode = state.store.get(EPISODE_KEY)
        if episode is None:
            raise RemoteError("no toolgym episode was opened for this sample (the task's setup did not run)")
        async with ControlClient(server, token_variable=token_variable) as control:
            finished = await control.finish(episode)
        state.store.set(FINISHED_KEY, True)
        grade = graded(finished)
        return Score(
            value={"score": float(grade["score"]), "passed": 1.0 if grade["passed"] else 0.0},
            answer=_answer(state, ends),
            explanation=explanation(grade),
            metadata=grade,
        )

    return score


def release_episode(server: str, token_variable: str = "TOOLGYM_TOKEN") -> Any:
    """The task's cleanup: free the episode's world when the sample ended before the scorer finished it.

    An episode the scorer finished is left alone: the server keeps the world of one it could not grade, as the
    evidence to grade it again, and frees it itself later.
    """

    async def cleanup(state: TaskState) -> None:
        episode = state.store.get(EPISODE_KEY)
        if episode is None or state.store.get(FINISHED_KEY):
            return
        async with ControlClient(server, token_variable=token_variable) as control:
            await control.release(episode)

    return cleanup


def explanation(grade: dict[str, Any]) -> str:
    """The verdict, then each graded criterion that failed with its evidence (gates first)."""
    verdict = "PASS" if grade.get("passed") else "FAIL"
    head = f"{grade.get('template_id')}#{grade.get('seed')}: {verdict} score={float(grade.get('score', 0.0)):.3f}"
    if grade.get("gated"):
        head += f" (gated by {', '.join(grade.get('failed_gates') or [])})"
    failed = [c for c in grade.get("criteria") or [] if c.get("graded", True) and not c.get("passed")]
    failed.sort(key=lambda c: not c.get("gate"))
    lines = [head] + [f"- {'[gate] ' if c.get('gate') else ''}{c['name']}: {c.get('evidence', '')}" for c in failed]
    lines += [f"- {name}: not graded" for name in grade.get("ungraded") or []]
    return "\n".join(lines)


def _answer(state: TaskState, ends: set[str]) -> str | None:
    """The arguments of the last successful tool call that ended the episode (the declared answer), as JSON."""
    errors = {m.tool_call_id for m in state.messages if isinstance(m, ChatMessageTool) and m.error is not None}
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageAssistant):
            for call in reversed(message.tool_calls or []):
                if call.id not in errors and call.function in ends:
                    return json.dumps(call.arguments, ensure_ascii=False)
    return None
