"""The README's screenshots of ``toolgym view``, taken from a real run's real report.

Usage: ``python docs/screenshots.py [--out docs]`` (needs Debian's chromium and the ``test`` extra).

The run: every finance task, seeds 0-1 × 2 trials, played by :class:`SloppyAgent` through the real runner
and graded by the real graders. The agent plays the oracle's calls but, on some episodes, skips the last
step before its answer, so tasks pass at different rates and failures have real evidence. Writes
``view-run.png`` (the run page) and ``view-episode.png`` (a failed episode with changed rows).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Literal

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.agents.base import AgentResult, AgentSession  # noqa: E402
from clients.runner import RunConfig, run  # noqa: E402
from clients.view import run_report  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class SloppyAgent:
    """The oracle's calls, except the step before the answer on some episodes (each task its own miss rate)."""

    spec = "sloppy"
    transport: Literal["memory"] = "memory"
    needs_instance = True
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        """Play the oracle, maybe missing one step."""
        assert session.instance is not None and session.task is not None
        calls = list(session.instance.oracle)
        miss_rate = (zlib.crc32(session.task.encode()) % 4) * 0.2
        roll = zlib.crc32(f"{session.task}/{session.seed}/{session.trial}".encode()) % 100 / 100
        if roll < miss_rate and len(calls) >= 2:
            del calls[-2]
        for call in calls:
            await session.call_tool(call.tool, dict(call.arguments))
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""


def _failed_episode_with_changes(run_dir: Path) -> int:
    """Index (in the report's episode order) of the first failed episode whose calls changed rows."""
    report_lines = sorted(
        (json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()),
        key=lambda r: (r["agent"], r["task"], r["seed"], r["trial"]),
    )
    for index, line in enumerate(report_lines):
        if line["status"] == "graded" and not line["passed"]:
            events = [json.loads(e) for e in (run_dir / line["record"]).read_text().splitlines()[1:]]
            if sum(len(e.get("changes") or []) for e in events) >= 3:
                return index
    raise SystemExit("no failed episode with changed rows: change the sloppy agent's miss rates")


def main() -> None:
    """Run, build the report, take the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="folder for the PNG files")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium", help="Chromium executable")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="toolgym-shots-") as tmp:
        run_dir = Path(tmp) / "sloppy"
        anyio.run(run, RunConfig(env="finance", agent=SloppyAgent(), seeds="0-1", trials=2, out=run_dir))
        html = run_report(run_dir).write(run_dir / "report.html")
        episode = _failed_episode_with_changes(run_dir)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1180}, device_scale_factor=1)
            page.goto(html.resolve().as_uri())
            page.wait_for_selector("body[data-route]")
            page.screenshot(path=str(args.out / "view-run.png"))
            page.evaluate("n => { document.body.removeAttribute('data-route'); location.hash = '#/ep/0/' + n; }", episode)
            page.wait_for_selector("body[data-route] .timeline")
            page.set_viewport_size({"width": 1280, "height": 1500})
            page.screenshot(path=str(args.out / "view-episode.png"))
            browser.close()
    print(f"wrote {args.out / 'view-run.png'} and {args.out / 'view-episode.png'}")


if __name__ == "__main__":
    main()
