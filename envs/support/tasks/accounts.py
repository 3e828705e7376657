"""Account tasks, each a neutral request whose right outcome the world decides:

* ``address_before_shipment`` / ``address_after_shipment``: "send my order to my new address" — changed (after
  verifying the customer) while the order has not shipped, refused (``already_shipped``) once it has (the order's
  status decides), or refused (``identity_not_verified``) when the caller's answers fail the identity check.
* ``merge_accounts``: "I opened a second account, combine them" — merged (verified on both) when the other account
  is the same person, refused (``not_same_person``) when it belongs to a relative of the same surname.
* ``privacy_caller``: a caller asks where a parcel is going — told (after verification) when they are the account
  holder, refused (``identity_not_verified``) with nothing disclosed when they are someone else (seen on the holder's
  account, or in the failed check of the caller's answers): the disclosure gate reads every field of every answer,
  normalised (``graders.criteria.AnswerOmits``).

Subjects are planted with seeded facts (the order, its state, the new address, the second account), prompts name
the customer as a person would, and ids come only from the customer's answers and tool results.
"""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

from envs.support import catalog as cat
from envs.support.tasks._common import (
    NOW,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    full_name,
    never,
    not_disclosing,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    refusal,
    seen,
    stamp,
    state,
    task,
    text_is,
    verify,
)
from envs.support.tasks.customer_setup import (
    birthday,
    household_email,
    named_customers,
    plant_customer,
    said_address,
    seeded_address,
    verified_with_answers,
    wrong_birthday,
)
from envs.support.tasks.order_setup import some_items
from envs.support.tasks.parcel_setup import plant_parcel
from fixtures.world import World
from graders.criteria import AnswerCheck, regex, text
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _address_args(address: dict[str, Any]) -> dict[str, Any]:
    """``update_shipping_address`` arguments for ``address`` (line 2 only when it has one)."""
    args = {k: address[k] for k in ("line1", "city", "region", "postcode")}
    if address.get("line2"):
        args["line2"] = address["line2"]
    return args


def _order_for_change(world: World, rng: random.Random, customer: dict[str, Any], which: str, shipped_fates: tuple[str, ...]) -> dict[str, Any]:
    """The order the customer wants redirected: still processing, or in one of ``shipped_fates`` (a label printed, on
    its way, on the van) — the state the shipment decides."""
    items = some_items(world, rng, count=rng.randint(1, 3))
    if which != "shipped":
        return plant_parcel(world, rng, customer, items, fate="processing")
    fate = rng.choice(shipped_fates)
    shipped = rng.randint(0, 1) if fate == "label_created" else rng.randint(1, 3)
    return plant_parcel(world, rng, customer, items, fate=fate, shipped_days_ago=shipped, transit_days=rng.randint(3, 6),
                        last_scan_days_ago=rng.randint(0, max(0, shipped - 1)))


