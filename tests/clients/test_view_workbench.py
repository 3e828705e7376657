"""The report as a workbench, in headless Chromium: search reaches into every record, tables sort, error
classes and stop reasons lead to their episodes, filtered rows export, "credited" is explained, counts read
as English, bookkeeping rows fold, and comparisons warn and call only what the evidence supports.

Runs are real (the runner, finance); the browser is Debian's Chromium driven by Playwright
(``tests/clients/chromium.py``). Every page must keep a silent console.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from clients.agents.base import AgentResult, AgentSession
from clients.runner import RunConfig, run
from clients.view import compare_report, run_report

expect = pytest.importorskip("playwright.sync_api").expect
from tests.clients.chromium import Opened, go, launched_chromium, open_report  # noqa: E402
from tests.clients.view_runs import TASKS, run_async, view_runs  # noqa: E402


class SloppyAgent:
    """The oracle, after one call with missing arguments (an ``invalid_arguments`` error whose code is its class)."""

    spec = "sloppy"
    transport: Literal["memory"] = "memory"
    needs_instance = True
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        assert session.instance is not None
        await session.call_tool("get_customer", {})
        for call in session.instance.oracle:
            await session.call_tool(call.tool, dict(call.arguments))
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shared oracle / noop / hostile runs, plus a one-episode sloppy run of a nine-call task and an oracle
    run on other seeds and trials (for a mismatched comparison)."""
    found = view_runs(tmp_path_factory)
    root = tmp_path_factory.mktemp("workbench-runs")

    async def make() -> None:
        # seed 1: the world makes close_brokerage the nine-call case (sell, sweep, close)
        await run(RunConfig(env="finance", agent=SloppyAgent(), tasks="close_brokerage", seeds="1", out=root / "sloppy"))
        await run(RunConfig(env="finance", agent="oracle", tasks=TASKS, seeds="0", out=root / "other-seeds"))

    run_async(make)
    return {**found, "sloppy": root / "sloppy", "other-seeds": root / "other-seeds"}


def quiet(opened: Opened) -> None:
    """The page said nothing on its console and ran no script of the data."""
    page: Any = opened.page
    assert page.evaluate("window.__pwned") is None
    assert opened.errors == [], opened.errors
    page.close()


def counts(page: Any) -> str:
    return page.locator(".counts").inner_text()


def episode_ids(page: Any) -> list[str]:
    return [row.get_attribute("data-episode") for row in page.locator(".episodes tbody tr").all()]


def records_holding(run_dir: Path, text: str) -> set[str]:
    """Episodes whose record file holds ``text`` (what a search of the records must find)."""
    return {p.stem for p in (run_dir / "records").glob("*.jsonl") if text.lower() in p.read_text().lower()}


@pytest.mark.parametrize("pack", [False, True])
def test_search_reaches_tool_names_arguments_results_error_codes_and_ids(chromium: Any, runs: dict[str, Path], tmp_path: Path, pack: bool) -> None:
    hostile = runs["hostile"]
    report = run_report(hostile, compress=pack)
    opened = open_report(chromium, report.write(tmp_path / "run.html"))
    page: Any = opened.page
    events = [json.loads(line) for line in (hostile / "records" / "hostile.cancel_wire.s7.t0.jsonl").read_text().splitlines()]
    record = next(e for e in events if e.get("type") == "tool_call" and e["tool"] == "search_customers")
    result_value = next(v for v in record["result"]["customers"][0].values() if isinstance(v, str) and "@" in v)  # an email
    queries = {
        "CUS-99999": "an argument (the refused get_customer)",
        "not_found": "an error code",
        "no customer CUS-99999": "an error message",
        "reject_transfer": "a tool name",
        result_value: "a value found only in a tool result",
        "hostile.dispute_too_old.s7.t1": "an episode id",
    }
    for query, what in queries.items():
        expected = records_holding(hostile, query) | ({query} if query.startswith("hostile.") else set())
        page.locator("#search").fill(query)
        expect(page.locator(".counts")).to_contain_text(f"{len(expected)} of 12 episodes", timeout=10_000)
        assert set(episode_ids(page)) == expected, (what, query)
        assert expected, (what, query)
    quiet(opened)


