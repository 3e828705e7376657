"""A task template whose setup takes a quarter of a second: creates that queue up long enough for their clients to
leave (``--private-tasks tests/faults/slow_tasks.py`` on the toy bank)."""

from __future__ import annotations

import random
import time

from fixtures.world import World
from graders.tasks import TaskDraft, TaskTemplate
from tests.toy_env.tasks import pay_back

__all__ = ["TEMPLATES", "SETUP_SECONDS"]

SETUP_SECONDS = 0.25


def slow_pay_back(world: World, rng: random.Random) -> TaskDraft:
    """The toy's pay_back, after a setup as slow as a large world's clone."""
    time.sleep(SETUP_SECONDS)  # in the create thread, like a clone of a large fixture
    return pay_back(world, rng)


TEMPLATES = [TaskTemplate(slow_pay_back, difficulty="easy", category="payments", tools=["transfer", "submit_answer"])]
