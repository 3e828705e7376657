"""A toy help desk for the grader tests: customers, accounts and transfers, six tools, four task templates.

Small enough to reason about, real enough to be served over MCP and graded: a fixture of three tables,
read tools, identity verification, a destructive transfer whose generated id depends on the call's
position (so change-set matching must ignore it), a freeze, and an answer tool.
"""

from __future__ import annotations

from pathlib import Path

from servers.environment import Environment, ResourceSpec
from tests.graders.toy.fixture import fixture
from tests.graders.toy.tools import TOOLS

__all__ = ["environment", "fixture"]

environment = Environment(
    name="grader-toy",
    description="A toy help desk: look up customers and accounts, verify identity, transfer, freeze, answer.",
    fixture=fixture,
    tools=TOOLS,
    resources=[
        ResourceSpec(
            uri="toy://policy",
            name="policy",
            description="The help desk's policy.",
            path=Path(__file__).with_name("policy.md"),
        )
    ],
    tasks_module="tests.graders.toy.tasks",
    instructions="Help customers of the toy bank. Read toy://policy first. Answer with submit_answer.",
)
