"""Coherent worlds: planted rows keep their parents' timeline, counterparts answer in words that fit."""

from __future__ import annotations

import dataclasses

from envs.finance import environment as finance
from envs.support import environment as support
from fixtures.persona import Persona, ask, plant_persona
from graders.consistency import consistency_problems, counterpart_problems, timeline_problems

TIMELINE = {"cards": "issued_on", "transactions": "txn_date", "accounts": "opened_on"}


def test_a_charge_before_its_card_was_issued_is_reported() -> None:
    env = dataclasses.replace(finance, timeline=TIMELINE)
    world = env.fixture.world(0)
    try:
        card = world.query("SELECT card_id, issued_on FROM cards WHERE status = 'active' ORDER BY card_id LIMIT 1")[0]
        txn = world.query("SELECT txn_id FROM transactions WHERE card_id = ? ORDER BY txn_id LIMIT 1", (card["card_id"],))[0]
        assert timeline_problems(env, world) == []
        world.execute("UPDATE transactions SET txn_date = '2001-01-01' WHERE txn_id = ?", (txn["txn_id"],))
        problems = timeline_problems(env, world)
        assert any(f"planted transactions ['{txn['txn_id']}']" in p and f"cards {card['card_id']}" in p for p in problems), problems
    finally:
        world.release()


def test_a_card_issued_after_its_planted_charges_is_reported() -> None:
    env = dataclasses.replace(finance, timeline=TIMELINE)
    world = env.fixture.world(0)
    try:
        card = world.query("SELECT c.card_id FROM cards c WHERE EXISTS (SELECT 1 FROM transactions t WHERE t.card_id = c.card_id) "
                           "ORDER BY c.card_id LIMIT 1")[0]["card_id"]
        world.execute("UPDATE cards SET issued_on = '2099-01-01' WHERE card_id = ?", (card,))
        problems = timeline_problems(env, world)
        assert any(f"planted cards ['{card}']" in p and "later than transactions" in p for p in problems), problems
        assert timeline_problems(finance, world) == []  # nothing declared: nothing checked
    finally:
        world.release()


def test_a_counterpart_answers_the_topics_every_counterpart_can_speak_to() -> None:
    env = dataclasses.replace(support, persona_topics=("preferred_resolution",))
    world = env.fixture.world(0)
    try:
        assert counterpart_problems(env, world) == []  # free play: nobody on the line
        plant_persona(world, Persona(name="Ada", wants="a refund for the broken kettle"))
        problems = counterpart_problems(env, world)
        assert problems and "preferred_resolution" in problems[0] and "Persona.says" in problems[0]
        fitting = Persona(name="Ada", wants="a refund", says={"preferred_resolution": "A refund, please."})
        plant_persona(world, fitting)
        assert counterpart_problems(env, world) == []
        answer = ask(fitting, "preferred_resolution")
        assert not answer.known and answer.text == "A refund, please."  # a line, not a fact the graders read
    finally:
        world.release()


def test_environment_checks_are_added_and_each_is_reported() -> None:
    env = dataclasses.replace(finance, consistency=lambda world, instance: [f"prompt of {instance.template_id} disagrees"])
    world, instance = env.instantiate_task("small_wire", 0)
    try:
        assert "prompt of small_wire disagrees" in consistency_problems(env, world, instance)
    finally:
        world.release()
