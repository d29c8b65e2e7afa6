'''The history of ``shelfkit``, the sample library the coding examples work on.

``shelfkit`` is a small stock-room utility library written for these examples
(SKU codes, money in cents, unit conversion, a stock ledger, reorder points,
pricing, CSV import/export, search, reports, business days) with a pytest
suite. Everything here is authored for this project; no code is copied.

``COMMITS`` is the history, oldest first: ``(subject, body, ops)`` where each
op is ``("write", path, text)``, ``("append", path, text)``,
``("replace", path, old, new)`` (``old`` must occur exactly once) or
``("delete", path)``. ``build_sample_repo`` replays it into a git repository.
'''

from __future__ import annotations

from typing import Any

__all__ = ["COMMITS", "PACKAGE"]

PACKAGE = "shelfkit"

_README = '''# shelfkit

Small utilities for stock rooms: SKU codes, money amounts in cents, unit
conversion, a stock ledger, reorder points, prices and CSV files.

```
from shelfkit import stock

ledger = stock.StockLedger()
ledger.receive("toy-42", 10)
ledger.ship("TOY-0042", 3)
ledger.on_hand("TOY-0042")  # 7
```

Run the tests with `python -m pytest`.
'''

_PYPROJECT = '''[project]
name = "shelfkit"
version = "0.1.0"
description = "Small utilities for stock rooms"
requires-python = ">=3.9"

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

_INIT = '''"""shelfkit: small utilities for stock rooms."""

__version__ = "0.1.0"
'''

_ERRORS = '''"""Exception classes raised by shelfkit."""


class ShelfkitError(Exception):
    """Base class of every error raised by shelfkit."""


class InvalidSKU(ShelfkitError, ValueError):
    """A stock-keeping unit code does not follow the SKU format."""


class UnknownUnit(ShelfkitError, ValueError):
    """A unit symbol is not one shelfkit knows how to convert."""
'''

_SKU = '''"""Stock-keeping unit (SKU) codes.

A SKU has the form ``CAT-NNNN[-VV]``: a three-letter category, a number of
four digits and an optional two-character variant, e.g. ``TOY-0042-RD``.
"""

import re

from .errors import InvalidSKU

_SKU = re.compile(r"^[A-Z]{3}-[0-9]{4}(-[A-Z0-9]{2})?$")


def normalize(code):
    """Upper-case ``code`` and pad its number to four digits: ``"toy-42-rd"`` -> ``"TOY-0042-RD"``.

    Raises:
        InvalidSKU: the code cannot be read as CAT-NUMBER[-VARIANT].
    """
    parts = code.strip().upper().split("-")
    if len(parts) not in (2, 3) or not parts[1].isdigit():
        raise InvalidSKU(f"{code!r} is not CAT-NUMBER[-VARIANT]")
    parts[1] = parts[1].rjust(4, "0")
    result = "-".join(parts)
    if not _SKU.match(result):
        raise InvalidSKU(f"{code!r} does not normalise to a valid SKU")
    return result


def is_valid(code):
    """Whether ``code`` is already a normalised SKU."""
    return bool(_SKU.match(code))


def category(code):
    """The category part of a SKU: ``"toy-42"`` -> ``"TOY"``."""
    return normalize(code).split("-")[0]
'''

_TEST_SKU = '''import pytest

from shelfkit import errors, sku


def test_normalize_pads_and_upper_cases():
    assert sku.normalize("toy-42") == "TOY-0042"
    assert sku.normalize(" toy-0042-rd ") == "TOY-0042-RD"


def test_normalize_rejects_garbage():
    with pytest.raises(errors.InvalidSKU):
        sku.normalize("toy")
    with pytest.raises(errors.InvalidSKU):
        sku.normalize("toys-12")


def test_is_valid_and_category():
    assert sku.is_valid("TOY-0042")
    assert not sku.is_valid("toy-42")
    assert sku.category("pen-7-bk") == "PEN"
'''

_MONEY = '''"""Money amounts as integer cents.

Amounts are kept as ``int`` numbers of cents so that sums are exact.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

SYMBOLS = {"USD": "$", "EUR": "\\u20ac", "GBP": "\\u00a3"}


def parse_money(text):
    """Parse ``"12.30"``, ``"$12.3"`` or ``"1,204.00"`` into cents (``int``), rounding half up.

    Raises:
        ValueError: the text is not an amount.
    """
    cleaned = text.strip().lstrip("$\\u20ac\\u00a3").replace(",", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    return int((value * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def format_money(cents, currency="USD"):
    """``1234`` -> ``"$12.34"``; thousands are separated by commas."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{SYMBOLS.get(currency, currency + ' ')}{whole:,}.{frac:02d}"
'''

_TEST_MONEY = '''import pytest

from shelfkit import money


def test_parse_money_forms():
    assert money.parse_money("12.30") == 1230
    assert money.parse_money("$12.3") == 1230
    assert money.parse_money("1,204.005") == 120401


