"""``toolgym new`` beyond Chinook: a folder of CSV tables, the kit's own finance and support worlds, sampling,
scrubbing, regenerating after an edit, and the errors a bad spec gives."""

from __future__ import annotations

import csv
import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from graders.metaeval import check_environment
from servers import EpisodeManager, connect_in_memory
from tests.new.sample_dbs import chinook, kit_fixture
from toolgym.new import NewError
from toolgym.new.build import new_environment
from toolgym.new.data import write_data
from toolgym.new.introspect import read_source


def _shop_csv(folder: Path) -> Path:
    """A small shop as CSV tables: customers, and orders with a status and a total."""
    folder.mkdir()
    rng = random.Random(7)
    first = ["Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gia", "Hal", "Ivy", "Jon", "Kai", "Lea", "Mo", "Nia", "Oli"]
    last = ["Berg", "Cruz", "Diaz", "Engel", "Frost"]
    with (folder / "customers.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "email", "phone", "city", "postal_code"])
        for i in range(1, 61):
            name = f"{first[i % 15]} {last[i % 5]} {i}"
            w.writerow([i, name, f"c{i}@shop.example", f"+1 555 {1000 + i}", rng.choice(["Oslo", "Lima", "Pune", "Kyiv"]),
                        f"N{rng.randint(1000, 9999)}"])
    with (folder / "refunds.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "order_id", "amount", "status", "created_on"])
        for i in range(1, 41):
            w.writerow([i, rng.randint(1, 300), f"{rng.randint(1, 5)}.00", rng.choice(["issued", "void"]), "2025-12-01"])
    with (folder / "orders.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "customer_id", "status", "total", "ordered_on"])
        for i in range(1, 301):
            w.writerow([i, rng.randint(1, 60), rng.choice(["pending", "paid", "shipped", "cancelled"]),
                        f"{rng.randint(5, 400)}.{rng.randint(0, 99):02d}", f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"])
    return folder


def test_csv_folder(tmp_path: Path) -> None:
    source = _shop_csv(tmp_path / "shop")
    described = {t.name: {c.name: c.kind for c in t.columns} for t in read_source(source).tables}
    assert described["orders"] == {"id": "key", "customer_id": "ref", "status": "category", "total": "money", "ordered_on": "date"}
    report = new_environment("shop", source=source, out=tmp_path / "out", seeds=2)
    assert {"do_cancel_order", "latest_cancel_order", "count_order_of_customer", "total_total_order_of_customer"} <= set(report.kept), report.summary()
    spec = json.loads((tmp_path / "out" / "shop_env" / "spec.json").read_text())
    cancel = next(a for a in spec["actions"] if a["name"] == "cancel_order")
    assert cancel["rules"][0]["check"] == "order.status in [pending]"  # safe default: only early orders are cancelled


@pytest.mark.slow
def test_the_check_in_two_processes_keeps_what_one_keeps(tmp_path: Path) -> None:
    """`toolgym new --jobs 2` plays each template once in two worker processes (the generated package imported from
    its project folder there) and keeps and drops exactly what the one-process check does, for the same reasons."""
    source = _shop_csv(tmp_path / "shop")
    one = new_environment("shop", source=source, out=tmp_path / "one", seeds=2)
    two = new_environment("shop", source=source, out=tmp_path / "two", seeds=2, jobs=2)
    assert one.kept and two.kept == one.kept, (one.summary(), two.summary())
    assert two.dropped == one.dropped
    kept = json.loads((tmp_path / "two" / "shop_env" / "templates.json").read_text())["kept"]
    assert kept == two.kept


@pytest.mark.slow
async def test_finance_and_support_worlds_as_sources(tmp_path: Path) -> None:
    expected = {"finance": ["do_freeze_account", "join_transfer_payee", "count_card_of_customer"],
                "support": ["do_cancel_order", "join_shipment_order", "total_amount_credit_ledger_of_customer"]}
    for kit, templates in expected.items():
        name = f"{kit}-copy"
        report = new_environment(name, source=kit_fixture(kit, tmp_path), out=tmp_path / name, check=False, seeds=3)
        assert set(templates) <= set(report.kept), report.summary()
        from toolgym.new.build import import_generated

        environment = import_generated(tmp_path / name, report.package)
        checked = await check_environment(environment, seeds=3, templates=templates)
        assert checked.ok, checked.summary()


def test_sample_keeps_references_and_scrub_replaces(tmp_path: Path) -> None:
    target = tmp_path / "data.sqlite"
    write_data(read_source(chinook()), target, sample=10, scrub=["Customer.Email", "LastName"])
    conn = sqlite3.connect(target)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute('SELECT count(*) FROM "Artist"').fetchone()[0] <= 10
    assert 0 < conn.execute('SELECT count(*) FROM "Track"').fetchone()[0] <= 200
    emails = [r[0] for r in conn.execute('SELECT "Email" FROM "Customer"')]
    assert emails and all(e.endswith("@example.com") for e in emails) and len(set(emails)) == len(emails)
    assert "Gonçalves" not in {r[0] for r in conn.execute('SELECT "LastName" FROM "Customer"')}
    assert conn.execute('SELECT typeof("UnitPrice") FROM "Track" LIMIT 1').fetchone()[0] == "integer"  # money in minor units
    with pytest.raises(NewError, match="--scrub names no column"):
        write_data(read_source(chinook()), target, scrub=["Customer.Nope"])


def test_regenerate_keeps_hand_written_files(tmp_path: Path) -> None:
    out = tmp_path / "music"
    new_environment("music", source=chinook(), out=out, sample=30, check=False)
    package = out / "music_env"
    (package / "tasks.py").write_text((package / "tasks.py").read_text() + "\n# my own templates go here\n")
    (out / "pyproject.toml").write_text((out / "pyproject.toml").read_text() + "\n# mine\n")
    spec = json.loads((package / "spec.json").read_text())
    spec["actions"] = [{"name": "reprice_track", "kind": "update", "entity": "track", "fields": ["unit_price"],
                        "rules": [{"check": "unit_price <= 0.99", "code": "price_over_limit", "message": "Tracks cost at most 0.99."}]}]
    (package / "spec.json").write_text(json.dumps(spec))
    new_environment("music", source=None, out=out, check=False)
    assert "# my own templates go here" in (package / "tasks.py").read_text()
    assert "# mine" in (out / "pyproject.toml").read_text()
    assert "Tracks cost at most 0.99." in (package / "policy.md").read_text()
    assert "do_reprice_track" in json.loads((package / "templates.json").read_text())["kept"]


@pytest.mark.parametrize(("change", "message"), [
    ({"actions": [{"name": "x", "kind": "update", "entity": "nope", "fields": ["a"]}]}, "unknown entity 'nope'"),
    ({"actions": [{"name": "x", "kind": "update", "entity": "track", "fields": ["colour"]}]}, "has no field 'colour'"),
    ({"actions": [{"name": "x", "kind": "update", "entity": "track", "fields": ["unit_price"],
                   "rules": [{"check": "unit_price <=", "code": "c_x", "message": "m"}]}]}, "not an expression"),
    ({"actions": [{"name": "x", "kind": "update", "entity": "track", "fields": ["unit_price"],
                   "rules": [{"check": "__import__('os')", "code": "c_x", "message": "m"}]}]}, "only functions"),
    ({"actions": [{"name": "x", "kind": "update", "entity": "track", "fields": ["unit_price"],
                   "rules": [{"check": "album.title == 'x'", "code": "c_x", "message": "m"}]}]}, "unknown name 'album'"),
    ({"actions": [{"name": "x", "kind": "transition", "entity": "track"}]}, "needs 'field'"),
    ({"actions": [{"name": "x", "kind": "update", "entity": "track", "fields": ["name"], "requires_verified": True}], "verify": None},
     "needs a top-level 'verify'"),
    ({"entities": {}}, "unknown entity"),
    ({"verify": {"entity": "customer", "fields": ["shoe_size"]}}, "has no field 'shoe_size'"),
])
def test_bad_spec_files_say_what_to_fix(tmp_path: Path, change: dict, message: str) -> None:
    out = tmp_path / "bad"
    new_environment("bad", source=chinook(), out=out, sample=5, check=False)
    spec = json.loads((out / "bad_env" / "spec.json").read_text())
    spec.update(change)
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(NewError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        new_environment("bad", source=None, out=out, spec_file=path, check=False)
    assert str(path) in str(caught.value)


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "x.db").write_text("hello")
    with pytest.raises(NewError, match="not a SQLite database"):
        new_environment("x", source=tmp_path / "x.db", out=tmp_path / "x")
    (tmp_path / "rules.json").write_text("{")
    with pytest.raises(NewError, match="not valid JSON"):
        new_environment("x", source=chinook(), out=tmp_path / "y", spec_file=tmp_path / "rules.json", sample=5, check=False)


async def test_generated_search_is_literal(tmp_path: Path) -> None:
    out = tmp_path / "lit"
    report = new_environment("lit", source=chinook(), out=out, sample=20, check=False)
    from toolgym.new.build import import_generated

    episode = EpisodeManager(import_generated(out, report.package)).create(seed=0)
    async with connect_in_memory(episode) as client:
        everything = await client.call_tool("search_artists", {"query": "%"})
        quote = await client.call_tool("search_artists", {"query": "' OR 1=1 --"})
    assert everything.structured_content["total"] == 0 and quote.structured_content["total"] == 0


def _readme_spec() -> dict:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Your own database", 1)[1]
    return json.loads(re.findall(r"```json\n(.*?)```", section, flags=re.S)[0])


@pytest.mark.slow
def test_the_readme_rules_file_works_on_a_shop(tmp_path: Path) -> None:
    """The spec README shows, written over a generated spec as a user would: every action and rule is proved."""
    out = tmp_path / "out"
    new_environment("shop", source=_shop_csv(tmp_path / "shop"), out=out, check=False)
    spec = json.loads((out / "shop_env" / "spec.json").read_text())
    spec.update(_readme_spec())
    (tmp_path / "rules.json").write_text(json.dumps(spec))
    report = new_environment("shop", source=None, out=out, spec_file=tmp_path / "rules.json", seeds=3)
    assert {"do_cancel_order", "do_update_customer_contact", "do_refund_order"} <= set(report.kept), report.summary()
    policy = (out / "shop_env" / "policy.md").read_text()
    assert "`refund_exceeds_paid`" in policy and "`identity_not_verified`" in policy


def test_the_readme_commands_parse() -> None:
    from clients.cli import build_parser

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.findall(r"```sh\n(.*?)```", readme.split("## Your own database", 1)[1], flags=re.S)[0]
    commands = [line.split(" # ")[0].split() for line in block.splitlines() if line.startswith("toolgym ")]
    assert [c[1] for c in commands] == ["new", "run"]
    for argv in commands:
        build_parser().parse_args(argv[1:])


def _library(path: Path) -> Path:
    """A database no template was written for: a text primary key, a self-reference, a composite key, a table
    without a key, a BLOB, a password hash, NULLs, REAL and NUMERIC money, long free text."""
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE branches (code TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT);
        CREATE TABLE authors (author_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, country TEXT,
                              mentor_id INTEGER REFERENCES authors(author_id));
        CREATE TABLE books (book_id INTEGER PRIMARY KEY, isbn TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
                            author_id INTEGER REFERENCES authors(author_id), branch_code TEXT REFERENCES branches(code),
                            status TEXT NOT NULL, price REAL, cover BLOB, published DATE, summary TEXT);
        CREATE TABLE members (member_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, email TEXT UNIQUE, phone TEXT,
                              password_hash TEXT, tier TEXT);
        CREATE TABLE loans (loan_id INTEGER PRIMARY KEY, book_id INTEGER NOT NULL REFERENCES books(book_id),
                            member_id INTEGER NOT NULL REFERENCES members(member_id), loaned_on TEXT NOT NULL, returned_on TEXT,
                            late_fee NUMERIC, state TEXT);
        CREATE TABLE tags (book_id INTEGER REFERENCES books(book_id), tag TEXT, PRIMARY KEY (book_id, tag));
        CREATE TABLE event_log (at TEXT, message TEXT);""")
    names = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hana", "Ira", "Jo", "Kim", "Lu", "Max", "Ned", "Ola", "Pia"]
    surnames = ["Stone", "Reed", "Hill", "Wood", "Marsh", "Fox", "Gray", "Lake"]
    conn.executemany("INSERT INTO branches VALUES (?, ?, ?)", [(f"BR{i}", f"Branch {i}", rng.choice(["Leeds", "York"])) for i in range(6)])
    conn.executemany("INSERT INTO authors VALUES (?, ?, ?, ?)", [
        (i, f"{rng.choice(names)} {rng.choice(surnames)} {i}", rng.choice(["UK", "US", "FR", None]), rng.choice([None, rng.randint(1, 80)]))
        for i in range(1, 81)])
    conn.executemany("INSERT INTO books VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (i, f"978-{rng.randint(10**8, 10**9 - 1)}-{i}", f"The {rng.choice(['Red', 'Blue', 'Last'])} {rng.choice(['River', 'Key', 'Sky'])} {i}",
         rng.randint(1, 80), f"BR{rng.randint(0, 5)}", rng.choice(["available", "loaned", "lost", "withdrawn"]),
         round(rng.uniform(5, 40), 2), b"\x00\x01", f"{rng.randint(1950, 2024)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
         "A long summary of the plot. " * rng.randint(3, 8)) for i in range(1, 401)])
    conn.executemany("INSERT INTO members VALUES (?, ?, ?, ?, ?, ?, ?)", [
        (i, rng.choice(names), f"{rng.choice(surnames)}{i}", f"m{i}@lib.example", f"0113 {rng.randint(100000, 999999)}", "x",
         rng.choice(["basic", "gold"])) for i in range(1, 121)])
    conn.executemany("INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?, ?)", [
        (i, rng.randint(1, 400), rng.randint(1, 120), f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
         rng.choice([None, "2025-12-30"]), rng.choice([None, "0.50", "1.25", "3.00"]), rng.choice(["open", "returned", "overdue"]))
        for i in range(1, 1201)])
    conn.executemany("INSERT OR IGNORE INTO tags VALUES (?, ?)", [(rng.randint(1, 400), rng.choice(["sf", "crime", "kids"])) for _ in range(200)])
    conn.executemany("INSERT INTO event_log VALUES (?, ?)", [("2025-01-01", "boot")] * 50)
    conn.commit()
    conn.close()
    return path


@pytest.mark.slow
def test_an_unseen_database_without_rules(tmp_path: Path) -> None:
    report = new_environment("library", source=_library(tmp_path / "library.db"), out=tmp_path / "out", seeds=3)
    assert len(report.kept) >= 15 and {"do_return_loan", "do_withdraw_book", "count_loan_of_member"} <= set(report.kept), report.summary()
    assert all(why.startswith(("cannot build", "one of many alike")) for why in report.dropped.values()), report.dropped  # the check dropped none
    spec = json.loads((tmp_path / "out" / "library_env" / "spec.json").read_text())
    book, member = spec["entities"]["book"]["fields"], spec["entities"]["member"]["fields"]
    assert book["cover"]["kind"] == member["password_hash"]["kind"] == "secret" and book["price"]["kind"] == "money"
    assert "row_id" in spec["entities"]["event_log"]["fields"]


def test_an_entity_taken_out_of_the_spec_is_hidden(tmp_path: Path) -> None:
    out = tmp_path / "music"
    new_environment("music", source=chinook(), out=out, sample=30, check=False)
    spec = json.loads((out / "music_env" / "spec.json").read_text())
    del spec["entities"]["employee"]
    spec["actions"] = [a for a in spec["actions"] if a["entity"] != "employee"]
    (out / "music_env" / "spec.json").write_text(json.dumps(spec))
    report = new_environment("music", source=None, out=out, check=False)
    from toolgym.new.build import import_generated

    tools = set(import_generated(out, report.package).tool_specs)
    assert "search_customers" in tools and not any("employee" in t for t in tools)


@pytest.mark.slow
def test_a_create_that_leaves_a_required_column_empty_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    new_environment("library", source=_library(tmp_path / "library.db"), out=out, check=False)
    spec = json.loads((out / "library_env" / "spec.json").read_text())
    spec["actions"] = [{"name": "lend_book", "kind": "create", "entity": "loan", "parent": "book_id", "fields": []}]
    (tmp_path / "rules.json").write_text(json.dumps(spec))
    with pytest.raises(NewError, match="leaves 'member_id' empty"):
        new_environment("library", source=None, out=out, spec_file=tmp_path / "rules.json", check=False)
    spec["actions"][0]["fields"] = ["member_id"]
    spec["actions"][0]["set"] = {"state": "open"}
    spec["actions"][0]["rules"] = [{"check": "book.status in [available]", "code": "book_not_available",
                                    "message": "Only available books are lent."}]
    (tmp_path / "rules.json").write_text(json.dumps(spec))
    report = new_environment("library", source=None, out=out, spec_file=tmp_path / "rules.json", seeds=2)
    assert "do_lend_book" in report.kept, report.summary()


def test_a_folder_of_json_tables_reads_like_csv(tmp_path: Path) -> None:
    csv_folder = _shop_csv(tmp_path / "shop")
    json_folder = tmp_path / "shop-json"
    json_folder.mkdir()
    for file in csv_folder.glob("*.csv"):
        with file.open(newline="") as handle:
            rows_ = [{k: (int(v) if v.isdigit() else v) for k, v in row.items()} for row in csv.DictReader(handle)]
        (json_folder / f"{file.stem}.json").write_text(json.dumps(rows_))
    kinds = {t.name: {c.name: c.kind for c in t.columns} for t in read_source(json_folder).tables}
    assert kinds == {t.name: {c.name: c.kind for c in t.columns} for t in read_source(csv_folder).tables}
    (json_folder / "bad.json").write_text('{"not": "a list"}')
    with pytest.raises(NewError, match="list of objects"):
        read_source(json_folder)


def test_a_count_every_row_shares_is_never_asked(tmp_path: Path) -> None:
    """Where every customer has exactly two orders, "how many orders does X have?" is always 2: a policy that
    memorised it would be paid. The count template is dropped saying so, and is kept where the counts differ."""
    source = _shop_csv(tmp_path / "shop")
    with (source / "orders.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    with (source / "orders.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        for i, row in enumerate(rows[1:121], start=1):
            w.writerow([i, (i - 1) // 2 + 1, *row[2:]])  # customers 1-60: two orders each
    report = new_environment("shop", source=source, out=tmp_path / "two", check=False, seeds=2)
    assert "count_order_of_customer" not in report.kept
    assert "one count for all, an answer a policy memorises" in report.dropped["count_order_of_customer"]
    varied = new_environment("shop", source=_shop_csv(tmp_path / "varied"), out=tmp_path / "many", check=False, seeds=2)
    assert "count_order_of_customer" in varied.kept


def test_lookups_ask_only_fields_whose_answers_vary() -> None:
    """A detail most rows share (a status nearly always 'active') is an answer a policy memorises: never asked."""
    from toolgym.new.templates import _varied

    items = [(row, field) for row in range(10) for field in ("city", "status", "tier")]
    answer = {"city": lambda r: f"city {r}", "status": lambda r: "active" if r < 8 else "closed", "tier": lambda r: str(r % 3)}
    kept = _varied(items, lambda rf: rf[1], lambda rf: answer[rf[1]](rf[0]))
    assert {field for _, field in kept} == {"city", "tier"}
    assert len(kept) == 20
