"""Static reference data the finance generator draws from: staff, places, people's names, merchants,
employers, banks, instruments and FX rates.

Kept apart from the generator's procedures so each file has one job; the fixture lists this module in
its ``extra_sources`` so editing it invalidates cached templates like editing the generator does.
Amounts here are integer minor units (cents, pence); rates are integer micro-units.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import NamedTuple

__all__ = [
    "NOW",
    "TODAY",
    "HISTORY_START",
    "OPENING_DAY",
    "BANK_NAME",
    "BANK_BIC",
    "AGENT_STAFF_ID",
    "STAFF",
    "Place",
    "PLACES",
    "FIRST_NAMES",
    "LAST_NAMES",
    "STREETS",
    "EMAIL_DOMAINS",
    "Merchant",
    "MERCHANTS",
    "SUBSCRIPTIONS",
    "UTILITIES",
    "LANDLORDS",
    "EMPLOYERS",
    "PENSIONS",
    "FOREIGN_MERCHANTS",
    "TRAVEL_MERCHANTS",
    "US_BANKS",
    "EU_BANKS",
    "GB_BANKS",
    "Instrument",
    "INSTRUMENTS",
    "FX_MID_MICROS",
    "FX_SPREAD_BPS",
]

NOW = datetime(2026, 3, 31, 17, 0, tzinfo=timezone.utc)
"""The world's frozen clock: Tuesday 31 March 2026, 17:00 UTC (the fixture's ``today``)."""
TODAY: date = NOW.date()
HISTORY_START = date(2025, 10, 1)
"""First day of the generated ledger history (six months before today)."""
OPENING_DAY = HISTORY_START - timedelta(days=1)
"""Day of the "balance brought forward" rows that open every pre-existing account's history."""

BANK_NAME = "Larkspur Bank"
BANK_BIC = "LKSPUS33"

AGENT_STAFF_ID = "STF-0100"
"""The operations analyst the agent acts as: every action it takes is recorded under this staff id."""

# (staff_id, name, role, approval limit in USD cents, active)
STAFF: list[tuple[str, str, str, int, int]] = [
    ("STF-0001", "Dana Whitfield", "supervisor", 25_000_000, 1),
    ("STF-0002", "Marcus Oyelaran", "supervisor", 10_000_000, 1),
    ("STF-0003", "Priya Raman", "supervisor", 5_000_000, 1),
    ("STF-0004", "Robert Hale", "supervisor", 10_000_000, 0),
    ("STF-0005", "Hannah Kowalski", "compliance_officer", 0, 1),
    ("STF-0006", "Tomás Ferreira", "compliance_officer", 0, 1),
    ("STF-0010", "Jordan Lee", "analyst", 0, 1),
    ("STF-0011", "Samuel Okafor", "analyst", 0, 1),
    ("STF-0012", "Elena Petrova", "analyst", 0, 1),
    ("STF-0013", "Chris Baptiste", "analyst", 0, 1),
    ("STF-0020", "Olivia Brandt", "relationship_manager", 0, 1),
    ("STF-0021", "Kenji Watanabe", "relationship_manager", 0, 1),
    (AGENT_STAFF_ID, "Alex Morgan", "analyst", 0, 1),
]


class Place(NamedTuple):
    """A city customers live in, with how its postcodes look."""

    city: str
    country: str
    currency: str
    postcodes: tuple[str, ...]
    phone_prefix: str


