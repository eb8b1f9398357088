"""Fake-data generators behind the ``faker.<type>`` template expressions.

Source: SPEC "Templating" (the list of 35 fake-data types, ``words(n)``, case-insensitive names)
and SPEC "Response" (``seed``).

Owns: :data:`FAKE_DATA_GENERATORS`, the registry of every fake-data type (canonical name ->
generator), :data:`FAKE_DATA_TYPES` (the canonical names in SPEC order), :func:`lookup` (the
case-insensitive name lookup templates compile against) and the one shared Faker ``Generator``.

Every generator has the signature ``generate(faker, rng) -> str``: ``faker`` is a Faker
``Generator`` whose ``random`` has been bound to ``rng`` by the caller (see :func:`bound_faker`),
``rng`` is the ``random.Random`` of the current render. Everything random comes from ``rng`` (directly
or through ``faker``), so a seeded ``rng`` gives the same output for the same seed.

Implementation rule: a generator calls the Faker method when that method is cheap (a few
microseconds). Faker methods that expand format strings at run time (``name``, ``email``,
``company``, ``address``, ``url``, ``slug``: 50-170 us each, measured on the 2-core dev box)
are recomposed here from Faker's own en_US word lists, because templates run on the request hot
path. ``productName`` has no Faker provider, so its word lists live here.

Concurrency: single owner (the engine's event loop). The shared Faker ``Generator`` is rebound to
the caller's ``rng`` before each use and must not be used across an ``await``.

Run ``python -m mocks.core.fakedata --markdown`` to print the reference table for the docs.
"""
from __future__ import annotations

import bisect
import datetime
import itertools
import random
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # Faker is imported lazily: it costs ~100 ms, paid only when a template uses it.
    from faker import Generator as FakerGenerator

#: A generator: ``(faker bound to rng, rng) -> text``.
FakeDataGenerator = Callable[["FakerGenerator", random.Random], str]

#: Active ISO 4217 codes (2025). Faker's currency list also carries non-ISO codes (``GGP``,
#: ``IMP``, ``JEP``, ``SPL``, ``TVD``, ``NIS``, the withdrawn ``CUC``); SPEC promises ISO 4217, so
#: Faker's list is filtered through this set.
_ISO_4217_CODES = frozenset("""
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP
GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD
KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN
NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP
SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND
VUV WST XAF XCD XOF XPF YER ZAR ZMW
""".split())

# Commerce word lists for productName (Faker has no commerce provider).
_PRODUCT_ADJECTIVES = (
    "Awesome", "Compact", "Durable", "Elegant", "Ergonomic", "Fantastic", "Generic", "Gorgeous",
    "Handcrafted", "Handmade", "Incredible", "Intelligent", "Lightweight", "Modern", "Practical",
    "Premium", "Refined", "Rustic", "Sleek", "Small", "Tasty", "Unbranded", "Vintage",
)
_PRODUCT_MATERIALS = (
    "Bamboo", "Bronze", "Ceramic", "Concrete", "Copper", "Cotton", "Fresh", "Frozen", "Glass",
    "Granite", "Leather", "Marble", "Metal", "Plastic", "Rubber", "Silk", "Soft", "Steel",
    "Titanium", "Wooden", "Wool",
)
_PRODUCT_NOUNS = (
    "Backpack", "Bacon", "Ball", "Bike", "Bottle", "Car", "Chair", "Cheese", "Chips", "Computer",
    "Gloves", "Hat", "Headphones", "Keyboard", "Lamp", "Mouse", "Mug", "Notebook", "Pants",
    "Pen", "Pizza", "Salad", "Shirt", "Shoes", "Soap", "Speaker", "Table", "Towels", "Wallet",
    "Watch",
)
_EMAIL_DOMAINS = ("example.com", "example.net", "example.org")  # RFC 2606: never a real inbox
_ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyz0123456789"


class _WeightedNames(NamedTuple):
    """A Faker ``OrderedDict`` of name -> frequency, flattened for ``bisect`` picks."""

    names: tuple[str, ...]
    cumulative_weights: tuple[float, ...]
    total: float
    #: ``SLOTS`` entries, each name in proportion to its weight: a pick is one index instead
    #: of a binary search over scattered float objects.
    slots: tuple[str, ...]

    def pick(self, rng: random.Random) -> str:
        # Faker's weighted random_element, quantised to 1/SLOTS, at ~1/50 of the cost.
        return self.slots[int(rng.random() * SLOTS)]


