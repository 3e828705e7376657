"""Unseen, messy SQLite databases for ``toolgym new``: built deterministically at test time, never checked in.

Each has what real application databases have: quoted, mixed-case and space-containing names, SQL reserved words
as names (``order``, ``group``, ``select``), composite primary keys, tables without a primary key, WITHOUT ROWID
tables, views, NULL-heavy columns, money as REAL floats, as TEXT ("12.50") or as integer cents, dates as ISO dates,
ISO date-times or unix epochs, booleans as 0/1, unicode names, self-references, link tables, an empty table and a
one-row table; the logistics one has a table of ~50k rows.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

__all__ = ["hospital", "library", "billing", "logistics", "big_shop", "BUILDERS"]

_FIRST = ["Ana", "Björn", "Chloé", "Dmitri", "Eun-ji", "Fatima", "Gonzalo", "Hana", "Ítalo", "Jürgen", "Kofi", "Lucía", "Mateus",
          "Nadia", "Oğuz", "Priya", "Quentin", "Renée", "Søren", "Tomás", "Uma", "Vlad", "Wiktoria", "Xu", "Yara", "Zoë"]
_LAST = ["Åberg", "Brandão", "Czerny", "Dubois", "Eriksson", "Fernández", "Gómez", "Hoffmann", "Ishikawa", "Jovanović",
         "Kowalczyk", "Lefèvre", "Müller", "Núñez", "O'Brien", "Papadopoulos", "Quispe", "Rønning", "Šimek", "Tanaka"]


def _name(rng: random.Random, i: int) -> tuple[str, str]:
    return rng.choice(_FIRST), f"{rng.choice(_LAST)}-{i}" if i % 7 == 0 else rng.choice(_LAST)


def _epoch(d: datetime) -> int:
    return int(d.replace(tzinfo=timezone.utc).timestamp())


def hospital(path: Path) -> Path:
    """A hospital's appointments: departments, doctors (self-referencing supervisor), patients, appointments
    (status, fee as REAL), prescriptions, a doctor/department composite-key link table, a view, an empty table."""
    rng = random.Random(11)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE "Department" ("DeptID" INTEGER PRIMARY KEY, "Dept Name" TEXT NOT NULL UNIQUE, "Floor" INTEGER);
    CREATE TABLE "Doctor" ("DoctorID" INTEGER PRIMARY KEY, "FirstName" TEXT, "LastName" TEXT, "Email" TEXT UNIQUE,
        "Phone" TEXT, "DeptID" INTEGER REFERENCES "Department"("DeptID"), "SupervisorID" INTEGER REFERENCES "Doctor"("DoctorID"),
        "HiredOn" TEXT, "IsActive" INTEGER NOT NULL DEFAULT 1, "Bio" TEXT);
    CREATE TABLE patients (patient_id INTEGER PRIMARY KEY AUTOINCREMENT, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
        email TEXT, phone TEXT, date_of_birth TEXT, postal_code TEXT, insurance_no TEXT, notes TEXT, password_hash TEXT);
    CREATE TABLE appointments (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(patient_id),
        doctor_id INTEGER NOT NULL REFERENCES "Doctor"("DoctorID"), scheduled_at TEXT NOT NULL, status TEXT NOT NULL,
        fee REAL, reason TEXT, room TEXT, "select" TEXT, created_ts INTEGER);
    CREATE TABLE prescriptions (rx_id INTEGER PRIMARY KEY, appointment_id INTEGER REFERENCES appointments(id),
        drug TEXT NOT NULL, dose_mg REAL, refills INTEGER, price TEXT, issued_on TEXT, "Doctor's Note" TEXT);
    CREATE TABLE doctor_department (doctor_id INTEGER NOT NULL REFERENCES "Doctor"("DoctorID"),
        dept_id INTEGER NOT NULL REFERENCES "Department"("DeptID"), since TEXT, PRIMARY KEY (doctor_id, dept_id)) WITHOUT ROWID;
    CREATE TABLE audit_log (happened_at INTEGER, actor TEXT, what TEXT);
    CREATE TABLE "wait list" (entry_id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients(patient_id), added_on TEXT);
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT);
    CREATE VIEW upcoming AS SELECT * FROM appointments WHERE status = 'scheduled';
    """)
    depts = ["Cardiology", "Neurology", "Pädiatrie", "Oncology", "Radiology", "Dermatology", "Orthopaedics", "Urgences"]
    conn.executemany('INSERT INTO "Department" VALUES (?, ?, ?)', [(i + 1, d, i % 4) for i, d in enumerate(depts)])
    for i in range(1, 41):
        f, l = _name(rng, i)
        conn.execute('INSERT INTO "Doctor" VALUES (?,?,?,?,?,?,?,?,?,?)',
                     (i, f, f"{l}", f"dr{i}@hospital.example", f"+44 20 7946 {i:04d}", rng.randint(1, 8), None if i <= 4 else rng.randint(1, 4),
                      (date(2010, 1, 1) + timedelta(days=rng.randint(0, 5000))).isoformat(), int(rng.random() < 0.9),
                      None if rng.random() < 0.7 else "Trained abroad; interested in long-term outcomes and patient education. " * 2))
    for i in range(1, 301):
        f, l = _name(rng, i)
        conn.execute("INSERT INTO patients VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (i, f, l, None if i % 9 == 0 else f"p{i}@mail.example", f"07{rng.randint(100000000, 999999999)}",
                      (date(1940, 1, 1) + timedelta(days=rng.randint(0, 25000))).isoformat(), f"SW{rng.randint(1, 20)} {rng.randint(1, 9)}AB",
                      f"INS-{rng.randint(10**6, 10**7)}", None, f"{rng.getrandbits(64):x}"))
    statuses = ["scheduled", "checked_in", "completed", "cancelled", "no_show"]
    for i in range(1, 2001):
        when = datetime(2025, 1, 1, 8) + timedelta(days=rng.randint(0, 400), minutes=15 * rng.randint(0, 36))
        conn.execute("INSERT INTO appointments VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (i, rng.randint(1, 300), rng.randint(1, 40), when.strftime("%Y-%m-%d %H:%M:%S"), rng.choice(statuses),
                      None if rng.random() < 0.2 else round(rng.uniform(20, 400), 2) if i % 5 else float(rng.randint(30, 90)),
                      rng.choice(["check-up", "follow-up", "pain", "referral", None]), f"R{rng.randint(100, 450)}",
                      rng.choice(["a", "b", None]), _epoch(when - timedelta(days=rng.randint(1, 30)))))
    for i in range(1, 1501):
        conn.execute("INSERT INTO prescriptions VALUES (?,?,?,?,?,?,?,?)",
                     (i, rng.randint(1, 2000), rng.choice(["Amoxicillin", "Ibuprofen", "Metformin", "Atorvastatin", "Lisinopril", "Omeprazole"]),
                      rng.choice([250.0, 500.0, 12.5, 0.25]), rng.randint(0, 3), f"{rng.randint(2, 80)}.{rng.randint(0, 99):02d}",
                      (date(2025, 1, 1) + timedelta(days=rng.randint(0, 400))).isoformat(), None if i % 3 else "take with food"))
    conn.executemany("INSERT OR IGNORE INTO doctor_department VALUES (?,?,?)",
                     [(rng.randint(1, 40), rng.randint(1, 8), "2020-01-01") for _ in range(60)])
    conn.executemany("INSERT INTO audit_log VALUES (?,?,?)", [(1700000000 + i * 77, "system", f"event {i}") for i in range(200)])
    conn.execute("INSERT INTO settings VALUES ('timezone', 'Europe/London')")
    conn.commit()
    conn.close()
    return path


