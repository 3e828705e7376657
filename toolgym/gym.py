"""Every toolgym environment as a Gymnasium environment: ``gymnasium.make("toolgym/<env>-v0")``.

::

    import gymnasium
    env = gymnasium.make("toolgym.gym:toolgym/finance-v0", tasks="split:train")   # imports this module first
    obs, info = env.reset(seed=0, options={"task": "duplicate_charge"})
    obs["prompt"], obs["instructions"], json.loads(obs["tools"])                 # OpenAI function schemas
    obs, reward, terminated, truncated, info = env.step({"name": "search_customers", "arguments": {"query": "Ng"}})
    ...                                 # terminated on the answer tool: reward = grade score, info["grade"]

Gymnasium 1.x has no plugin entry point any more (it was removed in 1.0): ``"toolgym.gym:toolgym/finance-v0"``
is its documented way to make an environment of a package not yet imported; after ``import toolgym.gym`` the
plain id ``toolgym/finance-v0`` works too. Every environment ``servers.registry`` knows is registered (folders
and installed packages), without importing any of them.

- **Observation** (a ``Dict`` of text): ``prompt``, ``instructions`` and ``tools`` (the episode's tools as JSON
  OpenAI function schemas, constant within an environment) and ``result`` (the last tool result as the model
  sees it; empty after ``reset``).
- **Action**: one tool call, as a dict (``{"name", "arguments"}``, or OpenAI's ``{"function": {"name",
  "arguments"}}``; arguments as a dict or a JSON string) or the JSON text of one. A call that cannot be read
  is answered with an ``invalid_action`` error result, as a model's malformed call would be.
- **Episode**: ``reset`` opens a task episode (``options``: ``task``, ``seed``, ``split``, ``tag``).
  ``reset(seed=s)`` plays task seed ``s``: the task seed is ``seeds[s % len(seeds)]``, which with the default
  ``seeds`` (0–999) is ``s`` itself; ``options["seed"]`` names a task seed outright. Without either, the
  task seed is drawn with the env's ``np_random``, as is the task when ``options`` names none — so
  ``reset(seed=s)`` is reproducible, and the resets after it (``seed=None``) draw fresh instances.
  A successful call of the answer tool terminates; the step limit (``max_steps``, default 50) truncates.
  Either way the episode is graded: ``reward`` is the grade's score (0 before),
  ``info["grade"]`` holds every criterion with its evidence.

Each environment drives its episodes through :func:`clients.rl.open_gym` on an event loop of its own thread; each
step is answered in process with exactly what an MCP client would receive (``servers/direct.py``), so the policy
sees what any MCP agent sees.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces

from servers.registry import environment_names
from toolgym._loop import LoopThread

__all__ = ["ToolgymEnv", "UnicodeText", "register_all", "env_id", "DEFAULT_MAX_STEPS", "DEFAULT_SEEDS"]

DEFAULT_MAX_STEPS = 50
"""Tool calls per episode before the environment truncates it (graded); set with ``max_steps``."""

DEFAULT_SEEDS = 1000
"""Task seeds drawn from (``0 .. DEFAULT_SEEDS-1``) when neither ``seeds`` nor ``options["seed"]`` says."""

MAX_TEXT = 1 << 24
"""Longest text an observation field may hold."""

MAX_ACTION = 1 << 16
"""Longest action text (a tool call's JSON)."""

OBSERVATION_KEYS = ("prompt", "instructions", "tools", "result")


class UnicodeText(spaces.Text):
    """A ``Text`` space of any Unicode string up to ``max_length`` (Gymnasium's ``Text`` is alphanumeric).

    Why: prompts and tool results are prose and JSON. Samples are drawn from printable ASCII.
    """

    def __init__(self, max_length: int, *, min_length: int = 0) -> None:
        super().__init__(max_length, min_length=min_length, charset=string.printable)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string of an allowed length (any characters)."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


def env_id(name: str) -> str:
    """The Gymnasium id of toolgym environment ``name``: ``toolgym/<name>-v0``."""
    return f"toolgym/{name}-v0"


class ToolgymEnv(gymnasium.Env[dict[str, str], Any]):
    """One toolgym environment behind Gymnasium's ``reset``/``step`` (see the module docstring).

    Args:
        env: the toolgym environment's name.
        tasks: task selector as for ``toolgym run --tasks`` (ids, ``split:X``, ``tag:Y``, ``verified``; default: all).
        seeds: task seeds to draw from: a count (``0..n-1``) or explicit seeds (default ``DEFAULT_SEEDS``).
        max_steps: tool calls before the episode truncates, graded (``gymnasium.make(id, max_steps=N)``). A
            ``TimeLimit`` wrapper (``max_episode_steps``) with a smaller limit also truncates, but the
            environment cannot see it, so that episode ends without a grade.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        env: str,
        tasks: str | Sequence[str] | None = None,
        seeds: int | Sequence[int] = DEFAULT_SEEDS,
        max_steps: int = DEFAULT_MAX_STEPS,
        render_mode: str | None = None,
    ) -> None:
        from clients.selection import resolve_environment, select_tasks

        self.environment = resolve_environment(env)
        self._selector = tasks
        self._tasks = select_tasks(self.environment, tasks)
        self._seeds = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
        if not self._seeds:
            raise ValueError("seeds selects no task seed")
        if max_steps < 2:
            raise ValueError(f"max_steps must be at least 2 (a tool call and the answer), not {max_steps}")
        self.max_steps = max_steps
        """Tool calls per episode; the one that reaches it truncates the episode, graded."""
        self.render_mode = render_mode
        self._answer_tools = set(self.environment.answer_tools)
        self.observation_space = spaces.Dict({key: UnicodeText(MAX_TEXT) for key in OBSERVATION_KEYS})
        self.action_space = UnicodeText(MAX_ACTION, min_length=1)
        self._loop: LoopThread | None = None
        self._gym_context: Any = None
        self._gym: Any = None
        self._episode_context: Any = None
        self._episode: Any = None
        self._tools_json = ""
        self._prompt = ""
        self._instructions = ""
        self._steps = 0
        self.episode_id: str | None = None
        """Id of the current episode (None before the first reset)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, Any]]:
        """Open a new episode (the previous one, if still open, is released ungraded).

        ``seed``: the task seed (``seeds[seed % len(seeds)]``: ``seed`` itself with the default seeds), and the
        seed of the draws (the task, when ``options`` names none). ``options``: ``task`` (a template id),
        ``seed`` (the task seed, whatever ``seed`` is), ``split`` / ``tag`` (draw the task among those only).
        """
        super().reset(seed=seed)
        options = dict(options or {})
        task = self._choose_task(options)
        task_seed = self.task_seed(seed, options.get("seed"))
        self._end_episode()
        if self._loop is None:
            from clients.rl import open_gym

            self._loop = LoopThread(f"toolgym-gym-{self.environment.name}")
            context = self._loop.hold(open_gym(self.environment))
            self._gym = context.__enter__()
            self._gym_context = context
        context = self._loop.hold(self._gym.episode(task, task_seed))
        self._episode = context.__enter__()
        self._episode_context = context
        if not self._tools_json:
            self._tools_json = json.dumps(self._episode.tools, ensure_ascii=False)
        self._prompt, self._instructions = self._episode.prompt, self._episode.instructions or ""
        self._steps = 0
        self.episode_id = self._episode.id
        info = {"episode_id": self._episode.id, "task": task, "seed": task_seed}
        return self._observation(""), info

    def task_seed(self, seed: int | None, named: Any = None) -> int:
        """The task seed a reset plays: ``named`` (``options["seed"]``), else the one ``seed`` picks among the
        env's task seeds (``seed`` itself with the default 0–999), else one drawn with ``np_random``."""
        if named is not None:
            return int(named)
        if seed is not None:
            return self._seeds[int(seed) % len(self._seeds)]
        return int(self.np_random.choice(self._seeds))

    def step(self, action: Any) -> tuple[dict[str, str], float, bool, bool, dict[str, Any]]:
        """Make one tool call; grade the episode when it terminates (answer tool) or truncates (step limit).

        Raises:
            RuntimeError: no episode is open (call ``reset`` first, also after the end of one).
        """
        if self._episode is None or self._loop is None:
            raise RuntimeError("no open episode: call reset() first (also after an episode ends)")
        self._steps += 1
        info: dict[str, Any] = {"step": self._steps}
        parsed = parse_action(action)
        if isinstance(parsed, str):
            text, is_error, name = json.dumps({"error": "invalid_action", "message": parsed}), True, None
        else:
            name, arguments = parsed
            observation = self._loop.call(self._episode.step, name, arguments)
            text, is_error = observation.text, observation.is_error
        info["tool"] = name
        info["is_error"] = is_error
        terminated = name in self._answer_tools and not is_error
        truncated = not terminated and self._steps >= self.max_steps
        reward = 0.0
        if terminated or truncated:
            finished = self._loop.call(self._episode.finish)
            reward = float(finished.reward)
            info.update(score=reward, passed=bool(finished.passed), grade=finished.grade.model_dump(mode="json"))
            self._end_episode()
        return self._observation(text), reward, terminated, truncated, info

    def close(self) -> None:
        """Release the open episode and the MCP client, and stop the event loop (idempotent)."""
        self._end_episode()
        if self._gym_context is not None:
            context, self._gym_context, self._gym = self._gym_context, None, None
            context.__exit__(None, None, None)
        if self._loop is not None:
            loop, self._loop = self._loop, None
            loop.stop()
        super().close()

    def _choose_task(self, options: dict[str, Any]) -> str:
        from clients.selection import select_tasks

        if options.get("task") is not None:
            return select_tasks(self.environment, [str(options["task"])])[0]
        terms = [f"{kind}:{options[kind]}" for kind in ("split", "tag") if options.get(kind) is not None]
        pool = self._tasks
        if terms:
            allowed = set(select_tasks(self.environment, terms[:1]))
            for term in terms[1:]:
                allowed &= set(select_tasks(self.environment, [term]))
            pool = [t for t in pool if t in allowed] or sorted(allowed)
        return str(pool[int(self.np_random.integers(len(pool)))])

    def _observation(self, result: str) -> dict[str, str]:
        """A fresh observation dict (the strings are shared: immutable, so never a shared object)."""
        return {"prompt": self._prompt, "instructions": self._instructions, "tools": self._tools_json, "result": result}

    def _end_episode(self) -> None:
        """Release the open episode, if any (its prompt stays for the last observation)."""
        if self._episode_context is not None:
            context, self._episode_context, self._episode = self._episode_context, None, None
            context.__exit__(None, None, None)