def test_parse_money_rejects_text():
    with pytest.raises(ValueError):
        money.parse_money("twelve")


def test_format_money():
    assert money.format_money(123456) == "$1,234.56"
    assert money.format_money(-5) == "-$0.05"
'''

_UNITS = '''"""Conversion between units of mass and length."""

from .errors import UnknownUnit

_FACTORS = {
    "g": ("mass", 1.0), "kg": ("mass", 1000.0), "lb": ("mass", 453.59237), "oz": ("mass", 28.349523125),
    "mm": ("length", 1.0), "cm": ("length", 10.0), "m": ("length", 1000.0), "in": ("length", 25.4),
}


def dimension(unit):
    """``"mass"`` or ``"length"`` for a known unit symbol.

    Raises:
        UnknownUnit: the symbol is not known.
    """
    try:
        return _FACTORS[unit][0]
    except KeyError:
        raise UnknownUnit(f"unknown unit {unit!r}") from None


def convert(value, from_unit, to_unit):
    """Convert ``value`` from ``from_unit`` to ``to_unit`` (both of one dimension).

    Raises:
        UnknownUnit: a unit symbol is not known.
        ValueError: the units measure different dimensions.
    """
    if dimension(from_unit) != dimension(to_unit):
        raise ValueError(f"cannot convert {dimension(from_unit)} to {dimension(to_unit)}")
    return value * _FACTORS[from_unit][1] / _FACTORS[to_unit][1]
'''

_TEST_UNITS = '''import pytest

from shelfkit import errors, units


def test_convert_mass_and_length():
    assert units.convert(2, "kg", "g") == 2000
    assert units.convert(254, "mm", "in") == pytest.approx(10)


def test_convert_refuses_mixed_dimensions():
    with pytest.raises(ValueError):
        units.convert(1, "kg", "m")
    with pytest.raises(errors.UnknownUnit):
        units.convert(1, "stone", "kg")
'''

_STOCK = '''"""A ledger of stock movements per SKU."""

from .sku import normalize


class StockLedger:
    """Receipts and shipments of stock, per normalised SKU."""

    def __init__(self):
        self._on_hand = {}
        self.history = []

    def receive(self, code, quantity):
        """Add ``quantity`` units of ``code`` to stock.

        Raises:
            ValueError: ``quantity`` is not positive.
        """
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        code = normalize(code)
        self._on_hand[code] = self._on_hand.get(code, 0) + quantity
        self.history.append(("receive", code, quantity))

    def ship(self, code, quantity):
        """Remove ``quantity`` units of ``code`` from stock.

        Raises:
            ValueError: ``quantity`` is not positive.
        """
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        code = normalize(code)
        self._on_hand[code] = self._on_hand.get(code, 0) - quantity
        self.history.append(("ship", code, quantity))

    def on_hand(self, code):
        """Units of ``code`` currently in stock."""
        return self._on_hand.get(normalize(code), 0)

    def total(self):
        """Units in stock over all SKUs."""
        return sum(self._on_hand.values())
'''

_TEST_STOCK = '''import pytest

from shelfkit import stock


def test_receive_and_ship():
    ledger = stock.StockLedger()
    ledger.receive("toy-42", 10)
    ledger.ship("TOY-0042", 3)
    assert ledger.on_hand("toy-0042") == 7
    assert ledger.total() == 7
    assert [h[0] for h in ledger.history] == ["receive", "ship"]


def test_quantities_must_be_positive():
    ledger = stock.StockLedger()
    with pytest.raises(ValueError):
        ledger.receive("toy-1", 0)
'''

_REORDER = '''"""Reorder points: when to order more of an item, and how much."""

import math


def reorder_point(daily_demand, lead_time_days):
    """Stock level at which to reorder: the demand over the lead time, rounded up.

    Raises:
        ValueError: a negative demand or lead time.
    """
    if daily_demand < 0 or lead_time_days < 0:
        raise ValueError("demand and lead time must not be negative")
    return math.ceil(daily_demand * lead_time_days)


def order_quantity(on_hand, point, target):
    """Units to order to reach ``target`` once ``on_hand`` is at or below ``point``; else 0."""
    if on_hand > point:
        return 0
    return max(target - on_hand, 0)
'''

_TEST_REORDER = '''import pytest

from shelfkit import reorder


def test_reorder_point_rounds_up():
    assert reorder.reorder_point(2.5, 3) == 8
    with pytest.raises(ValueError):
        reorder.reorder_point(-1, 3)


def test_order_quantity():
    assert reorder.order_quantity(10, 5, 40) == 0
    assert reorder.order_quantity(4, 5, 40) == 36
'''

_PRICING = '''"""Prices after discounts and taxes, in integer cents."""


def percent_off(cents, percent):
    """Price after a ``percent`` discount (0 to 100).

    Raises:
        ValueError: ``percent`` is outside 0..100.
    """
    if not 0 <= percent <= 100:
        raise ValueError(f"percent must be within 0..100, got {percent}")
    return int(cents * (100 - percent) / 100)


