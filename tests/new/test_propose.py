"""``toolgym new --llm-base-url``: further workflows a model proposes (a scripted local OpenAI-compatible server) are
validated against the spec and kept only when ``toolgym check`` proves their templates."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from clients.cli import main
from tests.clients.fake_provider import Reply, openai_message, running_provider
from tests.new.test_sources import _shop_csv
from toolgym.new.build import import_generated
from toolgym.new.propose import check_proposal, schema_text
from toolgym.new.spec import load_spec

SHIP = {"name": "ship_order", "kind": "transition", "entity": "order", "field": "status", "to": "shipped",
        "description": "Mark a paid order as shipped.",
        "rules": [{"check": "order.status in [paid]", "code": "order_not_paid", "message": "Only paid orders are shipped."}]}
BAD = {"name": "gift_order", "kind": "update", "entity": "order", "fields": ["gift_wrap"]}
UNDESCRIBABLE = {"name": "annul_refund", "kind": "transition", "entity": "refund", "field": "status", "to": "void",
                 "rules": [{"check": "refund.status in [issued]", "code": "refund_not_issued", "message": "Only issued refunds are annulled."}]}


def test_a_proposal_is_checked_against_the_spec(tmp_path: Path) -> None:
    from toolgym.new.build import new_environment

    new_environment("shop", source=_shop_csv(tmp_path / "shop"), out=tmp_path / "out", check=False)
    spec = load_spec(tmp_path / "out" / "shop_env" / "spec.json")
    data = spec.model_dump(mode="json", exclude_defaults=True)
    assert check_proposal(data, SHIP, "p") is None
    assert "no field 'gift_wrap'" in (check_proposal(data, BAD, "p") or "")
    assert "exists already" in (check_proposal(data, {**SHIP, "name": "cancel_order"}, "p") or "")
    assert check_proposal(data, "ship everything", "p") == "not a JSON object"
    bad_rule = {**SHIP, "rules": [{"check": "order.status in [posted]", "code": "x_y", "message": "m"}]}
    assert "'posted' is not a value" in (check_proposal(data, bad_rule, "p") or "")
    text = schema_text(spec)
    assert "order (key id)" in text and "status (category [cancelled, paid, pending, shipped])" in text


def test_proposed_workflows_are_kept_only_when_proved(tmp_path: Path) -> None:
    out = tmp_path / "shop"
    source = _shop_csv(tmp_path / "src")
    proposals = {"actions": [SHIP, BAD, UNDESCRIBABLE]}
    script = [Reply(openai_message(json.dumps(proposals))), *[Reply({"error": {"message": "no rewording"}}, status=400)] * 60]

    async def generate() -> list:
        async with running_provider(script) as provider:
            argv = ["new", "shop", "--from", str(source), "--out", str(out), "--seeds", "2", "--no-attacks",
                    "--llm-base-url", provider.url + "/v1", "--llm-model", "toy", "--llm-api-key-env", "NO_SUCH_KEY_VAR"]

            def cli() -> int:
                with pytest.raises(SystemExit) as done:
                    main(argv)
                return int(done.value.code or 0)

            assert await anyio.to_thread.run_sync(cli) == 0
            return provider.requests

    requests = anyio.run(generate)
    asked = requests[0].body["messages"]
    assert "order (key id)" in asked[1]["content"] and "Policy:" in asked[1]["content"]  # the schema and the policy, no rows
    assert "c1@shop.example" not in json.dumps(asked)
    package = out / "shop_env"
    record = json.loads((package / "proposals.json").read_text())
    status = {p["action"]["name"]: p["status"] for p in record["proposals"]}
    assert status["ship_order"] == "kept", status
    assert status["gift_order"].startswith("rejected: ") and "gift_wrap" in status["gift_order"]
    assert status["annul_refund"].startswith("dropped: ") and "could describe" in status["annul_refund"], status
    kept = json.loads((package / "templates.json").read_text())["kept"]
    assert "do_ship_order" in kept
    policy = (package / "policy.md").read_text()
    assert "`ship_order`" in policy and "annul_refund" not in policy
    tools = set(import_generated(out, "shop_env").tool_specs)
    assert "ship_order" in tools and "annul_refund" not in tools
    # a later run without the flag keeps the kept proposal (and proves it again)
    with pytest.raises(SystemExit) as done:
        main(["new", "shop", "--out", str(out), "--seeds", "2", "--no-attacks"])
    assert done.value.code == 0
    assert "do_ship_order" in json.loads((package / "templates.json").read_text())["kept"]
