"""One customer's six months of banking, simulated day by day for the finance generator.

The ledger follows a life: an income (salary monthly or biweekly, a pension, or irregular deposits),
rent on the first business day, utilities and subscriptions on their day of the month, card purchases
at plausible merchants (fewer when money is short), ATM cash, a savings sweep after payday and interest
at month end, sometimes a trip abroad, wires for wealth clients, trades in the brokerage account. Cards
get lost and replaced or frozen; a few accounts get frozen by compliance. All randomness comes from the
builder's rng; all dates from the catalog's fixed calendar.
"""

from __future__ import annotations

import random
import unicodedata
from collections import defaultdict
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from envs.finance import catalog as cat
from envs.finance.catalog import HISTORY_START, OPENING_DAY, TODAY

if TYPE_CHECKING:
    from envs.finance.generator import _Builder

__all__ = [
    "Ledger",
    "Row",
    "ANALYSTS",
    "SUPERVISORS",
    "WIRE_FEE",
    "SUITABLE",
    "stamp",
    "region_of",
    "ascii_fold",
    "to_usd",
    "convert",
    "iban",
    "month_ends",
    "business_day",
]

Row = dict[str, Any]
ANALYSTS = ["STF-0010", "STF-0011", "STF-0012", "STF-0013"]
SUPERVISORS = ["STF-0001", "STF-0002", "STF-0003"]
EU_COUNTRIES = ["FR", "DE", "NL", "ES", "IT", "PT"]
WIRE_FEE = 2_500
SUITABLE = {"conservative": ("low",), "balanced": ("low", "medium"), "aggressive": ("low", "medium", "high")}
REGION_CURRENCY = {"US": "USD", "GB": "GBP", "EU": "EUR"}


def stamp(day: date, hour: int, minute: int = 0) -> str:
    """An ISO instant (UTC) on ``day``."""
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}:00+00:00"


def region_of(country: str) -> str:
    """Merchant region of a country: US, GB or EU."""
    return country if country in ("US", "GB") else "EU"


