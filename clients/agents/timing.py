"""Time of an episode: the agent's budget apart from waits on the provider, and how retries are paced.

An LLM agent's episode spends time in two places: its own (tool calls, our code) and waiting on the LLM
provider (requests, their retries, the backoff between them, a Retry-After). Only the first is the agent's:
:class:`EpisodeClock` keeps them apart, so a slow or rate-limited provider never uses up
``Limits.episode_timeout``; waits have a budget of their own, ``Limits.provider_timeout``, whose end is an
infrastructure error (``provider_timeout``), never a score.

:class:`Backoff` paces retries, with jitter on every delay so that concurrent episodes hitting the same
outage do not retry in lockstep.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Literal

import anyio
import httpx

__all__ = ["Backoff", "EpisodeClock", "retry_after_seconds", "Sleep"]

Sleep = Callable[[float], Awaitable[None]]
"""How to wait a number of seconds (``anyio.sleep``; tests record the waits instead of spending them)."""


@dataclass(frozen=True)
class Backoff:
    """Delays between retries: ``base * factor**attempt``, at most ``cap`` seconds, jittered.

    With ``jitter`` j, an exponential delay d becomes a uniform draw in ``[d·(1-j), d]``; a wait the provider
    asked for (Retry-After) w is never shortened, only lengthened by a draw in ``[0, j·max(w, base)]``: the
    spread grows with the wait, so the episodes one rate limit stopped together (a provider answers them all
    ``Retry-After: 1``) come back over half a second, not in one burst that trips the limit again. A provider
    asking for more than ``max_wait`` seconds is not waited for: the request fails at once.
    """

    base: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    max_wait: float = 120.0
    jitter: float = 0.5

    def delay(self, attempt: int) -> float:
        """Seconds before retry number ``attempt`` (0-based), before jitter."""
        return min(self.cap, self.base * self.factor**attempt)

    def pause(self, attempt: int, asked: float | None = None, rng: random.Random | None = None) -> float:
        """The jittered wait before retry ``attempt``: the provider's ``asked`` wait, else the exponential one."""
        draw = (rng or random).random()
        if asked is not None:
            return asked + draw * self.jitter * max(asked, self.base)
        return self.delay(attempt) * (1 - self.jitter * draw)


def retry_after_seconds(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """The wait a provider asked for: ``retry-after-ms`` (OpenAI), else ``Retry-After`` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000
            if math.isfinite(value):
                return max(0.0, value)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
        return max(0.0, value) if math.isfinite(value) else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    # An HTTP date is wall-clock by definition (this is the machine talking to a provider, not a world).
    reference = now or datetime.now(timezone.utc)
    return max(0.0, (when - reference).total_seconds())


class EpisodeClock:
    """An episode's two time budgets: the agent's own time and the time spent waiting on the provider.

    The runner binds it to the cancel scope around the agent (:meth:`start`); the scope's deadline is then
    the agent's while the agent works and the provider's while it waits (:meth:`waiting_on_provider`), so
    whichever budget runs out stops the episode, and :attr:`exhausted` says which. Unbound (an agent driven
    outside the runner), it only keeps the accounts.

    Args:
        agent_budget: seconds of the agent's own time (``Limits.episode_timeout``).
        provider_budget: seconds of waiting on the provider (``Limits.provider_timeout``).
    """

    def __init__(self, agent_budget: float, provider_budget: float) -> None:
        self.agent_budget = agent_budget
        self.provider_budget = provider_budget
        self.provider_seconds = 0.0
        """Seconds spent waiting on the provider so far (requests, retries, backoff)."""
        self.exhausted: Literal["agent", "provider"] | None = None
        """Which budget stopped the episode, once one did."""
        self._scope: anyio.CancelScope | None = None
        self._started: float | None = None
        self._depth = 0
        self._wait_started = 0.0
        self._wait_deadline = math.inf

    def start(self, scope: anyio.CancelScope | None = None) -> None:
        """Start the agent's time now; with ``scope``, enforce both budgets through its deadline."""
        self._started = anyio.current_time()
        self._scope = scope
        if scope is not None:
            scope.deadline = self._started + self.agent_budget

    def _now(self) -> float:
        now = anyio.current_time()
        if self._started is None:
            self._started = now
        return now

    def _waiting_now(self, now: float) -> float:
        return now - self._wait_started if self._depth else 0.0

    @property
    def agent_seconds(self) -> float:
        """Seconds of the agent's own time so far (wall time minus provider waits)."""
        now = self._now()
        assert self._started is not None
        return max(0.0, now - self._started - self.provider_seconds - self._waiting_now(now))

    def provider_left(self) -> float:
        """Seconds of the provider budget still unspent."""
        return max(0.0, self.provider_budget - self.provider_seconds - self._waiting_now(self._now()))

    @contextmanager
    def waiting_on_provider(self) -> Iterator[None]:
        """Count the block as a wait on the provider (not the agent's time); nested blocks count once."""
        now = self._now()
        outermost = self._depth == 0
        agent_left = self.agent_budget - self.agent_seconds if outermost else 0.0
        self._depth += 1
        if outermost:
            self._wait_started = now
            self._wait_deadline = now + max(0.0, self.provider_budget - self.provider_seconds)
            # An agent already out of time stays out of time: its deadline is left to fire.
            if self._scope is not None and agent_left > 0:
                self._scope.deadline = self._wait_deadline
        try:
            yield
        finally:
            self._depth -= 1
            if outermost:
                end = anyio.current_time()
                self.provider_seconds += end - self._wait_started
                if self._scope is not None:
                    if self._scope.cancel_called and end >= self._wait_deadline and agent_left > 0:
                        self.exhausted = "provider"
                    elif agent_left > 0:
                        self._scope.deadline = end + agent_left

    def settle(self) -> Literal["agent", "provider"]:
        """Which budget ran out, after the bound scope was cancelled by its deadline."""
        if self.exhausted is None:
            self.exhausted = "agent"
        return self.exhausted
