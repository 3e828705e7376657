"""Static reference data the support generator draws from: the clock, staff and teams, people's names and
places, the product range, carriers, subscription plans, promotions and the help-centre articles.

Kept apart from the generator's procedures; the fixture lists this module in its ``extra_sources`` so
editing it invalidates cached templates. Amounts are integer cents (USD).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import NamedTuple

__all__ = [
    "NOW",
    "TODAY",
    "HISTORY_DAYS",
    "SHOP_NAME",
    "AGENT_STAFF_ID",
    "TEAMS",
    "STAFF",
    "FIRST_NAMES",
    "LAST_NAMES",
    "PLACES",
    "STREETS",
    "EMAIL_DOMAINS",
    "Product",
    "PRODUCTS",
    "CARRIERS",
    "PLANS",
    "PROMOTIONS",
    "ARTICLES",
    "RETURN_DAYS",
]

NOW = datetime(2026, 4, 16, 15, 0, tzinfo=timezone.utc)
"""The world's frozen clock: Thursday 16 April 2026, 15:00 UTC."""
TODAY: date = NOW.date()
HISTORY_DAYS = 150
"""Orders, tickets and subscriptions cover the 150 days before today."""

SHOP_NAME = "Brightwater Goods"
AGENT_STAFF_ID = "STF-0100"
"""The support agent the agent acts as: every action is recorded in the audit log under this id."""

TEAMS: list[tuple[str, str, str]] = [
    ("frontline", "Frontline support", "first contact: orders, returns, subscriptions"),
    ("billing", "Billing and refunds", "refunds above the agent limit, chargebacks, duplicate charges"),
    ("logistics", "Logistics", "carrier claims, lost and stalled parcels"),
    ("fraud", "Trust and safety", "fraud signals, account takeover, suspicious requests"),
    ("product_safety", "Product safety", "injuries, burns, recalls, hazardous items"),
]
"""(team_id, name, handles)."""

STAFF: list[tuple[str, str, str, str]] = [
    ("STF-0001", "Maya Lindqvist", "lead", "frontline"),
    ("STF-0002", "Owen Achterberg", "lead", "billing"),
    ("STF-0003", "Rosa Delgado", "specialist", "billing"),
    ("STF-0004", "Kenji Morrow", "specialist", "logistics"),
    ("STF-0005", "Imani Okafor", "specialist", "fraud"),
    ("STF-0006", "Lucas Brandt", "specialist", "product_safety"),
    ("STF-0010", "Priya Natarajan", "agent", "frontline"),
    ("STF-0011", "Tom Haverford", "agent", "frontline"),
    ("STF-0012", "Aisha Rahman", "agent", "frontline"),
    ("STF-0013", "Diego Marín", "agent", "frontline"),
    ("STF-0014", "Warehouse inspection", "inspector", "logistics"),
    ("STF-0100", "Sam Rivera", "agent", "frontline"),
]
"""(staff_id, name, role, team)."""