class _FakerTables(NamedTuple):
    """Faker's en_US data, read once from the provider classes."""

    first_names: _WeightedNames
    last_names: _WeightedNames
    company_suffixes: tuple[str, ...]
    street_suffixes: tuple[str, ...]
    city_suffixes: tuple[str, ...]
    state_abbreviations: tuple[str, ...]
    lorem_words: tuple[str, ...]
    top_level_domains: tuple[str, ...]
    currencies: tuple[tuple[str, str], ...]


_faker_generator: FakerGenerator | None = None
_tables: _FakerTables | None = None


#: Size of a weighted name table (a power of two; Faker's rarest en_US name still gets a slot).
SLOTS = 16384


def _weighted(frequencies: dict[str, float]) -> _WeightedNames:
    cumulative = tuple(itertools.accumulate(frequencies.values()))
    names = tuple(frequencies)
    total = cumulative[-1]
    # Slot i holds the name whose cumulative interval contains the slot's midpoint. A name
    # rarer than 1/SLOTS of the total could miss out; Faker's rarest en_US name is 1/9,800.
    slots = tuple(names[bisect.bisect_right(cumulative, (index + 0.5) * total / SLOTS)]
                  for index in range(SLOTS))
    return _WeightedNames(names, cumulative, total, slots)


def _load_tables() -> _FakerTables:
    global _tables
    from faker.providers.address.en_US import Provider as AddressProvider
    from faker.providers.company.en_US import Provider as CompanyProvider
    from faker.providers.currency import Provider as CurrencyProvider
    from faker.providers.internet.en_US import Provider as InternetProvider
    from faker.providers.lorem.en_US import Provider as LoremProvider
    from faker.providers.person.en_US import Provider as PersonProvider

    _tables = _FakerTables(
        first_names=_weighted(PersonProvider.first_names),
        last_names=_weighted(PersonProvider.last_names),
        company_suffixes=tuple(CompanyProvider.company_suffixes),
        street_suffixes=tuple(AddressProvider.street_suffixes),
        city_suffixes=tuple(AddressProvider.city_suffixes),
        state_abbreviations=tuple(AddressProvider.states_abbr),
        # Lower-case words only (drops "TV", "Mr", "American"): word and slug promise lower case.
        lorem_words=tuple(word for word in LoremProvider.word_list if word.islower()),
        # Faker repeats "com" to weight it; keep the repeats for the same distribution.
        top_level_domains=tuple(InternetProvider.tlds),
        currencies=tuple((code, name) for code, name in CurrencyProvider.currencies
                         if code in _ISO_4217_CODES),
    )
    return _tables


def tables() -> _FakerTables:
    """Faker's en_US word lists, loaded on first use."""
    return _tables if _tables is not None else _load_tables()


def faker_generator() -> FakerGenerator:
    """The one shared en_US Faker ``Generator`` (created on first use, ~20 ms).

    Creating a Faker per request costs milliseconds, so the engine shares one and rebinds its
    ``random`` per render (:func:`bound_faker`).
    """
    global _faker_generator
    if _faker_generator is None:
        from faker import Factory

        _faker_generator = Factory.create("en_US")
    return _faker_generator


def bound_faker(rng: random.Random) -> FakerGenerator:
    """The shared Faker ``Generator`` with its randomness bound to ``rng``.

    Every Faker provider draws from ``generator.random``; pointing it at the render's ``rng`` makes
    a seeded render reproducible without reseeding Faker's own Mersenne Twister.
    """
    generator = _faker_generator if _faker_generator is not None else faker_generator()
    generator.random = rng
    return generator


def warm_up() -> None:
    """Load Faker and its word lists now, so the first templated request does not pay for it.

    Called by the template compiler when a template uses ``faker.*``.
    """
    faker_generator()
    tables()


# --- Generators, in SPEC order. The first docstring line is the docs table's "Output" column. ---

