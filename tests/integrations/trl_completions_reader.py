"""Prints the completions GRPOTrainer logged (``log_completions``: ``OUT/trainer/completions/*.parquet``) as JSON
lines, in step and row order: step, reward of each reward function, and the completion's messages (run with
the TRL venv's python, which has pandas)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd


def main(folder: str) -> None:
    for path in sorted(Path(folder).glob("completions_*.parquet")):
        frame = pd.read_parquet(path)
        rewards = [c for c in frame.columns if c not in ("step", "prompt", "completion", "advantage")]
        for _, row in frame.iterrows():
            messages = []
            for message in row["completion"]:
                calls = message.get("tool_calls")
                messages.append({
                    "role": message.get("role"),
                    "content": message.get("content") if isinstance(message.get("content"), str) else None,
                    "tool_calls": [
                        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in (list(calls) if calls is not None else [])
                    ],
                })
            print(json.dumps({"step": int(row["step"]), "rewards": {r: row[r] for r in rewards}, "messages": messages}, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
