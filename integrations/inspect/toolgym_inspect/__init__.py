"""Every toolgym environment as inspect-ai tasks, over a running toolgym server.

::

    toolgym serve finance --transport http --port 8000 &     # toolgym's venv; reads $TOOLGYM_TOKEN
    inspect eval toolgym_inspect/finance --model openai/gpt-4.1-mini -T seeds=0-4

- **One sample per task instance** (template × seed), its input the environment's instructions (system) and
  the instance's prompt (user), its metadata the template's (difficulty, category, split, tags, tools).
- **One episode per sample** (and per epoch): opened by the task's setup, its tools given to the model through
  inspect's own MCP client on the episode's endpoint; the control token stays in this process.
- **The score is toolgym's grade**: ``{"score", "passed"}`` with every criterion and its evidence in the score's
  metadata (``inspect view`` shows them). A grade toolgym cannot give, or a crashed toolgym tool, is an inspect
  error for the sample — never a score.

``toolgym`` serves any environment (the one the server serves); ``finance``, ``support`` and ``workspace``
check that the server serves them.
"""

from toolgym_inspect.dataset import load_server, sample_id
from toolgym_inspect.scorer import release_episode, toolgym_grade
from toolgym_inspect.solvers import toolgym_agent, toolgym_episode
from toolgym_inspect.tasks import SetupError, finance, support, toolgym, toolgym_task, workspace

__all__ = [
    "toolgym",
    "finance",
    "support",
    "workspace",
    "toolgym_task",
    "toolgym_episode",
    "toolgym_agent",
    "toolgym_grade",
    "release_episode",
    "load_server",
    "sample_id",
    "SetupError",
]