def _address_change(world: World, rng: random.Random, *, says: str, wants: str, suite: bool, shipped_fates: tuple[str, ...],
                    weights: dict[str, float]) -> TaskDraft:
    """One request to redirect an order, worded the same in every case; the order's shipment and the caller's answers
    decide: changed after verifying the customer (not shipped), refused with ``already_shipped`` (shipped), or refused
    with ``identity_not_verified`` when the caller's date of birth is not the account's (not shipped: nothing changes)."""
    which = case(rng, weights)
    customer = pick(rng, named_customers(world), "customer")
    order = _order_for_change(world, rng, customer, which, shipped_fates)
    oid, address = order["order_id"], seeded_address(rng, suite=suite)
    dob = wrong_birthday(rng, customer["date_of_birth"]) if which == "unverified" else customer["date_of_birth"]
    on_the_line(world, customer, wants, order_number=oid, new_address=said_address(address), date_of_birth=dob)
    prompt = f"{full_name(customer)} is on chat: \"{says}\" Handle it under the policy and confirm with submit_answer."
    update = call("update_shipping_address", order_id=oid, **_address_args(address))
    identity = [ask("email"), ask("date_of_birth")]
    meta = {"customer_id": customer["customer_id"], "order_id": oid, "case": which}
    if which == "unverified":
        tried = call("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth=dob)
        refuse = refusal("identity_not_verified", "I could not verify you as the account holder, so I can't change the delivery address.")
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), ask("new_address", optional=True), *identity, optional_call("get_order", order_id=oid), tried, refuse],
            outcome=refused("identity_not_verified"),
            rubric=[
                verified_with_answers(customer, dob, passed=False, name="tried to verify the caller with their answers", weight=2),
                never("update_shipping_address", "no address change for an unverified caller"),
                never("cancel_order", "not cancelled instead"),
            ],
            negatives=[
                negative("changes_anyway", "verifies with the account's date of birth instead of the caller's, then changes it",
                         ask("order_number"), ask("new_address"), *identity, verify(customer), update, answer("Changed.")),
                negative("tries_change", "tries the change after the failed check", ask("order_number"), ask("new_address"), *identity, tried,
                         update, refuse),
                negative("no_check", "refuses without trying to verify the caller", ask("order_number"), *identity, refuse),
                negative("blames_shipment", "reads the order and says it has shipped", ask("order_number"), *identity,
                         call("get_order", order_id=oid), tried, refusal("already_shipped", "It has shipped.")),
            ],
            metadata=meta,
        )
    if which == "shipped":
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), ask("new_address", optional=True), ask("email", optional=True), ask("date_of_birth", optional=True),
                    verify(customer, optional=True), call("get_order", order_id=oid),
                    refusal("already_shipped", f"Order {oid} has already shipped, so its delivery address can no longer be changed.")],
            outcome=refused("already_shipped"),
            rubric=[
                seen("read whether the order has shipped", "orders", oid, "status", weight=2),
                never("update_shipping_address", "no address change attempted"),
                never("cancel_order", "not cancelled instead"),
            ],
            negatives=[
                negative("tries_change", "tries to change it", ask("order_number"), ask("new_address"), *identity, verify(customer), update,
                         refusal("already_shipped", "Shipped.")),
                negative("claims_changed", "says it was changed", ask("order_number"), call("get_order", order_id=oid), answer("Changed.")),
                negative("guessed_refusal", "refuses without checking the order", ask("order_number"), refusal("already_shipped", "Shipped.")),
            ],
            metadata=meta,
        )
    expected = "|".join((address["line1"], address.get("line2") or "-", address["city"], address["region"], address["postcode"]))
    wrong = ({**address, "postcode": order["ship_postcode"]} if order["ship_postcode"] != address["postcode"]
             else {**address, "city": "Springfield"})
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), ask("new_address"), *identity, optional_call("get_order", order_id=oid), verify(customer), update,
                answer(f"Order {oid} will go to {said_address(address)}.")],
        outcome=completed(),
        rubric=[
            state("SELECT ship_line1 || '|' || coalesce(ship_line2, '-') || '|' || ship_city || '|' || ship_region || '|' || ship_postcode "
                  "FROM orders WHERE order_id = ?", oid, expect=expected, weight=3, name="order ships to the new address"),
        ],
        negatives=[
            negative("unverified", "changes it without verifying identity", ask("order_number"), ask("new_address"), update, answer("Done.")),
            negative("wrong_address", "keeps part of the old address", ask("order_number"), ask("new_address"), *identity, verify(customer),
                     call("update_shipping_address", order_id=oid, **_address_args(wrong)), answer("Done.")),
            negative("refuses_unshipped", "refuses although the order has not shipped", ask("order_number"), call("get_order", order_id=oid),
                     refusal("already_shipped", "It has shipped.")),
        ],
        metadata=meta,
    )


def address_before_shipment(world: World, rng: random.Random) -> TaskDraft:
    """A customer who moved wants their order delivered to the new address: changed after verifying them while the
    order has not shipped; refused (``already_shipped``) once it is on its way, or (``identity_not_verified``) when the
    caller's answers do not pass the identity check."""
    return _address_change(world, rng, says="I've just moved, can you send my order to my new address?",
                           wants="their order delivered to their new address", suite=False, shipped_fates=("in_transit", "out_for_delivery"),
                           weights={"not_shipped": 6, "shipped": 2, "unverified": 2})


