"""Customer tools: find and read accounts, verify a customer's identity, merge duplicate accounts, goodwill credit."""

from __future__ import annotations

from datetime import timedelta

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, credit, next_id
from envs.support.types import Amount, CustomerId, Email, IsoDateText, Limit, Offset, Query, Reason
from envs.support.views import credit_balance, customer_view, like_pattern, page
from servers.tools import DomainError, ToolContext, tool

__all__ = ["search_customers", "get_customer", "verify_identity", "merge_accounts", "issue_goodwill_credit"]


@tool(title="Search customers")
async def search_customers(ctx: ToolContext, query: Query, limit: Limit = 20, offset: Offset = 0) -> m.CustomerPage:
    """Find customer accounts whose name, e-mail, phone or id contains `query` (case-insensitive), sorted by name.

    A person may have more than one account (check the e-mail and the status)."""
    params = {"p": like_pattern(query.strip()), "limit": limit, "offset": offset}
    clause = ("(first_name || ' ' || last_name LIKE :p ESCAPE '\\' OR email LIKE :p ESCAPE '\\' OR phone LIKE :p ESCAPE '\\' "
              "OR customer_id LIKE :p ESCAPE '\\')")
    total = ctx.world.query(f"SELECT count(*) AS n FROM customers WHERE {clause}", params)[0]["n"]
    rows = ctx.world.query(f"SELECT * FROM customers WHERE {clause} ORDER BY last_name, first_name, customer_id LIMIT :limit OFFSET :offset",
                           params)
    hits = [m.CustomerSummary(customer_id=r["customer_id"], name=f"{r['first_name']} {r['last_name']}", email=r["email"],
                              tier=r["tier"], status=r["status"]) for r in rows]
    return m.CustomerPage(customers=hits, total=total, next_offset=page(offset, len(hits), total))


@tool(title="Get customer")
async def get_customer(ctx: ToolContext, customer_id: CustomerId) -> m.Customer:
    """A customer's account: contact details, loyalty tier, addresses, store credit, fraud signals, subscriptions,
    and whether their identity was verified in this session. Only for your own work: never pass one customer's
    details on to anyone else."""
    return customer_view(ctx, rules.customer_row(ctx.world, customer_id))


@tool(mutates=True, process=True, title="Verify identity")
async def verify_identity(ctx: ToolContext, customer_id: CustomerId, email: Email, date_of_birth: IsoDateText) -> m.Verification:
    """Check that the person you are helping owns the account: pass the e-mail and date of birth THEY give you
    (ask_customer), never values read from the records. Required before changing an address, a subscription or
    merging accounts; a pass covers 30 minutes. Every attempt is recorded; 3 failures lock verification."""
    customer = rules.customer_row(ctx.world, customer_id)
    since = (ctx.clock.now - timedelta(minutes=rules.VERIFICATION_VALID_MINUTES)).isoformat()
    failures = ctx.world.query("SELECT count(*) AS n FROM verifications WHERE customer_id = ? AND outcome = 'failed' AND verified_at >= ?",
                               (customer_id, since))[0]["n"]
    if failures >= rules.MAX_FAILED_VERIFICATIONS:
        raise DomainError("verification_locked", f"identity verification of {customer_id} is locked after {failures} failed attempts")
    passed = email.strip().lower() == customer["email"].lower() and date_of_birth == customer["date_of_birth"]
    verification_id = next_id(ctx, "verifications")
    ctx.world.execute("INSERT INTO verifications (verification_id, customer_id, outcome, verified_at, performed_by) VALUES (?, ?, ?, ?, ?)",
                      (verification_id, customer_id, "passed" if passed else "failed", rules.now_iso(ctx), rules.AGENT))
    audit(ctx, "verify_identity", "customer", customer_id, outcome="passed" if passed else "failed")
    remaining = rules.MAX_FAILED_VERIFICATIONS - failures - (0 if passed else 1)
    return m.Verification(verification_id=verification_id, customer_id=customer_id, verified=passed, attempts_remaining=remaining)


