"""The support world's tables: an online retailer's customers, catalogue, orders, shipping, returns,
refunds, store credit, subscriptions, promotions, help-desk tickets, help-centre articles and audit log.

Every table has a PRIMARY KEY (the change log names rows by it). Money is INTEGER cents (``*_minor``),
never REAL. Dates are ISO ``YYYY-MM-DD`` text, instants ``YYYY-MM-DDTHH:MM:SS+00:00`` (UTC). The help
centre is searched with SQLite full-text search: ``kb_search`` is an FTS5 index over ``kb_articles``
(external content, keyed by the articles' stable ``doc`` number: VACUUM may renumber implicit rowids),
kept in step by triggers; the kit leaves virtual tables out of hashing and change
tracking, since the index is derived from the articles. ``persona`` holds the simulated customer an
episode's task puts on the line (see ``fixtures.persona``); only the customer tools read it.
"""

from __future__ import annotations

from fixtures.persona import PERSONA_SCHEMA
from fixtures.search import index_sql

__all__ = ["SCHEMA", "MONEY_COLUMNS"]

_ID = "CHECK ({col} GLOB '{prefix}-{digits}')"


def _id(col: str, prefix: str, width: int) -> str:
    return _ID.format(col=col, prefix=prefix, digits="[0-9]" * width)


# What search_customers and search_products match their text against (trigram indexes: fixtures/search.py).
_CUSTOMER_SEARCH = index_sql("customer_search", "customers", {
    "name": "{row}.first_name || ' ' || {row}.last_name",
    "email": "{row}.email",
    "phone": "{row}.phone",
    "customer_id": "{row}.customer_id",
})
_PRODUCT_SEARCH = index_sql("product_search", "products", {"name": "{row}.name", "brand": "{row}.brand"})