def amount_off(cents, discount):
    """Price after a fixed discount of ``discount`` cents, never below zero.

    Raises:
        ValueError: a negative discount.
    """
    if discount < 0:
        raise ValueError("discount must not be negative")
    return max(cents - discount, 0)
'''

_TEST_PRICING = '''import pytest

from shelfkit import pricing


def test_percent_off():
    assert pricing.percent_off(1000, 25) == 750
    with pytest.raises(ValueError):
        pricing.percent_off(1000, 120)


def test_amount_off_floors_at_zero():
    assert pricing.amount_off(500, 700) == 0
'''

_CSVIO = '''"""Stock counts to and from CSV text (``sku,quantity`` rows after a header)."""

import csv
import io

from .errors import CSVFormatError
from .sku import normalize


def read_counts(text):
    """``{sku: quantity}`` from CSV text with a ``sku,quantity`` header; repeated SKUs add up.

    Raises:
        CSVFormatError: a bad header, a row without two fields, or a quantity that is not an integer.
    """
    counts = {}
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or [h.strip().lower() for h in header] != ["sku", "quantity"]:
        raise CSVFormatError(1, "expected the header 'sku,quantity'")
    for line, row in enumerate(reader, start=2):
        if len(row) != 2:
            raise CSVFormatError(line, f"expected 2 fields, got {len(row)}")
        try:
            quantity = int(row[1])
        except ValueError:
            raise CSVFormatError(line, f"quantity {row[1]!r} is not an integer") from None
        code = normalize(row[0])
        counts[code] = counts.get(code, 0) + quantity
    return counts
'''

_TEST_CSVIO = '''import pytest

from shelfkit import csvio, errors


def test_read_counts_adds_repeats():
    text = "sku,quantity\\ntoy-1,3\\nTOY-0001,2\\npen-7,1\\n"
    assert csvio.read_counts(text) == {"TOY-0001": 5, "PEN-0007": 1}


def test_read_counts_reports_the_line():
    with pytest.raises(errors.CSVFormatError) as info:
        csvio.read_counts("sku,quantity\\ntoy-1,three\\n")
    assert info.value.line == 2
'''

_SEARCH = '''"""Find item names that approximately match a query."""

import difflib