def parse_action(action: Any) -> tuple[str, dict[str, Any] | str] | str:
    """``(tool name, arguments)`` from an action, or the reason it cannot be read (a string).

    Accepts ``{"name", "arguments"}``, ``{"tool", "arguments"}``, OpenAI's ``{"function": {"name",
    "arguments"}}`` (the whole tool call too), or the JSON text of any of them. Arguments may be a dict or
    the JSON text a model produced (an unreadable one is answered by the tool layer as invalid arguments).
    """
    if isinstance(action, (bytes, bytearray)):
        action = action.decode("utf-8", errors="replace")
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError as exc:
            return f"the action is not JSON of a tool call ({exc}); send {{\"name\": ..., \"arguments\": {{...}}}}"
    if not isinstance(action, dict):
        return f"the action must be a tool call object, not {type(action).__name__}"
    call = action.get("function") if isinstance(action.get("function"), dict) else action
    name = call.get("name", call.get("tool"))
    if not isinstance(name, str) or not name:
        return "the tool call has no tool name (\"name\")"
    arguments = call.get("arguments", call.get("input", {}))
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, (dict, str)):
        return f"the arguments of {name!r} must be an object, not {type(arguments).__name__}"
    return name, arguments


def register_all() -> list[str]:
    """Register ``toolgym/<name>-v0`` for every environment toolgym knows (none is imported); returns the ids."""
    ids = []
    for name in environment_names():
        ident = env_id(name)
        if ident not in gymnasium.registry:
            gymnasium.register(
                id=ident,
                entry_point="toolgym.gym:ToolgymEnv",
                # No TimeLimit: the environment truncates at its own max_steps, so the last step carries the grade.
                kwargs={"env": name},
            )
        ids.append(ident)
    return ids


register_all()