@tool(mutates=True, destructive=True, title="Merge accounts")
async def merge_accounts(ctx: ToolContext, source_customer_id: CustomerId, target_customer_id: CustomerId, reason: Reason) -> m.Merge:
    """Merge a customer's duplicate account (source) into the one they keep (target): orders, addresses, tickets,
    subscriptions and store credit move to the target and the source is closed as merged. Both accounts must
    belong to the same person (same name and date of birth), be active, have their identity verified in this
    session, and carry no open high-severity fraud signal (then escalate to the fraud team instead)."""
    world = ctx.world
    if source_customer_id == target_customer_id:
        raise DomainError("same_account", "the source and target accounts are the same")
    source, target = rules.customer_row(world, source_customer_id), rules.customer_row(world, target_customer_id)
    for row in (source, target):
        if row["status"] != "active":
            raise DomainError("account_not_active", f"account {row['customer_id']} is {row['status']}")
    if (source["first_name"], source["last_name"], source["date_of_birth"]) != (target["first_name"], target["last_name"], target["date_of_birth"]):
        raise DomainError("not_same_person", "the two accounts do not belong to the same person (name or date of birth differ)")
    for row in (source, target):
        rules.require_no_fraud_review(world, row["customer_id"], "merging accounts")
        rules.require_identity(ctx, row["customer_id"], "merging accounts")
    moved = {}
    for table in ("orders", "tickets", "subscriptions"):
        moved[table] = world.query(f"SELECT count(*) AS n FROM {table} WHERE customer_id = ?", (source_customer_id,))[0]["n"]
        world.execute(f"UPDATE {table} SET customer_id = ? WHERE customer_id = ?", (target_customer_id, source_customer_id))
    world.execute("UPDATE addresses SET customer_id = ?, is_default = 0 WHERE customer_id = ?", (target_customer_id, source_customer_id))
    balance = credit_balance(world, source_customer_id)
    if balance:
        credit(ctx, source_customer_id, -balance, "merge", target_customer_id)
        credit(ctx, target_customer_id, balance, "merge", source_customer_id)
    world.execute("UPDATE customers SET status = 'merged', merged_into = ? WHERE customer_id = ?", (target_customer_id, source_customer_id))
    audit(ctx, "merge_accounts", "customer", source_customer_id, into=target_customer_id, reason=reason)
    return m.Merge(source_customer_id=source_customer_id, target_customer_id=target_customer_id, orders_moved=moved["orders"],
                   tickets_moved=moved["tickets"], subscriptions_moved=moved["subscriptions"], store_credit_moved=rules.money(balance))


@tool(mutates=True, destructive=True, title="Issue goodwill credit")
async def issue_goodwill_credit(ctx: ToolContext, customer_id: CustomerId, amount: Amount, reason: Reason) -> m.CreditEntry:
    """Give a customer goodwill store credit for a poor experience: at most once every 30 days, up to their loyalty
    tier's cap (standard 10.00, silver 20.00, gold 35.00, platinum 50.00). Not while a high-severity fraud signal is open."""
    world = ctx.world
    customer = rules.customer_row(world, customer_id)
    if customer["status"] != "active":
        raise DomainError("account_not_active", f"account {customer_id} is {customer['status']}")
    minor = rules.parse_money(amount)
    cap = rules.GOODWILL_CAPS_MINOR[customer["tier"]]
    if minor > cap:
        raise DomainError("goodwill_cap_exceeded", f"the goodwill cap for a {customer['tier']} customer is {rules.money(cap)}")
    since = (ctx.clock.now - timedelta(days=rules.GOODWILL_INTERVAL_DAYS)).isoformat()
    recent = world.query("SELECT created_at FROM credit_ledger WHERE customer_id = ? AND kind = 'goodwill' AND created_at >= ? "
                         "ORDER BY created_at DESC LIMIT 1", (customer_id, since))
    if recent:
        raise DomainError("goodwill_too_soon", f"customer {customer_id} received goodwill credit on {recent[0]['created_at'][:10]}; "
                                               f"at most one every {rules.GOODWILL_INTERVAL_DAYS} days")
    rules.require_no_fraud_review(world, customer_id, "goodwill credit")
    entry_id = credit(ctx, customer_id, minor, "goodwill", None)
    audit(ctx, "issue_goodwill_credit", "customer", customer_id, amount=rules.money(minor), reason=reason)
    return m.CreditEntry(entry_id=entry_id, customer_id=customer_id, amount=rules.money(minor), kind="goodwill",
                         created_at=rules.now_iso(ctx), balance=rules.money(credit_balance(world, customer_id)))
