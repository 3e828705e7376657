"""A toolgym environment as a verifiers (0.4) taskset and environment.

verifiers finds a taskset package by its id (``vf-eval toolgym-verifiers`` imports ``toolgym_verifiers``)
and takes the ``Taskset`` and ``Env`` subclasses it exports in ``__all__``::

    toolgym serve finance --transport http --port 8000 &   # toolgym's own venv; reads $TOOLGYM_TOKEN
    vf-eval toolgym-verifiers --env.taskset.server http://127.0.0.1:8000 --env.taskset.tasks split:test \\
        -m gpt-4.1-mini --client.base-url https://api.openai.com/v1 --client.api-key-var OPENAI_API_KEY --no-push

- **Dataset rows are task instances**: one task per (template, seed) of the selection (``tasks``: ids,
  ``split:X``, ``tag:Y``; ``seeds``), from the server's ``GET /control/tasks``.
- **Each rollout gets its own episode**: :class:`ToolgymEnv` opens it through the control API, gives the
  agent the task's prompt, the environment's instructions as system prompt and the episode's MCP endpoint as
  its only tool server, and releases the episode afterwards.
- **The rubric is toolgym's grade**: the task's reward is the grade's score; its metrics are ``passed`` and
  every criterion's score (``criterion/<name>``). A grade the server cannot give fails the rollout (an
  infrastructure error), never a zero.

The control token is read from ``$TOOLGYM_TOKEN`` (``--env.taskset.token-variable`` names another variable)
and is never given to the agent. verifiers' subprocess runtime passes the host environment to harness
processes, except variables whose name contains ``API_KEY``: name the variable e.g.
``TOOLGYM_CONTROL_API_KEY`` to keep it from them.
"""

from toolgym_verifiers.env import ToolgymEnv, ToolgymEnvConfig, load_environment
from toolgym_verifiers.taskset import ToolgymData, ToolgymTask, ToolgymTaskset, ToolgymTasksetConfig

__all__ = [
    "ToolgymData",
    "ToolgymTask",
    "ToolgymTaskset",
    "ToolgymTasksetConfig",
    "ToolgymEnv",
    "ToolgymEnvConfig",
    "load_environment",
]
