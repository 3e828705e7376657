"""LLM-judge criterion: an OpenAI-compatible chat-completions endpoint grades what rules cannot.

Configured by ``TOOLGYM_JUDGE_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``), ``TOOLGYM_JUDGE_MODEL`` and
``TOOLGYM_JUDGE_API_KEY``. With no endpoint the criterion is reported ``graded=False`` and the grade is
incomplete — never silently passed. A judge that cannot be reached or answers nonsense is also ungraded
(the kit's or provider's fault, not the agent's) with the reason as evidence. Requests use temperature 0;
the judge's reply must be a JSON object ``{"passed": bool, "score": 0..1, "reason": str}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx

from graders.criteria.answer import answer_tool_of
from graders.criteria.base import CriterionBase, CriterionResult
from graders.criteria.matchers import safe_text, short
from graders.criteria.transcript import render_call

if TYPE_CHECKING:
    from graders.context import GradingContext

__all__ = ["LLMJudge", "JudgeClient", "JudgeVerdict", "JudgeUnavailable", "NOT_CONFIGURED"]

NOT_CONFIGURED = "not graded: no judge endpoint configured (set TOOLGYM_JUDGE_BASE_URL and TOOLGYM_JUDGE_MODEL)"

_SYSTEM = (
    "You are a strict grader of an AI agent's work in a simulated business system. You are given the task the "
    "agent received, a grading instruction, and the agent's answer (and possibly its tool calls). Judge only "
    "what is shown. Reply with one JSON object and nothing else: "
    '{"passed": true|false, "score": <number between 0 and 1>, "reason": "<one or two sentences>"}.'
)


class JudgeUnavailable(Exception):
    """The judge endpoint could not produce a verdict (network, HTTP status, malformed reply)."""


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge decided."""

    passed: bool
    score: float
    reason: str


def _parse_verdict(content: str) -> JudgeVerdict:
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("{") :] if "{" in text else text
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise JudgeUnavailable(f"judge reply is not a JSON object: {content[:120]!r}")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeUnavailable(f"judge reply is not valid JSON ({exc.msg}): {content[:120]!r}") from None
    passed = data.get("passed")
    if not isinstance(passed, bool):
        raise JudgeUnavailable(f"judge reply has no boolean 'passed': {content[:120]!r}")
    score = data.get("score", 1.0 if passed else 0.0)
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise JudgeUnavailable(f"judge reply has a 'score' outside [0, 1]: {content[:120]!r}")
    return JudgeVerdict(passed=passed, score=float(score), reason=str(data.get("reason", "")).strip())


@dataclass
class JudgeClient:
    """A chat-completions client for the judge; one per grading pass (it reuses one HTTP connection pool)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    _http: httpx.AsyncClient | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls) -> JudgeClient | None:
        """The judge configured by ``TOOLGYM_JUDGE_*``, or None when no base URL is set."""
        base = os.environ.get("TOOLGYM_JUDGE_BASE_URL", "").strip()
        if not base:
            return None
        return cls(base_url=base, model=os.environ.get("TOOLGYM_JUDGE_MODEL", "").strip(), api_key=os.environ.get("TOOLGYM_JUDGE_API_KEY") or None)

    async def verdict(self, messages: list[dict[str, str]]) -> JudgeVerdict:
        """Ask the judge; raises :class:`JudgeUnavailable` when no verdict can be had."""
        if not self.model:
            raise JudgeUnavailable("TOOLGYM_JUDGE_MODEL is not set")
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "messages": messages, "temperature": 0, "seed": 0}
        url = self.base_url.rstrip("/") + "/chat/completions"
        try:
            response = await self._http.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise JudgeUnavailable(f"judge request to {url} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise JudgeUnavailable(f"judge returned HTTP {response.status_code}: {response.text[:200]}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeUnavailable(f"judge reply is not a chat completion: {response.text[:200]}") from None
        if not isinstance(content, str):
            raise JudgeUnavailable("judge reply has no text content")
        return _parse_verdict(content)

    async def aclose(self) -> None:
        """Close the HTTP pool; idempotent."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _render(answer: Any) -> str:
    """The answer's arguments as JSON for the judge; never raises on what an agent sent (deep nesting, odd
    types, lone surrogates)."""
    try:
        return safe_text(json.dumps(answer, ensure_ascii=False, sort_keys=True, default=str))
    except (TypeError, ValueError, RecursionError):
        return short(answer, 4000)


class LLMJudge(CriterionBase):
    """An LLM judges the answer (and optionally the tool calls) against ``instructions``."""

    kind: Literal["judge"] = "judge"
    instructions: str
    """What a passing answer must do, written for the judge."""
    answer_field: str | None = None
    """The answer tool argument to show (default: all its arguments)."""
    show_transcript: bool = False
    """Also show the judge every tool call (name, arguments, status)."""
    tool: str | None = None
    """The answer tool (default: the environment's only answer tool)."""

    def describe(self) -> str:
        """``judge: <instructions>``."""
        words = " ".join(self.instructions.split())
        return f"judge: {words[:50]}{'…' if len(words) > 50 else ''}"

    def messages(self, ctx: GradingContext) -> list[dict[str, str]]:
        """The chat messages sent to the judge (deterministic for a given episode)."""
        tool = answer_tool_of(ctx.environment, self.tool)
        answers = [e for e in ctx.calls if e.tool == tool and e.error is None]
        answer: Any
        if not answers:
            answer = "(the agent gave no answer)"
        elif self.answer_field is None:
            answer = answers[-1].arguments
        else:
            answer = answers[-1].arguments.get(self.answer_field, "(missing)")
        parts = [
            f"TASK GIVEN TO THE AGENT:\n{ctx.instance.prompt}",
            f"GRADING INSTRUCTION:\n{self.instructions}",
            "AGENT'S ANSWER:\n" + (safe_text(answer) if isinstance(answer, str) else _render(answer)),
        ]
        if self.show_transcript:
            parts.append("AGENT'S TOOL CALLS:\n" + ("\n".join(render_call(e, 300) for e in ctx.calls) or "(none)"))
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]

    async def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Ask the configured judge; ungraded (with the reason) when there is none or it fails."""
        if ctx.judge is None:
            return self.result(False, NOT_CONFIGURED, graded=False)
        try:
            verdict = await ctx.judge.verdict(self.messages(ctx))
        except JudgeUnavailable as exc:
            return self.result(False, f"not graded: {exc}", graded=False)
        word = "passed" if verdict.passed else "failed"
        reason = f": {verdict.reason}" if verdict.reason else ""
        # a failing verdict must not score full marks, whatever number the judge wrote next to it
        score = verdict.score if verdict.passed else min(verdict.score, 0.999999)
        return self.result(verdict.passed, f"judge {ctx.judge.model} {word} (score {verdict.score:g}){reason}", score)