def search(names, query, limit=5):
    """The names most similar to ``query`` (case-insensitive), best first, at most ``limit``.

    A name matches when it contains the query or its similarity ratio is above 0.3.

    Raises:
        ValueError: ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    q = query.lower()
    scored = [(difflib.SequenceMatcher(None, q, n.lower()).ratio(), n) for n in names]
    scored = [s for s in scored if s[0] > 0.3 or q in s[1].lower()]
    scored.sort(key=lambda s: -s[0])
    return [n for _, n in scored[:limit]]
'''

_TEST_SEARCH = '''import pytest

from shelfkit import search


def test_search_best_first():
    names = ["red pencil", "blue pen", "ink cartridge"]
    assert search.search(names, "pen") == ["blue pen", "red pencil"]


def test_search_limit():
    with pytest.raises(ValueError):
        search.search(["a"], "a", limit=0)
'''

_REPORT = '''"""Plain-text stock reports."""

from .money import format_money


def stock_report(rows, title="Stock"):
    """A fixed-width table of ``rows`` = ``[(sku, quantity, unit_cents)]`` with a total line.

    Raises:
        ValueError: a negative quantity.
    """
    lines = [title, "=" * len(title)]
    total = 0
    for code, quantity, unit_cents in rows:
        if quantity < 0:
            raise ValueError(f"{code}: negative quantity {quantity}")
        value = quantity * unit_cents
        total += value
        lines.append(f"{code:<12} {quantity:<6} {format_money(value):>12}")
    lines.append(f"{'TOTAL':<12} {'':<6} {format_money(total):>12}")
    return "\\n".join(lines)
'''

_TEST_REPORT = '''from shelfkit import report


def test_report_has_title_rows_and_total():
    text = report.stock_report([("TOY-0001", 3, 200), ("PEN-0007", 10, 150)], title="Shelf A")
    lines = text.splitlines()
    assert lines[:2] == ["Shelf A", "======="]
    assert lines[-1].startswith("TOTAL") and lines[-1].endswith("$21.00")
'''

_DATES = '''"""Lead times counted in business days (Monday to Friday)."""

import datetime as dt


def add_business_days(start, days):
    """The date ``days`` business days after ``start``.

    Raises:
        ValueError: ``days`` is negative.
    """
    if days < 0:
        raise ValueError("days must not be negative")
    current = start
    for _ in range(days):
        current += dt.timedelta(days=1)
        if current.weekday() == 5:
            current += dt.timedelta(days=2)
    return current


def business_days_between(start, end):
    """Business days after ``start`` up to and including ``end``.

    Raises:
        ValueError: ``end`` is before ``start``.
    """
    if end < start:
        raise ValueError("end is before start")
    days = (end - start).days
    return sum(1 for k in range(1, days + 1) if (start + dt.timedelta(days=k)).weekday() < 5)
'''

_TEST_DATES = '''import datetime as dt

from shelfkit import dates


def test_add_business_days_skips_the_weekend():
    friday = dt.date(2024, 5, 31)
    assert dates.add_business_days(friday, 1) == dt.date(2024, 6, 3)
    assert dates.add_business_days(friday, 5) == dt.date(2024, 6, 7)


def test_business_days_between():
    assert dates.business_days_between(dt.date(2024, 5, 31), dt.date(2024, 6, 7)) == 5
'''


def _c(subject: str, body: str, *ops: tuple[Any, ...]) -> tuple[str, str, tuple[tuple[Any, ...], ...]]:
    return subject, body, ops


COMMITS: list[tuple[str, str, tuple[tuple[Any, ...], ...]]] = [
    _c("Initial project layout", "Package skeleton, exception classes, README and pytest configuration.",
       ("write", "README.md", _README), ("write", "pyproject.toml", _PYPROJECT),
       ("write", "shelfkit/__init__.py", _INIT), ("write", "shelfkit/errors.py", _ERRORS)),
    _c("Add SKU normalisation and validation", "",
       ("write", "shelfkit/sku.py", _SKU), ("write", "tests/test_sku.py", _TEST_SKU)),
    _c("Add money parsing and formatting in integer cents", "",
       ("write", "shelfkit/money.py", _MONEY), ("write", "tests/test_money.py", _TEST_MONEY)),
    _c("Add conversion between units of mass and length", "",
       ("write", "shelfkit/units.py", _UNITS), ("write", "tests/test_units.py", _TEST_UNITS)),
    _c("Add a stock ledger for receipts and shipments", "",
       ("write", "shelfkit/stock.py", _STOCK), ("write", "tests/test_stock.py", _TEST_STOCK)),
    _c("Document the SKU format in the README", "",
       ("append", "README.md", "\n## SKU codes\n\nA SKU is `CAT-NNNN[-VV]`: a three-letter category, a "
        "four-digit number and an\noptional two-character variant. `sku.normalize` accepts lower case and "
        "short\nnumbers (`toy-42` becomes `TOY-0042`).\n")),
    _c("Accept SKUs typed with spaces around the dashes",
       "Codes pasted from spreadsheets often read 'toy - 42'; normalize() now drops inner spaces.",
       ("replace", "shelfkit/sku.py", 'parts = code.strip().upper().split("-")',
        'parts = code.strip().upper().replace(" ", "").split("-")'),
       ("append", "tests/test_sku.py", '\n\ndef test_normalize_drops_inner_spaces():\n'
        '    assert sku.normalize("toy - 42 - rd") == "TOY-0042-RD"\n')),
    _c("Add reorder point and order quantity helpers", "",
       ("write", "shelfkit/reorder.py", _REORDER), ("write", "tests/test_reorder.py", _TEST_REORDER)),
    _c("Raise OutOfStock when shipping more than is on hand",
       "Shipping used to drive the quantity on hand negative without a word.",
       ("append", "shelfkit/errors.py", '\n\nclass OutOfStock(ShelfkitError):\n'
        '    """Shipping would take the quantity on hand below zero."""\n\n'
        '    def __init__(self, sku, requested, available):\n'
        '        super().__init__(f"{sku}: requested {requested}, only {available} on hand")\n'
        '        self.sku = sku\n        self.requested = requested\n        self.available = available\n'),
       ("replace", "shelfkit/stock.py", "from .sku import normalize\n",
        "from .errors import OutOfStock\nfrom .sku import normalize\n"),
       ("replace", "shelfkit/stock.py",
        "            ValueError: ``quantity`` is not positive.\n        \"\"\"\n"
        "        if quantity <= 0:\n            raise ValueError(f\"quantity must be positive, got {quantity}\")\n"
        "        code = normalize(code)\n        self._on_hand[code] = self._on_hand.get(code, 0) - quantity\n",
        "            ValueError: ``quantity`` is not positive.\n            OutOfStock: fewer than ``quantity`` "
        "units on hand.\n        \"\"\"\n"
        "        if quantity <= 0:\n            raise ValueError(f\"quantity must be positive, got {quantity}\")\n"
        "        code = normalize(code)\n        available = self._on_hand.get(code, 0)\n"
        "        if quantity > available:\n            raise OutOfStock(code, quantity, available)\n"
        "        self._on_hand[code] = available - quantity\n"),
       ("replace", "tests/test_stock.py", "from shelfkit import stock\n", "from shelfkit import errors, stock\n"),
       ("append", "tests/test_stock.py", '\n\ndef test_ship_more_than_on_hand():\n'
        '    ledger = stock.StockLedger()\n    ledger.receive("toy-1", 2)\n'
        '    with pytest.raises(errors.OutOfStock) as info:\n        ledger.ship("toy-1", 5)\n'
        '    assert info.value.available == 2\n    assert ledger.on_hand("toy-1") == 2\n')),
    _c("Add percentage and fixed-amount discounts", "",
       ("write", "shelfkit/pricing.py", _PRICING), ("write", "tests/test_pricing.py", _TEST_PRICING)),
    _c("Parse negative amounts in parse_money",
       "Refunds are exported as '-$5.25'; the sign came before the currency symbol and broke parsing.",
       ("replace", "shelfkit/money.py",
        '    cleaned = text.strip().lstrip("$\\u20ac\\u00a3").replace(",", "")\n',
        '    cleaned = text.strip()\n    negative = cleaned.startswith("-")\n'
        '    cleaned = cleaned.lstrip("-").lstrip("$\\u20ac\\u00a3").replace(",", "")\n'),
       ("replace", "shelfkit/money.py",
        '    return int((value * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))\n',
        '    cents = int((value * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))\n'
        '    return -cents if negative else cents\n'),
       ("append", "tests/test_money.py", '\n\ndef test_parse_negative_amounts():\n'
        '    assert money.parse_money("-$5.25") == -525\n    assert money.parse_money("-0.5") == -50\n')),
    _c("Add CSV import of stock counts", "",
       ("append", "shelfkit/errors.py", '\n\nclass CSVFormatError(ShelfkitError, ValueError):\n'
        '    """A line of a stock CSV file cannot be read."""\n\n    def __init__(self, line, message):\n'
        '        super().__init__(f"line {line}: {message}")\n        self.line = line\n'),
       ("write", "shelfkit/csvio.py", _CSVIO), ("write", "tests/test_csvio.py", _TEST_CSVIO)),
    _c("Move the quantity check of the ledger into one helper",
       "receive() and ship() repeated the same validation; no behaviour change.",
       ("replace", "shelfkit/stock.py", "\n\nclass StockLedger:",
        '\n\ndef _check_quantity(quantity):\n    if quantity <= 0:\n'
        '        raise ValueError(f"quantity must be positive, got {quantity}")\n\n\nclass StockLedger:'),
       ("replace", "shelfkit/stock.py", "            ValueError: ``quantity`` is not positive.\n        \"\"\"\n"
        "        if quantity <= 0:\n            raise ValueError(f\"quantity must be positive, got {quantity}\")\n"
        "        code = normalize(code)\n        self._on_hand[code] = self._on_hand.get(code, 0) + quantity\n",
        "            ValueError: ``quantity`` is not positive.\n        \"\"\"\n        _check_quantity(quantity)\n"
        "        code = normalize(code)\n        self._on_hand[code] = self._on_hand.get(code, 0) + quantity\n"),
       ("replace", "shelfkit/stock.py", "units on hand.\n        \"\"\"\n"
        "        if quantity <= 0:\n            raise ValueError(f\"quantity must be positive, got {quantity}\")\n",
        "units on hand.\n        \"\"\"\n        _check_quantity(quantity)\n")),
    _c("Add safety stock to reorder_point", "",
       ("replace", "shelfkit/reorder.py", "def reorder_point(daily_demand, lead_time_days):\n"
        '    """Stock level at which to reorder: the demand over the lead time, rounded up.\n\n'
        "    Raises:\n        ValueError: a negative demand or lead time.\n    \"\"\"\n"
        "    if daily_demand < 0 or lead_time_days < 0:\n"
        "        raise ValueError(\"demand and lead time must not be negative\")\n"
        "    return math.ceil(daily_demand * lead_time_days)\n",
        "def reorder_point(daily_demand, lead_time_days, safety_stock=0):\n"
        '    """Stock level at which to reorder: the demand over the lead time, rounded up, plus\n'
        "    ``safety_stock`` units kept against late deliveries.\n\n"
        "    Raises:\n        ValueError: a negative demand, lead time or safety stock.\n    \"\"\"\n"
        "    if daily_demand < 0 or lead_time_days < 0 or safety_stock < 0:\n"
        "        raise ValueError(\"demand, lead time and safety stock must not be negative\")\n"
        "    return math.ceil(daily_demand * lead_time_days) + safety_stock\n"),
       ("append", "tests/test_reorder.py", "\n\ndef test_reorder_point_with_safety_stock():\n"
        "    assert reorder.reorder_point(2.5, 4, safety_stock=3) == 13\n")),
    _c("Round discounted prices half up to the cent",
       "percent_off() truncated: 50% off 10.01 gave 5.00 instead of 5.01.",
       ("replace", "shelfkit/pricing.py", '"""Prices after discounts and taxes, in integer cents."""\n',
        '"""Prices after discounts and taxes, in integer cents."""\n\n'
        "from decimal import ROUND_HALF_UP, Decimal\n\n\ndef _round(amount):\n"
        '    return int(amount.quantize(Decimal("1"), rounding=ROUND_HALF_UP))\n'),
       ("replace", "shelfkit/pricing.py", "    return int(cents * (100 - percent) / 100)\n",
        "    return _round(Decimal(cents) * (100 - Decimal(percent)) / 100)\n"),
       ("append", "tests/test_pricing.py", "\n\ndef test_percent_off_rounds_half_up():\n"
        "    assert pricing.percent_off(1001, 50) == 501\n    assert pricing.percent_off(333, 10) == 300\n")),
    _c("Add CSV export of stock counts", "",
       ("append", "shelfkit/csvio.py", '\n\ndef write_counts(counts):\n'
        '    """CSV text with a ``sku,quantity`` header and one row per SKU, sorted by SKU."""\n'
        "    out = io.StringIO()\n    writer = csv.writer(out, lineterminator=\"\\n\")\n"
        "    writer.writerow([\"sku\", \"quantity\"])\n    for code in sorted(counts):\n"
        "        writer.writerow([code, counts[code]])\n    return out.getvalue()\n"),
       ("append", "tests/test_csvio.py", "\n\ndef test_write_counts_round_trips():\n"
        '    counts = {"TOY-0001": 5, "PEN-0007": 1}\n    text = csvio.write_counts(counts)\n'
        '    assert text.splitlines()[1] == "PEN-0007,1"\n    assert csvio.read_counts(text) == counts\n')),
    _c("Add fuzzy search over item names", "",
       ("write", "shelfkit/search.py", _SEARCH), ("write", "tests/test_search.py", _TEST_SEARCH)),
    _c("Add a plain-text stock report", "",
       ("write", "shelfkit/report.py", _REPORT), ("write", "tests/test_report.py", _TEST_REPORT)),
    _c("Accept unit symbols in any case", "convert(1, 'KG', 'g') raised UnknownUnit.",
       ("replace", "shelfkit/units.py", "    try:\n        return _FACTORS[unit][0]\n",
        "    try:\n        return _FACTORS[_key(unit)][0]\n"),
       ("replace", "shelfkit/units.py", "\n\ndef dimension(unit):",
        "\n\ndef _key(unit):\n    return unit.strip().lower()\n\n\ndef dimension(unit):"),
       ("replace", "shelfkit/units.py", "    return value * _FACTORS[from_unit][1] / _FACTORS[to_unit][1]\n",
        "    return value * _FACTORS[_key(from_unit)][1] / _FACTORS[_key(to_unit)][1]\n"),
       ("append", "tests/test_units.py", '\n\ndef test_unit_symbols_in_any_case():\n'
        '    assert units.convert(1, "KG", "g") == 1000\n    assert units.dimension(" Cm ") == "length"\n')),
    _c("Add tax with per-category rates", "",
       ("append", "shelfkit/pricing.py", '\n\nTAX_RATES = {"FOOD": Decimal("0.05"), "TOY": Decimal("0.2"), '
        '"PEN": Decimal("0.2"), "BOOK": Decimal("0")}\n\n\ndef with_tax(cents, category, rates=None):\n'
        '    """Price including the tax of ``category`` (rates from ``TAX_RATES`` unless given), half up.\n\n'
        "    Raises:\n        KeyError: the category has no tax rate.\n    \"\"\"\n"
        "    table = TAX_RATES if rates is None else rates\n    if category not in table:\n"
        '        raise KeyError(f"no tax rate for category {category!r}")\n'
        "    return _round(Decimal(cents) * (1 + table[category]))\n"),
       ("append", "tests/test_pricing.py", "\n\ndef test_with_tax():\n"
        '    assert pricing.with_tax(1000, "FOOD") == 1050\n    assert pricing.with_tax(999, "TOY") == 1199\n'
        "    with pytest.raises(KeyError):\n        pricing.with_tax(1, \"CAR\")\n")),
    _c("Document discounts and taxes", "",
       ("write", "docs/pricing.md", "# Prices\n\nAll prices are integer cents. `percent_off` and `with_tax` "
        "round half up to the\ncent; `amount_off` never goes below zero. Tax rates per SKU category live in\n"
        "`pricing.TAX_RATES`; pass `rates=` to use your own table.\n")),
    _c("Break search ties by name", "Equally similar names came back in input order, so results jumped "
       "around between runs over unordered sources.",
       ("replace", "shelfkit/search.py", "    scored.sort(key=lambda s: -s[0])\n",
        "    scored.sort(key=lambda s: (-s[0], s[1]))\n"),
       ("append", "tests/test_search.py", '\n\ndef test_ties_sorted_by_name():\n'
        '    assert search.search(["pen b", "pen a"], "pen") == ["pen a", "pen b"]\n')),
    _c("Add business-day lead time helpers", "",
       ("write", "shelfkit/dates.py", _DATES), ("write", "tests/test_dates.py", _TEST_DATES)),
    _c("Add StockLedger.snapshot()", "",
       ("replace", "shelfkit/stock.py", "    def total(self):",
        '    def snapshot(self):\n        """``[(sku, quantity)]`` of every SKU with stock on hand, sorted by SKU."""\n'
        "        return sorted((code, q) for code, q in self._on_hand.items() if q > 0)\n\n    def total(self):"),
       ("append", "tests/test_stock.py", '\n\ndef test_snapshot_lists_stocked_skus():\n'
        '    ledger = stock.StockLedger()\n    ledger.receive("toy-2", 1)\n    ledger.receive("pen-1", 4)\n'
        '    ledger.ship("toy-2", 1)\n    assert ledger.snapshot() == [("PEN-0001", 4)]\n')),
    _c("Right-align the quantity column of stock reports", "",
       ("replace", "shelfkit/report.py", "{quantity:<6}", "{quantity:>6}"),
       ("append", "tests/test_report.py", '\n\ndef test_quantities_are_right_aligned():\n'
        '    line = report.stock_report([("TOY-0001", 3, 200)]).splitlines()[2]\n'
        '    assert line[13:19] == "     3"\n')),
    _c("Skip blank lines and comments in CSV imports",
       "Files saved by hand often end with an empty line or carry '#' notes.",
       ("replace", "shelfkit/csvio.py", "    for line, row in enumerate(reader, start=2):\n",
        "    for line, row in enumerate(reader, start=2):\n"
        "        if not row or not \"\".join(row).strip() or row[0].lstrip().startswith(\"#\"):\n"
        "            continue\n"),
       ("append", "tests/test_csvio.py", '\n\ndef test_blank_lines_and_comments_are_skipped():\n'
        '    text = "sku,quantity\\n# counted on Monday\\ntoy-1,3\\n\\n"\n'
        '    assert csvio.read_counts(text) == {"TOY-0001": 3}\n')),
    _c("Add a changelog", "",
       ("write", "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- CSV import skips blank lines and "
        "comments.\n- Stock reports right-align quantities.\n- `StockLedger.snapshot()`.\n")),
    _c("Refuse unknown currency codes in format_money",
       "An unknown code used to be printed as a prefix, hiding typos such as 'UDS'.",
       ("append", "shelfkit/errors.py", '\n\nclass UnknownCurrency(ShelfkitError, ValueError):\n'
        '    """A currency code is not in ``money.SYMBOLS``."""\n'),
       ("replace", "shelfkit/money.py", "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation\n",
        "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation\n\nfrom .errors import UnknownCurrency\n"),
       ("replace", "shelfkit/money.py",
        '    """``1234`` -> ``"$12.34"``; thousands are separated by commas."""\n',
        '    """``1234`` -> ``"$12.34"``; thousands are separated by commas.\n\n'
        '    Raises:\n        UnknownCurrency: ``currency`` is not in ``SYMBOLS``.\n    """\n'
        "    if currency not in SYMBOLS:\n"
        '        raise UnknownCurrency(f"unknown currency {currency!r}")\n'),
       ("replace", "shelfkit/money.py", "{SYMBOLS.get(currency, currency + ' ')}", "{SYMBOLS[currency]}"),
       ("replace", "tests/test_money.py", "from shelfkit import money\n", "from shelfkit import errors, money\n"),
       ("append", "tests/test_money.py", '\n\ndef test_unknown_currency():\n'
        '    with pytest.raises(errors.UnknownCurrency):\n        money.format_money(100, "UDS")\n')),
    _c("Add days_of_cover to the reorder helpers", "",
       ("append", "shelfkit/reorder.py", '\n\ndef days_of_cover(on_hand, daily_demand):\n'
        '    """Days the stock on hand lasts at ``daily_demand`` (``math.inf`` without demand).\n\n'
        "    Raises:\n        ValueError: a negative stock or demand.\n    \"\"\"\n"
        "    if on_hand < 0 or daily_demand < 0:\n"
        "        raise ValueError(\"stock and demand must not be negative\")\n"
        "    if daily_demand == 0:\n        return math.inf\n    return on_hand / daily_demand\n"),
       ("append", "tests/test_reorder.py", "\n\ndef test_days_of_cover():\n"
        "    assert reorder.days_of_cover(30, 4) == 7.5\n    assert reorder.days_of_cover(3, 0) == float(\"inf\")\n")),
    _c("Export the main names from the package root", "",
       ("replace", "shelfkit/__init__.py", '__version__ = "0.1.0"\n',
        '__version__ = "0.1.0"\n\nfrom .money import format_money, parse_money\n'
        "from .sku import normalize\nfrom .stock import StockLedger\n\n"
        '__all__ = ["StockLedger", "format_money", "normalize", "parse_money"]\n'),
       ("write", "tests/test_api.py", "import shelfkit\n\n\ndef test_root_exports():\n"
        "    assert shelfkit.normalize is shelfkit.sku.normalize\n"
        "    assert shelfkit.StockLedger is shelfkit.stock.StockLedger\n"
        "    assert sorted(shelfkit.__all__) == shelfkit.__all__\n")),
    _c("Fix add_business_days when the count lands on a Sunday",
       "Starting on a Saturday, one business day gave Sunday; the loop now skips every weekend day.",
       ("replace", "shelfkit/dates.py", "    for _ in range(days):\n        current += dt.timedelta(days=1)\n"
        "        if current.weekday() == 5:\n            current += dt.timedelta(days=2)\n",
        "    added = 0\n    while added < days:\n        current += dt.timedelta(days=1)\n"
        "        if current.weekday() < 5:\n            added += 1\n"),
       ("append", "tests/test_dates.py", "\n\ndef test_add_business_days_from_a_weekend():\n"
        "    saturday = dt.date(2024, 6, 1)\n    assert dates.add_business_days(saturday, 1) == dt.date(2024, 6, 3)\n"
        "    assert dates.add_business_days(dt.date(2024, 6, 2), 2) == dt.date(2024, 6, 4)\n")),
    _c("Add StockLedger.adjust() for stock-take corrections", "",
       ("replace", "shelfkit/stock.py", "    def on_hand(self, code):",
        "    def adjust(self, code, counted):\n"
        '        """Set the stock of ``code`` to ``counted`` after a stock-take; returns the difference.\n\n'
        "        Raises:\n            ValueError: ``counted`` is negative.\n        \"\"\"\n"
        "        if counted < 0:\n"
        '            raise ValueError(f"counted stock must not be negative, got {counted}")\n'
        "        code = normalize(code)\n        difference = counted - self._on_hand.get(code, 0)\n"
        "        self._on_hand[code] = counted\n        self.history.append((\"adjust\", code, difference))\n"
        "        return difference\n\n    def on_hand(self, code):"),
       ("append", "tests/test_stock.py", '\n\ndef test_adjust_records_the_difference():\n'
        '    ledger = stock.StockLedger()\n    ledger.receive("toy-3", 5)\n'
        '    assert ledger.adjust("toy-3", 3) == -2\n    assert ledger.on_hand("toy-3") == 3\n'
        '    assert ledger.history[-1] == ("adjust", "TOY-0003", -2)\n')),
    _c("Reject infinite and NaN amounts in parse_money",
       "'inf' escaped as decimal.InvalidOperation instead of the documented ValueError.",
       ("replace", "shelfkit/money.py", '        raise ValueError(f"not an amount: {text!r}") from None\n',
        '        raise ValueError(f"not an amount: {text!r}") from None\n    if not value.is_finite():\n'
        '        raise ValueError(f"not a finite amount: {text!r}")\n'),
       ("append", "tests/test_money.py", '\n\ndef test_parse_money_rejects_non_finite():\n'
        '    for text in ("inf", "-Infinity", "NaN"):\n        with pytest.raises(ValueError):\n'
        '            money.parse_money(text)\n')),
    _c("Add sku.variant()", "",
       ("append", "shelfkit/sku.py", '\n\ndef variant(code):\n'
        '    """The variant part of a SKU, or ``None``: ``"toy-42-rd"`` -> ``"RD"``."""\n'
        '    parts = normalize(code).split("-")\n    return parts[2] if len(parts) == 3 else None\n'),
       ("append", "tests/test_sku.py", '\n\ndef test_variant():\n    assert sku.variant("toy-42-rd") == "RD"\n'
        '    assert sku.variant("toy-42") is None\n')),
    _c("Round order quantities up to whole packs", "Suppliers sell in packs; order_quantity() takes pack_size.",
       ("replace", "shelfkit/reorder.py", "def order_quantity(on_hand, point, target):\n"
        '    """Units to order to reach ``target`` once ``on_hand`` is at or below ``point``; else 0."""\n'
        "    if on_hand > point:\n        return 0\n    return max(target - on_hand, 0)\n",
        "def order_quantity(on_hand, point, target, pack_size=1):\n"
        '    """Units to order to reach ``target`` once ``on_hand`` is at or below ``point``; else 0.\n'
        "    The quantity is rounded up to whole packs of ``pack_size`` units.\n\n"
        "    Raises:\n        ValueError: ``pack_size`` is below 1.\n    \"\"\"\n"
        "    if pack_size < 1:\n        raise ValueError(\"pack_size must be at least 1\")\n"
        "    if on_hand > point:\n        return 0\n"
        "    return math.ceil(max(target - on_hand, 0) / pack_size) * pack_size\n"),
       ("append", "tests/test_reorder.py", "\n\ndef test_order_quantity_in_packs():\n"
        "    assert reorder.order_quantity(4, 5, 41, pack_size=12) == 48\n"
        "    assert reorder.order_quantity(4, 5, 40, pack_size=12) == 36\n")),
    _c("Bump the version to 0.2.0", "",
       ("replace", "shelfkit/__init__.py", '__version__ = "0.1.0"', '__version__ = "0.2.0"'),
       ("replace", "pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"'),
       ("replace", "CHANGELOG.md", "## Unreleased", "## 0.2.0")),
]