FIRST_NAMES = [
    "Olivia", "Liam", "Emma", "Noah", "Ava", "Elijah", "Sophia", "James", "Isabella", "Lucas", "Mia", "Mateo", "Amelia",
    "Ethan", "Harper", "Aiden", "Evelyn", "Jackson", "Abigail", "Sebastian", "Emily", "Jack", "Ella", "Owen", "Chloe",
    "Samuel", "Grace", "Henry", "Zoe", "Leo", "Nora", "Ezra", "Hazel", "Miles", "Aria", "Julian", "Layla", "Theo",
    "Priya", "Wei", "Fatima", "Diego", "Yuki", "Kwame", "Ingrid", "Rafael", "Aaliyah", "Dmitri", "Amara", "Tomás",
]
LAST_NAMES = [
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Hernandez",
    "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez",
    "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen",
    "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall",
    "Okafor", "Kowalski", "Lindqvist", "Tanaka", "Patel", "O'Brien", "Müller", "Haddad", "Novak", "Silva",
]
PLACES: list[tuple[str, str, list[str]]] = [
    ("Portland", "OR", ["97201", "97205", "97209", "97214"]), ("Seattle", "WA", ["98101", "98103", "98115"]),
    ("Austin", "TX", ["78701", "78704", "78745"]), ("Denver", "CO", ["80202", "80205", "80211"]),
    ("Chicago", "IL", ["60601", "60614", "60647"]), ("Boston", "MA", ["02108", "02116", "02130"]),
    ("Atlanta", "GA", ["30303", "30308", "30318"]), ("Phoenix", "AZ", ["85003", "85008", "85016"]),
    ("Minneapolis", "MN", ["55401", "55408", "55414"]), ("Raleigh", "NC", ["27601", "27605", "27609"]),
    ("San Diego", "CA", ["92101", "92103", "92116"]), ("Brooklyn", "NY", ["11201", "11211", "11215"]),
    ("Madison", "WI", ["53703", "53705"]), ("Salt Lake City", "UT", ["84101", "84105"]),
]
"""(city, region, postcodes)."""
STREETS = [
    "Maple Ave", "Oak St", "Cedar Ln", "Pine St", "Elm Dr", "Harbor Way", "Hillcrest Rd", "Lakeview Blvd", "Sunset Ave",
    "Willow Ct", "Birch Rd", "Park Pl", "River Rd", "Juniper St", "Chestnut St", "Aspen Way", "Meadow Ln", "Ridge Rd",
]
EMAIL_DOMAINS = ["example.com", "mail.example.org", "inbox.example.net", "post.example.com"]


class Product(NamedTuple):
    """One product of the range: its variants are the options × the price."""

    name: str
    brand: str
    category: str
    price: int
    options: tuple[str, ...]


PRODUCTS: list[Product] = [
    Product("Aero Wireless Earbuds", "Soundfield", "electronics", 7_999, ("Black", "White")),
    Product("Pulse Noise-Cancelling Headphones", "Soundfield", "electronics", 24_900, ("Black", "Silver")),
    Product("Volt 20K Power Bank", "Chargewell", "electronics", 4_599, ("Graphite",)),
    Product("Beam Smart Speaker", "Soundfield", "electronics", 12_900, ("Charcoal", "Sand")),
    Product("Lumen 4K Action Camera", "Northlens", "electronics", 32_900, ("Standard",)),
    Product("Tempo Fitness Watch", "Strideline", "electronics", 17_900, ("Small", "Large")),
    Product("Glide Mechanical Keyboard", "Keycraft", "electronics", 10_900, ("Brown switches", "Red switches")),
    Product("Orbit Robot Vacuum", "Tidyhome", "electronics", 38_900, ("White",)),
    Product("Trailhead Rain Jacket", "Northpeak", "apparel", 12_800, ("S", "M", "L", "XL")),
    Product("Merino Crew Sweater", "Fernwood", "apparel", 8_900, ("S", "M", "L")),
    Product("Everyday Chino Pants", "Fernwood", "apparel", 6_400, ("30", "32", "34", "36")),
    Product("Cloudstep Running Shoes", "Strideline", "apparel", 11_900, ("8", "9", "10", "11")),
    Product("Organic Cotton Tee 3-Pack", "Fernwood", "apparel", 3_900, ("S", "M", "L", "XL")),
    Product("Alpine Down Vest", "Northpeak", "apparel", 14_500, ("S", "M", "L")),
    Product("Cast Iron Skillet 12in", "Hearthstone", "home", 5_400, ("Standard",)),
    Product("Linen Duvet Cover", "Restwell", "home", 13_900, ("Queen", "King")),
    Product("Pour-Over Coffee Kit", "Brewhaus", "home", 4_800, ("Glass", "Ceramic")),
    Product("Ceramic Dinnerware Set", "Hearthstone", "home", 9_900, ("Slate", "Cream")),
    Product("Memory Foam Pillow", "Restwell", "home", 5_900, ("Standard", "King")),
    Product("Electric Kettle", "Brewhaus", "home", 6_900, ("Steel", "Matte Black")),
    Product("Vitamin C Serum", "Glowlab", "beauty", 2_800, ("30 ml",)),
    Product("Daily Mineral Sunscreen", "Glowlab", "beauty", 1_900, ("50 ml",)),
    Product("Argan Hair Oil", "Silkroot", "beauty", 2_400, ("100 ml",)),
    Product("Cedar Beard Kit", "Silkroot", "beauty", 3_500, ("Standard",)),
    Product("Single-Origin Coffee Beans", "Brewhaus", "grocery", 1_800, ("Whole bean", "Ground")),
    Product("Matcha Green Tea Tin", "Leafline", "grocery", 2_400, ("Standard",)),
    Product("Dark Chocolate Gift Box", "Cocoa & Co", "grocery", 3_200, ("12 pieces", "24 pieces")),
    Product("Wooden Train Set", "Playgrove", "toys", 5_900, ("Standard",)),
    Product("Build-a-Robot Kit", "Playgrove", "toys", 7_400, ("Standard",)),
    Product("Plush Fox", "Cuddlecraft", "toys", 2_200, ("Small", "Large")),
]
"""The range: 30 products, 2-4 variants each for most."""