def library(path: Path) -> Path:
    """A library's loans: branches, members, books with authors (many-to-many), copies (composite key), loans with
    fines as integer cents and dates as unix epochs, a "group" table (reserved word), a one-row table."""
    rng = random.Random(12)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE branch (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, city TEXT, opened INTEGER);
    CREATE TABLE "group" (id INTEGER PRIMARY KEY, label TEXT NOT NULL, "order" INTEGER);
    CREATE TABLE member (id INTEGER PRIMARY KEY, "Full Name" TEXT NOT NULL, email TEXT UNIQUE, phone TEXT, postcode TEXT,
        branch_id INTEGER REFERENCES branch(id), group_id INTEGER REFERENCES "group"(id), joined_epoch INTEGER,
        status TEXT NOT NULL, balance_cents INTEGER NOT NULL DEFAULT 0, is_student INTEGER, referred_by INTEGER REFERENCES member(id));
    CREATE TABLE author (author_id INTEGER PRIMARY KEY, name TEXT NOT NULL, born INTEGER, country TEXT);
    CREATE TABLE book (isbn TEXT PRIMARY KEY, title TEXT NOT NULL, published TEXT, pages INTEGER, genre TEXT, list_price REAL);
    CREATE TABLE book_author (isbn TEXT REFERENCES book(isbn), author_id INTEGER REFERENCES author(author_id), PRIMARY KEY (isbn, author_id));
    CREATE TABLE copy (isbn TEXT NOT NULL REFERENCES book(isbn), copy_no INTEGER NOT NULL, branch_id INTEGER REFERENCES branch(id),
        condition TEXT, PRIMARY KEY (isbn, copy_no)) WITHOUT ROWID;
    CREATE TABLE loan (loan_id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES member(id), isbn TEXT REFERENCES book(isbn),
        copy_no INTEGER, loaned_at INTEGER NOT NULL, due_at INTEGER, returned_at INTEGER, fine_cents INTEGER, state TEXT NOT NULL);
    CREATE TABLE holiday (day TEXT, note TEXT);
    CREATE TABLE config (id INTEGER PRIMARY KEY, library_name TEXT);
    CREATE TABLE reservation (id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES member(id), isbn TEXT REFERENCES book(isbn));
    CREATE VIEW overdue AS SELECT * FROM loan WHERE returned_at IS NULL AND due_at < 1767225600;
    """)
    branches = ["Central", "Riverside", "Nørrebro", "Old Town", "Hillcrest", "Harbour"]
    conn.executemany("INSERT INTO branch VALUES (?,?,?,?)", [(i + 1, b, rng.choice(["Oslo", "Bergen"]), 1950 + i * 7) for i, b in enumerate(branches)])
    conn.executemany('INSERT INTO "group" VALUES (?,?,?)', [(1, "adult", 1), (2, "child", 2), (3, "senior", 3), (4, "staff", 4)])
    for i in range(1, 401):
        f, l = _name(rng, i)
        joined = datetime(2015, 1, 1) + timedelta(days=rng.randint(0, 3800))
        conn.execute("INSERT INTO member VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     (i, f"{f} {l} {i}" if i % 3 == 0 else f"{f} {l}", f"m{i}@lib.example", None if i % 4 == 0 else f"+47 {rng.randint(10**7, 10**8 - 1)}",
                      f"{rng.randint(1000, 9999)}", rng.randint(1, 6), rng.randint(1, 4), _epoch(joined),
                      rng.choice(["active", "active", "active", "suspended", "expired"]), rng.choice([0, 0, 150, 275, 1000]),
                      rng.randint(0, 1), None if i < 20 or rng.random() < 0.8 else rng.randint(1, i - 1)))
    authors = []
    for i in range(1, 121):
        f, l = _name(rng, i)
        authors.append(i)
        conn.execute("INSERT INTO author VALUES (?,?,?,?)", (i, f"{f} {l}", rng.randint(1850, 1995), rng.choice(["NO", "SE", "FR", "JP", None])))
    words = ["Silent", "River", "Winter", "Garden", "Empire", "Shadow", "Glass", "Letters", "Night", "Ocean", "Salt", "Mirror",
             "Crow", "Harbour", "Secret", "Clock", "Paper", "Island", "Storm", "Bridge"]
    isbns = []
    for i in range(1, 601):
        isbn = f"978{rng.randint(10**9, 10**10 - 1)}"
        isbns.append(isbn)
        conn.execute("INSERT INTO book VALUES (?,?,?,?,?,?)",
                     (isbn, f"The {rng.choice(words)} of {rng.choice(words)} {i}", f"{rng.randint(1950, 2024)}-{rng.randint(1, 12):02d}-01",
                      rng.randint(90, 900), rng.choice(["fiction", "history", "science", "children", "poetry"]), round(rng.uniform(5, 60), 2)))
        for a in rng.sample(authors, rng.randint(1, 2)):
            conn.execute("INSERT INTO book_author VALUES (?,?)", (isbn, a))
        for c in range(1, rng.randint(1, 3) + 1):
            conn.execute("INSERT INTO copy VALUES (?,?,?,?)", (isbn, c, rng.randint(1, 6), rng.choice(["good", "worn", "damaged"])))
    for i in range(1, 5001):
        out = datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 700), hours=rng.randint(9, 19))
        back = None if rng.random() < 0.15 else out + timedelta(days=rng.randint(1, 40))
        conn.execute("INSERT INTO loan VALUES (?,?,?,?,?,?,?,?,?)",
                     (i, rng.randint(1, 400), rng.choice(isbns), 1, _epoch(out), _epoch(out + timedelta(days=21)),
                      _epoch(back) if back else None, None if rng.random() < 0.7 else rng.randint(10, 900),
                      rng.choice(["open", "returned", "returned", "lost", "renewed"])))
    conn.execute("INSERT INTO config VALUES (1, 'Bibliotek')")
    conn.commit()
    conn.close()
    return path


def billing(path: Path) -> Path:
    """A SaaS billing database: accounts, plans, subscriptions (status), invoices (money as TEXT "12.50"),
    invoice items, payments (REAL), ISO date-times with offsets, a CamelCase quoted schema, an empty table."""
    rng = random.Random(13)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE "Accounts" ("AccountId" TEXT PRIMARY KEY, "CompanyName" TEXT NOT NULL, "BillingEmail" TEXT, "Phone" TEXT,
        "Country" TEXT, "VatNumber" TEXT, "CreatedAt" TEXT, "ParentAccountId" TEXT REFERENCES "Accounts"("AccountId"), "ApiKey" TEXT);
    CREATE TABLE "Plans" ("PlanCode" TEXT PRIMARY KEY, "Name" TEXT NOT NULL, "MonthlyPrice" TEXT NOT NULL, "Seats" INTEGER);
    CREATE TABLE "Subscriptions" ("Id" INTEGER PRIMARY KEY, "AccountId" TEXT NOT NULL REFERENCES "Accounts"("AccountId"),
        "PlanCode" TEXT NOT NULL REFERENCES "Plans"("PlanCode"), "Status" TEXT NOT NULL, "StartedAt" TEXT, "CanceledAt" TEXT,
        "AutoRenew" INTEGER, "Discount" REAL);
    CREATE TABLE "Invoices" ("Id" INTEGER PRIMARY KEY, "SubscriptionId" INTEGER NOT NULL REFERENCES "Subscriptions"("Id"),
        "Number" TEXT UNIQUE, "IssuedAt" TEXT NOT NULL, "DueDate" TEXT, "AmountDue" TEXT NOT NULL, "AmountPaid" TEXT,
        "Currency" TEXT NOT NULL, "Status" TEXT NOT NULL, "Memo" TEXT);
    CREATE TABLE "InvoiceItems" ("InvoiceId" INTEGER NOT NULL REFERENCES "Invoices"("Id"), "Line" INTEGER NOT NULL,
        "Description" TEXT, "Quantity" INTEGER, "UnitAmount" TEXT, PRIMARY KEY ("InvoiceId", "Line"));
    CREATE TABLE "Payments" ("Id" INTEGER PRIMARY KEY, "InvoiceId" INTEGER REFERENCES "Invoices"("Id"), "PaidAt" TEXT,
        "Amount" REAL NOT NULL, "Method" TEXT, "Reference" TEXT);
    CREATE TABLE "Coupons" ("Code" TEXT PRIMARY KEY, "PercentOff" INTEGER);
    CREATE TABLE "Webhooks" ("Url" TEXT, "Secret" TEXT);
    CREATE VIEW "OpenInvoices" AS SELECT * FROM "Invoices" WHERE "Status" = 'open';
    """)
    plans = [("basic", "Basic", "9.00", 1), ("team", "Team", "49.00", 10), ("business", "Business", "199.00", 50),
             ("enterprise", "Enterprise", "999.99", 500), ("edu", "Education", "0.00", 25)]
    conn.executemany('INSERT INTO "Plans" VALUES (?,?,?,?)', plans)
    suffixes = ["GmbH", "AS", "Ltd", "S.A.", "Inc.", "KK", "Oy", "BV"]
    stems = ["Acme", "Nordlys", "Zephyr", "Brightwave", "Kōhai", "Lumen", "Quartz", "Fjord", "Orbit", "Pixel", "Helix", "Maple"]
    for i in range(1, 251):
        acct = f"acct_{i:05d}"
        conn.execute('INSERT INTO "Accounts" VALUES (?,?,?,?,?,?,?,?,?)',
                     (acct, f"{rng.choice(stems)} {rng.choice(stems)} {rng.choice(suffixes)}", None if i % 6 == 0 else f"billing{i}@corp.example",
                      f"+1 415 555 {i:04d}", rng.choice(["US", "DE", "NO", "JP", "BR"]), None if rng.random() < 0.6 else f"VAT{rng.randint(10**8, 10**9)}",
                      (datetime(2021, 1, 1) + timedelta(hours=rng.randint(0, 30000))).strftime("%Y-%m-%dT%H:%M:%SZ"),
                      None if i < 30 or rng.random() < 0.85 else f"acct_{rng.randint(1, 29):05d}", f"sk_live_{rng.getrandbits(80):x}"))
    sub = inv = pay = 0
    for i in range(1, 251):
        for _ in range(rng.randint(1, 3)):
            sub += 1
            plan = rng.choice(plans)
            started = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
            status = rng.choice(["active", "active", "trialing", "past_due", "canceled", "paused"])
            conn.execute('INSERT INTO "Subscriptions" VALUES (?,?,?,?,?,?,?,?)',
                         (sub, f"acct_{i:05d}", plan[0], status, started.isoformat() + "+00:00",
                          (started + timedelta(days=90)).isoformat() + "+00:00" if status == "canceled" else None,
                          rng.randint(0, 1), None if rng.random() < 0.8 else rng.choice([0.1, 0.15, 0.2])))
            for m in range(rng.randint(1, 6)):
                inv += 1
                issued = started + timedelta(days=30 * m)
                due = Decimal_str(plan[2], rng)
                status_i = rng.choice(["paid", "paid", "open", "void", "uncollectible"])
                conn.execute('INSERT INTO "Invoices" VALUES (?,?,?,?,?,?,?,?,?,?)',
                             (inv, sub, f"INV-{inv:06d}", issued.isoformat(timespec="seconds"), (issued + timedelta(days=14)).date().isoformat(),
                              due, due if status_i == "paid" else "0.00", "USD", status_i, None))
                for line in range(1, rng.randint(1, 3) + 1):
                    conn.execute('INSERT INTO "InvoiceItems" VALUES (?,?,?,?,?)', (inv, line, f"{plan[1]} seat", rng.randint(1, 5), plan[2]))
                if status_i == "paid":
                    pay += 1
                    conn.execute('INSERT INTO "Payments" VALUES (?,?,?,?,?,?)',
                                 (pay, inv, (issued + timedelta(days=rng.randint(0, 10))).isoformat(timespec="seconds"), float(due),
                                  rng.choice(["card", "sepa", "wire"]), f"ch_{rng.getrandbits(40):x}"))
    conn.commit()
    conn.close()
    return path


