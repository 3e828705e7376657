"""``toolgym export sft``: a run's passing trajectories as OpenAI-format chat JSONL."""

from __future__ import annotations

import argparse
from pathlib import Path

from clients.console import output_console
from clients.flags import number
from clients.selection import resolve_environment
from clients.sft import SKIP_REASONS, export_sft

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "export"
HELP = "export a run's passing trajectories (sft: OpenAI chat JSONL with tool calls)"
DESCRIPTION = (
    "Write the episodes of a run folder that scored at least --min-score as chat-completions JSONL "
    '({"messages": [...], "tools": [...], "metadata": {env, task, seed, trial, agent, score, episode_id}} per line, '
    "strict JSON), ready for supervised fine-tuning. --dedupe writes each distinct conversation once. Conversations of agents "
    "that log none (oracle, replay) are synthesized from their records' tool calls. Only well-formed conversations "
    "are written: a passing episode with missing or duplicate tool-call ids, a call without exactly one tool message, "
    "arguments that are not a JSON object, an unknown tool, or calls missing from its record is skipped and counted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``export sft RUN_DIR [--min-score S] [--out FILE]``."""
    parser.add_argument("format", choices=["sft"], help="export format")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder (holds results.jsonl)")
    parser.add_argument("--min-score", type=number(0.0, 1.0), default=1.0, metavar="S", help="lowest score exported, 0-1 (default: 1.0)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="output file (default: RUN_DIR/sft.jsonl)")
    parser.add_argument("--env", metavar="ENV", help="the run's environment (name or module:attribute; default: the records')")
    parser.add_argument(
        "--dedupe", action="store_true", help="write each distinct conversation once (trials of a deterministic agent repeat it)"
    )


def run(args: argparse.Namespace) -> int:
    """Export and say how many trajectories were written."""
    out = args.out or args.run_dir / "sft.jsonl"
    environment = resolve_environment(args.env) if args.env else None
    stats = export_sft(args.run_dir, out, min_score=args.min_score, environment=environment, dedupe=args.dedupe)
    console = output_console()
    console.print(f"{stats.passing} of {stats.considered} graded episodes scored >= {args.min_score:g}; {stats.written} written → {stats.out}")
    if stats.duplicates:
        console.print(f"dropped {stats.duplicates} duplicate conversation(s) (--dedupe)")
    if stats.skipped_episodes:
        console.print(f"skipped {stats.skipped_episodes} passing episode(s) that are not well-formed conversations:")
        for reason, count in sorted(stats.skipped.items(), key=lambda item: (-item[1], item[0])):
            console.print(f"  {count} × {reason}: {SKIP_REASONS[reason]}")
    return 0
