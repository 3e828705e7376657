"""Transcript rules: must / must-not call (with argument matchers), call order, call and error budgets."""

from __future__ import annotations

from graders.criteria import AnyToolCalled, CallBudget, CallOrder, ToolCalled, ToolNotCalled, number
from graders.tasks import call
from tests.graders.conftest import Evaluate, Run


async def test_tool_called_with_argument_matchers(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 0)
    verify, wire = probe.task.oracle  # type: ignore[union-attr]
    done = await run("transfer_funds", 0, [call("get_account", account_id=5), verify, wire])
    amount = wire.arguments["amount"]

    hit = await evaluate(done, ToolCalled(tool="transfer", args={"amount": number(amount)}))
    assert hit.passed
    assert hit.evidence.startswith(f"1 matching call(s) of transfer(amount={amount}) (needed ≥ 1): #3 transfer(")

    miss = await evaluate(done, ToolCalled(tool="get_account", args={"account_id": 6}))
    assert not miss.passed
    assert miss.evidence == (
        "0 matching call(s) of get_account(account_id=6) (needed ≥ 1); "
        "closest: #1 get_account(account_id=5) → ok: account_id: expected 6, got 5"
    )

    never = await evaluate(done, ToolCalled(tool="freeze_account"))
    assert not never.passed and never.evidence.endswith("freeze_account was never called")

    too_many = await evaluate(done, ToolCalled(tool="transfer", max_count=0, min_count=0))
    assert not too_many.passed and too_many.evidence.startswith("1 matching calls of transfer() (needed ≥ 0 and ≤ 0): #3 transfer(")


async def test_failed_calls_count_only_when_asked(run: Run, evaluate: Evaluate) -> None:
    done = await run("transfer_funds", 0, [call("verify_identity", customer_id=1, passcode="0000")])
    ok_only = await evaluate(done, ToolCalled(tool="verify_identity"))
    assert not ok_only.passed and "it failed (identity_mismatch)" in ok_only.evidence
    assert (await evaluate(done, ToolCalled(tool="verify_identity", status="error"))).passed
    assert (await evaluate(done, ToolCalled(tool="verify_identity", status="any"))).passed


async def test_tool_not_called_counts_attempts(run: Run, evaluate: Evaluate) -> None:
    clean = await run("freeze_compromised", 0, "oracle")
    ok = await evaluate(clean, ToolNotCalled(tool="transfer"))
    assert ok.passed and ok.evidence == "no call of transfer() [any] among 1 calls"

    tried = await run("freeze_compromised", 0, [call("transfer", from_account=1, to_account=2, amount="99999999.00")])
    assert tried.record.tool_calls[0].error is not None  # refused: insufficient funds
    bad = await evaluate(tried, ToolNotCalled(tool="transfer"))
    assert not bad.passed
    assert bad.evidence.startswith("forbidden call(s) made (1): #1 transfer(amount=\"99999999.00\", from_account=1, to_account=2) → refused:insufficient_funds")
    assert (await evaluate(tried, ToolNotCalled(tool="transfer", status="ok"))).passed


async def test_call_order(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 1)
    verify, wire = probe.task.oracle  # type: ignore[union-attr]
    rule = CallOrder(first={"tool": "verify_identity", "args": {"customer_id": verify.arguments["customer_id"]}}, then="transfer")

    good = await evaluate(await run("transfer_funds", 1, [verify, wire]), rule)
    assert good.passed and good.evidence.startswith("#1 verify_identity(") and " precedes #2 transfer(" in good.evidence

    late = await evaluate(await run("transfer_funds", 1, [wire, verify]), rule)
    assert not late.passed
    assert late.evidence.startswith("#1 transfer(") and "came before any verify_identity(customer_id=" in late.evidence

    wrong_person = call("verify_identity", customer_id=verify.arguments["customer_id"] % 20 + 1, passcode="0000")
    other = await evaluate(await run("transfer_funds", 1, [wrong_person, wire]), rule)
    assert not other.passed and "closest: #1 verify_identity(" in other.evidence

    nothing = await run("transfer_funds", 1)
    assert (await evaluate(nothing, rule)).evidence == "no call of transfer(), so nothing to order"
    required = await evaluate(nothing, rule.model_copy(update={"require_then": True}))
    assert not required.passed and required.evidence == "no call of transfer(); transfer was never called"


async def test_call_budget_counts_agent_errors_only(run: Run, evaluate: Evaluate) -> None:
    calls = [call("get_account", account_id=1), call("get_account", account_id=0), call("nonexistent_tool"), call("get_account", account_id=99999)]
    done = await run("balance_lookup", 0, calls)
    classes = [e.error.error_class if e.error else "ok" for e in done.record.tool_calls]
    assert classes == ["ok", "invalid_arguments", "unknown_tool", "refused"]

    within = await evaluate(done, CallBudget(max_calls=4, max_errors=3))
    assert within.passed and within.evidence == "4 calls, 3 agent errors (≤ 4 calls, ≤ 3 errors)"
    over = await evaluate(done, CallBudget(max_calls=3, max_errors=1))
    assert not over.passed
    assert over.evidence.startswith("over budget: 4 calls (max 3); 3 agent errors (max 1): #2 get_account(account_id=0) → invalid_arguments:")


async def test_any_of_several_calls(run: Run, evaluate: Evaluate) -> None:
    done = await run("balance_lookup", 0, [call("find_customer", email="c1@example.test")])
    rule = AnyToolCalled(patterns=[{"tool": "get_account", "args": {"account_id": 2}}, "find_customer"])
    good = await evaluate(done, rule)
    assert good.passed and good.name == "calls get_account(account_id) or find_customer()"  # names never hold expected values
    assert good.evidence.startswith('#1 find_customer(email="c1@example.test") → ok matches find_customer()')
    bad = await evaluate(done, AnyToolCalled(patterns=["get_account", "verify_identity"]))
    assert not bad.passed
    assert bad.evidence == "no call of get_account() or verify_identity(); get_account was never called; verify_identity was never called"


async def test_patterns_can_match_what_a_call_returned(run: Run, evaluate: Evaluate) -> None:
    """A pattern's ``result`` matchers read the call's structured result: a call order can require the *answer* it got."""
    probe = await run("transfer_funds", 0)
    verify, wire = probe.task.oracle  # type: ignore[union-attr]
    done = await run("transfer_funds", 0, [verify, wire])
    verified = done.record.tool_calls[0].result
    assert verified is not None
    field, value = next((k, v) for k, v in verified.items() if isinstance(v, bool | str))
    hit = await evaluate(done, ToolCalled(tool="verify_identity"))
    assert hit.passed
    matching = CallOrder(first={"tool": "verify_identity", "result": {field: value}}, then="transfer")
    assert (await evaluate(done, matching)).passed
    other = "nope" if isinstance(value, str) else not value
    wrong = await evaluate(done, CallOrder(first={"tool": "verify_identity", "result": {field: other}}, then="transfer"))
    assert not wrong.passed and f"result {field}" in wrong.evidence
    assert "→" in CallOrder(first={"tool": "verify_identity", "result": {field: value}}, then="transfer").describe()


def test_result_matchers_are_linted_against_the_output_schema() -> None:
    from envs.support import environment
    from graders.criteria import CallPattern

    assert CallPattern(tool="propose_resolution", result={"agreed": True}).lint(environment, "x") == []
    assert CallPattern(tool="propose_resolution", result={"no_such_field": True}).lint(environment, "x") == [
        "x: the result of tool 'propose_resolution' has no field 'no_such_field'"]