def Decimal_str(price: str, rng: random.Random) -> str:  # noqa: N802
    cents = int(round(float(price) * 100)) * rng.randint(1, 3) + rng.choice([0, 0, 5, 99])
    return f"{cents // 100}.{cents % 100:02d}"


def logistics(path: Path) -> Path:
    """A warehouse: warehouses, products (SKU natural key, price REAL with 3 digits sometimes), customers, orders in a
    table named "order" (reserved word) with a "group" column, shipments, a ~50k-row stock-movement table keyed by
    (warehouse, sku, seq), and dates as unix epoch integers."""
    rng = random.Random(14)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE warehouse (id INTEGER PRIMARY KEY, code TEXT UNIQUE NOT NULL, name TEXT NOT NULL, city TEXT, capacity INTEGER);
    CREATE TABLE product (sku TEXT PRIMARY KEY, name TEXT NOT NULL, weight_kg REAL, unit_price REAL, category TEXT, discontinued INTEGER);
    CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, phone TEXT, zip TEXT, credit_limit INTEGER);
    CREATE TABLE "order" (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id),
        warehouse_id INTEGER REFERENCES warehouse(id), placed INTEGER NOT NULL, status TEXT NOT NULL, "group" TEXT,
        total REAL, notes TEXT);
    CREATE TABLE order_line (order_id INTEGER NOT NULL REFERENCES "order"(id), sku TEXT NOT NULL REFERENCES product(sku),
        qty INTEGER NOT NULL, price REAL, PRIMARY KEY (order_id, sku));
    CREATE TABLE shipment (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES "order"(id), carrier TEXT, tracking TEXT,
        shipped INTEGER, delivered INTEGER, cost_cents INTEGER);
    CREATE TABLE stock_movement (warehouse_id INTEGER NOT NULL REFERENCES warehouse(id), sku TEXT NOT NULL REFERENCES product(sku),
        seq INTEGER NOT NULL, moved_at INTEGER, delta INTEGER NOT NULL, reason TEXT, PRIMARY KEY (warehouse_id, sku, seq)) WITHOUT ROWID;
    CREATE TABLE returns_queue (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES "order"(id));
    CREATE VIEW big_orders AS SELECT * FROM "order" WHERE total > 1000;
    """)
    for i in range(1, 9):
        conn.execute("INSERT INTO warehouse VALUES (?,?,?,?,?)", (i, f"WH-{i:02d}", f"Depot {['Nord', 'Süd', 'Ost', 'West', 'Mitte', 'Hafen', 'Flughafen', 'Berg'][i - 1]}",
                                                                      rng.choice(["Hamburg", "München", "Köln"]), rng.randint(1000, 9000)))
    skus = []
    nouns = ["Pallet", "Crate", "Bolt", "Hinge", "Cable", "Valve", "Pump", "Filter", "Sensor", "Bracket", "Gasket", "Relay"]
    for i in range(1, 301):
        sku = f"SKU-{i:05d}"
        skus.append(sku)
        conn.execute("INSERT INTO product VALUES (?,?,?,?,?,?)",
                     (sku, f"{rng.choice(nouns)} {rng.choice(['A', 'B', 'C', 'X'])}{i}", round(rng.uniform(0.1, 40), 3),
                      round(rng.uniform(1, 500), 2), rng.choice(["hardware", "electrical", "plumbing", "packaging"]), int(rng.random() < 0.1)))
    for i in range(1, 201):
        f, l = _name(rng, i)
        conn.execute("INSERT INTO customer VALUES (?,?,?,?,?,?)",
                     (i, f"{l} {rng.choice(['Logistik', 'Handel', 'Bau', 'Technik'])} {i}", f"ops{i}@firm.example",
                      f"+49 30 {rng.randint(10**6, 10**7)}", f"{rng.randint(10000, 99999)}", rng.choice([1000, 5000, 20000])))
    line_total: dict[int, float] = {}
    for i in range(1, 3001):
        placed = datetime(2024, 6, 1) + timedelta(minutes=rng.randint(0, 800000))
        lines = rng.sample(skus, rng.randint(1, 4))
        total = 0.0
        for sku in lines:
            qty, price = rng.randint(1, 20), round(rng.uniform(1, 500), 2)
            total += qty * price
            conn.execute("INSERT INTO order_line VALUES (?,?,?,?)", (i, sku, qty, price))
        line_total[i] = total
        conn.execute('INSERT INTO "order" VALUES (?,?,?,?,?,?,?,?)',
                     (i, rng.randint(1, 200), rng.randint(1, 8), _epoch(placed), rng.choice(["new", "picking", "shipped", "delivered", "cancelled", "on_hold"]),
                      rng.choice(["retail", "wholesale", None]), round(total, 2), None))
        if rng.random() < 0.6:
            conn.execute("INSERT INTO shipment VALUES (?,?,?,?,?,?,?)",
                         (i, i, rng.choice(["DHL", "UPS", "DPD", "GLS"]), f"TRK{rng.getrandbits(40):x}", _epoch(placed + timedelta(days=1)),
                          None if rng.random() < 0.3 else _epoch(placed + timedelta(days=rng.randint(2, 6))), rng.randint(499, 4999)))
    seq: dict[tuple[int, str], int] = {}
    batch = []
    for _ in range(50000):
        w, sku = rng.randint(1, 8), rng.choice(skus)
        seq[(w, sku)] = seq.get((w, sku), 0) + 1
        batch.append((w, sku, seq[(w, sku)], 1700000000 + rng.randint(0, 40000000), rng.randint(-50, 200), rng.choice(["receipt", "pick", "adjust", None])))
    conn.executemany("INSERT INTO stock_movement VALUES (?,?,?,?,?,?)", batch)
    conn.commit()
    conn.close()
    return path


BUILDERS = {"hospital": hospital, "library": library, "billing": billing, "logistics": logistics}


def big_shop(path: Path, lines: int = 1_000_000) -> Path:
    """A shop with ``lines`` order lines (default a million) and customer names shared by many people: customers (one per
    50 lines; first and last names from short lists, so "Ana Müller" is dozens of people), products, orders (one per 10
    lines, with a status), order lines and payments. Written in streamed batches: building it never holds the rows in
    memory, and neither may ``toolgym new`` reading it (bench/new_memory.py measures that)."""
    rng = random.Random(26)
    customers, products, orders = max(40, lines // 50), 500, max(40, lines // 10)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
        email TEXT NOT NULL UNIQUE, city TEXT, postcode TEXT);
    CREATE TABLE products (product_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price_cents INTEGER NOT NULL);
    CREATE TABLE orders (order_id INTEGER PRIMARY KEY, order_number TEXT NOT NULL UNIQUE, customer_id INTEGER NOT NULL
        REFERENCES customers(customer_id), status TEXT NOT NULL, placed_at TEXT NOT NULL);
    CREATE TABLE order_lines (line_id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(order_id),
        product_id INTEGER NOT NULL REFERENCES products(product_id), quantity INTEGER NOT NULL, price_cents INTEGER NOT NULL);
    CREATE TABLE payments (payment_id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(order_id),
        amount_cents INTEGER NOT NULL, paid_at TEXT NOT NULL);
    """)
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?)", (
        (i, rng.choice(_FIRST), rng.choice(_LAST), f"customer{i}@shop.example", rng.choice(["Oslo", "Lima", "Pune", "Kyiv", "Porto"]),
         f"{rng.randint(10000, 99999)}") for i in range(1, customers + 1)))
    prices = {i: rng.randint(199, 49_999) for i in range(1, products + 1)}
    conn.executemany("INSERT INTO products VALUES (?, ?, ?)", ((i, f"Product {i:04d}", prices[i]) for i in prices))
    start = datetime(2024, 1, 1)
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", (
        (i, f"SO-{i:07d}", rng.randint(1, customers), rng.choice(["pending", "paid", "shipped", "delivered", "cancelled"]),
         (start + timedelta(minutes=37 * i)).isoformat(timespec="seconds")) for i in range(1, orders + 1)))

    def order_lines():  # noqa: ANN202
        for i in range(1, lines + 1):
            product = rng.randint(1, products)
            yield i, (i - 1) // 10 + 1 if (i - 1) // 10 + 1 <= orders else orders, product, rng.randint(1, 4), prices[product]

    conn.executemany("INSERT INTO order_lines VALUES (?, ?, ?, ?, ?)", order_lines())
    conn.executemany("INSERT INTO payments VALUES (?, ?, ?, ?)", (
        (i, i, rng.randint(500, 200_000), (start + timedelta(minutes=37 * i + 5)).isoformat(timespec="seconds"))
        for i in range(1, orders + 1)))
    conn.commit()
    conn.close()
    return path

