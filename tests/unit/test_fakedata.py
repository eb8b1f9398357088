"""The 35 fake-data types of SPEC "Templating", each checked with a real validator."""
from __future__ import annotations

import datetime
import ipaddress
import random
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from mocks.core import fakedata

#: SPEC "Templating", "Fake-data types (35)", in SPEC order.
SPEC_FAKE_DATA_TYPES = (
    "name", "firstName", "lastName", "email", "phone", "company", "address", "word", "sentence",
    "words", "boolean", "uuid", "ipv4", "ipv6", "macAddress", "userAgent", "url", "creditCard",
    "creditCardExp", "cvv", "currencyCode", "currency", "iban", "price", "productName", "color",
    "hexColor", "ssn", "passport", "jobTitle", "latitude", "longitude", "slug", "mimeType",
    "fileExtension",
)

#: Active ISO 4217 alphabetic codes, kept here independently of the implementation's list.
ISO_4217 = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP
BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR
FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES
KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR
MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS
UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
""".split())

SEEDS = range(60)


def luhn_valid(number: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed(number)):
        value = int(digit)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(character, 36)) for character in rearranged)) % 97 == 1


def is_name_word(text: str) -> bool:
    return text.isalpha() and text[0].isupper()


def is_future_expiry(text: str) -> bool:
    match = re.fullmatch(r"(0[1-9]|1[0-2])/([0-9]{2})", text)
    if not match:
        return False
    today = datetime.date.today()
    month, year = int(match[1]), 2000 + int(match[2])
    return (year, month) > (today.year, today.month)


def is_ipv4(text: str) -> bool:
    return ipaddress.ip_address(text).version == 4


def is_ipv6(text: str) -> bool:
    return ipaddress.ip_address(text).version == 6


def is_uuid4(text: str) -> bool:
    parsed = uuid.UUID(text)
    return parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text


def is_https_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme == "https" and "." in parts.netloc and " " not in text


def in_range(low: float, high: float) -> Callable[[str], bool]:
    return lambda text: re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text) is not None and low <= float(text) <= high


def faker_currency_names() -> set[str]:
    from faker.providers.currency import Provider
    return {name for code, name in Provider.currencies if code in ISO_4217}


VALIDATORS: dict[str, Callable[[str], bool]] = {
    "name": lambda v: len(v.split(" ")) == 2 and all(is_name_word(part) for part in v.split(" ")),
    "firstName": is_name_word,
    "lastName": is_name_word,
    "email": lambda v: re.fullmatch(r"[a-z]+\.[a-z]+[0-9]{0,2}@example\.(com|net|org)", v) is not None,
    "phone": lambda v: re.fullmatch(r"[0-9()+.x -]+", v) is not None and sum(c.isdigit() for c in v) >= 10,
    "company": lambda v: v[:1].isupper() and len(v) > 2,
    "address": lambda v: "\n" not in v and re.fullmatch(r"[0-9]+ .+, .+, [A-Z]{2} [0-9]{5}", v) is not None,
    "word": lambda v: re.fullmatch(r"[a-z]+", v) is not None,
    "sentence": lambda v: v[:1].isupper() and v.endswith(".") and "  " not in v,
    "words": lambda v: 3 <= len(v.split(" ")) <= 5 and all(re.fullmatch(r"[a-z]+", w) for w in v.split(" ")),
    "boolean": lambda v: v in ("true", "false"),
    "uuid": is_uuid4,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "macAddress": lambda v: re.fullmatch(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", v) is not None,
    # RFC 9110 section 10.1.5: product "/" version first ("Mozilla/5.0", "Opera/9.61").
    "userAgent": lambda v: re.match(r"[A-Za-z]+/[0-9]", v) is not None and "\n" not in v,
    "url": is_https_url,
    "creditCard": lambda v: v.isdigit() and 12 <= len(v) <= 19 and luhn_valid(v),
    "creditCardExp": is_future_expiry,
    "cvv": lambda v: re.fullmatch(r"[0-9]{3}", v) is not None,
    "currencyCode": lambda v: v in ISO_4217,
    "currency": lambda v: v in faker_currency_names(),
    "iban": lambda v: re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}", v) is not None and iban_valid(v),
    "price": lambda v: re.fullmatch(r"[1-9][0-9]{0,2}\.[0-9]{2}", v) is not None,
    "productName": lambda v: len(v.split(" ")) == 3 and all(is_name_word(part) for part in v.split(" ")),
    "color": lambda v: v.isalpha(),
    "hexColor": lambda v: re.fullmatch(r"#[0-9a-fA-F]{6}", v) is not None,
    "ssn": lambda v: re.fullmatch(r"[0-9]{3}-[0-9]{2}-[0-9]{4}", v) is not None,
    "passport": lambda v: re.fullmatch(r"[A-Z0-9]{6,9}", v) is not None,
    "jobTitle": lambda v: len(v) > 2 and "\n" not in v,
    "latitude": in_range(-90, 90),
    "longitude": in_range(-180, 180),
    "slug": lambda v: re.fullmatch(r"[a-z]+(-[a-z]+){1,2}", v) is not None,
    "mimeType": lambda v: re.fullmatch(r"[a-z]+/[a-zA-Z0-9.+-]+", v) is not None,
    "fileExtension": lambda v: re.fullmatch(r"[a-z0-9]+", v) is not None,
}


def test_fake_data_types_registry_lists_the_35_spec_types_in_spec_order():
    assert fakedata.FAKE_DATA_TYPES == SPEC_FAKE_DATA_TYPES
    assert tuple(fakedata.FAKE_DATA_GENERATORS) == SPEC_FAKE_DATA_TYPES
    assert set(VALIDATORS) == set(SPEC_FAKE_DATA_TYPES)


@pytest.mark.parametrize("type_name", [pytest.param(name, id=name) for name in SPEC_FAKE_DATA_TYPES])
def test_fake_data_type_any_seed_output_passes_validator(type_name):
    validate = VALIDATORS[type_name]
    for seed in SEEDS:
        value = fakedata.generate(type_name, seed)
        assert isinstance(value, str) and value, f"seed {seed}: empty value"
        assert validate(value), f"seed {seed}: {value!r} is not a valid {type_name}"


@pytest.mark.parametrize("type_name", [pytest.param(name, id=name) for name in SPEC_FAKE_DATA_TYPES])
def test_fake_data_type_same_seed_repeats_and_other_seeds_vary(type_name):
    first = [fakedata.generate(type_name, seed) for seed in SEEDS]
    again = [fakedata.generate(type_name, seed) for seed in SEEDS]
    assert first == again
    assert len(set(first)) > 1, f"{type_name} gave {first[0]!r} for {len(SEEDS)} different seeds"


@pytest.mark.parametrize("type_name", sorted(fakedata.FAKER_FREE_TYPES))
def test_fake_data_faker_free_type_generates_valid_value_without_faker(type_name):
    # Templates call these with faker=None; one that reached for Faker would raise here.
    generate = fakedata.FAKE_DATA_GENERATORS[type_name]
    for seed in SEEDS:
        rng = fakedata.seeded_random(seed)
        value = generate(None, rng)
        assert VALIDATORS[type_name](value), f"seed {seed}: {value!r}"
        assert value == fakedata.generate(type_name, seed)


@pytest.mark.parametrize("spelling,canonical", [
    pytest.param("firstName", "firstName", id="SPEC spelling"),
    pytest.param("firstname", "firstName", id="lower case"),
    pytest.param("FIRSTNAME", "firstName", id="upper case"),
    pytest.param("CreditCardExp", "creditCardExp", id="pascal case"),
    pytest.param("IPV4", "ipv4", id="upper-case short name"),
])
def test_fake_data_lookup_any_case_finds_canonical_type(spelling, canonical):
    assert fakedata.canonical_name(spelling) == canonical
    assert fakedata.lookup(spelling) is fakedata.FAKE_DATA_GENERATORS[canonical]


def test_fake_data_lookup_unknown_type_returns_none_and_generate_raises_with_known_list():
    assert fakedata.lookup("favouriteColour") is None
    with pytest.raises(KeyError, match="known types: name, firstName"):
        fakedata.generate("favouriteColour")


@pytest.mark.parametrize("count", [pytest.param(n, id=f"{n} words") for n in (0, 1, 2, 7, 40)])
def test_fake_data_words_with_count_gives_exactly_that_many_words(count):
    rng = random.Random(count)
    value = fakedata.words(fakedata.bound_faker(rng), rng, count)
    assert len(value.split()) == count and value == " ".join(value.split())


def test_fake_data_words_without_count_spans_three_to_five_words():
    counts = {len(fakedata.generate("words", seed).split(" ")) for seed in range(200)}
    assert counts == {3, 4, 5}


def test_fake_data_boolean_over_many_seeds_gives_both_values():
    assert {fakedata.generate("boolean", seed) for seed in range(50)} == {"true", "false"}


def test_fake_data_credit_card_expiry_over_many_seeds_stays_within_five_years():
    today = datetime.date.today()
    for seed in range(300):
        month, year = fakedata.generate("creditCardExp", seed).split("/")
        months_ahead = (2000 + int(year) - today.year) * 12 + int(month) - today.month
        assert 1 <= months_ahead <= 60


def test_fake_data_unseeded_generation_varies_between_calls():
    assert len({fakedata.generate("uuid") for _ in range(5)}) == 5


def test_fake_data_markdown_table_has_one_row_per_type_with_summary_and_example():
    rows = fakedata.markdown_table().splitlines()
    assert rows[0] == "| Type | Output | Example |"
    body = rows[2:]
    assert [row.split("|")[1].strip() for row in body] == [f"`{name}`" for name in SPEC_FAKE_DATA_TYPES]
    assert all(row.split("|")[2].strip() and row.split("|")[3].strip() != "``" for row in body)


def test_fake_data_module_run_with_markdown_flag_prints_the_table():
    completed = subprocess.run([sys.executable, "-m", "mocks.core.fakedata", "--markdown"],
                               capture_output=True, text=True, timeout=60, check=True)
    assert completed.stdout.strip() == fakedata.markdown_table()


def test_fake_data_module_run_without_flag_exits_with_usage():
    completed = subprocess.run([sys.executable, "-m", "mocks.core.fakedata"],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode != 0 and "usage" in completed.stderr


def test_fake_data_docs_reference_table_matches_registry():
    # Examples may drift with the date (creditCardExp) and Faker releases; type and output may not.
    from pathlib import Path
    docs = (Path(__file__).resolve().parents[2] / "docs" / "templating.md").read_text()
    section = docs.split("## Fake-data types", 1)[1]
    generated = [row.rsplit("|", 2)[0] for row in fakedata.markdown_table().splitlines()]
    documented = [row.rsplit("|", 2)[0] for row in section.splitlines() if row.startswith("|")]
    assert documented == generated, "regenerate with: python -m mocks.core.fakedata --markdown"


@pytest.mark.parametrize("table_name", ["first_names", "last_names"])
def test_weighted_name_tables_keep_every_name_and_its_frequency(table_name):
    weighted = getattr(fakedata.tables(), table_name)
    assert set(weighted.slots) == set(weighted.names)  # no name is unreachable
    counts: dict[str, int] = {}
    for name in weighted.slots:
        counts[name] = counts.get(name, 0) + 1
    previous = 0.0
    for name, cumulative in zip(weighted.names, weighted.cumulative_weights):
        expected = (cumulative - previous) / weighted.total * fakedata.SLOTS
        previous = cumulative
        assert abs(counts[name] - expected) <= 1, name  # quantised to one slot