def name(faker: FakerGenerator, rng: random.Random) -> str:
    """Full name: first and last name (``Jennifer Lopez``)."""
    table = _tables if _tables is not None else tables()
    # pick() inlined: this is the most used fake-data type, on the request hot path.
    draw = rng.random
    return (f"{table.first_names.slots[int(draw() * SLOTS)]} "
            f"{table.last_names.slots[int(draw() * SLOTS)]}")


def first_name(faker: FakerGenerator, rng: random.Random) -> str:
    """Given name, weighted by US frequency."""
    return tables().first_names.pick(rng)


def last_name(faker: FakerGenerator, rng: random.Random) -> str:
    """Family name, weighted by US frequency."""
    return tables().last_names.pick(rng)


def email(faker: FakerGenerator, rng: random.Random) -> str:
    """Email address at a reserved example domain (never a real inbox)."""
    table = tables()
    local = f"{table.first_names.pick(rng)}.{table.last_names.pick(rng)}".lower()
    return f"{local}{rng.randrange(100)}@{rng.choice(_EMAIL_DOMAINS)}"


def phone(faker: FakerGenerator, rng: random.Random) -> str:
    """US phone number in one of Faker's formats."""
    return faker.phone_number()


def company(faker: FakerGenerator, rng: random.Random) -> str:
    """Company name (Faker's three en_US company formats)."""
    last_names = tables().last_names
    form = rng.randrange(3)
    if form == 0:
        return f"{last_names.pick(rng)} {rng.choice(tables().company_suffixes)}"
    if form == 1:
        return f"{last_names.pick(rng)}-{last_names.pick(rng)}"
    return f"{last_names.pick(rng)}, {last_names.pick(rng)} and {last_names.pick(rng)}"


def address(faker: FakerGenerator, rng: random.Random) -> str:
    """US postal address on one line (usable in a header value)."""
    table = tables()
    street = f"{rng.randint(1, 99999)} {table.last_names.pick(rng)} {rng.choice(table.street_suffixes)}"
    city = f"{table.first_names.pick(rng)}{rng.choice(table.city_suffixes)}"
    return f"{street}, {city}, {rng.choice(table.state_abbreviations)} {rng.randrange(501, 99951):05d}"


def word(faker: FakerGenerator, rng: random.Random) -> str:
    """One lower-case English word."""
    return rng.choice(tables().lorem_words)


def sentence(faker: FakerGenerator, rng: random.Random) -> str:
    """A sentence of several words, capitalised, ending with a full stop."""
    return faker.sentence()


def words(faker: FakerGenerator, rng: random.Random, count: int | None = None) -> str:
    """3 to 5 words separated by spaces; ``words(n)`` gives exactly n."""
    if count is None:
        count = rng.randint(3, 5)
    word_list = tables().lorem_words
    return " ".join([rng.choice(word_list) for _ in range(count)])


def boolean(faker: FakerGenerator, rng: random.Random) -> str:
    """``true`` or ``false``."""
    return "true" if rng.random() < 0.5 else "false"


def uuid(faker: FakerGenerator, rng: random.Random) -> str:
    """Random (version 4) UUID."""
    return uuid4_text(rng)


#: Version nibble 4 and variant bits 10 of a 128-bit UUID (RFC 9562 section 5.4).
UUID_CLEAR_MASK = ~((0xF000 << 64) | (0xC000 << 48))
UUID_SET_BITS = (0x4000 << 64) | (0x8000 << 48)


def uuid4_text(rng: random.Random) -> str:
    """A version 4 UUID drawn from ``rng``, canonical lower-case text.

    Formats by hand because ``str(uuid.UUID(...))`` costs three times as much; ``bytes.hex``
    is twice as fast as ``"%032x"`` and gives the same text.
    """
    text = (rng.getrandbits(128) & UUID_CLEAR_MASK | UUID_SET_BITS).to_bytes(16).hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def ipv4(faker: FakerGenerator, rng: random.Random) -> str:
    """Public-looking IPv4 address (no 0, 10, 127 or multicast first octet)."""
    first_octet = rng.randint(1, 223)
    while first_octet in (10, 127):
        first_octet = rng.randint(1, 223)
    return f"{first_octet}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randint(1, 254)}"


