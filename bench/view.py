"""Report size and time to first render: ``toolgym view`` on runs of 200 and 5,000 episodes, in headless Chromium.

Usage: ``python bench/view.py [--sizes 200,5000] [--styles calls,chat] [--repeat 3] [--base DIR] [--plain]``

The runs are synthetic but made of real parts: first the real runner plays every finance task on seeds
0-2 × 2 trials with the oracle and with the no-op agent (their records and grades are real); then a run of
N episodes is assembled from copies of those records and result lines, each task passing at its own rate.
Two record styles: ``calls`` (tool calls only, like the oracle's records) and ``chat`` (the conversation an
LLM agent logs around the same calls: a system prompt with the policy, the user prompt, one assistant and
one tool message per call — what makes real LLM records several times larger).

For each run: the report's build time (Python: reading, per-category figures and intervals, packing;
the run's ``summary.json`` is written first, as the runner does) and file size, then in Chromium (Debian's, via Playwright)
the median of ``--repeat`` cold page loads (a fresh browser context each): ``render`` is the page's own clock (``performance.now()`` when
its first view is drawn, from navigation start); ``load→ready`` is the same seen from outside (``goto`` to
the page's "rendered" marker); ``episode`` is opening the run's last episode afterwards (inflating its
chunk, drawing its timeline). The baseline row, measured in the same browser, is an empty page.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.agents.noop import NoopAgent  # noqa: E402
from clients.agents.oracle import OracleAgent  # noqa: E402
from clients.results import ResultLine, read_results  # noqa: E402
from clients.runner import RunConfig, run  # noqa: E402
from clients.sft import record_messages  # noqa: E402
from clients.summary import summarize  # noqa: E402
from clients.view import run_report  # noqa: E402
from servers.record import read_record  # noqa: E402
from servers.registry import load_environment  # noqa: E402

__all__ = ["main", "make_base", "synthesize"]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


async def make_base(root: Path) -> dict[str, Path]:
    """Real oracle and no-op runs of every finance task, seeds 0-2 × 2 trials (kept in ``root``)."""
    found = {}
    for name, agent in (("oracle", OracleAgent()), ("noop", NoopAgent())):
        out = root / name
        if not (out / "summary.json").exists():
            await run(RunConfig(env="finance", agent=agent, seeds="0-2", trials=2, out=out, overwrite=True, concurrency=8))
        found[name] = out
    return found


def _chat_events(path: Path, system: str) -> list[dict[str, Any]]:
    """A record's events with the conversation an LLM agent would have logged around its calls."""
    record = read_record(path)
    messages = record_messages(record, system=system)
    calls = {f"call_{c.seq}": c for c in record.tool_calls}
    events: list[dict[str, Any]] = []
    for message in messages:
        events.append({"type": "message", "usage": None, **message})
        for call in message.get("tool_calls") or []:
            events.append(json.loads(calls[call["id"]].model_dump_json()))
    events.append(json.loads(record.closed.model_dump_json()) if record.closed else {"type": "closed", "end_hash": "", "tool_calls": 0})
    return events


def synthesize(base: dict[str, Path], out: Path, episodes: int, style: str) -> Path:
    """A run folder of ``episodes`` episodes assembled from the base runs' real records and grades."""
    if out.exists():
        shutil.rmtree(out)
    (out / "records").mkdir(parents=True)
    lines = {name: {(l.task, l.seed, l.trial): l for l in read_results(p / "results.jsonl").lines} for name, p in base.items()}
    tasks = sorted({task for task, _, _ in lines["oracle"]})
    policy = load_environment("finance").resource("toolgym://finance/policy")
    system = "You are a back-office agent of the bank. Follow the policy.\n\n" + (policy.read() if policy else "")
    agent = "openai:synthetic" if style == "chat" else "synthetic"
    chat_cache: dict[Path, list[dict[str, Any]]] = {}
    written = 0
    seed = 0
    with (out / "results.jsonl").open("w", encoding="utf-8") as results:
        while written < episodes:
            for task in tasks:
                rate = (zlib.crc32(task.encode()) % 5) / 4
                for trial in range(2):
                    if written >= episodes:
                        break
                    roll = zlib.crc32(f"{task}/{seed}/{trial}".encode()) % 1000 / 1000
                    source = lines["oracle" if roll < rate else "noop"][(task, seed % 3, trial)]
                    name = f"{agent.replace(':', '-')}.{task}.s{seed}.t{trial}"
                    src = base["oracle" if roll < rate else "noop"] / str(source.record)
                    header, *rest = src.read_text(encoding="utf-8").splitlines()
                    head = {**json.loads(header), "episode_id": name, "seed": seed}
                    if style == "chat":
                        if src not in chat_cache:
                            chat_cache[src] = _chat_events(src, system)
                        body = [json.dumps(e, ensure_ascii=False) for e in chat_cache[src]]
                    else:
                        body = rest
                    (out / "records" / f"{name}.jsonl").write_text("\n".join([json.dumps(head)] + body) + "\n", encoding="utf-8")
                    tokens = sum(len(json.dumps(e)) for e in (chat_cache.get(src) or [])) // 4
                    line: ResultLine = source.model_copy(
                        update={"agent": agent, "seed": seed, "trial": trial, "episode_id": name, "record": f"records/{name}.jsonl", "tokens": source.tokens.model_copy(update={"total": tokens})}
                    )
                    results.write(line.model_dump_json() + "\n")
                    written += 1
            seed += 1
    # as the runner does at the end of a run (the report reuses it rather than computing it again)
    k = 2 if episodes > len(tasks) else 1
    written_lines = read_results(out / "results.jsonl").lines
    (out / "summary.json").write_text(summarize("finance", written_lines, k=k).model_dump_json(indent=2) + "\n", encoding="utf-8")
    return out