PLACES: list[Place] = [
    Place("San Francisco, CA", "US", "USD", ("94103", "94110", "94117", "94122"), "+1-415-555-01"),
    Place("Oakland, CA", "US", "USD", ("94607", "94610", "94611"), "+1-510-555-01"),
    Place("Seattle, WA", "US", "USD", ("98101", "98103", "98115"), "+1-206-555-01"),
    Place("Portland, OR", "US", "USD", ("97201", "97209", "97214"), "+1-503-555-01"),
    Place("Austin, TX", "US", "USD", ("78701", "78704", "78745"), "+1-512-555-01"),
    Place("Chicago, IL", "US", "USD", ("60601", "60614", "60657"), "+1-312-555-01"),
    Place("New York, NY", "US", "USD", ("10001", "10011", "10025", "11201"), "+1-212-555-01"),
    Place("Boston, MA", "US", "USD", ("02108", "02116", "02139"), "+1-617-555-01"),
    Place("Denver, CO", "US", "USD", ("80202", "80206", "80218"), "+1-303-555-01"),
    Place("Atlanta, GA", "US", "USD", ("30303", "30308", "30318"), "+1-404-555-01"),
    Place("Miami, FL", "US", "USD", ("33101", "33130", "33139"), "+1-305-555-01"),
    Place("Minneapolis, MN", "US", "USD", ("55401", "55405", "55414"), "+1-612-555-01"),
    Place("London", "GB", "GBP", ("EC1A 1BB", "SW1A 2AA", "N1 9GU", "SE1 7PB", "W2 1JB"), "+44-7700-900"),
    Place("Manchester", "GB", "GBP", ("M1 1AE", "M4 5JD", "M20 2RN"), "+44-7700-900"),
    Place("Edinburgh", "GB", "GBP", ("EH1 1YZ", "EH3 9QG", "EH8 9AB"), "+44-7700-900"),
    Place("Berlin", "DE", "EUR", ("10115", "10243", "10437"), "+49-30-5550"),
    Place("Munich", "DE", "EUR", ("80331", "80469", "80802"), "+49-89-5550"),
    Place("Paris", "FR", "EUR", ("75003", "75011", "75015"), "+33-1-5550"),
    Place("Dublin", "IE", "EUR", ("D02 X285", "D04 C932", "D08 VF8H"), "+353-1-555"),
    Place("Amsterdam", "NL", "EUR", ("1012 AB", "1017 CE", "1071 DJ"), "+31-20-555"),
    Place("Madrid", "ES", "EUR", ("28004", "28013", "28045"), "+34-91-555"),
]

FIRST_NAMES = [
    "James", "Mary", "Robert", "Patricia", "Michael", "Jennifer", "David", "Linda", "William", "Elizabeth",
    "Richard", "Barbara", "Joseph", "Susan", "Thomas", "Jessica", "Daniel", "Sarah", "Matthew", "Karen",
    "Anthony", "Nancy", "Mark", "Lisa", "Steven", "Margaret", "Andrew", "Sandra", "Joshua", "Ashley",
    "Kevin", "Emily", "Brian", "Michelle", "George", "Amanda", "Aisha", "Mei", "Carlos", "Sofia",
    "Luca", "Amara", "Hiroshi", "Ingrid", "Mateo", "Chloé", "Rahul", "Fatima", "Oliver", "Zoe",
    "Noah", "Freya", "Liam", "Nadia", "Ethan", "Leila", "Henrik", "Camille", "Tariq", "Grace",
]

LAST_NAMES = [
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
    "Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee",
    "Thompson", "White", "Harris", "Clark", "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
    "Nguyen", "Patel", "Kim", "Chen", "Okafor", "Schmidt", "Müller", "Dubois", "O'Brien", "Rossi",
    "Kowalczyk", "Jansen", "Fernández", "Haddad", "Novak", "Lindqvist", "Murphy", "Sato", "Mensah", "Cohen",
]

STREETS = [
    "Oak Street", "Maple Avenue", "Cedar Lane", "Pine Road", "Elm Street", "Harbor View Drive", "Mission Street",
    "Lakeshore Boulevard", "Market Street", "Church Road", "High Street", "Victoria Road", "Station Road",
    "Park Lane", "Mill Lane", "Hauptstraße", "Rue de la Paix", "Calle Mayor", "Keizersgracht", "Grafton Street",
]

EMAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example.com", "post.example.org"]


class Merchant(NamedTuple):
    """A place cards are used: name, spending category, typical amount range (minor units)."""

    name: str
    category: str
    low: int
    high: int