def ipv6(faker: FakerGenerator, rng: random.Random) -> str:
    """IPv6 address."""
    return faker.ipv6()


def mac_address(faker: FakerGenerator, rng: random.Random) -> str:
    """MAC address, colon-separated lower-case hex."""
    return faker.mac_address()


def user_agent(faker: FakerGenerator, rng: random.Random) -> str:
    """Browser User-Agent string."""
    return faker.user_agent()


def url(faker: FakerGenerator, rng: random.Random) -> str:
    """HTTPS URL of a made-up domain."""
    table = tables()
    return f"https://www.{table.last_names.pick(rng).lower()}.{rng.choice(table.top_level_domains)}/"


def credit_card(faker: FakerGenerator, rng: random.Random) -> str:
    """Card number (Visa, Mastercard, Amex, ...) that passes the Luhn check."""
    return faker.credit_card_number()


def credit_card_expiry(faker: FakerGenerator, rng: random.Random) -> str:
    """Expiry date ``MM/YY``, 1 to 60 months after the current month."""
    today = datetime.date.today()
    # Counting months from 0 keeps the year carry a single division.
    month_index = today.year * 12 + today.month - 1 + rng.randint(1, 60)
    return f"{month_index % 12 + 1:02d}/{month_index // 12 % 100:02d}"


def cvv(faker: FakerGenerator, rng: random.Random) -> str:
    """Three-digit card security code."""
    return f"{rng.randrange(1000):03d}"


def currency_code(faker: FakerGenerator, rng: random.Random) -> str:
    """ISO 4217 currency code (``EUR``)."""
    return rng.choice(tables().currencies)[0]


def currency(faker: FakerGenerator, rng: random.Random) -> str:
    """Currency name (``Euro``)."""
    return rng.choice(tables().currencies)[1]


def iban(faker: FakerGenerator, rng: random.Random) -> str:
    """IBAN with a valid mod-97 check (GB format)."""
    return faker.iban()


def price(faker: FakerGenerator, rng: random.Random) -> str:
    """Price with two decimals, 1.00 to 999.99, no currency sign."""
    return f"{rng.randint(1, 999)}.{rng.randrange(100):02d}"


def product_name(faker: FakerGenerator, rng: random.Random) -> str:
    """Product name: adjective, material, noun (``Ergonomic Steel Chair``)."""
    return f"{rng.choice(_PRODUCT_ADJECTIVES)} {rng.choice(_PRODUCT_MATERIALS)} {rng.choice(_PRODUCT_NOUNS)}"


def color(faker: FakerGenerator, rng: random.Random) -> str:
    """CSS colour name (``LightSeaGreen``)."""
    return faker.color_name()


def hex_color(faker: FakerGenerator, rng: random.Random) -> str:
    """Colour as ``#rrggbb``."""
    return faker.hex_color()


def ssn(faker: FakerGenerator, rng: random.Random) -> str:
    """US social security number ``###-##-####``."""
    return faker.ssn()


def passport(faker: FakerGenerator, rng: random.Random) -> str:
    """US passport number."""
    return faker.passport_number()


def job_title(faker: FakerGenerator, rng: random.Random) -> str:
    """Job title."""
    return faker.job()


def latitude(faker: FakerGenerator, rng: random.Random) -> str:
    """Latitude in degrees, -90 to 90."""
    # format(..., "f") because str() of a Decimal may switch to exponent notation.
    return format(faker.latitude(), "f")


def longitude(faker: FakerGenerator, rng: random.Random) -> str:
    """Longitude in degrees, -180 to 180."""
    return format(faker.longitude(), "f")


def slug(faker: FakerGenerator, rng: random.Random) -> str:
    """URL slug of 2 or 3 hyphenated words."""
    word_list = tables().lorem_words
    return "-".join([rng.choice(word_list) for _ in range(rng.randint(2, 3))])


def mime_type(faker: FakerGenerator, rng: random.Random) -> str:
    """MIME type (``image/png``)."""
    return faker.mime_type()


def file_extension(faker: FakerGenerator, rng: random.Random) -> str:
    """File extension without the dot (``pdf``)."""
    return faker.file_extension()


