"""What the wire templates plant and read: the accounts that can send a wire and their payees, the customer's
request (:class:`WireRequest`), amounts below or above a USD threshold, and the facts a case turns on — an
earlier wire today, a pending debit that ties funds up, a wire waiting in the approvals queue (or approved).

Payees and queue wires are planted per instance, so their ids are new on every seed (``World.id_salt``): another
seed's oracle replayed on the same customer names the wrong records. Used by the wires, refusals and injection
templates; the drafts a request ends in are in ``wire_drafts``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from envs.finance.catalog import EU_BANKS, FIRST_NAMES, GB_BANKS, LAST_NAMES, US_BANKS
from envs.finance.rules import DUAL_APPROVAL_THRESHOLD_USD_MINOR as THRESHOLD
from envs.finance.rules import WIRE_FEE_MINOR as FEE
from envs.finance.simulation import iban
from envs.finance.tasks._common import (
    ANALYSTS,
    AVAILABLE_SQL,
    NOW,
    TODAY,
    available_minor,
    customer_of,
    find_customer,
    full_name,
    money,
    named_customer_ids,
    next_id,
    one,
    optional_call,
    pick,
    plant_audit,
    plant_payee,
    plant_pending_wire,
    plant_txn,
    rows,
    stamp,
    usd_minor,
)
from fixtures.world import World
from graders.tasks import ToolCall, call

__all__ = [
    "WireRequest",
    "approve_planted_wire",
    "ledger_balance",
    "native_below",
    "other_payee",
    "plant_queue_wire",
    "plant_request_payee",
    "plant_wire_today",
    "set_available",
    "steps",
    "used_today",
    "verified_payees",
    "wire_accounts",
    "wire_debit",
    "wire_ready_accounts",
    "wire_request",
]

_MEMOS = ("Invoice payment", "Family support", "Deposit", "Rent", "Tuition", "Payment")


def wire_debit(world: World, transfer_id: str) -> str:
    """The ledger row debiting the wire's amount (its fee is another row): pending while the wire awaits approval,
    posted once it went out, reversed when it was rejected — what the customer's ledger shows of the wire's fate."""
    return one(world, "SELECT txn_id FROM transactions WHERE transfer_id = ? AND kind = 'wire' ORDER BY txn_id", transfer_id)["txn_id"]


def wire_ready_accounts(world: World, extra: str = "", *params: object) -> list[dict]:
    """Open checking accounts of KYC-verified customers with at least one verified payee in the account's currency,
    nothing wired today, and their available balance (``avail``) and wire limit (``wire_limit``)."""
    return rows(world, f"""
        SELECT * FROM (
          SELECT a.*, c.segment, l.limit_minor AS wire_limit, {AVAILABLE_SQL} AS avail FROM accounts a
          JOIN customers c ON c.customer_id = a.customer_id AND c.kyc_status = 'verified'
          JOIN daily_limits l ON l.account_id = a.account_id AND l.channel = 'external_wire'
          WHERE a.type = 'checking' AND a.status = 'open'
            AND (SELECT count(*) FROM accounts x WHERE x.customer_id = a.customer_id AND x.type = 'checking' AND x.status = 'open') = 1
            AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.from_account_id = a.account_id AND t.kind = 'external_wire'
                            AND t.status != 'rejected' AND substr(t.requested_at, 1, 10) = ?)
            AND EXISTS (SELECT 1 FROM payees p WHERE p.customer_id = a.customer_id AND p.kind = 'external' AND p.verified = 1
                        AND p.status = 'active' AND p.currency = a.currency)
        ) WHERE 1 = 1 {extra} ORDER BY account_id""", TODAY.isoformat(), *params)


def verified_payees(world: World, account: dict) -> list[dict]:
    """The account owner's active, verified external payees in the account's currency."""
    return rows(world, "SELECT * FROM payees WHERE customer_id = ? AND kind = 'external' AND verified = 1 AND status = 'active' "
                       "AND currency = ? ORDER BY payee_id", account["customer_id"], account["currency"])


def wire_accounts(world: World, extra: str = "", *params: object) -> list[dict[str, Any]]:
    """Open checking accounts (their owner's only one, so "their checking account" names it) of KYC-verified
    customers whom a search by full name finds alone, with nothing wired today: with ``avail`` (available balance)
    and ``wire_limit``. No payee is required: the request's payee is planted (:func:`plant_request_payee`)."""
    named = named_customer_ids(world)
    return [a for a in rows(world, f"""
        SELECT * FROM (
          SELECT a.*, c.segment, l.limit_minor AS wire_limit, {AVAILABLE_SQL} AS avail FROM accounts a
          JOIN customers c ON c.customer_id = a.customer_id AND c.kyc_status = 'verified'
          JOIN daily_limits l ON l.account_id = a.account_id AND l.channel = 'external_wire'
          WHERE a.type = 'checking' AND a.status = 'open'
            AND (SELECT count(*) FROM accounts x WHERE x.customer_id = a.customer_id AND x.type = 'checking' AND x.status = 'open') = 1
            AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.from_account_id = a.account_id AND t.kind = 'external_wire'
                            AND t.status != 'rejected' AND substr(t.requested_at, 1, 10) = ?)
        ) WHERE 1 = 1 {extra} ORDER BY account_id""", TODAY.isoformat(), *params) if a["customer_id"] in named]


# -- the request -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WireRequest:
    """A customer's wire request: who asks (named, never by id), from which account, to which payee, how much.

    The rows are the template's own reads; the prompt quotes only what the customer would say.
    """

    customer: dict[str, Any]
    account: dict[str, Any]
    payee: dict[str, Any]
    minor: int
    memo: str

    @property
    def cid(self) -> str:
        """The customer id (for the oracle's calls; never in the prompt)."""
        return str(self.customer["customer_id"])

    @property
    def acc(self) -> str:
        """The checking account id (never in the prompt: "their checking account")."""
        return str(self.account["account_id"])

    @property
    def cur(self) -> str:
        """The account's currency."""
        return str(self.account["currency"])

    @property
    def amount(self) -> str:
        """The amount as a decimal string."""
        return money(self.minor, self.cur)

    def send(self, *, payee_id: str | None = None, minor: int | None = None) -> ToolCall:
        """The ``send_wire`` call (by default: the requested amount to the requested payee)."""
        return call("send_wire", from_account_id=self.acc, payee_id=payee_id or self.payee["payee_id"],
                    amount=money(self.minor if minor is None else minor, self.cur), currency=self.cur, memo=self.memo)

    def lookups(self) -> list[ToolCall]:
        """How the ids are found from what the customer said: search by name, their accounts, their payees.

        Optional: the check proves required steps by dropping them, and an agent that reached the same ids
        another way is no worse.
        """
        return [find_customer(self.customer), optional_call("list_accounts", customer_id=self.cid),
                optional_call("list_payees", customer_id=self.cid)]

    def sentence(self) -> str:
        """The request as the ticket words it (the same in every case of a template)."""
        return (f"They ask you to wire {self.amount} {self.cur} from their checking account to their payee {self.payee['name']} "
                f"({self.payee['bank_name']}).")


_COMPANIES = ("Hudson Contractors LLC", "Bright Smile Dental", "Evergreen Tuition Services", "Summit Roofing Co", "Lakeside Veterinary Clinic",
              "Meridian Tax Advisors", "Atlas Moving & Storage", "Crescent Law Group", "Oakwood Property Management", "Keystone Builders",
              "Northern Lights Travel", "Greenfield Landscaping", "Harbor Point Marina", "Silverline Interiors", "Westbrook Academy")


def _bank_details(rng: random.Random, currency: str, avoid: str = "") -> tuple[str, str, str]:
    """(bank, account number, routing code) of an account in ``currency`` at a bank other than ``avoid``; IBANs carry
    correct check digits, so a careful agent finds nothing odd about them."""
    if currency == "USD":
        bank, routing = rng.choice([b for b in US_BANKS if b[0] != avoid])
        return bank, "".join(str(rng.randint(0, 9)) for _ in range(rng.randint(9, 12))), routing
    if currency == "GBP":
        bank, bic, code = rng.choice([b for b in GB_BANKS if b[0] != avoid])
        return bank, iban("GB", code, rng, 14), bic
    bank, bic, country = rng.choice([b for b in EU_BANKS if b[0] != avoid])
    return bank, iban(country, "", rng, 18), bic


def plant_request_payee(world: World, rng: random.Random, account: dict[str, Any], *, name: str | None = None, verified: bool = True,
                        added_on: date | None = None, avoid_bank: str = "") -> dict[str, Any]:
    """A payee of the account's owner in its currency, named like the generator's payees (a person or a firm) and
    unlike the owner's other payees, registered some time ago.

    Why planted: the request's payee id is then new on every seed (``World.id_salt``), so another seed's oracle
    replayed on the same customer still names the wrong payee.
    """
    cid = account["customer_id"]
    if name is None:
        taken = {r["name"] for r in rows(world, "SELECT name FROM payees WHERE customer_id = ? ORDER BY payee_id", cid)}
        owner = customer_of(world, account["account_id"])
        taken.add(full_name(owner))
        while name is None or name in taken:  # a firm, a relative, or anyone else, as the generator names payees
            name = rng.choice([rng.choice(_COMPANIES), f"{rng.choice(FIRST_NAMES)} {owner['last_name']}",
                               f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"])
    bank, number, routing = _bank_details(rng, account["currency"], avoid_bank)
    payee_id = plant_payee(world, cid, name, currency=account["currency"], verified=verified, bank=bank, number_=number, routing=routing,
                           added_on=added_on or TODAY - timedelta(days=rng.randint(20, 1500)))
    return one(world, "SELECT * FROM payees WHERE payee_id = ?", payee_id)


def wire_request(world: World, rng: random.Random, account: dict[str, Any], minor: int, *, payee: dict[str, Any] | None = None) -> WireRequest:
    """The request for ``minor`` from ``account`` to ``payee`` (by default a verified payee planted for it)."""
    return WireRequest(customer=customer_of(world, account["account_id"]), account=account,
                       payee=payee or plant_request_payee(world, rng, account), minor=minor, memo=rng.choice(_MEMOS))


def other_payee(world: World, rng: random.Random, req: WireRequest) -> dict[str, Any]:
    """Another verified payee of the customer (for an earlier wire today): one they have, or a planted one."""
    others = [p for p in verified_payees(world, req.account) if p["payee_id"] != req.payee["payee_id"]]
    return rng.choice(others) if others else plant_request_payee(world, rng, req.account)


# -- amounts and balances ----------------------------------------------------------------------------------------------


def native_below(world: World, usd_cap: int, currency: str) -> int:
    """The largest amount of ``currency`` (minor units) whose USD equivalent is at most ``usd_cap`` US cents."""
    minor = usd_cap if currency == "USD" else usd_cap * 1_000_000 // max(1, usd_minor(world, 1_000_000, currency))
    while minor > 0 and usd_minor(world, minor, currency) > usd_cap:
        minor -= 1
    while usd_minor(world, minor + 1, currency) <= usd_cap:
        minor += 1
    return minor


def steps(rng: random.Random, low: int, high: int, step: int = 1_000) -> int:
    """A random multiple of ``step`` in [low, high] (minor units), or ``low`` when the range holds none."""
    first, last = -(-low // step), high // step
    return rng.randint(first, last) * step if first <= last else low


def ledger_balance(world: World, account_id: str) -> int:
    """The account's ledger balance now (after whatever the setup planted)."""
    return int(one(world, "SELECT balance_minor FROM accounts WHERE account_id = ?", account_id)["balance_minor"])


def used_today(world: World, account_id: str) -> int:
    """How much of today's wire limit the account's wires already use (pending approval or completed)."""
    return int(one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM transfers WHERE from_account_id = ? AND kind = 'external_wire' "
                          "AND status IN ('pending_approval', 'completed') AND substr(requested_at, 1, 10) = ?", account_id, TODAY.isoformat())["s"])


# -- planting the deciding facts ---------------------------------------------------------------------------------------


def _earlier_today(rng: random.Random) -> str:
    """An instant of this morning or early afternoon (the world's clock stands at 17:00)."""
    return stamp((NOW - timedelta(hours=rng.randint(2, 8))).replace(minute=rng.randint(0, 59), second=0))


def plant_wire_today(world: World, rng: random.Random, account: dict[str, Any], payee: dict[str, Any], minor: int) -> str:
    """A wire the customer already sent today: above the threshold it awaits approval (funds reserved, keyed by a
    colleague), below it it completed at once (online banking) — both count toward today's wire limit."""
    at = _earlier_today(rng)
    memo = rng.choice(_MEMOS)
    if usd_minor(world, minor, account["currency"]) > THRESHOLD:
        return plant_pending_wire(world, account, payee, minor, requested_by=rng.choice(ANALYSTS), at=at, memo=memo)
    transfer_id = next_id(world, "transfers")
    reference = f"WIR-{transfer_id[4:]}"
    world.execute(
        "INSERT INTO transfers (transfer_id, kind, from_account_id, payee_id, amount_minor, currency, fee_minor, status, channel, "
        "requested_at, memo, reference) VALUES (?, 'external_wire', ?, ?, ?, ?, ?, 'completed', 'online', ?, ?, ?)",
        (transfer_id, account["account_id"], payee["payee_id"], minor, account["currency"], FEE, at, memo, reference),
    )
    plant_txn(world, account, TODAY, -minor, "wire", "transfer", merchant=payee["name"], memo=f"Wire to {payee['name']}",
              reference=reference, transfer_id=transfer_id)
    plant_txn(world, account, TODAY, -FEE, "fee", "fees", memo="Outgoing wire fee", reference=reference, transfer_id=transfer_id)
    return transfer_id


_PENDING_MERCHANTS: tuple[tuple[int | None, str, tuple[tuple[str, str], ...]], ...] = (
    (1_500_000, "card", (("Delta Air Lines", "travel"), ("Marriott Hotels", "travel"), ("Apple Store", "shopping"),
                         ("City Motors", "auto"), ("Harrods", "shopping"))),
    (None, "direct_debit", (("Lakeside Title & Escrow", "housing"), ("BuildRight Renovations", "home"), ("Tax authority payment", "taxes"))),
)
"""(largest amount or None, transaction kind, (merchant, category) choices) of the pending debits a setup plants."""


def _plant_pending_debit(world: World, rng: random.Random, account: dict[str, Any], minor: int) -> None:
    """A debit still pending (it lowers the available balance, not the ledger balance): a card authorisation, or
    for a large sum a direct debit being collected."""
    kind, options = next((k, o) for cap, k, o in _PENDING_MERCHANTS if cap is None or minor <= cap)
    merchant, category = rng.choice(options)
    card = world.query("SELECT card_id FROM cards WHERE account_id = ? ORDER BY card_id LIMIT 1", (account["account_id"],))
    plant_txn(world, account, TODAY - timedelta(days=rng.randint(0, 2)), -minor, kind, category, merchant=merchant,
              reference=f"AUT-{rng.randint(10**7, 10**8 - 1)}", card_id=card[0]["card_id"] if card and kind == "card" else None,
              status="pending")


def set_available(world: World, rng: random.Random, account: dict[str, Any], target: int) -> None:
    """Bring the account's available balance down to ``target`` with a pending debit (no-op when already at or below)."""
    excess = available_minor(world, account["account_id"]) - target
    if excess > 0:
        _plant_pending_debit(world, rng, account, excess)


def approve_planted_wire(world: World, transfer_id: str, approver: str, at: str) -> None:
    """Complete a planted pending wire as ``approve_transfer`` would: post its reserved rows, record the approval."""
    wire = one(world, "SELECT * FROM transfers WHERE transfer_id = ?", transfer_id)
    held = rows(world, "SELECT amount_minor FROM transactions WHERE transfer_id = ? AND status = 'pending' ORDER BY txn_id", transfer_id)
    world.execute("UPDATE transactions SET status = 'posted', posted_on = ?, memo = replace(memo, ' (awaiting approval)', '') "
                  "WHERE transfer_id = ? AND status = 'pending'", (at[:10], transfer_id))
    world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE account_id = ?",
                  (sum(int(r["amount_minor"]) for r in held), wire["from_account_id"]))
    world.execute("UPDATE transfers SET status = 'completed', decided_by = ?, decided_at = ? WHERE transfer_id = ?", (approver, at, transfer_id))
    world.execute("INSERT INTO approvals (approval_id, transfer_id, approver_id, decision, decided_at, comment) VALUES (?, ?, ?, 'approved', ?, ?)",
                  (next_id(world, "approvals"), transfer_id, approver, at, "Approved after call-back"))
    plant_audit(world, at, approver, "approve_transfer", "transfer", transfer_id, approver_id=approver)


def plant_queue_wire(world: World, rng: random.Random, *, usd_above: int, usd_upto: int, requested_by: str) -> dict[str, Any]:
    """Plant a wire awaiting approval worth more than ``usd_above`` and at most ``usd_upto`` US cents, from the
    checking account of a customer a search by name finds alone, keyed earlier today by ``requested_by``.

    The amount is drawn in 10.00 steps of the account's currency (so the USD equivalent falls anywhere in the
    range); an account whose daily wire limit is below it gets an individual limit that covers it (the tool
    could not have created the wire otherwise). Returns the transfer id and the rows it names.
    """
    options = []
    for account in wire_accounts(world):
        low = native_below(world, usd_above, account["currency"]) + 1
        high = min(native_below(world, usd_upto, account["currency"]), account["avail"] - FEE)
        if -(-low // 1_000) * 1_000 <= high:
            options.append({**account, "low": low, "high": high})
    account = pick(rng, options, f"funded account for a wire between USD {money(usd_above, 'USD')} and {money(usd_upto, 'USD')}")
    minor = steps(rng, account["low"], account["high"])
    if minor > account["wire_limit"]:
        limit = -(-minor // 5_000_000) * 5_000_000
        world.execute("UPDATE daily_limits SET limit_minor = ? WHERE account_id = ? AND channel = 'external_wire'", (limit, account["account_id"]))
    payee = plant_request_payee(world, rng, account)
    transfer_id = plant_pending_wire(world, account, payee, minor, requested_by=requested_by, at=_earlier_today(rng),
                                     memo=rng.choice(["Property purchase deposit", "Boat purchase", "Tuition payment", "Car purchase"]))
    return {"transfer_id": transfer_id, "account": account, "payee": payee, "minor": minor, "usd": usd_minor(world, minor, account["currency"]),
            "customer": customer_of(world, account["account_id"])}
