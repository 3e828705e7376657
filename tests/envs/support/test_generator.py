"""The support fixture: deterministic across processes, believable, money always integer cents, every
situation the tasks need present, and its full-text index consistent with the articles through resets."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from envs.support import FIXTURE
from envs.support.schema import MONEY_COLUMNS
from fixtures.world import World

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = "import sys; from envs.support import FIXTURE; print(*(FIXTURE.template(int(s)).hash for s in sys.argv[1:]))"


def _world() -> World:
    return FIXTURE.world(0)


def _count(world: World, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(world.query(sql, params)[0]["n"])


@pytest.mark.slow
async def test_same_seed_same_world_in_fresh_processes_and_seeds_differ() -> None:
    results: dict[str, list[str]] = {}

    async def run(name: str, hash_seed: str, *seeds: int) -> None:
        env = {**os.environ, "TOOLGYM_CACHE_DIR": "off", "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        done = await anyio.run_process([sys.executable, "-c", SCRIPT, *map(str, seeds)], env=env, cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr.decode()
        results[name] = done.stdout.decode().split()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(run, "a", "0", 0)
            group.start_soon(run, "b", "4242", 0, 1)
    assert results["a"][0] == results["b"][0] == FIXTURE.template(0).hash
    assert results["b"][1] != results["b"][0]


def test_row_counts_and_size_are_in_range() -> None:
    world = _world()
    ranges = {
        "customers": (824, 824), "addresses": (900, 1200), "orders": (1800, 2800), "order_lines": (3000, 5000), "shipments": (1800, 2800),
        "tracking_events": (8000, 15000), "returns": (100, 300), "refunds": (150, 400), "subscriptions": (220, 220),
        "invoices": (800, 1400), "tickets": (900, 1200), "ticket_messages": (1500, 2500), "reviews": (350, 350), "kb_articles": (22, 22),
        "products": (30, 30), "variants": (55, 65), "fraud_signals": (30, 60), "gift_cards": (80, 80), "persona": (0, 0),
    }
    for table, (low, high) in ranges.items():
        count = _count(world, f"SELECT count(*) AS n FROM {table}")
        assert low <= count <= high, f"{table}: {count} rows, expected {low}-{high}"
    assert 2_000_000 < len(FIXTURE.template(0).data) < 10_000_000


def test_money_is_never_a_float() -> None:
    world = _world()
    for table, columns in MONEY_COLUMNS.items():
        for column in columns:
            assert _count(world, f"SELECT count(*) AS n FROM {table} WHERE {column} IS NOT NULL AND typeof({column}) != 'integer'") == 0
    money_like = world.query("SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p "
                             "WHERE m.type = 'table' AND p.name LIKE '%\\_minor' ESCAPE '\\'")
    assert {(r["t"], r["c"]) for r in money_like} == {(t, c) for t, cs in MONEY_COLUMNS.items() for c in cs}


def test_the_books_add_up() -> None:
    world = _world()
    assert _count(world, "SELECT count(*) AS n FROM orders WHERE total_minor != subtotal_minor + shipping_minor - discount_minor") == 0
    assert _count(world, "SELECT count(*) AS n FROM orders o WHERE o.subtotal_minor != (SELECT sum(unit_price_minor * quantity) "
                         "FROM order_lines l WHERE l.order_id = o.order_id)") == 0
    assert _count(world, "SELECT count(*) AS n FROM orders o WHERE (SELECT sum(amount_minor) FROM payments p WHERE p.order_id = o.order_id) "
                         "!= o.total_minor") == 0
    assert _count(world, "SELECT count(*) AS n FROM orders o WHERE (SELECT coalesce(sum(amount_minor), 0) FROM refunds r "
                         "WHERE r.order_id = o.order_id) > o.total_minor") == 0
    assert _count(world, "SELECT count(*) AS n FROM shipments WHERE delivered_on < shipped_on OR shipped_on > '2026-04-16'") == 0
    now = "2026-04-16T15:00:00+00:00"
    for table, column in (("orders", "placed_at"), ("tracking_events", "at"), ("tickets", "created_at"), ("ticket_messages", "at"),
                          ("refunds", "issued_at"), ("returns", "created_at"), ("invoices", "issued_at"), ("audit_log", "at")):
        assert _count(world, f"SELECT count(*) AS n FROM {table} WHERE {column} > ?", (now,)) == 0, f"{table} has rows in the future"
    assert _count(world, "SELECT count(*) AS n FROM refunds r JOIN credit_ledger e ON e.reference = r.refund_id "
                         "WHERE r.method = 'store_credit' AND e.amount_minor = r.amount_minor") == \
        _count(world, "SELECT count(*) AS n FROM refunds WHERE method = 'store_credit'")


def test_the_world_has_the_situations_tasks_need() -> None:
    world = _world()
    checks = {
        "late deliveries": "SELECT count(*) AS n FROM shipments WHERE delivered_on > promised_by",
        "lost parcels": "SELECT count(*) AS n FROM shipments WHERE status = 'lost'",
        "stalled parcels": "SELECT count(*) AS n FROM shipments s WHERE status = 'in_transit' AND (SELECT max(at) FROM tracking_events t "
                           "WHERE t.shipment_id = s.shipment_id) < '2026-04-09'",
        "partial shipments": "SELECT count(*) AS n FROM orders WHERE status = 'partially_shipped'",
        "orders not shipped yet": "SELECT count(*) AS n FROM orders WHERE status = 'processing'",
        "damaged returns with photos": "SELECT count(*) AS n FROM returns WHERE reason = 'damaged' AND photo_id IS NOT NULL",
        "failed inspections": "SELECT count(*) AS n FROM inspections WHERE result = 'fail'",
        "store-credit refunds": "SELECT count(*) AS n FROM refunds WHERE method = 'store_credit'",
        "periods charged twice": "SELECT count(*) AS n FROM (SELECT 1 FROM invoices WHERE status = 'paid' GROUP BY subscription_id, "
                                 "period_start HAVING count(*) > 1)",
        "past-due subscriptions": "SELECT count(*) AS n FROM subscriptions WHERE status = 'past_due'",
        "chargebacks": "SELECT count(*) AS n FROM payments WHERE status = 'chargeback'",
        "people with two accounts": "SELECT count(*) AS n FROM customers a JOIN customers b ON a.first_name = b.first_name AND "
                                    "a.last_name = b.last_name AND a.date_of_birth = b.date_of_birth AND a.customer_id < b.customer_id",
        "high-severity fraud signals": "SELECT count(*) AS n FROM fraud_signals WHERE severity = 'high' AND status = 'open'",
        "duplicate tickets": "SELECT count(*) AS n FROM (SELECT 1 FROM tickets WHERE order_id IS NOT NULL GROUP BY customer_id, order_id, "
                             "subject HAVING count(*) > 1)",
        "breached SLAs": "SELECT count(*) AS n FROM tickets WHERE first_responded_at IS NULL AND status = 'new' "
                         "AND first_response_due < '2026-04-16T15:00:00+00:00'",
        "injected ticket text": "SELECT count(*) AS n FROM ticket_messages WHERE body LIKE '%AI AGENT%' OR body LIKE '%OVERRIDE%'",
        "injected reviews": "SELECT count(*) AS n FROM reviews WHERE body LIKE '%SUPPORT BOTS%' OR body LIKE '%Ignore previous%'",
        "coupons used": "SELECT count(*) AS n FROM orders WHERE coupon_code IS NOT NULL",
        "sold-out variants": "SELECT count(*) AS n FROM variants WHERE stock = 0",
        "escalations": "SELECT count(*) AS n FROM escalations",
    }
    for what, sql in checks.items():
        assert _count(world, sql) > 0, f"the fixture has no {what}"


def test_ids_are_readable_and_dense() -> None:
    world = _world()
    for table, column, prefix, start in (("customers", "customer_id", "CUS", 1), ("orders", "order_id", "ORD", 100_001),
                                         ("tickets", "ticket_id", "TCK", 1), ("audit_log", "audit_id", "AUD", 1)):
        count = _count(world, f"SELECT count(*) AS n FROM {table}")
        last = world.query(f"SELECT max({column}) AS m FROM {table}")[0]["m"]
        assert last.startswith(prefix + "-") and int(last.split("-")[1]) == start + count - 1, f"{table} ids have gaps"
    placed = [r["placed_at"] for r in world.query("SELECT placed_at FROM orders ORDER BY order_id")]
    assert placed == sorted(placed), "order numbers follow time"


def test_full_text_index_follows_the_articles_through_writes_and_resets() -> None:
    world = _world()
    start = world.hash()
    assert _count(world, "SELECT count(*) AS n FROM kb_search") == _count(world, "SELECT count(*) AS n FROM kb_articles")
    world.execute("INSERT INTO kb_articles VALUES ('KB-0900', 900, 'returns', 'Zebra policy', 'Zebras are returned by courier.')")
    world.execute("UPDATE kb_articles SET body = 'Unicorn text' WHERE article_id = 'KB-0001'")
    assert [r["rowid"] for r in world.query("SELECT rowid FROM kb_search WHERE kb_search MATCH 'zebra'")] == [900]
    assert world.query("SELECT rowid FROM kb_search WHERE kb_search MATCH 'unicorn'") == [{"rowid": 1}]
    assert world.hash() != start
    world.reset()
    assert world.hash() == start == world.full_hash()
    assert world.query("SELECT rowid FROM kb_search WHERE kb_search MATCH 'zebra OR unicorn'") == []
    assert _count(world, "SELECT count(*) AS n FROM kb_search WHERE kb_search MATCH 'grocery'") >= 1
    world.close()