#: Every fake-data type of SPEC "Templating": canonical (SPEC) name -> generator, in SPEC order.
FAKE_DATA_GENERATORS: dict[str, FakeDataGenerator] = {
    "name": name,
    "firstName": first_name,
    "lastName": last_name,
    "email": email,
    "phone": phone,
    "company": company,
    "address": address,
    "word": word,
    "sentence": sentence,
    "words": words,
    "boolean": boolean,
    "uuid": uuid,
    "ipv4": ipv4,
    "ipv6": ipv6,
    "macAddress": mac_address,
    "userAgent": user_agent,
    "url": url,
    "creditCard": credit_card,
    "creditCardExp": credit_card_expiry,
    "cvv": cvv,
    "currencyCode": currency_code,
    "currency": currency,
    "iban": iban,
    "price": price,
    "productName": product_name,
    "color": color,
    "hexColor": hex_color,
    "ssn": ssn,
    "passport": passport,
    "jobTitle": job_title,
    "latitude": latitude,
    "longitude": longitude,
    "slug": slug,
    "mimeType": mime_type,
    "fileExtension": file_extension,
}

#: The canonical names of the 35 fake-data types, in SPEC order.
FAKE_DATA_TYPES: tuple[str, ...] = tuple(FAKE_DATA_GENERATORS)

#: Types whose generator draws only from ``rng`` and the word lists, never from ``faker``: the
#: template compiler calls them with ``faker=None`` and skips rebinding the shared generator.
FAKER_FREE_TYPES: frozenset[str] = frozenset((
    "name", "firstName", "lastName", "email", "company", "address", "word", "words", "boolean",
    "uuid", "ipv4", "url", "creditCardExp", "cvv", "currencyCode", "currency", "price",
    "productName", "slug"))

#: Fake-data types that take an argument (``faker.words(n)``): canonical name -> generator.
PARAMETERISED_GENERATORS: dict[str, Callable[..., str]] = {"words": words}

_BY_LOWER_CASE_NAME = {type_name.lower(): type_name for type_name in FAKE_DATA_TYPES}


def canonical_name(type_name: str) -> str | None:
    """The SPEC spelling of a fake-data type name given in any case, or ``None`` if unknown.

    ``canonical_name("FIRSTNAME") == "firstName"`` (SPEC: "type names are case-insensitive").
    """
    return _BY_LOWER_CASE_NAME.get(type_name.lower())


def lookup(type_name: str) -> FakeDataGenerator | None:
    """The generator for a fake-data type name in any case, or ``None`` if unknown."""
    canonical = _BY_LOWER_CASE_NAME.get(type_name.lower())
    return FAKE_DATA_GENERATORS[canonical] if canonical is not None else None


def seeded_random(seed: int | None) -> random.Random:
    """A ``random.Random`` for ``seed`` (``None``: seeded from the OS).

    ``random.Random`` seeds with ``abs(seed)``, which would make seeds 5 and -5 give the same
    output; folding negatives onto odd numbers keeps every integer seed distinct.
    """
    if seed is None:
        return random.Random()
    return random.Random(seed * 2 if seed >= 0 else -seed * 2 - 1)


def generate(type_name: str, seed: int | None = None) -> str:
    """One value of a fake-data type, outside a template (docs, tests, importers).

    Raises:
        KeyError: ``type_name`` is not one of :data:`FAKE_DATA_TYPES` (any case).
    """
    generator = lookup(type_name)
    if generator is None:
        raise KeyError(f"unknown fake-data type {type_name!r}; known types: {', '.join(FAKE_DATA_TYPES)}")
    rng = seeded_random(seed)
    return generator(bound_faker(rng), rng)


def markdown_table(seed: int = 7) -> str:
    """The reference table of fake-data types (Markdown), with a sample made with ``seed``."""
    rows = ["| Type | Output | Example |", "|---|---|---|"]
    for type_name, generator in FAKE_DATA_GENERATORS.items():
        summary = (generator.__doc__ or "").strip().splitlines()[0]
        example = generate(type_name, seed).replace("|", "\\|")
        rows.append(f"| `{type_name}` | {summary} | `{example}` |")
    return "\n".join(rows)


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m mocks.core.fakedata --markdown")
    print(markdown_table())
