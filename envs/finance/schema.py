"""The finance world's tables: a small bank's customers, accounts, ledger, payments, cards, wealth desk
and compliance back office.

Every table has a PRIMARY KEY (the change log names rows by it). Money columns end in ``_minor`` and are
INTEGER minor units of the row's currency, never REAL. FX rates are integer micro-units (rate × 10^6).
Dates are ISO ``YYYY-MM-DD`` text, instants ISO ``YYYY-MM-DDTHH:MM:SS+00:00`` text (UTC). The CHECK
constraints are a second line of defence behind the tools' rules: a bug can never store a negative hold,
a float balance or a closed account with money in it.
"""

from __future__ import annotations

from fixtures.search import index_sql

__all__ = ["SCHEMA", "MONEY_COLUMNS"]

SCHEMA = """
CREATE TABLE staff (
  staff_id TEXT PRIMARY KEY CHECK (staff_id GLOB 'STF-[0-9][0-9][0-9][0-9]'),
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('analyst', 'supervisor', 'compliance_officer', 'relationship_manager')),
  approval_limit_minor INTEGER NOT NULL DEFAULT 0 CHECK (typeof(approval_limit_minor) = 'integer' AND approval_limit_minor >= 0),
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1))
);

CREATE TABLE customers (
  customer_id TEXT PRIMARY KEY CHECK (customer_id GLOB 'CUS-[0-9][0-9][0-9][0-9][0-9]'),
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  date_of_birth TEXT NOT NULL,
  address_line TEXT NOT NULL,
  city TEXT NOT NULL,
  postcode TEXT NOT NULL,
  country TEXT NOT NULL CHECK (length(country) = 2),
  segment TEXT NOT NULL CHECK (segment IN ('retail', 'wealth')),
  kyc_status TEXT NOT NULL CHECK (kyc_status IN ('verified', 'pending', 'expired')),
  kyc_reviewed_on TEXT,
  kyc_expires_on TEXT,
  risk_profile TEXT NOT NULL CHECK (risk_profile IN ('conservative', 'balanced', 'aggressive')),
  id_last4 TEXT NOT NULL CHECK (length(id_last4) = 4 AND id_last4 GLOB '[0-9][0-9][0-9][0-9]'),
  customer_since TEXT NOT NULL,
  relationship_manager TEXT REFERENCES staff (staff_id)
);
CREATE INDEX customers_by_last_name ON customers (last_name, first_name);
CREATE INDEX customers_by_email ON customers (email);
CREATE INDEX customers_by_kyc ON customers (kyc_status);
""" + index_sql("customer_search", "customers", {  # what search_customers matches its text against (fixtures/search.py)
    "name": "{row}.first_name || ' ' || {row}.last_name",
    "name_reversed": "{row}.last_name || ' ' || {row}.first_name",
    "email": "{row}.email",
    "phone": "{row}.phone",
    "customer_id": "{row}.customer_id",
}) + """

CREATE TABLE accounts (
  account_id TEXT PRIMARY KEY CHECK (account_id GLOB 'ACC-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  type TEXT NOT NULL CHECK (type IN ('checking', 'savings', 'brokerage')),
  currency TEXT NOT NULL CHECK (currency IN ('USD', 'EUR', 'GBP')),
  status TEXT NOT NULL CHECK (status IN ('open', 'frozen', 'closed')),
  balance_minor INTEGER NOT NULL CHECK (typeof(balance_minor) = 'integer'),
  overdraft_limit_minor INTEGER NOT NULL DEFAULT 0 CHECK (typeof(overdraft_limit_minor) = 'integer' AND overdraft_limit_minor >= 0),
  interest_rate_bps INTEGER NOT NULL DEFAULT 0 CHECK (interest_rate_bps >= 0),
  nickname TEXT,
  opened_on TEXT NOT NULL,
  closed_on TEXT,
  status_reason TEXT,
  CHECK (status != 'closed' OR (balance_minor = 0 AND closed_on IS NOT NULL))
);
CREATE INDEX accounts_by_customer ON accounts (customer_id);
CREATE INDEX accounts_by_status ON accounts (status);

CREATE TABLE daily_limits (
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  channel TEXT NOT NULL CHECK (channel IN ('internal_transfer', 'external_wire')),
  limit_minor INTEGER NOT NULL CHECK (typeof(limit_minor) = 'integer' AND limit_minor > 0),
  PRIMARY KEY (account_id, channel)
);

CREATE TABLE cards (
  card_id TEXT PRIMARY KEY CHECK (card_id GLOB 'CRD-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  last4 TEXT NOT NULL CHECK (length(last4) = 4),
  network TEXT NOT NULL CHECK (network IN ('visa', 'mastercard')),
  status TEXT NOT NULL CHECK (status IN ('active', 'frozen', 'cancelled')),
  daily_limit_minor INTEGER NOT NULL CHECK (typeof(daily_limit_minor) = 'integer' AND daily_limit_minor > 0),
  issued_on TEXT NOT NULL,
  expires TEXT NOT NULL,
  frozen_at TEXT,
  status_reason TEXT
);
CREATE INDEX cards_by_account ON cards (account_id);
CREATE INDEX cards_by_customer ON cards (customer_id);

CREATE TABLE transfers (
  transfer_id TEXT PRIMARY KEY CHECK (transfer_id GLOB 'TRF-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  kind TEXT NOT NULL CHECK (kind IN ('internal', 'external_wire', 'fx')),
  from_account_id TEXT NOT NULL REFERENCES accounts (account_id),
  to_account_id TEXT REFERENCES accounts (account_id),
  payee_id TEXT REFERENCES payees (payee_id),
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  currency TEXT NOT NULL,
  fee_minor INTEGER NOT NULL DEFAULT 0 CHECK (typeof(fee_minor) = 'integer' AND fee_minor >= 0),
  to_amount_minor INTEGER CHECK (to_amount_minor IS NULL OR (typeof(to_amount_minor) = 'integer' AND to_amount_minor > 0)),
  to_currency TEXT,
  rate_micros INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending_approval', 'completed', 'rejected')),
  channel TEXT NOT NULL CHECK (channel IN ('online', 'branch', 'back_office')),
  requested_by TEXT REFERENCES staff (staff_id),
  requested_at TEXT NOT NULL,
  decided_by TEXT REFERENCES staff (staff_id),
  decided_at TEXT,
  memo TEXT,
  reference TEXT NOT NULL,
  rejection_reason TEXT,
  CHECK (channel = 'online' OR requested_by IS NOT NULL)
);
CREATE INDEX transfers_by_from ON transfers (from_account_id, requested_at);
CREATE INDEX transfers_by_status ON transfers (status);

CREATE TABLE approvals (
  approval_id TEXT PRIMARY KEY CHECK (approval_id GLOB 'APR-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  transfer_id TEXT NOT NULL REFERENCES transfers (transfer_id),
  approver_id TEXT NOT NULL REFERENCES staff (staff_id),
  decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
  decided_at TEXT NOT NULL,
  comment TEXT
);
CREATE INDEX approvals_by_transfer ON approvals (transfer_id);

CREATE TABLE transactions (
  txn_id TEXT PRIMARY KEY CHECK (txn_id GLOB 'TXN-[0-9][0-9][0-9][0-9][0-9][0-9][0-9]'),
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  txn_date TEXT NOT NULL,
  posted_on TEXT,
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor != 0),
  currency TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'posted', 'reversed')),
  kind TEXT NOT NULL CHECK (kind IN ('opening', 'card', 'atm', 'direct_debit', 'salary', 'deposit', 'transfer',
                                     'wire', 'fee', 'interest', 'fx', 'trade', 'refund')),
  merchant TEXT,
  merchant_country TEXT,
  category TEXT NOT NULL,
  memo TEXT,
  reference TEXT NOT NULL,
  card_id TEXT REFERENCES cards (card_id),
  transfer_id TEXT REFERENCES transfers (transfer_id),
  CHECK (status != 'posted' OR posted_on IS NOT NULL)
);
CREATE INDEX transactions_by_account_date ON transactions (account_id, txn_date);
CREATE INDEX transactions_by_card ON transactions (card_id) WHERE card_id IS NOT NULL;
CREATE INDEX transactions_by_transfer ON transactions (transfer_id) WHERE transfer_id IS NOT NULL;
CREATE INDEX transactions_pending ON transactions (account_id) WHERE status = 'pending';
-- a search over the whole bank pages newest first: 25 rows read from this index instead of 37,000 sorted
CREATE INDEX transactions_by_date ON transactions (txn_date, txn_id);

CREATE TABLE payees (
  payee_id TEXT PRIMARY KEY CHECK (payee_id GLOB 'PAY-[0-9][0-9][0-9][0-9][0-9]'),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  kind TEXT NOT NULL CHECK (kind IN ('internal', 'external')),
  name TEXT NOT NULL,
  bank_name TEXT NOT NULL,
  account_number TEXT NOT NULL,
  routing_code TEXT NOT NULL,
  internal_account_id TEXT REFERENCES accounts (account_id),
  currency TEXT NOT NULL,
  verified INTEGER NOT NULL CHECK (verified IN (0, 1)),
  status TEXT NOT NULL CHECK (status IN ('active', 'removed')),
  added_on TEXT NOT NULL,
  CHECK (kind = 'external' OR internal_account_id IS NOT NULL)
);
CREATE INDEX payees_by_customer ON payees (customer_id);

CREATE TABLE disputes (
  dispute_id TEXT PRIMARY KEY CHECK (dispute_id GLOB 'DSP-[0-9][0-9][0-9][0-9][0-9]'),
  txn_id TEXT NOT NULL UNIQUE REFERENCES transactions (txn_id),
  card_id TEXT NOT NULL REFERENCES cards (card_id),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  reason TEXT NOT NULL CHECK (reason IN ('fraud', 'duplicate', 'not_received', 'incorrect_amount', 'cancelled_service')),
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  currency TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'resolved_refunded', 'resolved_declined', 'withdrawn')),
  opened_on TEXT NOT NULL,
  opened_by TEXT NOT NULL REFERENCES staff (staff_id),
  description TEXT NOT NULL
);
CREATE INDEX disputes_by_customer ON disputes (customer_id);

CREATE TABLE instruments (
  symbol TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  asset_class TEXT NOT NULL CHECK (asset_class IN ('equity', 'etf', 'bond_fund', 'money_market')),
  currency TEXT NOT NULL,
  risk_level TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high')),
  exchange TEXT NOT NULL
);

CREATE TABLE prices (
  symbol TEXT NOT NULL REFERENCES instruments (symbol),
  price_date TEXT NOT NULL,
  close_minor INTEGER NOT NULL CHECK (typeof(close_minor) = 'integer' AND close_minor > 0),
  PRIMARY KEY (symbol, price_date)
);

CREATE TABLE positions (
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  symbol TEXT NOT NULL REFERENCES instruments (symbol),
  quantity INTEGER NOT NULL CHECK (typeof(quantity) = 'integer' AND quantity > 0),
  avg_cost_minor INTEGER NOT NULL CHECK (typeof(avg_cost_minor) = 'integer' AND avg_cost_minor > 0),
  PRIMARY KEY (account_id, symbol)
);

CREATE TABLE orders (
  order_id TEXT PRIMARY KEY CHECK (order_id GLOB 'ORD-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  symbol TEXT NOT NULL REFERENCES instruments (symbol),
  side TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
  quantity INTEGER NOT NULL CHECK (typeof(quantity) = 'integer' AND quantity > 0),
  price_minor INTEGER NOT NULL CHECK (typeof(price_minor) = 'integer' AND price_minor > 0),
  gross_minor INTEGER NOT NULL CHECK (typeof(gross_minor) = 'integer' AND gross_minor > 0),
  currency TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('filled', 'cancelled')),
  placed_at TEXT NOT NULL,
  placed_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX orders_by_account ON orders (account_id, placed_at);

CREATE TABLE fx_rates (
  base TEXT NOT NULL,
  quote TEXT NOT NULL,
  mid_rate_micros INTEGER NOT NULL CHECK (typeof(mid_rate_micros) = 'integer' AND mid_rate_micros > 0),
  spread_bps INTEGER NOT NULL CHECK (spread_bps >= 0),
  as_of TEXT NOT NULL,
  PRIMARY KEY (base, quote)
);

CREATE TABLE compliance_alerts (
  alert_id TEXT PRIMARY KEY CHECK (alert_id GLOB 'ALR-[0-9][0-9][0-9][0-9][0-9]'),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  account_id TEXT REFERENCES accounts (account_id),
  txn_id TEXT REFERENCES transactions (txn_id),
  kind TEXT NOT NULL CHECK (kind IN ('large_foreign_charge', 'charge_after_freeze', 'possible_duplicate',
                                     'structuring', 'kyc_expired_activity', 'velocity')),
  severity TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high')),
  status TEXT NOT NULL CHECK (status IN ('open', 'escalated', 'closed')),
  created_at TEXT NOT NULL,
  details TEXT NOT NULL,
  escalated_to TEXT,
  escalation_reason TEXT,
  resolved_at TEXT,
  resolution TEXT
);
CREATE INDEX alerts_by_status ON compliance_alerts (status, severity);
CREATE INDEX alerts_by_customer ON compliance_alerts (customer_id);

CREATE TABLE notes (
  note_id TEXT PRIMARY KEY CHECK (note_id GLOB 'NTE-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  author_id TEXT NOT NULL REFERENCES staff (staff_id),
  created_at TEXT NOT NULL,
  category TEXT NOT NULL CHECK (category IN ('contact', 'service', 'compliance', 'wealth', 'complaint')),
  body TEXT NOT NULL
);
CREATE INDEX notes_by_customer ON notes (customer_id, created_at);

CREATE TABLE holds (
  hold_id TEXT PRIMARY KEY CHECK (hold_id GLOB 'HLD-[0-9][0-9][0-9][0-9][0-9]'),
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  amount_minor INTEGER NOT NULL CHECK (typeof(amount_minor) = 'integer' AND amount_minor > 0),
  currency TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('standard', 'compliance', 'legal')),
  reason TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'released')),
  placed_at TEXT NOT NULL,
  placed_by TEXT NOT NULL REFERENCES staff (staff_id),
  released_at TEXT,
  released_by TEXT REFERENCES staff (staff_id),
  release_reason TEXT
);
CREATE INDEX holds_by_account ON holds (account_id, status);

CREATE TABLE verifications (
  verification_id TEXT PRIMARY KEY CHECK (verification_id GLOB 'VER-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  method TEXT NOT NULL CHECK (method IN ('id_last4_postcode')),
  outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed')),
  verified_at TEXT NOT NULL,
  performed_by TEXT NOT NULL REFERENCES staff (staff_id)
);
CREATE INDEX verifications_by_customer ON verifications (customer_id, verified_at);

CREATE TABLE audit_log (
  audit_id TEXT PRIMARY KEY CHECK (audit_id GLOB 'AUD-[0-9][0-9][0-9][0-9][0-9][0-9][0-9]'),
  at TEXT NOT NULL,
  actor TEXT NOT NULL REFERENCES staff (staff_id),
  action TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  details TEXT NOT NULL
);
CREATE INDEX audit_by_entity ON audit_log (entity_type, entity_id);
"""

MONEY_COLUMNS: dict[str, list[str]] = {
    "staff": ["approval_limit_minor"],
    "accounts": ["balance_minor", "overdraft_limit_minor"],
    "daily_limits": ["limit_minor"],
    "cards": ["daily_limit_minor"],
    "transfers": ["amount_minor", "fee_minor", "to_amount_minor", "rate_micros"],
    "transactions": ["amount_minor"],
    "disputes": ["amount_minor"],
    "prices": ["close_minor"],
    "positions": ["avg_cost_minor"],
    "orders": ["price_minor", "gross_minor"],
    "fx_rates": ["mid_rate_micros"],
    "holds": ["amount_minor"],
}
"""Every column holding money (or a rate) as integer minor units; tests check ``typeof()`` of each."""
