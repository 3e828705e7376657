"""A tiny bank used by the kit's own tests: small enough to reason about, real enough to exercise MCP.

Importable from tests only (the registry lists ``envs.*``). ``environment`` is the clean toy;
``faulty_environment`` adds tools that misbehave on purpose so dispatch's error classes can be checked.
Run it over stdio with ``python -m tests.toy_env serve``.
"""

from __future__ import annotations

from servers.environment import Environment, ResourceSpec
from tests.toy_env.fixture import fixture
from tests.toy_env.tools import FAULTY_TOOLS, TOOLS

__all__ = ["environment", "faulty_environment", "fixture"]

_POLICY = ResourceSpec(
    uri="toy://policy",
    name="policy",
    description="The toy bank's transfer policy.",
    path=__import__("pathlib").Path(__file__).with_name("policy.md"),
)

environment = Environment(
    name="toy",
    description="A toy bank: accounts and transfers between them.",
    fixture=fixture,
    tools=TOOLS,
    resources=[_POLICY],
    tasks_module="tests.toy_env.tasks",
    instructions="Move money between accounts with transfer; answer with submit_answer.",
)

faulty_environment = Environment(
    name="toy-faulty",
    description="The toy bank plus tools that misbehave on purpose (kit tests only).",
    fixture=fixture,
    tools=TOOLS + FAULTY_TOOLS,
    tasks_module="tests.toy_env.tasks",
)