def _measure(browser: Any, path: Path, repeat: int, last_episode: int | None) -> tuple[float, float, float | None]:
    renders, walls, opens = [], [], []
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        started = time.perf_counter()
        page.goto(path.resolve().as_uri(), wait_until="commit")
        page.wait_for_selector("body[data-rendered-ms], body[data-ready]", timeout=120_000)
        walls.append((time.perf_counter() - started) * 1000)
        # the report's own marker; for the baseline page, the end of its DOMContentLoaded
        renders.append(float(page.evaluate("document.body.dataset.renderedMs || performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")))
        if last_episode is not None:
            started = time.perf_counter()
            page.evaluate("n => { document.body.removeAttribute('data-route'); location.hash = '#/ep/0/' + n; }", last_episode)
            page.wait_for_selector("body[data-route] .timeline", timeout=60_000)
            opens.append((time.perf_counter() - started) * 1000)
        if errors:
            raise SystemExit(f"{path}: the console logged errors: {errors[:3]}")
        context.close()
    return statistics.median(renders), statistics.median(walls), statistics.median(opens) if opens else None


def main() -> None:
    """Build the runs, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,5000", help="episode counts, comma-separated")
    parser.add_argument("--styles", default="calls,chat", help="record styles: calls, chat")
    parser.add_argument("--repeat", type=int, default=3, help="cold page loads per report (median)")
    parser.add_argument("--base", type=Path, help="keep the real base runs here (reused when present)")
    parser.add_argument("--plain", action="store_true", help="also measure each report with its details inline, unpacked")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium", help="Chromium executable")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="toolgym-view-bench-") as tmp:
        root = Path(tmp)
        base = anyio.run(make_base, args.base or root / "base")
        rows = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=ARGS)
            empty = root / "empty.html"
            empty.write_text('<!doctype html><meta charset="utf-8"><title>empty</title><body data-ready="1"><p>empty</p>', encoding="utf-8")
            render, wall, _ = _measure(browser, empty, args.repeat, None)
            rows.append(("baseline: empty page", "-", "-", "-", "-", f"{render:.0f}", f"{wall:.0f}", "-"))
            for style in args.styles.split(","):
                for size in (int(s) for s in args.sizes.split(",")):
                    folder = synthesize(base, root / f"run-{style}-{size}", size, style)
                    raw = sum(f.stat().st_size for f in (folder / "records").iterdir()) + (folder / "results.jsonl").stat().st_size
                    for compress in (None, False) if args.plain else (None,):
                        started = time.perf_counter()
                        report = run_report(folder, compress=compress)
                        build = time.perf_counter() - started
                        html = report.write(folder / f"report-{compress}.html")
                        packed = "deflate" if '"mode":"deflate"' in report.html else "plain"
                        render, wall, opened = _measure(browser, html, args.repeat, size - 1)
                        rows.append((f"{size:,} episodes, {style}", f"{raw / 1e6:.1f} MB", f"{html.stat().st_size / 1e6:.1f} MB", packed, f"{build:.1f}", f"{render:.0f}", f"{wall:.0f}", f"{opened:.0f}" if opened else "-"))
            browser.close()
    table = Table(title="toolgym view: report size and time to first render (Chromium headless, medians)", title_justify="left")
    for column in ("report", "run on disk", "HTML file", "details", "build s", "render ms", "load→ready ms", "episode ms"):
        table.add_column(column, justify="left" if column in ("report", "details") else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