MERCHANTS: dict[str, list[Merchant]] = {
    "US": [
        Merchant("Whole Foods Market", "groceries", 2_500, 18_000),
        Merchant("Trader Joe's", "groceries", 1_800, 12_000),
        Merchant("Safeway", "groceries", 1_500, 15_000),
        Merchant("Costco Wholesale", "groceries", 6_000, 35_000),
        Merchant("Starbucks", "dining", 450, 1_800),
        Merchant("Chipotle Mexican Grill", "dining", 1_100, 3_200),
        Merchant("Blue Bottle Coffee", "dining", 500, 1_600),
        Merchant("The Cheesecake Factory", "dining", 3_500, 14_000),
        Merchant("DoorDash", "dining", 1_800, 6_500),
        Merchant("Uber", "transport", 900, 5_500),
        Merchant("Lyft", "transport", 800, 4_800),
        Merchant("Shell", "fuel", 2_500, 8_500),
        Merchant("Chevron", "fuel", 2_800, 9_000),
        Merchant("Amazon.com", "shopping", 1_200, 25_000),
        Merchant("Target", "shopping", 1_500, 18_000),
        Merchant("Best Buy", "shopping", 2_500, 90_000),
        Merchant("IKEA", "shopping", 3_000, 60_000),
        Merchant("CVS Pharmacy", "health", 600, 6_500),
        Merchant("Walgreens", "health", 500, 5_000),
        Merchant("AMC Theatres", "entertainment", 1_400, 6_000),
        Merchant("Ticketmaster", "entertainment", 4_500, 32_000),
        Merchant("Home Depot", "shopping", 1_500, 45_000),
    ],
    "GB": [
        Merchant("Tesco", "groceries", 1_200, 11_000),
        Merchant("Sainsbury's", "groceries", 1_500, 12_000),
        Merchant("Waitrose", "groceries", 2_000, 14_000),
        Merchant("Pret A Manger", "dining", 400, 1_500),
        Merchant("Nando's", "dining", 1_500, 5_500),
        Merchant("Deliveroo", "dining", 1_600, 5_000),
        Merchant("Transport for London", "transport", 280, 1_600),
        Merchant("Trainline", "transport", 1_800, 14_000),
        Merchant("BP", "fuel", 3_000, 8_000),
        Merchant("Boots", "health", 500, 4_500),
        Merchant("John Lewis", "shopping", 2_500, 40_000),
        Merchant("Amazon.co.uk", "shopping", 1_000, 20_000),
        Merchant("Odeon Cinemas", "entertainment", 1_100, 4_000),
    ],
    "EU": [
        Merchant("Lidl", "groceries", 1_200, 9_000),
        Merchant("Carrefour", "groceries", 1_500, 12_000),
        Merchant("Albert Heijn", "groceries", 1_000, 8_500),
        Merchant("REWE", "groceries", 1_200, 9_500),
        Merchant("Café de Flore", "dining", 800, 4_500),
        Merchant("Vapiano", "dining", 1_400, 4_800),
        Merchant("Bolt", "transport", 700, 3_500),
        Merchant("Deutsche Bahn", "transport", 1_900, 16_000),
        Merchant("TotalEnergies", "fuel", 3_500, 9_000),
        Merchant("DM Drogerie Markt", "health", 500, 4_000),
        Merchant("Zalando", "shopping", 2_500, 22_000),
        Merchant("MediaMarkt", "shopping", 3_000, 70_000),
        Merchant("Pathé Cinemas", "entertainment", 1_200, 3_800),
    ],
}

# (merchant, monthly price in minor units of the customer's home currency)
SUBSCRIPTIONS: list[tuple[str, int]] = [
    ("Netflix", 1_549),
    ("Spotify", 1_199),
    ("Apple iCloud+", 299),
    ("Adobe Creative Cloud", 5_999),
    ("The New York Times", 1_700),
    ("Peloton App", 1_299),
    ("Amazon Prime", 1_499),
    ("Disney+", 1_399),
    ("YouTube Premium", 1_399),
    ("Audible", 1_495),
    ("Dropbox Plus", 1_199),
    ("Planet Fitness", 2_499),
]

