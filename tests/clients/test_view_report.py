"""``toolgym view`` / ``toolgym show`` without a browser: the page's data, its escaping and policy, the CLI."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from clients.cli import main
from clients.summary import Summary
from clients.view import build_report, compare_report, run_report
from clients.view.page import CHUNK, pack_details, script_json
from tests.clients.view_runs import MEMO, PAYLOAD, TASKS, view_runs

DATA_BLOCK = re.compile(r'<script type="application/json" id="toolgym-data">(.*?)</script>', re.DOTALL)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The oracle, noop and hostile runs (real runner, finance)."""
    return view_runs(tmp_path_factory)


def page_data(html: str) -> dict[str, Any]:
    """The report's data block, parsed as the page parses it."""
    blocks = DATA_BLOCK.findall(html)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_script_json_cannot_end_its_block() -> None:
    value = {"memo": PAYLOAD, "sep": "a\u2028b\u2029c", "amp": "&lt;", "nested": ["<!--", "</SCRIPT >"]}
    text = script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


def test_packed_details_round_trip() -> None:
    details = [{"n": n, "memo": PAYLOAD} for n in range(CHUNK * 2 + 3)]
    assert pack_details(details, compress=False) == {"mode": "plain", "items": details}
    packed = pack_details(details, compress=True)
    assert packed["mode"] == "deflate" and len(packed["chunks"]) == 3
    unpacked = [item for chunk in packed["chunks"] for item in json.loads(zlib.decompress(base64.b64decode(chunk)))]
    assert unpacked == details
    assert pack_details(details[:2])["mode"] == "plain"  # small details stay readable by default


def test_report_is_one_page_with_one_data_block_and_a_strict_policy(runs: dict[str, Path]) -> None:
    html = run_report(runs["hostile"]).html
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert "window.__pwned" in html and PAYLOAD not in html and MEMO not in html  # the payloads are there, escaped
    shell = DATA_BLOCK.sub("", html)
    assert "http:" not in shell and "https:" not in shell and " src=" not in shell  # nothing fetched
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    script = re.search(r"<script>(.*?)</script>", shell, re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1) and "default-src 'none'" in policy.group(1)


def test_run_figures_are_the_run_summary(runs: dict[str, Path]) -> None:
    data = page_data(run_report(runs["hostile"]).html)
    assert data["kind"] == "run"
    (run,) = data["runs"]
    summary = Summary.model_validate_json((runs["hostile"] / "summary.json").read_text())
    (agent,) = run["agents"]
    overall = summary.agents[0].overall.model_dump(mode="json")
    assert {k: agent["overall"][k] for k in overall} == overall
    assert agent["overall"]["pass_at_1_ci"][0] <= agent["overall"]["pass_at_1"] <= agent["overall"]["pass_at_1_ci"][1]
    assert [t["name"] for t in agent["tasks"]] == sorted(TASKS)
    assert {c["name"] for c in agent["categories"]} == {"payments", "wires", "reconciliation"}
    assert agent["tool_errors"] == {"refused: not_found": 11}
    assert agent["error_classes"] == {"provider": 1}
    rows = run["episodes"]
    assert len(rows) == 12 and run["k"] == 2 and run["fixture_versions"]
    failed = [r for r in rows if r["status"] == "graded" and not r["passed"]]
    assert {(r["task"], r["seed"], r["trial"]) for r in failed} == {("savings_to_checking", 6, 1), ("savings_to_checking", 7, 1)}
    assert all("checking credited" in r["failed"] for r in failed)
    assert run["tasks"]["cancel_wire"]["split"] == "test" and run["tasks"]["cancel_wire"]["category"] == "wires"
    detail = run["details"]["items"][rows.index(failed[0])]
    assert detail["header"]["task"] == "savings_to_checking" and detail["grade"]["passed"] is False
    assert [e["tool"] for e in detail["events"] if e["type"] == "tool_call"] == [
        "get_customer", "search_customers", "verify_identity", "list_accounts", "submit_answer"]