def test_a_render_while_typing_keeps_the_text_caret_and_selection_of_the_search_box(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    """A search that settles (or any render) while someone types re-creates the box: what they typed next must
    land where their caret or selection was. Before, the new box lost focus or put the caret at the end, so
    select-all-and-type appended to the old query and the search found nothing (the flaky search test's cause:
    Playwright's fill selects, then types, and a settling search could render in between)."""
    opened = open_report(chromium, run_report(runs["hostile"]).write(tmp_path / "run.html"))
    page: Any = opened.page
    box = page.locator("#search")
    box.fill("not_found")
    expect(page.locator(".counts")).to_contain_text("11 of 12 episodes", timeout=10_000)
    box.focus()
    page.keyboard.press("Control+A")
    render = "document.querySelector('.filters select').dispatchEvent(new Event('change'))"  # re-renders, focus kept
    page.evaluate(render)  # a render between the selection and the typing
    page.keyboard.insert_text("reject_transfer")
    expect(page.locator(".counts")).to_contain_text(f"{len(records_holding(runs['hostile'], 'reject_transfer'))} of 12 episodes", timeout=10_000)
    assert page.locator("#search").input_value() == "reject_transfer"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.evaluate(render)
    page.keyboard.insert_text("_")
    assert page.locator("#search").input_value() == "reject_transf_er"
    quiet(opened)


def test_tables_sort_by_any_column_and_the_episode_list_across_pages(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    opened = open_report(chromium, run_report(runs["hostile"]).write(tmp_path / "run.html"))
    page: Any = opened.page
    tasks = lambda: [r.get_attribute("data-task") for r in page.locator(".tasks tbody tr").all()]  # noqa: E731
    assert tasks() == ["cancel_wire", "dispute_too_old", "savings_to_checking"]
    header = page.locator(".tasks thead th", has_text="pass@1")
    header.click()
    assert tasks()[0] == "savings_to_checking" and header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert tasks()[-1] == "savings_to_checking" and header.get_attribute("aria-sort") == "descending"
    page.locator(".episodes thead th", has_text="score").click()
    scores = [r.locator("td").nth(4).inner_text() for r in page.locator(".episodes tbody tr").all()]
    numbers = [float(s) for s in scores if s != "–"]
    assert numbers == sorted(numbers) and scores[-1] == "–"  # the errored episode has no score: last either way
    page.locator(".episodes thead th", has_text="score").click()
    scores = [r.locator("td").nth(4).inner_text() for r in page.locator(".episodes tbody tr").all()]
    assert [float(s) for s in scores if s != "–"] == sorted(numbers, reverse=True) and scores[-1] == "–"
    quiet(opened)


def test_error_classes_and_stop_reasons_lead_to_their_episodes(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    opened = open_report(chromium, run_report(runs["hostile"]).write(tmp_path / "run.html"))
    page: Any = opened.page
    page.locator('.tool-errors [data-facet="code"][data-value="refused: not_found"]').click()
    assert counts(page).startswith("11 of 12 episodes") and page.locator(".chip").inner_text().startswith("tool error: refused: not_found")
    assert "hostile.dispute_too_old.s7.t1" not in episode_ids(page)
    page.locator("#clear-facet").click()
    page.locator('.infra-errors [data-facet="ecls"][data-value="provider"]').click()
    assert episode_ids(page) == ["hostile.dispute_too_old.s7.t1"]
    page.locator("#clear-facet").click()
    page.locator('.stop-reasons [data-facet="stop"][data-value="done"]').click()
    assert counts(page).startswith("11 of 12 episodes")
    quiet(opened)


def test_filtered_rows_export_as_csv_and_jsonl(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    opened = open_report(chromium, run_report(runs["hostile"]).write(tmp_path / "run.html"))
    page: Any = opened.page
    page.locator("#failed-only").check()
    assert counts(page).startswith("3 of 12")
    with page.expect_download() as got:
        page.locator("#export-csv").click()
    download = got.value
    assert download.suggested_filename == "hostile-episodes.csv"
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    assert sorted(r["id"] for r in rows) == sorted(episode_ids(page))
    errored = next(r for r in rows if r["status"] == "errored")
    assert errored["ecls"] == "provider" and "window.__pwned" in errored["err"]
    with page.expect_download() as got:
        page.locator("#export-jsonl").click()
    lines = [json.loads(line) for line in Path(got.value.path()).read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == [r["id"] for r in rows]
    assert {line["task"] for line in lines} == {"savings_to_checking", "dispute_too_old"} and lines[0]["passed"] in (False, None)
    quiet(opened)


def test_an_episode_reads_plainly_and_folds_its_bookkeeping(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = run_report(runs["sloppy"])
    opened = open_report(chromium, report.write(tmp_path / "run.html"))
    page: Any = opened.page
    assert counts(page) == "1 of 1 episode · 1 pass · 0 fail · 0 infra errors"
    assert page.locator(".tool-errors tbody tr").inner_text().split("\t")[0] == "invalid_arguments"
    go(opened, "ep/0/0")
    page.wait_for_selector(".timeline")
    calls = page.locator('.ev[data-kind="tool_call"]')
    assert calls.count() == 10  # the sloppy call and the nine of the oracle
    first = calls.nth(0).locator(".callerr").inner_text()
    assert first.startswith("invalid_arguments: ") and "invalid_arguments · invalid_arguments" not in first
    assert page.locator(".ev.closed").inner_text() == "closed after 10 tool calls"
    folds = page.locator("details.bookkeeping")
    assert folds.count() >= 4 and all(not d.evaluate("d => d.open") for d in folds.all())
    assert folds.first.locator("summary").inner_text() == "+1 audit_log row (bookkeeping)"
    assert page.locator("#credited-note").inner_text().startswith("credited: whether passing a criterion earns score.")
    assert "untouched world" in page.locator("th.explained").get_attribute("title")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4_800, height  # ten calls, five writes: 6,487 px with every audit row and inserted column open (4,261 now)
    quiet(opened)


def test_comparisons_warn_on_mismatched_runs_and_call_only_what_the_evidence_shows(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    opened = open_report(chromium, compare_report(runs["oracle"], runs["hostile"]).write(tmp_path / "same.html"))
    page: Any = opened.page
    assert page.locator("#compare-warnings").count() == 0
    noise = page.locator('tr.delta-row[data-task="savings_to_checking"]')
    assert noise.get_attribute("data-verdict") == "noise" and "includes 0" in noise.locator(".badge").get_attribute("title")
    assert page.locator('[data-stat="changes"] .stat-sub').inner_text() == "tasks whose 95% interval excludes 0 · 1 task moved within noise"
    ci = page.locator('[data-stat="a_rate"] .stat-sub').inner_text()
    assert ci.startswith("12 / 12 episodes · 95% CI ") and not ci.endswith("100% – 100%")  # Wilson: never zero-width
    quiet(opened)
    opened = open_report(chromium, compare_report(runs["other-seeds"], runs["hostile"]).write(tmp_path / "mismatch.html"))
    page = opened.page
    warning = page.locator("#compare-warnings").inner_text()
    assert "different seeds (A: 0, B: 6-7)" in warning and "different trials per problem (A: 1, B: 2)" in warning
    quiet(opened)