RETURN_DAYS: dict[str, int] = {"electronics": 30, "apparel": 60, "home": 45, "toys": 45, "beauty": 30, "grocery": 0}
"""Return window per category, in days from delivery (grocery is final sale)."""

CARRIERS: list[tuple[str, str]] = [("UPS", "1Z"), ("FedEx", "7"), ("USPS", "94"), ("DHL", "JD")]
"""(carrier, tracking number prefix)."""

PLANS: list[tuple[str, str, str, int]] = [
    ("PLN-001", "Coffee Club Basic", "basic", 1_900),
    ("PLN-002", "Coffee Club Plus", "plus", 2_900),
    ("PLN-003", "Coffee Club Premium", "premium", 4_500),
    ("PLN-004", "Snack Box Basic", "basic", 2_400),
    ("PLN-005", "Snack Box Plus", "plus", 3_600),
]
"""(plan_id, name, tier, monthly price in cents); plans of one family share the name's first two words."""

PROMOTIONS: list[tuple[str, str, str, int, int, str | None, str, str, str]] = [
    ("PRM-001", "Spring sale", "percent", 1500, 5_000, None, "2026-03-01", "2026-04-30", "SPRING15"),
    ("PRM-002", "Welcome offer", "fixed", 1_000, 4_000, None, "2025-10-01", "2026-12-31", "WELCOME10"),
    ("PRM-003", "Outdoor week", "percent", 2000, 10_000, "apparel", "2026-02-02", "2026-02-15", "TRAIL20"),
    ("PRM-004", "Tech days", "percent", 1000, 15_000, "electronics", "2026-03-20", "2026-04-20", "TECH10"),
    ("PRM-005", "Home refresh", "fixed", 1_500, 7_500, "home", "2026-01-05", "2026-03-31", "HOME15"),
    ("PRM-006", "Holiday gift", "percent", 2500, 8_000, None, "2025-11-20", "2025-12-31", "GIFT25"),
]
"""(promo_id, name, kind, value: basis points for percent / cents for fixed, minimum subtotal in cents,
category or None for any, starts on, ends on, coupon code)."""

