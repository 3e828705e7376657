"""``toolgym run``: run an agent on an environment's tasks, grade every episode, summarize."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from clients.agents import AGENT_KINDS, AgentOptions
from clients.agents.base import Limits
from clients.console import counted, output_console
from clients.errors import RunError
from clients.flags import integer, number, seconds
from clients.progress import RichReporter, SilentReporter
from clients.ray.options import RayOptions
from clients.runner import DEFAULT_OUT, MAX_CONCURRENCY, MAX_RETRIES, MAX_TRIALS, RunConfig
from clients.runner import run as run_episodes
from clients.sandbox import MODES
from clients.summary import render_summary
from servers.secrecy import given_token

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "run"
HELP = "run an agent on tasks (task x seed x trial), grade each episode, print pass rates"
DESCRIPTION = (
    "Run an agent on an environment's tasks, concurrently, in this process (default), against a running "
    "`toolgym serve` (--server), or on environment actors of a Ray cluster (--ray, needs toolgym[ray]). "
    "Writes results.jsonl, records/ and summary.json into the run folder "
    f"({DEFAULT_OUT} unless --out), and prints pass@1, pass^k, pass@k and mean score with a 95% CI. "
    f"Agents: {', '.join(AGENT_KINDS)}. Every episode is graded (the agent's result, however it stopped) or errored "
    "(infrastructure: provider, provider_timeout, connection, internal, grading, kit; never scored). "
    "Exit status 1 when some episode errored (was not graded); the headline says how many."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``toolgym run``."""
    parser.add_argument("env", help="environment name (see `toolgym envs`), or package.module:attribute")
    parser.add_argument("--agent", default="oracle", metavar="SPEC", help=f"who plays: {', '.join(AGENT_KINDS)} (default: oracle)")
    parser.add_argument(
        "--tasks",
        metavar="SEL",
        help="task ids, tag:X, split:Y or verified (validated by a play, no open defect), comma-separated (default: all)",
    )
    parser.add_argument("--seeds", metavar="LIST", help="seeds, e.g. 0,1,2 or 0-4 (default: 0)")
    parser.add_argument("--trials", type=integer(1, MAX_TRIALS), default=1, metavar="K", help="trials per (task, seed); pass^k uses k=K (default: 1)")
    parser.add_argument("--concurrency", type=integer(1, MAX_CONCURRENCY), metavar="N", help="episodes at once (default: 8; with --ray, 4 per actor)")
    parser.add_argument("--out", type=Path, metavar="DIR", help=f"run folder (default: {DEFAULT_OUT}, replaced each run)")
    parser.add_argument("--resume", action="store_true", help="keep the graded episodes of the run folder, run the rest")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing run in --out")
    parser.add_argument("--server", metavar="URL", help="a running `toolgym serve` (default: episodes in this process)")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the episodes on Ray environment actors: on a cluster started here (no ADDRESS), the cluster this "
        "machine joined (auto), or the one at ADDRESS (host:6379); needs `pip install toolgym[ray]`",
    )
    parser.add_argument("--actors", type=integer(1, MAX_CONCURRENCY), metavar="N", help="environment actors with --ray (default: one per available CPU)")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="control API token of --server, read from FILE (mode 0600); else $TOOLGYM_TOKEN. Only the runner uses it",
    )
    parser.add_argument(
        "--token",
        help="the token itself: visible to every local process until read (prefer --token-file or TOOLGYM_TOKEN)",
    )
    parser.add_argument(
        "--sandbox",
        choices=MODES,
        default="auto",
        help="how cmd: agents are confined: auto (default: bubblewrap, else refuse to start them), bwrap, or none "
        "(UNSAFE: the agent can read the kit's tasks and oracles, the run folder and your processes)",
    )
    parser.add_argument(
        "--sandbox-bind",
        action="append",
        default=[],
        metavar="PATH[:ro]",
        help="also show PATH inside a cmd: agent's sandbox (its config, its tools); writable unless :ro; repeatable",
    )
    parser.add_argument(
        "--private-tasks",
        action="append",
        default=[],
        metavar="PATH",
        help="held-out task templates from a folder of modules, a .py file or a module name, merged into ENV's; "
        "keep it readable only by you (sandboxed agents never see it); repeatable",
    )
    parser.add_argument("--max-turns", type=integer(1), default=Limits.max_turns, metavar="N", help=f"model calls per episode (default: {Limits.max_turns})")
    parser.add_argument(
        "--max-tool-calls", type=integer(1), default=Limits.max_tool_calls, metavar="N", help=f"tool calls per episode (default: {Limits.max_tool_calls})"
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=Limits.episode_timeout,
        metavar="S",
        help=f"seconds of the agent's own time per episode, waits on the LLM provider excluded (default: {Limits.episode_timeout:g})",
    )
    parser.add_argument(
        "--provider-timeout",
        type=seconds,
        default=Limits.provider_timeout,
        metavar="S",
        help=f"seconds an episode may wait on the LLM provider, retries included; then it errors, unscored (default: {Limits.provider_timeout:g})",
    )
    parser.add_argument(
        "--request-timeout",
        type=seconds,
        default=Limits.request_timeout,
        metavar="S",
        help=f"seconds per LLM request, end to end: connect, first byte, whole body (default: {Limits.request_timeout:g})",
    )
    parser.add_argument("--retries", type=integer(0, MAX_RETRIES), default=2, metavar="N", help="reruns of an episode after an infrastructure error (default: 2)")
    parser.add_argument("--base-url", help="LLM endpoint (env OPENAI_BASE_URL / ANTHROPIC_BASE_URL)")
    parser.add_argument("--api-key", help="LLM key (env OPENAI_API_KEY / ANTHROPIC_API_KEY)")
    parser.add_argument("--temperature", type=number(0.0), help="sampling temperature (default: the endpoint's)")
    parser.add_argument("--max-tokens", type=integer(1), help="completion tokens per model call")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _ray_options(args: argparse.Namespace) -> RayOptions | None:
    """``--ray`` / ``--actors`` as options for the runner (``--actors`` alone means nothing)."""
    if args.ray is None:
        if args.actors is not None:
            raise RunError("--actors needs --ray")
        return None
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RunError("--ray needs Ray: pip install 'toolgym[ray]' (or: pip install -e '.[ray]' in a checkout)") from None
    return RayOptions(address=args.ray, actors=args.actors)