# region → [(merchant, low, high, fixed price?)]; category is always 'utilities'
UTILITIES: dict[str, list[tuple[str, int, int, bool]]] = {
    "US": [
        ("Pacific Gas & Electric", 6_500, 24_000, False),
        ("Comcast Xfinity", 7_999, 7_999, True),
        ("Verizon Wireless", 6_500, 9_500, True),
        ("City Water Utilities", 3_800, 9_000, False),
    ],
    "GB": [
        ("British Gas", 7_000, 19_000, False),
        ("BT Broadband", 3_999, 3_999, True),
        ("Vodafone UK", 2_500, 4_500, True),
        ("Thames Water", 3_000, 5_500, False),
    ],
    "EU": [
        ("EDF Energie", 6_000, 17_000, False),
        ("Deutsche Telekom", 4_495, 4_495, True),
        ("Orange Mobile", 2_499, 3_999, True),
        ("Stadtwerke Wasser", 2_500, 5_000, False),
    ],
}

LANDLORDS = [
    "Greystar Property Management", "Maple Court Apartments", "Harbor Point Residences", "Riverside Lettings",
    "Northgate Estates", "Vonovia SE", "Parkview Homes LLC", "Wells Fargo Home Mortgage", "Nationwide Mortgage",
]

EMPLOYERS = [
    "Acme Robotics Inc Payroll", "Northwind Traders Payroll", "Globex Corporation", "Initech LLC Payroll",
    "Contoso Health Systems", "Bayside School District", "City of Oakridge Payroll", "Umbrella Logistics Ltd",
    "Fabrikam GmbH Gehalt", "Tailspin Airlines Payroll", "Blue Yonder Analytics", "Wide World Importers",
]

PENSIONS = {"US": "Social Security Administration", "GB": "DWP State Pension", "EU": "Deutsche Rentenversicherung"}

# Unusual foreign merchants for anomalous large charges: (name, country, local currency)
FOREIGN_MERCHANTS = [
    ("Joalharia Baixa Lisboa", "PT", "EUR"),
    ("Dubai Gold Souk Trading", "AE", "AED"),
    ("Saigon Electronics Hub", "VN", "VND"),
    ("Lagos Prestige Motors", "NG", "NGN"),
    ("Istanbul Grand Bazaar Carpets", "TR", "TRY"),
    ("Manila Bay Luxury Watches", "PH", "PHP"),
    ("Bucharest Digital Store", "RO", "RON"),
    ("Casablanca Riad Holdings", "MA", "MAD"),
]

TRAVEL_MERCHANTS = [
    ("Delta Air Lines", "travel", 18_000, 95_000),
    ("United Airlines", "travel", 16_000, 85_000),
    ("British Airways", "travel", 15_000, 90_000),
    ("Marriott Hotels", "travel", 14_000, 120_000),
    ("Airbnb", "travel", 12_000, 160_000),
    ("Hertz Car Rental", "travel", 9_000, 45_000),
]

US_BANKS = [("Chase Bank", "021000021"), ("Bank of America", "026009593"), ("Wells Fargo", "121000248"),
            ("Citibank", "021000089"), ("U.S. Bank", "091000022"), ("PNC Bank", "043000096")]
EU_BANKS = [("Deutsche Bank", "DEUTDEFF", "DE"), ("BNP Paribas", "BNPAFRPP", "FR"), ("ING Bank", "INGBNL2A", "NL"),
            ("AIB Bank", "AIBKIE2D", "IE"), ("CaixaBank", "CAIXESBB", "ES")]
GB_BANKS = [("Barclays", "BARCGB22", "BARC"), ("HSBC UK", "HBUKGB4B", "HBUK"), ("Lloyds Bank", "LOYDGB2L", "LOYD"),
            ("NatWest", "NWBKGB2L", "NWBK")]


class Instrument(NamedTuple):
    """A tradeable instrument and its price on the frozen date (minor units)."""

    symbol: str
    name: str
    asset_class: str
    currency: str
    risk_level: str
    exchange: str
    price: int


