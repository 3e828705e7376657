"""Reports as people see them: opened in headless Chromium, checked from the rendered DOM, screenshotted.

Every test also requires a silent console (no error logged, no uncaught exception, no policy violation) and
that no script a record carried ever ran: the hostile agent's payloads would set ``window.__pwned`` or the
page title.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from clients.view import compare_report, record_report, run_report
from servers import load_environment

expect = pytest.importorskip("playwright.sync_api").expect
from tests.clients.chromium import Opened, go, launched_chromium, open_report
from tests.clients.view_runs import EXPECTED, MEMO, PAYLOAD, run_async, view_runs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for this module's tests."""
    with launched_chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The oracle, noop and hostile runs (real runner, finance)."""
    return view_runs(tmp_path_factory)


@pytest.fixture(scope="module")
def served_record(tmp_path_factory: pytest.TempPathFactory, template_cache: str) -> Path:
    """A record written by ``python -m envs.finance serve --record`` while a client wrote a payload note."""
    path = tmp_path_factory.mktemp("served") / "finance.jsonl"
    world = load_environment("finance").fixture.world(0)
    customer = str(world.query("SELECT customer_id FROM customers ORDER BY customer_id LIMIT 1")[0]["customer_id"])
    world.close()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envs.finance", "serve", "--record", str(path)],
        cwd=str(REPO),
        env={**os.environ, "TOOLGYM_CACHE_DIR": template_cache, "TOOLGYM_TOKEN": ""},
    )

    async def play() -> None:
        with anyio.fail_after(60):
            async with Client(params) as client:
                await client.call_tool("add_note", {"customer_id": customer, "body": PAYLOAD})
                await client.call_tool("get_customer", {"customer_id": "CUS-99999"})

    run_async(play)
    return path


def settle(opened: Opened, title: str, shot: Path) -> None:
    """What every page must hold: its title, no script from the data ran, a silent console; then a screenshot."""
    page: Any = opened.page
    assert page.title() == title
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.scripts.length") == 2 and page.evaluate("document.images.length") == 0
    page.screenshot(path=str(shot), full_page=True)
    assert opened.errors == [], opened.errors
    page.close()


def texts(page: Any, selector: str) -> list[str]:
    """The rendered text of every element matching ``selector``."""
    return page.locator(selector).all_inner_texts()


def test_run_page_shows_the_counts_and_pass_rates_of_a_known_run(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = run_report(runs["hostile"])
    opened = open_report(chromium, report.write(tmp_path / "run.html"))
    page: Any = opened.page
    known = EXPECTED["hostile"]
    stat = lambda key: page.locator(f'[data-stat="{key}"] .stat-value').inner_text()  # noqa: E731
    assert (stat("episodes"), stat("pass_at_1"), stat("pass_hat_k"), stat("pass_at_k")) == (
        str(known["graded"]), known["pass_at_1"], known["pass_hat_k"], known["pass_at_k"],
    )
    # the denominator of pass^k and pass@k: problems with k graded trials (the errored trial's problem is not one)
    sub = lambda key: page.locator(f'[data-stat="{key}"] .stat-sub').inner_text()  # noqa: E731
    assert "over 5 problems with 2 graded trials" in sub("pass_hat_k") and "over 5 problems with 2 graded trials" in sub("pass_at_k")
    task_rows = {row.split("\t")[0].split("\n")[0]: row for row in texts(page, ".tasks tbody tr")}
    assert "60% of 1" in task_rows["dispute_too_old"] or "100% of 1" in task_rows["dispute_too_old"], task_rows
    assert " of 2" in task_rows["cancel_wire"], task_rows
    counts = page.locator(".counts")
    assert counts.inner_text() == f"12 of 12 episodes · {known['pass']} pass · {known['fail']} fail · {known['errored']} infra error"
    cells = [page.locator(f'.grid .cell[data-verdict="{v}"]').count() for v in ("pass", "fail", "err")]
    assert cells == [known["pass"], known["fail"], known["errored"]]
    assert texts(page, ".tasks tbody tr td.name") and len(texts(page, ".tasks tbody tr")) == 3
    assert "savings_to_checking" in page.locator('.bars[data-chart="tasks"] .bar-row').nth(2).inner_text()
    assert page.locator('.failed-criteria tr[data-criterion="checking credited"]').inner_text().split("\t")[1] == "2 / 4"
    assert texts(page, ".tool-errors tbody tr") == ["refused: not_found\t11"]
    assert len(texts(page, ".episodes tbody tr")) == 12
    settle(opened, report.title, tmp_path / "run.png")


def test_filters_and_search_narrow_the_run_page(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    opened = open_report(chromium, run_report(runs["hostile"]).write(tmp_path / "run.html"))
    page: Any = opened.page
    page.locator("#failed-only").check()
    assert page.locator(".counts").inner_text().startswith("3 of 12 episodes · 0 pass · 2 fail · 1 infra error")
    assert page.locator(".grid-row").count() == 2 and page.locator(".grid .cell.dim").count() == 5  # cancel_wire never failed
    assert len(texts(page, ".episodes tbody tr")) == 3
    page.locator("#failed-only").uncheck()
    page.locator("label", has_text="category").locator("select").select_option("wires")
    assert page.locator(".counts").inner_text().startswith("4 of 12") and texts(page, ".tasks tbody td.name") == ["cancel_wire"]
    page.locator("label", has_text="category").locator("select").select_option("")
    page.locator("#search").fill("checking credited")
    expect(page.locator(".counts")).to_have_text(re.compile(r"^2 of 12 episodes"))  # after the search box's debounce
    rows = texts(page, ".episodes tbody tr")
    assert {row.split("\t")[1] for row in rows} == {"savings_to_checking"}, rows
    settle(opened, page.title(), tmp_path / "filtered.png")


def test_episode_page_shows_calls_changes_and_the_failing_criterion(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = run_report(runs["hostile"])
    opened = open_report(chromium, report.write(tmp_path / "run.html"))
    page: Any = opened.page
    page.locator('.episodes tr[data-episode="hostile.savings_to_checking.s6.t1"] a').click()
    page.wait_for_selector(".episode .timeline")
    calls = page.locator('.ev[data-kind="tool_call"]')
    assert [calls.nth(i).get_attribute("data-tool") for i in range(calls.count())] == [
        "get_customer", "search_customers", "verify_identity", "list_accounts", "submit_answer"]
    refused = calls.nth(0).inner_text()
    assert "refused" in refused and "not_found" in refused and "no customer CUS-99999" in refused
    assert [c.get_attribute("data-op") for c in calls.nth(2).locator(".change").all()] == ["insert", "insert"]  # verify_identity
    # failing gates first: the claim of a transfer nobody made, then the missing credit
    assert page.locator(".notice.fail").get_attribute("data-first") == "claims consistent with the world"
    states = [row.get_attribute("data-state") for row in page.locator("tr.crit").all()]
    failing = [row.get_attribute("data-criterion") for row in page.locator("tr.crit").all() if row.get_attribute("data-state") == "fail"]
    assert states == ["fail"] * len(failing) + ["pass"] * (len(states) - len(failing)) and "checking credited" in failing
    assert page.locator("tr.crit").first.get_attribute("data-criterion") == "claims consistent with the world"
    assert page.locator('[data-hash="start"]').inner_text().startswith("sha256:")
    assert page.locator('.ev[data-role="assistant"]').count() == 2
    settle(opened, report.title, tmp_path / "episode.png")


def test_injected_scripts_render_as_text_and_never_run(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = run_report(runs["hostile"])
    html = report.write(tmp_path / "run.html")
    opened = open_report(chromium, html, "ep/0/8")  # savings_to_checking seed 6 trial 0: the memo is written
    page: Any = opened.page
    assert PAYLOAD in texts(page, '.ev[data-role="assistant"] .say')[0]
    assert MEMO in page.locator('.ev[data-tool="transfer_internal"] .change td.new').all_inner_texts()
    assert json.dumps(PAYLOAD)[1:-1] in page.locator('.ev[data-tool="submit_answer"] .sig').inner_text()  # as JSON
    go(opened, "ep/0/7")  # dispute_too_old seed 7 trial 1: the infrastructure error carries a payload
    assert PAYLOAD in page.locator(".notice.err").inner_text()
    go(opened, "run/0")
    assert any(PAYLOAD in row for row in texts(page, ".episodes tbody tr"))
    settle(opened, report.title, tmp_path / "hostile.png")


def test_comparison_shows_deltas_regressions_first_and_episodes_side_by_side(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = compare_report(runs["oracle"], runs["hostile"])
    opened = open_report(chromium, report.write(tmp_path / "compare.html"))
    page: Any = opened.page
    rows = page.locator("tr.delta-row").all()
    assert [(r.get_attribute("data-task"), r.get_attribute("data-verdict")) for r in rows] == [
        ("savings_to_checking", "noise"), ("cancel_wire", "same"), ("dispute_too_old", "same"),
    ]
    assert [r.locator("td.delta").inner_text() for r in rows] == ["−50.0 pts", "±0.0 pts", "±0.0 pts"]
    assert page.locator('[data-stat="delta"] .stat-value').inner_text() == "−18.2 pts"
    assert page.locator('[data-stat="changes"] .stat-value').inner_text() == "0 · 0"  # −50 pts on 4 trials is within noise
    pairs = page.locator("#pairs tbody tr").all()
    assert len(pairs) == 4
    pairs[1].locator("a").click()  # seed 6 trial 1: the oracle passed, the hostile agent missed the transfer
    page.wait_for_selector('.side-col[data-side="B"] .timeline')
    a, b = page.locator('.side-col[data-side="A"]'), page.locator('.side-col[data-side="B"]')
    assert a.locator(".ep-title .badge").inner_text() == "PASS" and b.locator(".ep-title .badge").inner_text() == "FAIL"
    assert a.locator('.ev[data-tool="transfer_internal"]').count() == 1 and b.locator('.ev[data-tool="transfer_internal"]').count() == 0
    assert b.locator(".notice.fail").get_attribute("data-first") == "claims consistent with the world"
    settle(opened, report.title, tmp_path / "side-by-side.png")


def test_packed_details_are_inflated_when_an_episode_is_opened(chromium: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = run_report(runs["noop"], compress=True)
    opened = open_report(chromium, report.write(tmp_path / "packed.html"), "ep/0/11")
    page: Any = opened.page
    assert page.evaluate("JSON.parse(document.getElementById('toolgym-data').textContent).runs[0].details.mode") == "deflate"
    assert page.locator(".ep-title").inner_text().startswith("FAIL")
    assert "declared outcome" in page.locator("tr.crit").first.inner_text()
    assert page.locator(".timeline").inner_text().startswith("No tool call and no message")
    settle(opened, report.title, tmp_path / "packed.png")


def test_a_served_record_renders_as_one_episode(chromium: Any, served_record: Path, tmp_path: Path) -> None:
    report = run_async(record_report, served_record)
    opened = open_report(chromium, report.write(tmp_path / "record.html"))
    page: Any = opened.page
    assert [c.get_attribute("data-tool") for c in page.locator('.ev[data-kind="tool_call"]').all()] == ["add_note", "get_customer"]
    assert PAYLOAD in page.locator('.ev[data-tool="add_note"] .change td.new').all_inner_texts()
    assert "refused" in page.locator('.ev[data-tool="get_customer"]').inner_text()
    assert "free play" in page.locator("section", has_text="Grade").inner_text()
    assert page.locator('[data-hash="start"]').inner_text() != page.locator('[data-hash="end"]').inner_text()
    settle(opened, report.title, tmp_path / "record.png")