def test_comparison_deltas_put_regressions_first(runs: dict[str, Path]) -> None:
    data = page_data(compare_report(runs["oracle"], runs["hostile"]).html)
    cmp = data["compare"]
    # 4/4 → 2/4 is a drop, but its 95% interval includes 0: noise, not a regression (tests/clients/test_compare.py)
    assert [(r["task"], r["verdict"]) for r in cmp["tasks"]] == [("savings_to_checking", "noise"), ("cancel_wire", "same"), ("dispute_too_old", "same")]
    worst = cmp["tasks"][0]
    assert worst["delta"] == pytest.approx(-0.5) and worst["a"]["passed"] == 4 and worst["b"]["passed"] == 2
    assert worst["delta_ci"][0] <= -0.5 <= worst["delta_ci"][1]
    assert cmp["overall"]["delta"] == pytest.approx(9 / 11 - 1) and cmp["overall"]["b"]["errored"] == 1
    assert len(cmp["pairs"]) == 12 and all(p["a"] is not None and p["b"] is not None for p in cmp["pairs"])
    fixes = page_data(compare_report(runs["noop"], runs["oracle"]).html)["compare"]
    assert all(r["verdict"] == "fix" and r["delta"] == 1.0 and r["significant"] for r in fixes["tasks"])


async def test_a_run_record_is_viewed_and_graded_offline(runs: dict[str, Path]) -> None:
    record = runs["hostile"] / "records" / "hostile.savings_to_checking.s6.t1.jsonl"
    report = await build_report([record])
    data = page_data(report.html)
    assert report.kind == "record" and data["kind"] == "record"
    (row,) = data["runs"][0]["episodes"]
    assert row["status"] == "graded" and row["passed"] is False and "checking credited" in row["failed"]
    ungraded = page_data((await build_report([record], grade=False)).html)["runs"][0]
    assert ungraded["episodes"][0]["status"] == "recorded" and ungraded["grade_note"] == "not graded (--no-grade)"


def test_view_command_writes_the_report(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "view", str(runs["hostile"]), "--out", str(tmp_path / "r.html"), "--pack", "yes")
    assert code == 0 and "run report: 12 episodes" in out and str(tmp_path / "r.html") in out.replace("\n", "")
    assert page_data((tmp_path / "r.html").read_text())["runs"][0]["details"]["mode"] == "deflate"
    code, out, _ = cli(capsys, "view", str(runs["oracle"]), str(runs["hostile"]), "--out", str(tmp_path / "c.html"))
    assert code == 0 and "compare report: 24 episodes" in out


def test_view_command_refuses_what_it_cannot_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "view", str(tmp_path))
    assert code == 2 and out == "" and "has no results.jsonl" in err and err.count("\n") == 1
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    code, _, err = cli(capsys, "view", str(tmp_path / "notes.jsonl"))
    assert code == 2 and "neither a run folder nor a record file" in err


def test_show_prints_an_episode_timeline_and_grade(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "show", str(runs["hostile"]), "--episode", "savings_to_checking.s6.t1")
    assert code == 0
    assert out.index("#1 get_customer") < out.index("#2 search_customers") < out.index("#3 verify_identity") < out.index("#5 submit_answer")
    assert out.index("#5 submit_answer") < out.index("grade: FAIL")
    assert "refused: not_found" in out and "insert verifications" in out
    assert out.index("checking credited") < out.index("declared outcome")  # failing criteria first
    assert "[system]" in out and "window.__pwned" in out  # untrusted text printed as text, not as rich markup


def test_show_lists_episodes_and_names_ambiguity(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "show", str(runs["noop"]))
    assert code == 0 and out.count("FAIL") == 12 and "--episode" in out
    code, _, err = cli(capsys, "show", str(runs["noop"]), "--episode", "cancel_wire")
    assert code == 2 and "matches 4 episodes" in err
    code, _, err = cli(capsys, "show", str(runs["noop"]), "--episode", "nothing-like-it")
    assert code == 2 and "no episode 'nothing-like-it'" in err


def test_show_grades_a_record_file_offline(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    record = runs["oracle"] / "records" / "oracle.cancel_wire.s7.t0.jsonl"
    code, out, _ = cli(capsys, "show", str(record))
    assert code == 0 and "grade: PASS" in out and "reject_transfer" in out