def ascii_fold(text: str) -> str:
    """Lower-case ASCII letters and digits of ``text`` (for e-mail addresses)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(ch for ch in folded.lower() if ch.isalnum())


def to_usd(amount: int, currency: str) -> int:
    """Minor units of ``currency`` → US cents at the mid rate."""
    return convert(amount, currency, "USD")


def convert(amount: int, source: str, target: str) -> int:
    """Minor units of ``source`` → minor units of ``target`` at the mid rate (rounded down)."""
    return amount if source == target else amount * cat.FX_MID_MICROS[(source, target)] // 1_000_000


def iban(country: str, bank: str, rng: random.Random, length: int) -> str:
    """A syntactically valid IBAN (correct mod-97 check digits) for ``country``."""
    bban = bank + "".join(str(rng.randint(0, 9)) for _ in range(length))
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


def month_ends(start: date, end: date) -> list[date]:
    """Last days of the months that fall in [start, end)."""
    days = []
    cursor = date(start.year, start.month, 1)
    while cursor <= end:
        following = date(cursor.year + cursor.month // 12, cursor.month % 12 + 1, 1)
        last = following - timedelta(days=1)
        if start <= last < end:
            days.append(last)
        cursor = following
    return days


def business_day(day: date) -> date:
    """``day``, or the Monday after it when it falls on a weekend."""
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


class Ledger:
    """Simulates one customer's accounts from the history start to today."""

    def __init__(self, books: _Builder, customer: Row, accounts: list[Row], payees: list[Row]) -> None:
        self.books = books
        self.rng = books.rng
        self.customer = customer
        self.region = region_of(customer["country"])
        self.wealth = customer["segment"] == "wealth"
        self.accounts = [a for a in accounts if a["status"] != "closed"]
        home = customer["_currency"]
        self.checking = next((a for a in self.accounts if a["type"] == "checking" and a["currency"] == home), None)
        self.savings = next((a for a in self.accounts if a["type"] == "savings"), None)
        self.brokerage = next((a for a in self.accounts if a["type"] == "brokerage"), None)
        self.foreign = next((a for a in self.accounts if a["type"] == "checking" and a["currency"] != home), None)
        self.payees = payees
        self.frozen_from: date | None = None
        self.card_plan: list[tuple[date, date, Row]] = []

    def _start_of(self, account: Row) -> date:
        return max(OPENING_DAY, date.fromisoformat(account["opened_on"]))

    def simulate(self) -> None:
        """Open every account, then live through the six months."""
        for account in self.accounts:
            self._open(account)
        if self.checking is not None:
            self._plan_cards()
            self._daily_life()
        elif self.savings is not None:
            for day in month_ends(self._start_of(self.savings) + timedelta(days=1), TODAY):
                self._month_end(day)
        if self.brokerage is not None:
            self._trading()
        if self.foreign is not None:
            self._foreign_life()
        if self.checking is not None and self.wealth:
            self._wires()
        if self.frozen_from is not None:
            self._freeze_checking()

    def _open(self, account: Row) -> None:
        rng = self.rng
        ranges = {"checking": (50_000, 800_000, 1_000_000, 12_000_000), "savings": (100_000, 4_000_000, 2_000_000, 25_000_000),
                  "brokerage": (200_000, 3_000_000, 2_000_000, 40_000_000)}
        low, high, wlow, whigh = ranges[account["type"]]
        if account is self.foreign:
            low, high, wlow, whigh = 30_000, 1_200_000, 30_000, 1_200_000
        amount = rng.randint(wlow, whigh) if self.wealth else rng.randint(low, high)
        start = self._start_of(account)
        if start == OPENING_DAY:
            self.books.txn(account, start, amount, "opening", "opening_balance", memo="Balance brought forward")
        else:
            self.books.txn(account, start, amount, "deposit", "income", merchant="Initial deposit")

    # -- cards --------------------------------------------------------------------------------------

    def _plan_cards(self) -> None:
        """Decide each card's life (lost and replaced, frozen) and when it can be used."""
        rng = self.rng
        assert self.checking is not None
        cards = self.books.card_rows.get(self.checking["account_id"], [])
        if not cards:
            return
        card = cards[0]
        roll = rng.random()
        if roll < 0.02:
            self.frozen_from = TODAY - timedelta(days=rng.randint(5, 40))
            self.card_plan = [(self._start_of(self.checking), self.frozen_from - timedelta(days=1), card)]
        elif roll < 0.07:
            lost = TODAY - timedelta(days=rng.randint(10, 170))
            card["status"] = "cancelled"
            card["status_reason"] = f"Reported lost on {lost.isoformat()}; replacement issued"
            replacement = self.books.new_card(self.checking, lost + timedelta(days=3))
            self.books.audit(stamp(lost, 10, 5), rng.choice(ANALYSTS), "cancel_card", "card", card["card_id"], reason="lost")
            self.card_plan = [(self._start_of(self.checking), lost - timedelta(days=1), card),
                              (lost + timedelta(days=3), TODAY, replacement)]
        elif roll < 0.11:
            frozen = TODAY - timedelta(days=rng.randint(5, 45))
            card["status"], card["frozen_at"] = "frozen", stamp(frozen, rng.randint(8, 20), rng.randint(0, 59))
            card["status_reason"] = rng.choice(["Customer reported card missing", "Suspicious activity reported by customer",
                                                "Customer requested a temporary freeze while travelling"])
            self.books.audit(card["frozen_at"], rng.choice(ANALYSTS), "freeze_card", "card", card["card_id"],
                             reason=card["status_reason"])
            self.card_plan = [(self._start_of(self.checking), frozen - timedelta(days=1), card)]
        else:
            self.card_plan = [(self._start_of(self.checking), TODAY, card)]

    def _card_on(self, day: date) -> Row | None:
        return next((card for start, end, card in self.card_plan if start <= day <= end), None)

    def _freeze_checking(self) -> None:
        assert self.checking is not None and self.frozen_from is not None
        at = stamp(self.frozen_from, 9, self.rng.randint(0, 59))
        reason = self.rng.choice(["Suspected account takeover - fraud team review", "Court order received - legal review",
                                  "Deceased customer - awaiting estate documents"])
        self.checking["status"], self.checking["status_reason"] = "frozen", reason
        self.books.audit(at, "STF-0005", "freeze_account", "account", self.checking["account_id"], reason=reason)
        for card in self.books.card_rows.get(self.checking["account_id"], []):
            if card["status"] == "active":
                card["status"], card["frozen_at"], card["status_reason"] = "frozen", at, "Account frozen"

    # -- the main checking account ------------------------------------------------------------------

    def _daily_life(self) -> None:
        rng, books, account = self.rng, self.books, self.checking
        assert account is not None
        start = self._start_of(account) + timedelta(days=1)
        end = (self.frozen_from - timedelta(days=1)) if self.frozen_from else TODAY
        schedule: dict[date, list[tuple[str, Any]]] = defaultdict(list)
        monthly = self._plan_income(schedule, start)
        rent = monthly * rng.randint(20, 36) // 100 // 100 * 100
        landlord = rng.choice(cat.LANDLORDS)
        months = [date(2025, m, 1) for m in (10, 11, 12)] + [date(2026, m, 1) for m in (1, 2, 3)]
        for first in months:
            schedule[business_day(first)].append(("rent", (landlord, rent)))
            for name, low, high, fixed in cat.UTILITIES[self.region]:
                if rng.random() < 0.75:
                    winter = 1.35 if first.month in (11, 12, 1, 2) and not fixed else 1.0
                    amount = low if fixed else int(rng.randint(low, high) * winter)
                    schedule[first.replace(day=5 + sum(map(ord, name)) % 20)].append(("utility", (name, amount)))
        for name, price in rng.sample(cat.SUBSCRIPTIONS, k=rng.randint(1, 5)):
            dom = rng.randint(1, 28)
            for first in months:
                schedule[first.replace(day=dom)].append(("subscription", (name, price)))
        for day in month_ends(start, TODAY):
            schedule[day].append(("month_end", None))
        trip = self._plan_trip()
        rate = rng.uniform(0.2, 0.55) * (1.3 if self.wealth else 1.0)
        merchants = cat.MERCHANTS[self.region]
        for day in _days(start, TODAY):
            if day > end:  # a frozen checking account is still — but its savings keep earning interest
                if any(what == "month_end" for what, _ in schedule.get(day, [])):
                    self._month_end(day)
                continue
            for what, payload in schedule.get(day, []):
                self._scheduled(day, what, payload)
            card = self._card_on(day)
            if card is None:
                continue
            abroad = trip is not None and trip[0] <= day <= trip[1]
            count = int(rate) + (1 if rng.random() < rate - int(rate) else 0) + (1 if day.weekday() >= 5 and rng.random() < 0.3 else 0)
            for _ in range(count + (1 if abroad else 0)):
                if abroad and trip is not None:
                    self._foreign_purchase(day, card, trip[2], trip[3])
                    continue
                merchant = rng.choice(merchants)
                amount = merchant.low + int((merchant.high - merchant.low) * rng.random() ** 2)
                if books.spendable(account) - amount > 0:
                    books.txn(account, day, -amount, "card", merchant.category, merchant=merchant.name,
                              country=self.customer["country"], card=card, lag=rng.choice([0, 1, 1, 2]))
            if rng.random() < 0.04:
                amount = rng.randint(2, 20) * (2_000 if self.region == "US" else 1_000)
                if books.spendable(account) - amount > 0:
                    books.txn(account, day, -amount, "atm", "cash", merchant=f"{cat.BANK_NAME} ATM", card=card)

    def _plan_income(self, schedule: dict[date, list[tuple[str, Any]]], start: date) -> int:
        rng = self.rng
        age = self.customer["_age"]
        if age >= 67:
            monthly = rng.randint(250_000, 500_000) if self.wealth else rng.randint(140_000, 320_000)
            for month in range(6):
                year, number = (2025, 10 + month) if month < 3 else (2026, month - 2)
                schedule[business_day(date(year, number, 3))].append(("income", ("pension", cat.PENSIONS[self.region], monthly)))
            return monthly
        if rng.random() < 0.88:
            monthly = rng.randint(900_000, 2_800_000) if self.wealth else rng.randint(260_000, 900_000)
            employer = rng.choice(cat.EMPLOYERS)
            if rng.random() < 0.45:
                friday = HISTORY_START + timedelta(days=(4 - HISTORY_START.weekday()) % 7 + rng.choice([0, 7]))
                while friday <= TODAY:
                    schedule[friday].append(("income", ("salary", employer, monthly * 12 // 26)))
                    friday += timedelta(days=14)
            else:
                for last in month_ends(HISTORY_START, TODAY + timedelta(days=1)):
                    payday = last
                    while payday.weekday() >= 5:
                        payday -= timedelta(days=1)
                    schedule[payday].append(("income", ("salary", employer, monthly)))
            return monthly
        monthly = rng.randint(200_000, 700_000)
        for day in _days(start, TODAY):
            if rng.random() < 0.1:
                schedule[day].append(("income", ("deposit", "Mobile cheque deposit", monthly // 3)))
        return monthly

    def _plan_trip(self) -> tuple[date, date, str, str] | None:
        rng = self.rng
        if rng.random() >= 0.25:
            return None
        start = HISTORY_START + timedelta(days=rng.randint(20, 160))
        region = rng.choice([r for r in ("US", "GB", "EU") if r != self.region])
        country = {"US": "US", "GB": "GB"}.get(region) or rng.choice(EU_COUNTRIES)
        if self.checking is not None and self._card_on(start - timedelta(days=21)) is not None:
            name, category, low, high = rng.choice(cat.TRAVEL_MERCHANTS)
            amount = rng.randint(low, high)
            if self.books.spendable(self.checking) > amount:
                self.books.txn(self.checking, start - timedelta(days=21), -amount, "card", category, merchant=name,
                               country=self.customer["country"], card=self._card_on(start - timedelta(days=21)), lag=1)
        return start, start + timedelta(days=rng.randint(4, 8)), region, country

    def _foreign_purchase(self, day: date, card: Row, region: str, country: str) -> None:
        assert self.checking is not None
        merchant = self.rng.choice(cat.MERCHANTS[region])
        local_currency = REGION_CURRENCY[region]
        local = merchant.low + int((merchant.high - merchant.low) * self.rng.random() ** 2)
        amount = convert(local, local_currency, self.checking["currency"])
        rate = cat.FX_MID_MICROS[(local_currency, self.checking["currency"])]
        if amount > 0 and self.books.spendable(self.checking) - amount > 0:
            self.books.txn(self.checking, day, -amount, "card", merchant.category, merchant=merchant.name, country=country,
                           card=card, lag=1, memo=f"FX {local // 100}.{local % 100:02d} {local_currency} @ {rate / 1e6:.6f}")

    def _scheduled(self, day: date, what: str, payload: Any) -> None:
        books, account, rng = self.books, self.checking, self.rng
        assert account is not None
        if what == "income":
            kind, payer, amount = payload
            txn_kind = "salary" if kind in ("salary", "pension") else "deposit"
            books.txn(account, day, amount, txn_kind, "income", merchant=payer,
                      memo="Direct deposit" if kind != "deposit" else f"Cheque no. {rng.randint(1000, 9999)}")
            if self.savings is not None and kind != "deposit" and day < TODAY and rng.random() < 0.7:
                sweep = (rng.randint(10, 80) if self.wealth else rng.randint(1, 15)) * 10_000
                if books.spendable(account) - account["overdraft_limit_minor"] > sweep + 200_000:
                    self._internal(account, self.savings, sweep, day + timedelta(days=1), "Monthly savings")
        elif what == "rent":
            landlord, amount = payload
            books.txn(account, day, -amount, "direct_debit", "housing", merchant=landlord, memo="Monthly rent / mortgage",
                      reference=f"DD-{ascii_fold(landlord)[:8].upper()}-{day:%Y%m}")
        elif what == "utility":
            name, amount = payload
            books.txn(account, day, -amount, "direct_debit", "utilities", merchant=name,
                      reference=f"DD-{ascii_fold(name)[:8].upper()}-{day:%Y%m}")
        elif what == "subscription":
            name, price = payload
            card = self._card_on(day)
            if card is not None and books.spendable(account) > price:
                books.txn(account, day, -price, "card", "subscriptions", merchant=name, country=self.customer["country"],
                          card=card, lag=rng.choice([0, 1]))
        elif what == "month_end":
            self._month_end(day)

    def _month_end(self, day: date) -> None:
        books, rng = self.books, self.rng
        if self.savings is not None and day > self._start_of(self.savings):
            balance = books.balance.get(self.savings["account_id"], 0)
            interest = balance * self.savings["interest_rate_bps"] // 120_000
            if interest > 0:
                books.txn(self.savings, day, interest, "interest", "interest", memo=f"Interest {day:%B %Y}")
        account = self.checking
        if account is None or self.frozen_from is not None and day >= self.frozen_from:
            return
        balance = books.balance.get(account["account_id"], 0)
        if not self.wealth and balance < 150_000 and day > self._start_of(account) + timedelta(days=30):
            fee = 1_200 if account["currency"] == "USD" else 500
            books.txn(account, day, -fee, "fee", "fees", memo="Monthly maintenance fee (balance under 1,500.00)")
        if self.savings is not None and books.spendable(account) < 30_000:
            saved = books.balance.get(self.savings["account_id"], 0)
            amount = rng.randint(10, 25) * 10_000
            if saved > amount + 100_000:
                self._internal(self.savings, account, amount, day, "Top up checking")

    def _internal(self, source: Row, target: Row, amount: int, day: date, memo: str) -> None:
        at = stamp(day, self.rng.randint(7, 22), self.rng.randint(0, 59))
        transfer = self.books.transfer("internal", source, amount, at, target=target, memo=memo)
        self.books.txn(source, day, -amount, "transfer", "transfer", memo=f"Transfer to {target['account_id']}",
                       reference=transfer["reference"], transfer=transfer)
        self.books.txn(target, day, amount, "transfer", "transfer", memo=f"Transfer from {source['account_id']}",
                       reference=transfer["reference"], transfer=transfer)

    # -- other accounts -----------------------------------------------------------------------------

    def _trading(self) -> None:
        rng, books, account = self.rng, self.books, self.brokerage
        assert account is not None
        risk = self.customer["risk_profile"]
        universe = [i for i in cat.INSTRUMENTS if i.currency == account["currency"]]
        suitable = [i for i in universe if i.risk_level in SUITABLE[risk]]
        held: dict[str, list[int]] = {}
        for inst in rng.sample(suitable, k=min(len(suitable), rng.randint(2, 6))):
            self._hold_position(held, inst, rng.randint(100_000, 8_000_000) * (3 if self.wealth else 1))
        if rng.random() < 0.12:
            self._hold_position(held, rng.choice(universe), rng.randint(100_000, 1_500_000))
        start = self._start_of(account) + timedelta(days=1)
        weekdays = [d for d in _days(start, TODAY - timedelta(days=1)) if d.weekday() < 5]
        placed_by = self.customer["relationship_manager"] or rng.choice(ANALYSTS)
        for day in sorted(rng.sample(weekdays, k=min(len(weekdays), rng.randint(0, 4)))):
            cash = books.balance.get(account["account_id"], 0)
            if held and (rng.random() < 0.35 or cash < 50_000):
                symbol = rng.choice(sorted(held))
                side, quantity = "sell", max(1, held[symbol][0] * rng.randint(20, 60) // 100)
            else:
                symbol, side = rng.choice(suitable).symbol, "buy"
                quantity = int(cash * rng.uniform(0.05, 0.25)) // books.price_on(symbol, day)
            price = books.price_on(symbol, day)
            gross = quantity * price
            if quantity <= 0 or (side == "buy" and gross > cash):
                continue
            at = stamp(day, rng.randint(14, 19), rng.randint(0, 59))
            order = {"order_id": None, "account_id": account["account_id"], "symbol": symbol, "side": side,
                     "quantity": quantity, "price_minor": price, "gross_minor": gross, "currency": account["currency"],
                     "status": "filled", "placed_at": at, "placed_by": placed_by}
            books.rows["orders"].append(order)
            books.audit(at, placed_by, "place_order", "order", order, side=side, symbol=symbol, quantity=quantity)
            books.txn(account, day, -gross if side == "buy" else gross, "trade", "investments",
                      memo=f"{side.upper()} {quantity} {symbol} @ {price // 100}.{price % 100:02d}", reference=order)
            position = held.setdefault(symbol, [0, price])
            if side == "buy":
                position[1] = (position[0] * position[1] + gross + (position[0] + quantity) // 2) // (position[0] + quantity)
                position[0] += quantity
            else:
                position[0] -= quantity
        for symbol in sorted(held):
            quantity, cost = held[symbol]
            if quantity > 0:
                books.rows["positions"].append({"account_id": account["account_id"], "symbol": symbol,
                                                "quantity": quantity, "avg_cost_minor": cost})

    def _hold_position(self, held: dict[str, list[int]], inst: cat.Instrument, value: int) -> None:
        price = self.books.price_on(inst.symbol, HISTORY_START)
        quantity = max(1, value // price)
        cost = max(1, price * self.rng.randint(70, 120) // 100)
        held[inst.symbol] = [quantity, cost]

    def _foreign_life(self) -> None:
        rng, books, account = self.rng, self.books, self.foreign
        assert account is not None
        region = {"USD": "US", "GBP": "GB", "EUR": "EU"}[account["currency"]]
        country = {"US": "US", "GB": "GB"}.get(region) or rng.choice(EU_COUNTRIES)
        card = next(iter(books.card_rows.get(account["account_id"], [])), None)
        for day in _days(self._start_of(account) + timedelta(days=1), TODAY):
            if card is not None and rng.random() < 0.05:
                merchant = rng.choice(cat.MERCHANTS[region])
                amount = merchant.low + int((merchant.high - merchant.low) * rng.random() ** 2)
                if books.spendable(account) > amount:
                    books.txn(account, day, -amount, "card", merchant.category, merchant=merchant.name, country=country,
                              card=card, lag=1)
        if self.checking is not None and rng.random() < 0.5:
            day = TODAY - timedelta(days=rng.randint(5, 150))
            source, target = self.checking, account
            amount = rng.randint(50_000, 300_000)
            if books.spendable(source) - source["overdraft_limit_minor"] < amount + 100_000:
                return
            mid = cat.FX_MID_MICROS[(source["currency"], target["currency"])]
            spread = cat.FX_SPREAD_BPS[frozenset({source["currency"], target["currency"]})]
            rate = mid * (10_000 - spread) // 10_000
            credited = amount * rate // 1_000_000
            at = stamp(day, rng.randint(9, 17), rng.randint(0, 59))
            transfer = books.transfer("fx", source, amount, at, target=target, memo="Currency conversion",
                                      to_amount_minor=credited, to_currency=target["currency"], rate_micros=rate)
            books.txn(source, day, -amount, "fx", "fx", memo=f"Converted to {target['currency']} at {rate / 1e6:.6f}",
                      reference=transfer["reference"], transfer=transfer)
            books.txn(target, day, credited, "fx", "fx", memo=f"Converted from {source['currency']} at {rate / 1e6:.6f}",
                      reference=transfer["reference"], transfer=transfer)

    def _wires(self) -> None:
        rng, books, account = self.rng, self.books, self.checking
        assert account is not None
        end = (self.frozen_from or TODAY) - timedelta(days=2)
        for _ in range(rng.randint(0, 3)):
            day = business_day(HISTORY_START + timedelta(days=rng.randint(0, (end - HISTORY_START).days)))
            payees = [p for p in self.payees if p["verified"] and p["status"] == "active"
                      and p["currency"] == account["currency"] and date.fromisoformat(p["added_on"]) < day]
            room = books.spendable(account) - account["overdraft_limit_minor"] - 500_000
            if day >= end or not payees or room < 200_000:
                continue
            payee = rng.choice(payees)
            amount = rng.randint(200_000, min(room, 6_000_000)) // 100 * 100
            requested_at = stamp(day, rng.randint(9, 13), rng.randint(0, 59))
            requester = rng.choice(ANALYSTS)
            rejected = rng.random() < 0.1
            decided_by = decided_at = None
            if rejected or to_usd(amount, account["currency"]) > 1_000_000:
                decided_by = rng.choice([s[0] for s in cat.STAFF if s[0] in SUPERVISORS and s[3] >= to_usd(amount, account["currency"])])
                decided_at = stamp(day, rng.randint(14, 16), rng.randint(0, 59))
            transfer = books.transfer("external_wire", account, amount, requested_at, status="rejected" if rejected else "completed",
                                      channel="back_office", payee=payee, requested_by=requester, memo=rng.choice(
                                          ["Invoice payment", "Gift", "Tuition", "Property tax", "Contractor payment"]),
                                      fee_minor=0 if rejected else WIRE_FEE, decided_by=decided_by, decided_at=decided_at,
                                      rejection_reason="Customer could not be reached for the call-back check" if rejected else None)
            books.audit(requested_at, requester, "send_wire", "transfer", transfer, amount_minor=amount)
            if decided_by is not None and decided_at is not None:
                decision = "rejected" if rejected else "approved"
                books.rows["approvals"].append({"approval_id": None, "transfer_id": transfer, "approver_id": decided_by,
                                                "decision": decision, "decided_at": decided_at, "comment": None})
                books.audit(decided_at, decided_by, "reject_transfer" if rejected else "approve_transfer", "transfer", transfer)
            status = "reversed" if rejected else "posted"
            books.txn(account, day, -amount, "wire", "transfer", merchant=payee["name"], memo=f"Wire to {payee['name']}",
                      reference=transfer["reference"], transfer=transfer, status=status)
            if not rejected:
                books.txn(account, day, -WIRE_FEE, "fee", "fees", memo="Outgoing wire fee", reference=transfer["reference"],
                          transfer=transfer)
        if rng.random() < 0.3:
            day = TODAY - timedelta(days=rng.randint(3, 170))
            books.txn(account, day, rng.randint(500_000, 5_000_000), "wire", "transfer",
                      merchant=f"Incoming wire - {rng.choice(cat.FIRST_NAMES)} {rng.choice(cat.LAST_NAMES)}")
