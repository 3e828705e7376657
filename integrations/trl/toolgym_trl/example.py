"""Train a tiny model on a toolgym environment with TRL's ``GRPOTrainer`` — CPU, a few steps, nothing downloaded —
and show that the rewards the trainer logged are the grades toolgym recorded.

::

    toolgym serve finance --transport http --port 8000 &      # toolgym's venv; reads $TOOLGYM_TOKEN
    toolgym-trl-example --server http://127.0.0.1:8000 --steps 3 --out trl-run

The model and tokenizer are made here (:mod:`toolgym_trl.tiny`); each rollout is a toolgym episode
(:mod:`toolgym_trl.environment`) whose record goes to ``OUT/records`` and grade to ``OUT/rollouts.jsonl``
(``toolgym grade OUT`` grades the records again). At the end each step's logged ``rewards/<env>/mean`` is compared with the mean of the
grades of that step's rollouts; ``OUT/summary.json`` holds both, and the exit status is 1 if they differ.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "train"]


def _moves(server: str, rows: list[dict[str, Any]], token_variable: str) -> list[str]:
    """Every call of every selected instance's reference solution, as a tool-call move."""
    from toolgym_remote import ControlClient

    from toolgym_trl import portal
    from toolgym_trl.tiny import move_text

    async def read() -> list[str]:
        moves = []
        async with ControlClient(server, token_variable=token_variable) as control:
            for row in rows:
                created = await control.create(row["task"], row["seed"], oracle=True)
                await control.release(created.id)
                moves += [move_text(step["tool"], step.get("arguments") or {}) for step in created.oracle or []]
        return moves

    return portal.run(read())


def train(server: str, out: Path, *, tasks: str, seeds: str, templates: int, steps: int, token_variable: str) -> dict[str, Any]:
    """Train ``steps`` GRPO steps; the per-step comparison of logged rewards and recorded grades."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from toolgym_trl.dataset import toolgym_dataset
    from toolgym_trl.environment import toolgym_environment
    from toolgym_trl.tiny import decoding, tiny_model, tiny_tokenizer

    started = time.monotonic()
    environment = toolgym_environment(server, token_variable=token_variable, run_dir=out)
    data = toolgym_dataset(server, tasks, seeds, token_variable=token_variable)
    data = data.select(range(min(len(data), templates * len(set(data["seed"])))))
    moves = _moves(server, list(data), token_variable)
    tokenizer = tiny_tokenizer(moves)
    model = tiny_model(tokenizer)
    batch, generations = 4, 2
    config = GRPOConfig(
        output_dir=str(out / "trainer"), max_steps=steps, per_device_train_batch_size=batch, num_generations=generations,
        gradient_accumulation_steps=1, learning_rate=1e-3, beta=0.0, logging_steps=1, max_completion_length=48,
        max_tool_calling_iterations=2, temperature=1.0, use_cpu=True, bf16=False, report_to="none", save_strategy="no",
        log_completions=True, seed=0, dataloader_num_workers=0, disable_tqdm=True,
        generation_kwargs=decoding(tokenizer, moves),
    )
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config, train_dataset=data, environment_factory=environment)
    trainer.train()
    key = f"rewards/{environment.__name__}/mean"
    logged = [entry for entry in trainer.state.log_history if key in entry]
    log = out / "rollouts.jsonl"
    rollouts = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    comparison, at = [], 0
    for entry in logged:
        scored = rollouts[at : at + batch]
        at += batch
        graded = sum(r["score"] for r in scored) / len(scored) if scored else None
        comparison.append({"step": entry["step"], "logged_mean": entry[key], "graded_mean": graded, "rollouts": [r["episode_id"] for r in scored]})
    agree = len(comparison) == steps and all(
        c["graded_mean"] is not None and c["logged_mean"] is not None and math.isclose(c["logged_mean"], c["graded_mean"], abs_tol=1e-6)
        for c in comparison
    )
    summary = {"env": environment.__name__, "reward_key": key, "steps": comparison, "agree": agree,
               "rollouts": len(rollouts), "seconds": round(time.monotonic() - started, 1)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def main(argv: list[str] | None = None) -> int:
    """``toolgym-trl-example``: train, compare, print; exit 1 when the logged rewards are not the recorded grades."""
    parser = argparse.ArgumentParser(prog="toolgym-trl-example", description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=os.environ.get("TOOLGYM_URL", "http://127.0.0.1:8000"), help="toolgym server URL")
    parser.add_argument("--tasks", default="split:train", help="task selector (ids, split:X, tag:Y)")
    parser.add_argument("--seeds", default="0", help="task seeds, e.g. 0,1 or 0-4")
    parser.add_argument("--templates", type=int, default=2, help="how many of the selected templates to train on")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps")
    parser.add_argument("--out", type=Path, default=Path("toolgym-trl-example"), help="output folder")
    parser.add_argument("--token-variable", default="TOOLGYM_TOKEN", help="environment variable holding the control token")
    args = parser.parse_args(argv)
    from toolgym_remote import RemoteError

    args.out.mkdir(parents=True, exist_ok=True)
    try:
        summary = train(args.server, args.out, tasks=args.tasks, seeds=args.seeds, templates=args.templates, steps=args.steps,
                        token_variable=args.token_variable)
    except (RemoteError, ValueError) as exc:
        print(f"toolgym-trl-example: error: {exc}", file=sys.stderr)
        return 2
    for row in summary["steps"]:
        print(f"step {row['step']}: trainer logged {summary['reward_key']} = {row['logged_mean']}; "
              f"toolgym graded its {len(row['rollouts'])} rollouts {row['graded_mean']}")
    verdict = "equal" if summary["agree"] else "DIFFERENT"
    print(f"{summary['rollouts']} rollouts in {summary['seconds']} s; logged rewards and recorded grades are {verdict} "
          f"(records: {args.out / 'records'}; `toolgym grade {args.out}` grades them again)")
    return 0 if summary["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