INSTRUMENTS: list[Instrument] = [
    Instrument("LKMMF", "Larkspur Treasury Money Market Fund", "money_market", "USD", "low", "FUND", 100),
    Instrument("SHV", "iShares Short Treasury Bond ETF", "bond_fund", "USD", "low", "NASDAQ", 11_025),
    Instrument("BND", "Vanguard Total Bond Market ETF", "bond_fund", "USD", "low", "NASDAQ", 7_240),
    Instrument("AGG", "iShares Core US Aggregate Bond ETF", "bond_fund", "USD", "low", "NYSE", 9_810),
    Instrument("TIP", "iShares TIPS Bond ETF", "bond_fund", "USD", "low", "NYSE", 10_830),
    Instrument("VTI", "Vanguard Total Stock Market ETF", "etf", "USD", "medium", "NYSE", 28_650),
    Instrument("VOO", "Vanguard S&P 500 ETF", "etf", "USD", "medium", "NYSE", 51_200),
    Instrument("QQQ", "Invesco QQQ Trust", "etf", "USD", "medium", "NASDAQ", 47_800),
    Instrument("SCHD", "Schwab US Dividend Equity ETF", "etf", "USD", "medium", "NYSE", 2_780),
    Instrument("VXUS", "Vanguard Total International Stock ETF", "etf", "USD", "medium", "NASDAQ", 6_310),
    Instrument("AAPL", "Apple Inc.", "equity", "USD", "medium", "NASDAQ", 21_830),
    Instrument("MSFT", "Microsoft Corporation", "equity", "USD", "medium", "NASDAQ", 38_850),
    Instrument("JNJ", "Johnson & Johnson", "equity", "USD", "medium", "NYSE", 15_520),
    Instrument("KO", "The Coca-Cola Company", "equity", "USD", "medium", "NYSE", 7_010),
    Instrument("JPM", "JPMorgan Chase & Co.", "equity", "USD", "medium", "NYSE", 24_000),
    Instrument("NVDA", "NVIDIA Corporation", "equity", "USD", "high", "NASDAQ", 11_040),
    Instrument("TSLA", "Tesla, Inc.", "equity", "USD", "high", "NASDAQ", 26_000),
    Instrument("PLTR", "Palantir Technologies Inc.", "equity", "USD", "high", "NASDAQ", 8_500),
    Instrument("COIN", "Coinbase Global, Inc.", "equity", "USD", "high", "NASDAQ", 18_000),
    Instrument("ARKK", "ARK Innovation ETF", "etf", "USD", "high", "NYSE", 4_850),
    Instrument("TQQQ", "ProShares UltraPro QQQ (3x leveraged)", "etf", "USD", "high", "NASDAQ", 5_500),
    Instrument("IBIT", "iShares Bitcoin Trust ETF", "etf", "USD", "high", "NASDAQ", 4_800),
    Instrument("EUNH", "iShares Core Euro Government Bond UCITS ETF", "bond_fund", "EUR", "low", "XETRA", 11_800),
    Instrument("EXSA", "iShares STOXX Europe 600 UCITS ETF", "etf", "EUR", "medium", "XETRA", 5_200),
    Instrument("SAP", "SAP SE", "equity", "EUR", "medium", "XETRA", 18_000),
    Instrument("ASML", "ASML Holding N.V.", "equity", "EUR", "medium", "AEX", 64_000),
    Instrument("IGLT", "iShares Core UK Gilts UCITS ETF", "bond_fund", "GBP", "low", "LSE", 1_040),
    Instrument("VUKE", "Vanguard FTSE 100 UCITS ETF", "etf", "GBP", "medium", "LSE", 3_850),
    Instrument("ULVR", "Unilever PLC", "equity", "GBP", "medium", "LSE", 4_700),
    Instrument("RR", "Rolls-Royce Holdings plc", "equity", "GBP", "high", "LSE", 780),
]

FX_MID_MICROS: dict[tuple[str, str], int] = {
    ("EUR", "USD"): 1_082_500,
    ("GBP", "USD"): 1_294_000,
    ("EUR", "GBP"): 836_553,
    ("USD", "EUR"): 923_788,
    ("USD", "GBP"): 772_798,
    ("GBP", "EUR"): 1_195_381,
}
"""Mid-market rates on the frozen date: units of quote per unit of base, × 10^6."""

FX_SPREAD_BPS: dict[frozenset[str], int] = {
    frozenset({"USD", "EUR"}): 50,
    frozenset({"USD", "GBP"}): 50,
    frozenset({"EUR", "GBP"}): 75,
}
"""The bank's customer spread per currency pair, in basis points off the mid rate."""