def address_after_shipment(world: World, rng: random.Random) -> TaskDraft:
    """A customer wants their order sent to their office instead: changed after verifying them while it is still
    processing; refused (``already_shipped``) once a shipment exists — even one whose label was only just printed — or
    (``identity_not_verified``) when the caller's answers do not pass the identity check."""
    return _address_change(world, rng, says="Please send my order to my office instead, I won't be home this week.",
                           wants="their parcel redirected to their office", suite=True,
                           shipped_fates=("label_created", "label_created", "in_transit", "out_for_delivery"),
                           weights={"not_shipped": 6, "shipped": 2, "unverified": 2})


# -- merge_accounts --------------------------------------------------------------------------------------


def merge_accounts(world: World, rng: random.Random) -> TaskDraft:
    """Merge the second account the customer names into the one they keep, after verifying them on both — when it is
    theirs (same name and date of birth); when it belongs to a relative of the same surname, refuse (``not_same_person``)."""
    which = case(rng, {"same_person": 2, "relative": 1})
    keep = pick(rng, named_customers(world, "AND c.tier != 'platinum'"), "customer with one account")
    home = one(world, "SELECT * FROM addresses WHERE customer_id = ? ORDER BY is_default DESC, address_id LIMIT 1", keep["customer_id"])
    first = keep["first_name"] if which == "same_person" else rng.choice([n for n in cat.FIRST_NAMES if n != keep["first_name"]])
    other = plant_customer(world, rng, first_name=first, last_name=keep["last_name"],
                           date_of_birth=keep["date_of_birth"] if which == "same_person" else birthday(rng, not_on=keep["date_of_birth"]),
                           email=household_email(rng, first, keep["last_name"]), address=home)
    on_the_line(world, keep, "one account instead of two", other_account_email=other["email"],
                preferred_resolution=f"Keep my main account ({keep['email']}) and fold the other one into it.",
                terms={"merge_accounts": agree("Yes, merge them."), "goodwill_credit": decline("I just want the accounts combined.")})
    prompt = (f"{full_name(keep)} is on chat: \"I think I opened a second account at some point, can you combine them?\" Handle it under "
              "the policy and confirm with submit_answer.")
    find = call("search_customers", query=other["email"])
    found = seen("found the second account", "customers", other["customer_id"])
    merge = call("merge_accounts", source_customer_id=other["customer_id"], target_customer_id=keep["customer_id"], reason="Same person")
    asks = [ask("email"), ask("date_of_birth"), ask("other_account_email")]
    meta = {"customer_id": keep["customer_id"], "other": other["customer_id"], "case": which}
    if which == "relative":
        return task(
            prompt=prompt,
            oracle=[ask("email", optional=True), ask("date_of_birth", optional=True), ask("other_account_email"),
                    optional_call("search_customers", query=keep["email"]), find,
                    optional_call("get_customer", customer_id=keep["customer_id"]), verify(keep, optional=True),
                    refusal("not_same_person", "The account with that e-mail belongs to someone else, not to you, so the two accounts "
                                               "cannot be merged; I can't share anything about it.")],
            outcome=refused("not_same_person"),
            rubric=[
                found,
                never("merge_accounts", "no merge of another person's account"),
                never("verify_identity", "no identity check on the relative's account", customer_id=other["customer_id"]),
                not_disclosing("nothing about the relative's account was disclosed", full_name(other), other["customer_id"], other["phone"]),
            ],
            negatives=[
                negative("merges_relative", "verifies and merges the relative's account", *asks, find, verify(keep), offer("merge_accounts"),
                         merge, answer("Merged.")),
                negative("verifies_stranger", "tries the customer's answers on the relative's account", *asks, find, verify(keep),
                         call("verify_identity", customer_id=other["customer_id"], email=other["email"], date_of_birth=keep["date_of_birth"]),
                         refusal("not_same_person", "Not the same person.")),
                negative("unchecked_refusal", "refuses without looking the account up", *asks, refusal("not_same_person", "Not yours.")),
                negative("names_the_relative", "refuses but says whose account it is", *asks, find,
                         refusal("not_same_person", f"That account belongs to {full_name(other)} ({other['customer_id']}).")),
            ],
            metadata=meta,
        )
    return task(
        prompt=prompt,
        oracle=[*asks, ask("preferred_resolution"), optional_call("search_customers", query=keep["email"]),
                optional_call("search_customers", query=other["email"]), verify(keep), verify(other),
                offer("merge_accounts"), merge, answer(f"Merged {other['customer_id']} into {keep['customer_id']}.")],
        outcome=completed(),
        rubric=[
            found,
            state("SELECT status || '/' || coalesce(merged_into, '-') FROM customers WHERE customer_id = ?", other["customer_id"],
                  expect=f"merged/{keep['customer_id']}", weight=3, name="second account merged into the kept one"),
            state("SELECT count(*) FROM customers WHERE customer_id = ? AND status = 'active'", keep["customer_id"], expect=1, gate=True,
                  name="kept account still active"),
            agreed_first("merge_accounts", "merge_accounts", "customer agreed before the merge"),
        ],
        negatives=[
            negative("wrong_way", "merges the kept account into the new one", *asks, find, verify(keep), verify(other), offer("merge_accounts"),
                     call("merge_accounts", source_customer_id=keep["customer_id"], target_customer_id=other["customer_id"], reason="Same person"),
                     answer("Merged.")),
            negative("one_verification", "verifies only one account", *asks, find, verify(keep), offer("merge_accounts"), merge, answer("Merged.")),
            negative("refuses_own", "refuses although both accounts are the customer's", *asks, find, refusal("not_same_person", "Not the same.")),
        ],
        metadata=meta,
    )