def run(args: argparse.Namespace) -> int:
    """Parse, run, print the summary table."""
    console = output_console()  # a pipe (CI log, | tee) gets the whole table, never one cropped to 80 columns
    config = RunConfig(
        env=args.env,
        agent=args.agent,
        tasks=args.tasks,
        seeds=args.seeds,
        trials=args.trials,
        concurrency=args.concurrency,
        out=args.out,
        resume=args.resume,
        overwrite=args.overwrite,
        server=args.server,
        token=given_token(args.token, args.token_file),
        private_tasks=args.private_tasks,
        limits=Limits(
            max_turns=args.max_turns,
            max_tool_calls=args.max_tool_calls,
            episode_timeout=args.timeout,
            provider_timeout=args.provider_timeout,
            request_timeout=args.request_timeout,
        ),
        retries=args.retries,
        ray=_ray_options(args),
        agent_options=AgentOptions(
            base_url=args.base_url, api_key=args.api_key, temperature=args.temperature, max_tokens=args.max_tokens,
            sandbox=args.sandbox, sandbox_binds=tuple(args.sandbox_bind),
        ),
    )
    reporter = SilentReporter() if args.quiet else RichReporter(console, description=args.agent if len(args.agent) <= 24 else args.agent[:23] + "…")
    outcome = anyio.run(run_episodes, config, reporter)
    render_summary(outcome.summary, console)
    resumed = f", {outcome.skipped} kept from before" if outcome.skipped else ""
    console.print(f"[dim]{counted(outcome.ran, 'episode')} run{resumed} → {outcome.out}/results.jsonl, records/, summary.json[/dim]")
    errored = sum(1 for line in outcome.lines if line.status == "errored")
    if errored:
        console.print(f"[bold red]{errored} of {len(outcome.lines)} episodes not graded: exit status 1[/bold red]")
    return 1 if errored else 0
