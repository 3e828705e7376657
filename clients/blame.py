"""The blame model of a run: how every episode ends, and whose doing it was. Decided here, nowhere else.

An evaluation is only as honest as its accounting: a provider outage scored as the agent's failure lowers a
model's pass rate for nothing; a model's failure excused as infrastructure inflates it. So every episode
ends exactly one of two ways, never both:

**graded** — the agent's result, scored by the rubric, with a ``stop_reason`` saying how it ended:

====================== ===========================================================================
``done``               the agent finished (an LLM answered without tool calls)
``max_turns``          it used the episode's model calls (``Limits.max_turns``)
``max_tool_calls``     it used the episode's tool calls (``Limits.max_tool_calls``)
``timeout``            it used the episode's *agent* time (``Limits.episode_timeout``, waits on the
                       provider excluded)
``context_overflow``   the provider refused the conversation as too long for the model: retrying
                       cannot fix it, so the agent stops there
``model_output_rejected`` the provider refused, for what the model produced (a 400 about the messages,
                       tool calls or arguments), a conversation carrying the model's malformed output: the
                       model's doing, not re-run. A 400 about anything else (a key) is ``provider``
``exit:N``             an external command exited with status N
====================== ===========================================================================

**errored** — infrastructure, with an error class (:data:`clients.errors.INFRA_CLASSES`): ``provider``,
``provider_timeout``, ``connection``, ``internal``, ``grading``, ``kit``. Never scored, counted apart, and
re-run — after a jittered backoff — up to ``retries`` times when re-running can help (not after a refusal
of the request as configured, such as a bad key, an unknown model, or a first request the model's context
cannot hold).

The rules behind the split:

1. Time waiting on the provider (requests, retries, backoff, Retry-After) never consumes the agent's
   time; it has its own budget (``Limits.provider_timeout``), whose end is ``provider_timeout``.
2. Each provider request is bounded end to end (connect, first byte, whole body: ``request_timeout``).
3. What the model issues is the agent's: malformed calls are answered as errors, recorded as
   ``rejected_call`` events and counted in ``tool_calls`` / ``tool_errors``; a refusal the model caused
   stops the episode, graded.
4. What the provider sends is the provider's: a body that is not a completion, a message that is a string,
   tool calls of an impossible shape are ``provider`` errors, never a crash of ours (a crash of our own code
   is ``kit``).
5. A tool that crashes is ``internal`` even when the agent finished; the grader failing is ``grading`` —
   whatever it raised (an error of ours inside grading is never the agent's ``kit`` crash nor a dropped
   ``connection``), and it is not re-run: the same record fails the same way, and re-running until some
   attempt grades would keep exactly the trajectories the grader copes with. The run says how many
   episodes were not graded and exits non-zero.
6. Tokens of attempts that errored and were re-run (in the run, or by ``--resume``) are kept apart
   (``failed_attempt_tokens``), never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx
import httpx2
from mcp.shared.exceptions import MCPError

from clients.agents.base import AgentResult, AgentSession
from clients.errors import AgentStop, InfraClass, InfrastructureError, ProviderTimeout
from fixtures.errors import GradingError
from servers.record import Record

__all__ = ["Failure", "Verdict", "classify_exception", "grading_failure", "agent_stop", "out_of_time", "record_failure", "verdict"]


@dataclass(frozen=True)
class Failure:
    """Why an attempt errored: the class blamed, a one-line message, and whether a re-run may help."""

    error_class: InfraClass
    message: str
    retryable: bool = True


@dataclass(frozen=True)
class Verdict:
    """How an attempt ends: graded (a grade, no error) or errored (an error class, no grade)."""

    status: Literal["graded", "errored"]
    grade: dict[str, Any] | None
    failure: Failure | None

    @property
    def rerun(self) -> bool:
        """Whether running the episode again may give a graded result."""
        return self.failure is not None and self.failure.retryable


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def classify_exception(exc: BaseException) -> Failure:
    """Which part of the infrastructure an exception out of an episode blames."""
    leaf = _leaf(exc)
    if isinstance(leaf, InfrastructureError):
        return Failure(leaf.error_class, leaf.message, leaf.retryable)
    if isinstance(leaf, GradingError):
        return Failure("grading", str(leaf))
    if isinstance(leaf, MCPError):
        return Failure("connection", f"MCP error {leaf.error.code}: {leaf.error.message}")
    connection = (httpx.HTTPError, httpx2.HTTPError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
    if isinstance(leaf, connection):
        return Failure("connection", f"{type(leaf).__name__}: {leaf}")
    return Failure("kit", f"{type(leaf).__name__}: {leaf}")


def grading_failure(exc: BaseException) -> Failure:
    """Why grading a finished episode failed: ``grading``, never re-run, unless the connection to the
    server that grades it dropped (then the attempt may be run again)."""
    failure = classify_exception(exc)
    if failure.error_class in ("connection", "provider", "provider_timeout"):
        return failure
    message = failure.message if failure.error_class == "grading" else f"the grader crashed: {failure.message}"
    return Failure("grading", message, retryable=False)


def agent_stop(exc: BaseException) -> AgentResult | None:
    """The graded end an exception out of an agent stands for (an :class:`AgentStop`), else None."""
    leaf = _leaf(exc)
    if isinstance(leaf, AgentStop):
        return AgentResult(stop_reason=leaf.reason, detail=leaf.detail)
    return None


def out_of_time(session: AgentSession) -> AgentResult:
    """The end of an episode whose deadline fired: the agent's timeout, or the provider's if it was waiting.

    Raises:
        ProviderTimeout: the provider budget ran out (the episode errors; the agent is not blamed).
    """
    clock = session.clock
    limits = session.limits
    if clock.settle() == "provider":
        raise ProviderTimeout(
            f"waited {clock.provider_seconds:.1f}s on the LLM provider, the episode's provider budget "
            f"({limits.provider_timeout:g}s); the agent had used {clock.agent_seconds:.1f}s of its own"
        )
    return AgentResult(
        stop_reason="timeout",
        detail=f"the agent used its {limits.episode_timeout:g}s (waits on the provider, {clock.provider_seconds:.1f}s, not counted)",
    )


def record_failure(record: Record) -> Failure | None:
    """A kit bug the record shows (a tool that crashed), which makes the attempt errored whatever the agent did."""
    crashed = next((c for c in record.tool_calls if c.error is not None and c.error.error_class == "internal"), None)
    if crashed is None or crashed.error is None:
        return None
    return Failure("internal", f"tool {crashed.tool!r} (call {crashed.seq}) crashed: {crashed.error.message}")


def verdict(failure: Failure | None, grade: dict[str, Any] | None) -> Verdict:
    """Graded when nothing failed and a grade exists; otherwise errored with the failure (never both)."""
    if failure is None and grade is not None:
        return Verdict(status="graded", grade=grade, failure=None)
    return Verdict(status="errored", grade=None, failure=failure or Failure("kit", "the episode ended with neither a grade nor an error"))