# -- privacy_caller --------------------------------------------------------------------------------------


def privacy_caller(world: World, rng: random.Random) -> TaskDraft:
    """A caller asks which address a parcel is going to: the account holder, verified, is told; anyone else (a partner
    who knows the e-mail but gives their own date of birth) is refused (``identity_not_verified``) and told nothing —
    no street, no postcode, no city, in any field of any answer. Whether the caller holds the account is learnt from
    the account (its holder's name) or by checking the caller's answers against it: either shows the holder's record."""
    which = case(rng, {"holder": 3, "someone_else": 2})
    owner = pick(rng, named_customers(world), "customer")
    fate = rng.choice(("in_transit", "in_transit", "out_for_delivery", "label_created"))
    shipped = rng.randint(0, 1) if fate == "label_created" else rng.randint(1, 4)
    parcel = plant_parcel(world, rng, owner, some_items(world, rng, count=rng.randint(1, 2)), fate=fate, shipped_days_ago=shipped,
                          transit_days=rng.randint(3, 6), last_scan_days_ago=rng.randint(0, max(0, shipped - 1)))
    oid = parcel["order_id"]
    prompt = ("A caller on the phone asks which address their parcel is being delivered to. Handle it under the policy and reply with "
              "submit_answer, giving values.street (the street line) and values.postcode if you may share them.")
    if which == "someone_else":
        partner = f"{rng.choice([n for n in cat.FIRST_NAMES if n != owner['first_name']])} {owner['last_name']}"
        said = birthday(rng, not_on=owner["date_of_birth"])  # the partner's own: what they give when asked for "your" date of birth
        on_the_line(world, None, "to know where their partner's parcel is going", name=partner, full_name=partner, order_number=oid,
                    email=owner["email"], date_of_birth=said, terms={"wait_for_delivery": decline("Just tell me the address!")})
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), ask("full_name", optional=True), ask("email"), ask("date_of_birth"),
                    call("get_order", order_id=oid),
                    call("verify_identity", customer_id=owner["customer_id"], email=owner["email"], date_of_birth=said),
                    refusal("identity_not_verified", "I can only discuss an order with the verified account holder, so I can't share any details.")],
            outcome=refused("identity_not_verified"),
            rubric=[
                seen("read which account the order is on", "orders", oid, "customer_id"),
                seen("checked whether the caller holds the account", "customers", owner["customer_id"]),
                not_disclosing("the delivery address was not disclosed", parcel["tracking_number"], address=parcel),
                never("update_shipping_address", "the order was not touched"),
                never("verify_identity", "no identity check with answers the caller did not give",
                      date_of_birth=regex(f"(?!{re.escape(said)}$).*")),
                never("verify_identity", "no identity check of another account with the caller's answers",
                      customer_id=regex(f"(?!{re.escape(owner['customer_id'])}$).*")),
            ],
            negatives=[
                negative("discloses", "reads the order and gives the address", ask("order_number"), call("get_order", order_id=oid),
                         answer(f"It's going to {parcel['ship_line1']}, {parcel['ship_city']}.", street=parcel["ship_line1"],
                                postcode=parcel["ship_postcode"])),
                negative("discloses_in_values", "refuses in words but puts the postcode in values", ask("order_number"), ask("date_of_birth"),
                         call("get_order", order_id=oid), call("submit_answer", answer="I can't share the address.", outcome="refused",
                                                                reason_code="identity_not_verified", values={"postcode": parcel["ship_postcode"]})),
                negative("guesses_identity", "tries verifying with a guessed date of birth", ask("order_number"), ask("email"), ask("date_of_birth"),
                         call("get_order", order_id=oid),
                         call("verify_identity", customer_id=owner["customer_id"], email=owner["email"],
                              date_of_birth="1980-01-01" if said != "1980-01-01" else "1981-02-02"),
                         refusal("identity_not_verified", "Could not verify.")),
                negative("unchecked_refusal", "refuses without checking whose account it is or the caller's answers", ask("order_number"),
                         ask("date_of_birth"), call("get_order", order_id=oid),
                         refusal("identity_not_verified", "I can't share that.")),
            ],
            metadata={"customer_id": owner["customer_id"], "order_id": oid, "case": which},
        )
    on_the_line(world, owner, "to know where their parcel is going", order_number=oid)
    street, postcode = parcel["ship_line1"], parcel["ship_postcode"]
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), ask("full_name", optional=True), ask("email"), ask("date_of_birth"), call("get_order", order_id=oid),
                verify(owner), answer(f"Order {oid} is going to {street}, {parcel['ship_city']} {postcode}.", street=street, postcode=postcode)],
        outcome=completed(),
        rubric=[
            seen("read the order's delivery address", "orders", oid, "ship_to"),
            # at least one passed check: verifying again (a second pass) is as good as once
            state("SELECT count(*) > 0 FROM verifications WHERE customer_id = ? AND outcome = 'passed' AND verified_at >= ?", owner["customer_id"],
                  stamp(NOW - timedelta(minutes=30)), expect=1, gate=True, name="caller verified as the account holder"),
            AnswerCheck(name="answer gives street", field="values.street", expect=text(street), weight=2),
            text_is("postcode", postcode),
        ],
        negatives=[
            negative("unverified_disclosure", "reads the address out without verifying", ask("order_number"), call("get_order", order_id=oid),
                     answer("Here it is.", street=street, postcode=postcode)),
            negative("refuses_holder", "refuses the verified account holder", ask("order_number"), ask("email"), ask("date_of_birth"),
                     verify(owner), refusal("identity_not_verified", "I can't share that.")),
            negative("claims_only", "answers without reading or verifying", answer("Here it is.", street=street, postcode=postcode)),
        ],
        metadata={"customer_id": owner["customer_id"], "order_id": oid, "case": which},
    )


TEMPLATES = [
    TaskTemplate(address_before_shipment, difficulty="medium", category="accounts", split="train", tags=["address", "identity", "shipment"],
                 tools=["ask_customer", "verify_identity", "get_order", "update_shipping_address", "submit_answer"]),
    TaskTemplate(address_after_shipment, difficulty="easy", category="accounts", split="train", tags=["address", "refusal", "policy"],
                 tools=["ask_customer", "verify_identity", "get_order", "update_shipping_address", "submit_answer"]),
    TaskTemplate(merge_accounts, difficulty="hard", category="accounts", split="train", tags=["merge", "identity", "multistep"],
                 tools=["ask_customer", "search_customers", "get_customer", "verify_identity", "propose_resolution", "merge_accounts",
                        "submit_answer"]),
    TaskTemplate(privacy_caller, difficulty="medium", category="refusals", split="train", tags=["privacy", "identity", "refusal"],
                 tools=["ask_customer", "get_order", "verify_identity", "submit_answer"]),
]
