"""The simulated customer: deterministic answers from the planted persona, agreements in the record, nothing
written to the world, nothing revealed that was not asked for; and the optional model-played wording, tested
against a local fake chat-completions server."""

from __future__ import annotations

import anyio
import pytest

from fixtures.persona import Persona, Terms, ask, load_persona, propose
from tests.clients.fake_provider import Reply, openai_message, running_provider
from tests.envs.support.helpers import persona, support_session, task_session


async def test_free_play_has_nobody_on_the_line() -> None:
    async with support_session() as s:
        await s.refused("ask_customer", "no_customer_on_line", topic="order_number")
        await s.refused("propose_resolution", "no_customer_on_line", resolution="refund_original_payment")


async def test_answers_come_from_the_persona_and_write_nothing() -> None:
    async with support_session() as s:
        s.plant(persona(order_number="ORD-104233", photo="ATT-00031"))
        s.world.mark_start()
        start = s.world.hash()
        known = await s.ok("ask_customer", topic="order_number")
        assert known == {"topic": "order_number", "known": True, "value": "ORD-104233", "text": "ORD-104233"}
        unknown = await s.ok("ask_customer", topic="date_of_birth")
        assert unknown["known"] is False and unknown["value"] is None
        agreed = await s.ok("propose_resolution", resolution="refund_original_payment", amount="12.50")
        assert agreed["agreed"] is True and agreed["amount"] == "12.50"
        assert (await s.ok("propose_resolution", resolution="refund_store_credit"))["agreed"] is False
        assert (await s.ok("propose_resolution", resolution="replacement"))["agreed"] is False  # not in the persona's terms
        assert (await s.ok("propose_resolution", resolution="partial_refund", amount="19.99"))["agreed"] is False
        assert (await s.ok("propose_resolution", resolution="partial_refund", amount="20.00"))["agreed"] is True
        assert (await s.ok("propose_resolution", resolution="partial_refund"))["agreed"] is False  # no amount: below the floor
        again = await s.ok("ask_customer", topic="order_number")
        assert again == known, "the same question gets the same answer"
        assert s.world.hash() == start and s.world.diff() == []
        events = s.episode.record.tool_calls
        assert [e.result["agreed"] for e in events if e.tool == "propose_resolution"] == [True, False, False, False, True, False]


_KEEP_SEED = 2
"""A seed of damaged_keep whose case is ``keep`` (the customer has a photo); checked in the test."""


async def test_a_task_plants_its_customer_and_tools_never_show_the_persona() -> None:
    async with task_session("damaged_keep", seed=_KEEP_SEED) as s:  # a seed whose customer has a photo (the world decides)
        planted = load_persona(s.world)
        assert planted is not None and set(planted.facts) >= {"order_number", "which_item", "photo", "email", "date_of_birth"}
        order = planted.facts["order_number"]
        customer = s.one("SELECT customer_id FROM orders WHERE order_id = ?", (order,))["customer_id"]
        seen = str(await s.ok("get_customer", customer_id=customer)) + str(await s.ok("get_order", order_id=order))
        assert planted.facts["date_of_birth"] not in seen and planted.facts["photo"] not in seen
        photo = await s.ok("ask_customer", topic="photo")
        assert photo["value"] == planted.facts["photo"]
        assert s.one("SELECT customer_id FROM attachments WHERE attachment_id = ?", (photo["value"],))["customer_id"] == customer


def test_scripted_replies_are_pure_functions_of_the_persona() -> None:
    who = Persona(name="Ana", wants="a refund", facts={"email": "ana@example.com"}, says={"email": "It's ana@example.com."},
                  terms={"refund_original_payment": Terms(agrees=True, reply="Yes.", min_amount="10.00")})
    assert ask(who, "email").text == "It's ana@example.com." and ask(who, "email") == ask(who, "email")
    assert ask(who, "photo").known is False
    assert propose(who, "refund_original_payment", "10.00").agreed is True
    assert propose(who, "refund_original_payment", "9.99").agreed is False
    assert propose(who, "refund_original_payment", "not a number").agreed is False
    assert propose(who, "goodwill_credit", "5.00").text == who.decline


async def test_a_model_can_word_the_replies_but_never_the_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [Reply(body=openai_message("Sure thing - it's ORD-104233, thanks for checking!")),
              Reply(body=openai_message("Honestly, yes, please put it back on my card.")),
              Reply(status=500, body={"error": {"message": "overloaded"}})]
    with anyio.fail_after(30):
        async with running_provider(script) as provider:
            monkeypatch.setenv("TOOLGYM_CUSTOMER_BASE_URL", provider.url + "/v1")
            monkeypatch.setenv("TOOLGYM_CUSTOMER_MODEL", "customer-sim")
            monkeypatch.setenv("TOOLGYM_CUSTOMER_API_KEY", "k-test")
            async with support_session() as s:
                s.plant(persona("Ana Ruiz", order_number="ORD-104233"))
                worded = await s.ok("ask_customer", topic="order_number")
                assert worded["text"].startswith("Sure thing") and worded["value"] == "ORD-104233" and worded["known"] is True
                offer = await s.ok("propose_resolution", resolution="refund_original_payment", amount="30.00")
                assert offer["agreed"] is True and offer["text"].startswith("Honestly")
                fallback = await s.ok("propose_resolution", resolution="refund_store_credit")
                assert fallback == {"resolution": "refund_store_credit", "amount": None, "agreed": False, "text": "No thanks."}
    first = provider.requests[0]
    assert first.path == "/v1/chat/completions" and first.headers["authorization"] == "Bearer k-test"
    assert first.body["model"] == "customer-sim" and first.body["temperature"] == 0
    system, user = first.body["messages"]
    assert "Ana Ruiz" in system["content"] and "ORD-104233" in user["content"]
    assert system["content"].startswith("You play a customer talking to a support agent.")