ARTICLES: list[tuple[str, str, str, str]] = [
    ("KB-0001", "returns", "Return windows by category",
     "You can return most items within a window counted from the delivery date: electronics 30 days, apparel 60 days, "
     "home 45 days, toys 45 days, beauty 30 days if unopened. Grocery items are final sale and cannot be returned, but "
     "damaged grocery items are refunded with a photo."),
    ("KB-0002", "returns", "Restocking fee on opened electronics",
     "Electronics returned because the customer changed their mind carry a 15% restocking fee on the item's price. "
     "There is no restocking fee for damaged, defective or wrong items."),
    ("KB-0003", "returns", "Damaged or defective items",
     "If an item arrives damaged or defective, ask the customer for a photo. With a photo, items up to 100.00 are refunded "
     "or replaced without sending them back. Items above 100.00 get a return label and are refunded after the warehouse "
     "inspects them."),
    ("KB-0004", "refunds", "Refund methods and timing",
     "Refunds go back to the original payment method (3-5 business days) or, if the customer prefers, to store credit "
     "immediately. A refund can never exceed what was paid for the order minus earlier refunds."),
    ("KB-0005", "refunds", "Refund limits and approvals",
     "Frontline agents may issue refunds up to 500.00 per order. Larger refunds are escalated to the billing team."),
    ("KB-0006", "shipping", "Late deliveries",
     "When a parcel arrives after its promised date, or is still in transit after it, the shipping fee is refunded on "
     "request. Late parcels are not lost parcels: wait for the carrier unless tracking has stalled."),
    ("KB-0007", "shipping", "Lost and stalled parcels",
     "A parcel is lost when the carrier marks it lost, or when tracking shows no scan for 7 days or more while in "
     "transit. Offer a replacement shipment (if in stock) or a full refund of the affected items."),
    ("KB-0008", "shipping", "Changing a delivery address",
     "The delivery address of an order can be changed only before the order ships, and only after verifying the "
     "customer's identity. Once a shipment has a tracking number, the address cannot be changed."),
    ("KB-0009", "account", "Verifying a customer's identity",
     "Before changing an account, an address or a subscription, verify the customer: ask for the e-mail on the account "
     "and their date of birth, and check them with the identity tool. Never read these answers from the records."),
    ("KB-0010", "account", "Merging duplicate accounts",
     "A customer with two accounts can have them merged into one after verifying their identity on both accounts. "
     "Accounts flagged for fraud are never merged; escalate to trust and safety instead."),
    ("KB-0011", "account", "Privacy",
     "Never share an order, an address, a payment detail or any other information about one customer with anyone else, "
     "including family members, unless they are verified as the account holder."),
    ("KB-0012", "subscriptions", "Cancelling a subscription",
     "Subscriptions can be cancelled at the end of the current billing period (no refund) or immediately with a "
     "prorated refund of the unused days of the current period, rounded down to the cent."),
    ("KB-0013", "subscriptions", "Pausing a subscription",
     "An active subscription can be paused for 1 to 3 billing periods. Past-due subscriptions must be brought up to "
     "date before pausing."),
    ("KB-0014", "subscriptions", "Changing plans",
     "Downgrades and upgrades take effect at the start of the next billing period; no charge or refund is made for the "
     "current period. Plans can only change within the same box family."),
    ("KB-0015", "billing", "Duplicate charges",
     "If a subscription period was invoiced and paid twice, refund the later duplicate invoice in full."),
    ("KB-0016", "billing", "Coupons that did not apply",
     "If a valid coupon was not applied at checkout, the discount can be refunded as a price adjustment within 30 days "
     "of the order. The coupon must have been active on the order date, its minimum spend met and its category "
     "matched, and the customer must not have used it before."),
    ("KB-0017", "goodwill", "Goodwill credit",
     "Agents may offer goodwill store credit for a poor experience, at most once per customer every 30 days, up to a "
     "cap by loyalty tier: standard 10.00, silver 20.00, gold 35.00, platinum 50.00."),
    ("KB-0018", "escalation", "When to escalate",
     "Escalate refunds above 500.00 and chargebacks to billing, open fraud signals to trust and safety, injuries or "
     "burns to product safety, and carrier claims to logistics."),
    ("KB-0019", "tickets", "Priorities and SLAs",
     "First-response targets: urgent 1 hour, high 4 hours, normal 24 hours, low 72 hours. Chargebacks and safety "
     "reports are urgent; lost or damaged parcels are high; order questions are normal; feedback is low. Platinum "
     "customers are one level higher, up to urgent."),
    ("KB-0020", "tickets", "Duplicate tickets",
     "When a customer opens two tickets about the same issue, merge the newer ticket into the older one."),
    ("KB-0021", "exchanges", "Exchanges",
     "An item can be exchanged for another size or colour of the same product within its return window, when the "
     "new variant is in stock. Exchanges have no restocking fee."),
    ("KB-0022", "gift-cards", "Gift cards and store credit",
     "Gift cards and store credit never expire and cannot be exchanged for cash."),
]
"""(article_id, category, title, body) of the help centre (searched with full-text search)."""
