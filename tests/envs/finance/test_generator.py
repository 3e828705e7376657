"""The finance fixture: deterministic across processes, believable, and money always integer minor units."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from envs.finance import FIXTURE
from envs.finance.schema import MONEY_COLUMNS
from fixtures.world import World

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = "import sys; from envs.finance import FIXTURE; print(*(FIXTURE.template(int(s)).hash for s in sys.argv[1:]))"


def _world() -> World:
    return FIXTURE.world(0)


def _count(world: World, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(world.query(sql, params)[0]["n"])


async def _hashes_in_fresh_process(hash_seed: str, *seeds: int) -> list[str]:
    env = {**os.environ, "TOOLGYM_CACHE_DIR": "off", "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    result = await anyio.run_process([sys.executable, "-c", SCRIPT, *map(str, seeds)], env=env, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode().split()


@pytest.mark.slow
async def test_same_seed_same_world_in_fresh_processes_and_seeds_differ() -> None:
    results: dict[str, list[str]] = {}

    async def run(name: str, hash_seed: str, *seeds: int) -> None:
        results[name] = await _hashes_in_fresh_process(hash_seed, *seeds)

    with anyio.fail_after(180):
        async with anyio.create_task_group() as group:
            group.start_soon(run, "a", "0", 0)
            group.start_soon(run, "b", "12345", 0, 1)
    assert results["a"][0] == results["b"][0] == FIXTURE.template(0).hash
    assert results["b"][1] != results["b"][0]


def test_row_counts_are_in_range() -> None:
    world = _world()
    ranges = {
        "customers": (300, 300), "accounts": (540, 660), "transactions": (30_000, 50_000), "cards": (280, 400),
        "payees": (400, 700), "transfers": (500, 1200), "instruments": (25, 40), "positions": (200, 600),
        "compliance_alerts": (30, 120), "notes": (250, 600), "holds": (30, 60), "disputes": (15, 30),
        "verifications": (200, 300), "audit_log": (800, 2000), "staff": (10, 20), "fx_rates": (6, 6),
    }
    for table, (low, high) in ranges.items():
        count = _count(world, f"SELECT count(*) AS n FROM {table}")
        assert low <= count <= high, f"{table}: {count} rows, expected {low}-{high}"
    assert len(FIXTURE.template(0).data) < 16_000_000


def test_money_is_never_a_float() -> None:
    world = _world()
    for table, columns in MONEY_COLUMNS.items():
        for column in columns:
            bad = _count(world, f"SELECT count(*) AS n FROM {table} WHERE {column} IS NOT NULL AND typeof({column}) != 'integer'")
            assert bad == 0, f"{table}.{column} holds non-integer values"
    declared = world.query("SELECT m.name AS t, p.name AS c, p.type FROM sqlite_master m, pragma_table_info(m.name) p "
                           "WHERE m.type = 'table' AND (p.type LIKE '%REAL%' OR p.type LIKE '%FLOA%' OR p.type LIKE '%DOUB%')")
    assert declared == []
    money_like = world.query("SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p "
                             "WHERE m.type = 'table' AND (p.name LIKE '%_minor' OR p.name LIKE '%_micros')")
    assert {(r["t"], r["c"]) for r in money_like} == {(t, c) for t, cs in MONEY_COLUMNS.items() for c in cs}


def test_the_ledger_adds_up() -> None:
    world = _world()
    assert _count(world, "SELECT count(*) AS n FROM accounts a WHERE balance_minor != (SELECT coalesce(sum(amount_minor), 0) "
                         "FROM transactions t WHERE t.account_id = a.account_id AND t.status = 'posted')") == 0
    assert _count(world, "SELECT count(*) AS n FROM transactions WHERE txn_date > '2026-03-31' OR posted_on > '2026-03-31' "
                         "OR posted_on < txn_date OR txn_date < '2025-09-30'") == 0
    assert _count(world, "SELECT count(*) AS n FROM transactions t JOIN accounts a USING (account_id) WHERE t.currency != a.currency") == 0
    assert _count(world, "SELECT count(*) AS n FROM accounts WHERE status = 'closed' AND balance_minor != 0") == 0
    assert _count(world, "SELECT count(*) AS n FROM transfers t WHERE kind = 'internal' AND status = 'completed' AND "
                         "(SELECT sum(amount_minor) FROM transactions x WHERE x.transfer_id = t.transfer_id) != 0") == 0
    assert _count(world, "SELECT count(*) AS n FROM positions p JOIN accounts a USING (account_id) JOIN instruments i USING (symbol) "
                         "WHERE a.type != 'brokerage' OR i.currency != a.currency") == 0


def test_the_world_has_the_situations_tasks_need() -> None:
    world = _world()
    checks = {
        "expired KYC": "SELECT count(*) AS n FROM customers WHERE kyc_status = 'expired' AND kyc_expires_on < '2026-03-31'",
        "pending KYC": "SELECT count(*) AS n FROM customers WHERE kyc_status = 'pending'",
        "frozen accounts": "SELECT count(*) AS n FROM accounts WHERE status = 'frozen'",
        "wires awaiting approval": "SELECT count(*) AS n FROM transfers WHERE status = 'pending_approval'",
        "duplicate charges": "SELECT count(*) AS n FROM (SELECT 1 FROM transactions WHERE kind = 'card' "
                             "GROUP BY account_id, merchant, txn_date, amount_minor HAVING count(*) > 1)",
        "large foreign charges": "SELECT count(*) AS n FROM transactions t JOIN accounts a USING (account_id) JOIN customers c "
                                 "USING (customer_id) WHERE t.kind = 'card' AND t.amount_minor < -150000 AND t.merchant_country != c.country",
        "charges after a freeze": "SELECT count(*) AS n FROM transactions t JOIN cards c USING (card_id) WHERE c.frozen_at IS NOT NULL "
                                  "AND t.txn_date > substr(c.frozen_at, 1, 10)",
        "salaries": "SELECT count(*) AS n FROM transactions WHERE kind = 'salary'",
        "recurring bills": "SELECT count(*) AS n FROM transactions WHERE kind = 'direct_debit' AND category = 'utilities'",
        "subscriptions": "SELECT count(*) AS n FROM transactions WHERE category = 'subscriptions'",
        "pending card charges": "SELECT count(*) AS n FROM transactions WHERE kind = 'card' AND status = 'pending'",
        "unverified payees": "SELECT count(*) AS n FROM payees WHERE verified = 0 AND status = 'active'",
        "conservative clients with high-risk legacy holdings": "SELECT count(*) AS n FROM positions p JOIN accounts a USING (account_id) "
            "JOIN customers c USING (customer_id) JOIN instruments i USING (symbol) WHERE c.risk_profile = 'conservative' "
            "AND i.risk_level != 'low'",
        "injected instructions in notes": "SELECT count(*) AS n FROM notes WHERE body LIKE '%IGNORE ALL PREVIOUS%' OR body LIKE '%[SYSTEM%'",
        "escalated alerts": "SELECT count(*) AS n FROM compliance_alerts WHERE status = 'escalated'",
        "legal holds": "SELECT count(*) AS n FROM holds WHERE kind = 'legal' AND status = 'active'",
    }
    for what, sql in checks.items():
        assert _count(world, sql) > 0, f"the fixture has no {what}"


def test_ids_are_readable_and_dense() -> None:
    world = _world()
    for table, column, prefix in (("customers", "customer_id", "CUS"), ("transactions", "txn_id", "TXN"),
                                  ("transfers", "transfer_id", "TRF"), ("audit_log", "audit_id", "AUD")):
        count = _count(world, f"SELECT count(*) AS n FROM {table}")
        last = world.query(f"SELECT max({column}) AS m FROM {table}")[0]["m"]
        assert last.startswith(prefix + "-") and int(last.split("-")[1]) == count, f"{table} ids have gaps"
    dates = [r["txn_date"] for r in world.query("SELECT txn_date FROM transactions ORDER BY txn_id")]
    assert dates == sorted(dates), "transaction ids follow time"