SCHEMA = f"""
CREATE TABLE teams (
  team_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  handles TEXT NOT NULL
);

CREATE TABLE staff (
  staff_id TEXT PRIMARY KEY {_id("staff_id", "STF", 4)},
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('agent', 'lead', 'specialist', 'inspector')),
  team_id TEXT NOT NULL REFERENCES teams (team_id)
);

CREATE TABLE customers (
  customer_id TEXT PRIMARY KEY {_id("customer_id", "CUS", 5)},
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  date_of_birth TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('standard', 'silver', 'gold', 'platinum')),
  status TEXT NOT NULL CHECK (status IN ('active', 'merged', 'closed')),
  merged_into TEXT REFERENCES customers (customer_id),
  created_on TEXT NOT NULL,
  CHECK (status != 'merged' OR merged_into IS NOT NULL)
);
CREATE INDEX customers_by_email ON customers (email);
CREATE INDEX customers_by_name ON customers (last_name, first_name);
{_CUSTOMER_SEARCH}

CREATE TABLE addresses (
  address_id TEXT PRIMARY KEY {_id("address_id", "ADR", 6)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  line1 TEXT NOT NULL,
  line2 TEXT,
  city TEXT NOT NULL,
  region TEXT NOT NULL,
  postcode TEXT NOT NULL,
  is_default INTEGER NOT NULL CHECK (is_default IN (0, 1))
);
CREATE INDEX addresses_by_customer ON addresses (customer_id);

CREATE TABLE products (
  product_id TEXT PRIMARY KEY {_id("product_id", "PRD", 4)},
  name TEXT NOT NULL,
  brand TEXT NOT NULL,
  category TEXT NOT NULL CHECK (category IN ('electronics', 'apparel', 'home', 'beauty', 'grocery', 'toys'))
);
{_PRODUCT_SEARCH}

CREATE TABLE variants (
  variant_id TEXT PRIMARY KEY {_id("variant_id", "VAR", 5)},
  product_id TEXT NOT NULL REFERENCES products (product_id),
  option TEXT NOT NULL,
  price_minor INTEGER NOT NULL CHECK (typeof(price_minor) = 'integer' AND price_minor > 0),
  stock INTEGER NOT NULL CHECK (typeof(stock) = 'integer' AND stock >= 0)
);
CREATE INDEX variants_by_product ON variants (product_id);

CREATE TABLE reviews (
  review_id TEXT PRIMARY KEY {_id("review_id", "REV", 5)},
  product_id TEXT NOT NULL REFERENCES products (product_id),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  created_on TEXT NOT NULL
);
CREATE INDEX reviews_by_product ON reviews (product_id, created_on);

CREATE TABLE promotions (
  promo_id TEXT PRIMARY KEY {_id("promo_id", "PRM", 3)},
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('percent', 'fixed')),
  value INTEGER NOT NULL CHECK (value > 0),
  min_subtotal_minor INTEGER NOT NULL CHECK (typeof(min_subtotal_minor) = 'integer' AND min_subtotal_minor >= 0),
  category TEXT,
  starts_on TEXT NOT NULL,
  ends_on TEXT NOT NULL
);

CREATE TABLE coupons (
  code TEXT PRIMARY KEY CHECK (code GLOB '[A-Z]*' AND length(code) <= 20),
  promo_id TEXT NOT NULL REFERENCES promotions (promo_id),
  once_per_customer INTEGER NOT NULL CHECK (once_per_customer IN (0, 1))
);

CREATE TABLE orders (
  order_id TEXT PRIMARY KEY {_id("order_id", "ORD", 6)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  placed_at TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing', 'shipped', 'partially_shipped', 'delivered', 'cancelled')),
  ship_line1 TEXT NOT NULL,
  ship_line2 TEXT,
  ship_city TEXT NOT NULL,
  ship_region TEXT NOT NULL,
  ship_postcode TEXT NOT NULL,
  subtotal_minor INTEGER NOT NULL CHECK (typeof(subtotal_minor) = 'integer' AND subtotal_minor >= 0),
  shipping_minor INTEGER NOT NULL CHECK (typeof(shipping_minor) = 'integer' AND shipping_minor >= 0),
  discount_minor INTEGER NOT NULL CHECK (typeof(discount_minor) = 'integer' AND discount_minor >= 0),
  total_minor INTEGER NOT NULL CHECK (typeof(total_minor) = 'integer' AND total_minor >= 0),
  coupon_code TEXT REFERENCES coupons (code),
  replacement_for TEXT REFERENCES orders (order_id),
  CHECK (total_minor = subtotal_minor + shipping_minor - discount_minor)
);
CREATE INDEX orders_by_customer ON orders (customer_id, placed_at);
CREATE INDEX orders_by_replacement ON orders (replacement_for) WHERE replacement_for IS NOT NULL;

CREATE TABLE order_lines (
  line_id TEXT PRIMARY KEY {_id("line_id", "LIN", 7)},
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  variant_id TEXT NOT NULL REFERENCES variants (variant_id),
  quantity INTEGER NOT NULL CHECK (typeof(quantity) = 'integer' AND quantity > 0),
  unit_price_minor INTEGER NOT NULL CHECK (typeof(unit_price_minor) = 'integer' AND unit_price_minor >= 0)
);
CREATE INDEX lines_by_order ON order_lines (order_id);

CREATE TABLE payments (
  payment_id TEXT PRIMARY KEY {_id("payment_id", "PAY", 6)},
  order_id TEXT REFERENCES orders (order_id),
  invoice_id TEXT REFERENCES invoices (invoice_id),
  method TEXT NOT NULL CHECK (method IN ('card', 'paypal', 'gift_card')),
  card_last4 TEXT,
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  status TEXT NOT NULL CHECK (status IN ('captured', 'chargeback')),
  captured_at TEXT NOT NULL,
  CHECK ((order_id IS NULL) != (invoice_id IS NULL))
);
CREATE INDEX payments_by_order ON payments (order_id);
CREATE INDEX payments_by_invoice ON payments (invoice_id);

CREATE TABLE shipments (
  shipment_id TEXT PRIMARY KEY {_id("shipment_id", "SHP", 6)},
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  carrier TEXT NOT NULL,
  tracking_number TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('label_created', 'in_transit', 'out_for_delivery', 'delivered', 'lost', 'returned_to_sender')),
  shipped_on TEXT NOT NULL,
  promised_by TEXT NOT NULL,
  delivered_on TEXT
);
CREATE INDEX shipments_by_order ON shipments (order_id);

CREATE TABLE shipment_items (
  shipment_id TEXT NOT NULL REFERENCES shipments (shipment_id),
  line_id TEXT NOT NULL REFERENCES order_lines (line_id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  PRIMARY KEY (shipment_id, line_id)
);
CREATE INDEX shipment_items_by_line ON shipment_items (line_id);

CREATE TABLE tracking_events (
  event_id TEXT PRIMARY KEY {_id("event_id", "TRK", 7)},
  shipment_id TEXT NOT NULL REFERENCES shipments (shipment_id),
  at TEXT NOT NULL,
  status TEXT NOT NULL,
  location TEXT NOT NULL,
  description TEXT NOT NULL
);
CREATE INDEX tracking_by_shipment ON tracking_events (shipment_id, at);

CREATE TABLE returns (
  rma_id TEXT PRIMARY KEY {_id("rma_id", "RMA", 5)},
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  line_id TEXT NOT NULL REFERENCES order_lines (line_id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  kind TEXT NOT NULL CHECK (kind IN ('return', 'exchange', 'keep')),
  reason TEXT NOT NULL CHECK (reason IN ('changed_mind', 'damaged', 'defective', 'wrong_item', 'not_as_described')),
  status TEXT NOT NULL CHECK (status IN ('authorized', 'received', 'inspected', 'closed', 'rejected')),
  photo_id TEXT REFERENCES attachments (attachment_id),
  exchange_variant_id TEXT REFERENCES variants (variant_id),
  restocking_fee_minor INTEGER NOT NULL DEFAULT 0 CHECK (typeof(restocking_fee_minor) = 'integer' AND restocking_fee_minor >= 0),
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX returns_by_order ON returns (order_id);
CREATE INDEX returns_by_line ON returns (line_id);

CREATE TABLE inspections (
  inspection_id TEXT PRIMARY KEY {_id("inspection_id", "INS", 5)},
  rma_id TEXT NOT NULL REFERENCES returns (rma_id),
  inspected_at TEXT NOT NULL,
  inspector TEXT NOT NULL REFERENCES staff (staff_id),
  result TEXT NOT NULL CHECK (result IN ('pass', 'fail')),
  notes TEXT NOT NULL
);
CREATE INDEX inspections_by_rma ON inspections (rma_id);

CREATE TABLE refunds (
  refund_id TEXT PRIMARY KEY {_id("refund_id", "RFD", 6)},
  order_id TEXT REFERENCES orders (order_id),
  invoice_id TEXT REFERENCES invoices (invoice_id),
  rma_id TEXT REFERENCES returns (rma_id),
  method TEXT NOT NULL CHECK (method IN ('original_payment', 'store_credit')),
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  reason TEXT NOT NULL,
  issued_at TEXT NOT NULL,
  issued_by TEXT NOT NULL REFERENCES staff (staff_id),
  CHECK ((order_id IS NULL) != (invoice_id IS NULL))
);
CREATE INDEX refunds_by_order ON refunds (order_id);
CREATE INDEX refunds_by_invoice ON refunds (invoice_id);

CREATE TABLE credit_ledger (
  entry_id TEXT PRIMARY KEY {_id("entry_id", "SCL", 6)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor != 0),
  kind TEXT NOT NULL CHECK (kind IN ('goodwill', 'refund', 'gift_card', 'purchase', 'merge')),
  reference TEXT,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX credit_by_customer ON credit_ledger (customer_id, created_at);

CREATE TABLE gift_cards (
  code TEXT PRIMARY KEY CHECK (code GLOB 'GC-[A-Z0-9][A-Z0-9][A-Z0-9][A-Z0-9]-[A-Z0-9][A-Z0-9][A-Z0-9][A-Z0-9]'),
  initial_minor INTEGER NOT NULL CHECK (typeof(initial_minor) = 'integer' AND initial_minor > 0),
  balance_minor INTEGER NOT NULL CHECK (typeof(balance_minor) = 'integer' AND balance_minor >= 0),
  purchased_by TEXT NOT NULL REFERENCES customers (customer_id),
  status TEXT NOT NULL CHECK (status IN ('active', 'redeemed', 'void')),
  issued_on TEXT NOT NULL
);

CREATE TABLE plans (
  plan_id TEXT PRIMARY KEY {_id("plan_id", "PLN", 3)},
  name TEXT NOT NULL,
  family TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('basic', 'plus', 'premium')),
  price_minor INTEGER NOT NULL CHECK (typeof(price_minor) = 'integer' AND price_minor > 0)
);

CREATE TABLE subscriptions (
  subscription_id TEXT PRIMARY KEY {_id("subscription_id", "SUB", 5)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  plan_id TEXT NOT NULL REFERENCES plans (plan_id),
  next_plan_id TEXT REFERENCES plans (plan_id),
  status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'past_due', 'cancelled')),
  started_on TEXT NOT NULL,
  period_start TEXT NOT NULL,
  period_end TEXT NOT NULL,
  paused_until TEXT,
  cancel_at_period_end INTEGER NOT NULL DEFAULT 0 CHECK (cancel_at_period_end IN (0, 1)),
  cancelled_on TEXT,
  CHECK (period_start < period_end)
);
CREATE INDEX subscriptions_by_customer ON subscriptions (customer_id);

CREATE TABLE invoices (
  invoice_id TEXT PRIMARY KEY {_id("invoice_id", "INV", 6)},
  subscription_id TEXT NOT NULL REFERENCES subscriptions (subscription_id),
  period_start TEXT NOT NULL,
  period_end TEXT NOT NULL,
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  status TEXT NOT NULL CHECK (status IN ('paid', 'open', 'void')),
  issued_at TEXT NOT NULL
);
CREATE INDEX invoices_by_subscription ON invoices (subscription_id, period_start);

CREATE TABLE tickets (
  ticket_id TEXT PRIMARY KEY {_id("ticket_id", "TCK", 5)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  order_id TEXT REFERENCES orders (order_id),
  subject TEXT NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('email', 'chat', 'phone', 'web')),
  status TEXT NOT NULL CHECK (status IN ('new', 'open', 'pending', 'solved', 'merged')),
  priority TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  team_id TEXT NOT NULL REFERENCES teams (team_id),
  assignee TEXT REFERENCES staff (staff_id),
  created_at TEXT NOT NULL,
  first_response_due TEXT NOT NULL,
  first_responded_at TEXT,
  merged_into TEXT REFERENCES tickets (ticket_id),
  CHECK (status != 'merged' OR merged_into IS NOT NULL)
);
CREATE INDEX tickets_by_customer ON tickets (customer_id, created_at);
CREATE INDEX tickets_by_status ON tickets (status, first_response_due);
CREATE INDEX tickets_by_customer_status ON tickets (customer_id, status, first_response_due);

CREATE TABLE ticket_messages (
  message_id TEXT PRIMARY KEY {_id("message_id", "MSG", 6)},
  ticket_id TEXT NOT NULL REFERENCES tickets (ticket_id),
  at TEXT NOT NULL,
  author TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('customer', 'agent', 'internal', 'system')),
  body TEXT NOT NULL
);
CREATE INDEX messages_by_ticket ON ticket_messages (ticket_id, at);

CREATE TABLE ticket_tags (
  ticket_id TEXT NOT NULL REFERENCES tickets (ticket_id),
  tag TEXT NOT NULL,
  PRIMARY KEY (ticket_id, tag)
);

CREATE TABLE attachments (
  attachment_id TEXT PRIMARY KEY {_id("attachment_id", "ATT", 5)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  kind TEXT NOT NULL CHECK (kind IN ('photo', 'document')),
  description TEXT NOT NULL,
  uploaded_at TEXT NOT NULL
);

CREATE TABLE escalations (
  escalation_id TEXT PRIMARY KEY {_id("escalation_id", "ESC", 5)},
  ticket_id TEXT NOT NULL REFERENCES tickets (ticket_id),
  team_id TEXT NOT NULL REFERENCES teams (team_id),
  reason_code TEXT NOT NULL,
  note TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX escalations_by_ticket ON escalations (ticket_id);

CREATE TABLE fraud_signals (
  signal_id TEXT PRIMARY KEY {_id("signal_id", "FRS", 5)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  order_id TEXT REFERENCES orders (order_id),
  kind TEXT NOT NULL CHECK (kind IN ('chargeback', 'address_mismatch', 'velocity', 'linked_accounts', 'refund_abuse')),
  severity TEXT NOT NULL CHECK (severity IN ('low', 'high')),
  status TEXT NOT NULL CHECK (status IN ('open', 'cleared')),
  created_at TEXT NOT NULL,
  details TEXT NOT NULL
);
CREATE INDEX fraud_by_customer ON fraud_signals (customer_id);

CREATE TABLE verifications (
  verification_id TEXT PRIMARY KEY {_id("verification_id", "VER", 6)},
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed')),
  verified_at TEXT NOT NULL,
  performed_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX verifications_by_customer ON verifications (customer_id, verified_at);

CREATE TABLE kb_articles (
  article_id TEXT PRIMARY KEY {_id("article_id", "KB", 4)},
  doc INTEGER NOT NULL UNIQUE,
  category TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE VIRTUAL TABLE kb_search USING fts5(title, body, content='kb_articles', content_rowid='doc', tokenize='porter');
CREATE TRIGGER kb_search_ai AFTER INSERT ON kb_articles BEGIN
  INSERT INTO kb_search (rowid, title, body) VALUES (new.doc, new.title, new.body);
END;
CREATE TRIGGER kb_search_ad AFTER DELETE ON kb_articles BEGIN
  INSERT INTO kb_search (kb_search, rowid, title, body) VALUES ('delete', old.doc, old.title, old.body);
END;
CREATE TRIGGER kb_search_au AFTER UPDATE ON kb_articles BEGIN
  INSERT INTO kb_search (kb_search, rowid, title, body) VALUES ('delete', old.doc, old.title, old.body);
  INSERT INTO kb_search (rowid, title, body) VALUES (new.doc, new.title, new.body);
END;

CREATE TABLE audit_log (
  audit_id TEXT PRIMARY KEY {_id("audit_id", "AUD", 7)},
  at TEXT NOT NULL,
  actor TEXT NOT NULL REFERENCES staff (staff_id),
  action TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  details TEXT NOT NULL
);
CREATE INDEX audit_by_entity ON audit_log (entity_type, entity_id);
{PERSONA_SCHEMA}"""

MONEY_COLUMNS: dict[str, list[str]] = {
    "variants": ["price_minor"],
    "promotions": ["min_subtotal_minor"],
    "orders": ["subtotal_minor", "shipping_minor", "discount_minor", "total_minor"],
    "order_lines": ["unit_price_minor"],
    "payments": ["amount_minor"],
    "returns": ["restocking_fee_minor"],
    "refunds": ["amount_minor"],
    "credit_ledger": ["amount_minor"],
    "gift_cards": ["initial_minor", "balance_minor"],
    "plans": ["price_minor"],
    "invoices": ["amount_minor"],
}
"""Every column holding money as integer cents; tests check ``typeof()`` of each."""
