"""Reads an inspect log with inspect's own log API (run with the inspect venv's python); prints it as JSON.

``python inspect_log_reader.py LOG`` prints ``{"status", "error", "scores": {name: {metric: value}}, "samples":
[{"id", "metadata", "error", "score": {"value", "answer", "explanation", "metadata"} | null, "messages"}]}``.
"""

from __future__ import annotations

import json
import sys

from inspect_ai.log import read_eval_log


def main(path: str) -> None:
    log = read_eval_log(path)
    out: dict = {
        "status": log.status,
        "error": log.error.message if log.error else None,
        "task": log.eval.task,
        "model": log.eval.model,
        "scores": {s.name: {k: m.value for k, m in s.metrics.items()} for s in (log.results.scores if log.results else [])},
        "samples": [],
    }
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        out["samples"].append({
            "id": sample.id,
            "metadata": sample.metadata,
            "error": sample.error.message if sample.error else None,
            "score": None if score is None else {
                "value": score.value, "answer": score.answer, "explanation": score.explanation, "metadata": score.metadata,
            },
            "messages": [
                {
                    "role": m.role,
                    "text": m.text,
                    "tool_calls": [{"function": c.function, "arguments": c.arguments} for c in (getattr(m, "tool_calls", None) or [])],
                    "error": getattr(getattr(m, "error", None), "message", None),
                }
                for m in sample.messages
            ],
        })
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
