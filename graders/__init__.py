"""Rubric criteria, grading with evidence, the task format, meta-evaluation and the pytest plugin.

Public names are loaded on first use (PEP 562), so importing ``graders.pytest_plugin`` — which pytest does
in every run where toolgym is installed — costs nothing until a fixture is used.

* task format: ``TaskTemplate``, ``TaskDraft``, ``TaskInstance``, ``ToolCall``, ``Negative``, ``call``,
  ``optional_call``, ``negative``; declared outcomes: ``ExpectedOutcome``, ``completed``, ``refused``, ``escalated``
* grading: ``grade_episode``, ``grade_record``, ``Grade``
* playing scripts over MCP: ``play``
* meta-evaluation: ``check_environment``, ``CheckReport``
* criteria: ``graders.criteria`` (``StateCheck``, ``ChangeSetMatch``, ``NoCollateral``, ``ToolCalled``, ...)
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "TaskTemplate",
    "TaskDraft",
    "TaskInstance",
    "ToolCall",
    "Negative",
    "call",
    "optional_call",
    "negative",
    "ExpectedOutcome",
    "completed",
    "refused",
    "escalated",
    "Grade",
    "grade_episode",
    "grade_record",
    "play",
    "check_environment",
    "CheckReport",
]

_HOMES = {
    "TaskTemplate": "graders.tasks",
    "TaskDraft": "graders.tasks",
    "TaskInstance": "graders.tasks",
    "ToolCall": "graders.tasks",
    "Negative": "graders.tasks",
    "call": "graders.tasks",
    "optional_call": "graders.tasks",
    "negative": "graders.tasks",
    "ExpectedOutcome": "graders.outcome",
    "completed": "graders.outcome",
    "refused": "graders.outcome",
    "escalated": "graders.outcome",
    "Grade": "graders.grade",
    "grade_episode": "graders.grading",
    "grade_record": "graders.grading",
    "play": "graders.play",
    "check_environment": "graders.metaeval",
    "CheckReport": "graders.metaeval",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'graders' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
