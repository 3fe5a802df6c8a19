"""Spend exports: one row per charge of the ledger, with its tags, in a file finance can read, at a
local path or any fsspec URL (``Ledger.export``, ``imagekit usage export``).

- ``csv``: time, account, operation, status, credits, source, image ids, request and group ids,
  ``tags`` (a JSON object) and a ``tag_<name>`` column per tag name that occurs;
- ``parquet``: the same columns, typed (needs pyarrow: ``imagekit[parquet]``);
- ``focus``: the FinOps Open Cost and Usage Specification, version 1.0 (a CSV file, or Parquet when
  the name ends in ``.parquet``). FOCUS costs are money: each charge's credits times ``credit_price``
  in ``currency``; the credits themselves are its ``PricingQuantity`` (``PricingUnit`` ``Credits``).

A charge is an entry whose credits are known and not zero (a refund is a negative one); entries whose
credits are not known yet are left out, and the answer says how many (``Ledger.reconcile`` settles
them). The file appears whole or not at all, and an existing one is replaced only when asked.
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import IO, Any

from .._csv_cells import inert
from ..errors import ConfigError
from ..extras import require
from ..ownership import NotOursError
from ..storage import Location, file_to_write
from .entries import BALANCE, Entry, Status

__all__ = ["SpendExport", "FORMATS", "COLUMNS", "FOCUS_COLUMNS", "Moment", "charges", "checked_options", "moment", "refuse_misnamed", "write"]

Moment = datetime | date | str | None
"""A bound of an export's time range: a time, a date (its midnight), or either in ISO 8601 (UTC unless it says)."""

FORMATS = ("csv", "parquet", "focus")
COLUMNS = {"time": "timestamp", "account": "string", "operation": "string", "status": "string", "credits": "float",
           "source": "string", "image_ids": "ints", "source_id": "int", "style_id": "int", "request_id": "string",
           "group_id": "string", "uid": "string", "tags": "string"}
"""The columns of a csv or parquet export (then one ``tag_<name>`` string column per tag name)."""
FOCUS_COLUMNS = {
    **dict.fromkeys(("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ListUnitPrice",
                     "ContractedUnitPrice", "PricingQuantity", "ConsumedQuantity"), "float"),
    **dict.fromkeys(("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"), "timestamp"),
    **dict.fromkeys(("BillingAccountId", "BillingAccountName", "BillingCurrency", "ChargeCategory", "ChargeClass",
                     "ChargeDescription", "ChargeFrequency", "PricingCategory", "PricingUnit", "ConsumedUnit",
                     "ServiceName", "ServiceCategory", "ProviderName", "PublisherName", "InvoiceIssuerName",
                     "ResourceId", "ResourceName", "ResourceType", "SkuId", "SkuPriceId", "SubAccountId",
                     "SubAccountName", "RegionId", "RegionName", "AvailabilityZone", "CommitmentDiscountCategory",
                     "CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountStatus",
                     "CommitmentDiscountType", "Tags"), "string"),
    # The FinOps Foundation's focus-validator 1.0.0 checks FOCUS 1.0 under the names of its preview
    # (Provider, Publisher, InvoiceIssuer, ResourceID, ChargeType): written too, with the same values.
    **dict.fromkeys(("Provider", "Publisher", "InvoiceIssuer", "ResourceID", "ChargeType"), "string"),
    **dict.fromkeys(("x_Operation", "x_Status", "x_CreditSource", "x_ImageIds", "x_RequestId", "x_GroupId",
                     "x_EntryUid"), "string"),
}
"""A FOCUS export's columns: FOCUS 1.0's, then the validator's names, then ours (``x_``, as FOCUS asks)."""
PROVIDER = "Image generation and editing service"
"""FOCUS's ProviderName (also PublisherName and InvoiceIssuerName) unless told otherwise."""


@dataclass
class SpendExport:
    """What a spend export wrote, and what it left out."""

    location: str
    """The file written."""
    format: str
    rows: int = 0
    """Charges written."""
    credits: float = 0.0
    """Their credits, net of refunds."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Why entries were left out -> how many."""

    def __str__(self) -> str:
        text = (f"{self.rows} charge{'' if self.rows == 1 else 's'} ({self.credits:g} credits) exported to "
                f"{self.location} ({self.format})")
        if self.left_out:
            text += "; left out: " + "; ".join(f"{n} {why}" for why, n in sorted(self.left_out.items()))
        return text

    def __repr__(self) -> str:
        return f"<SpendExport: {self}>"


def moment(value: Moment) -> datetime | None:
    """``value`` as a UTC time (see ``Moment``), or a ConfigError in one line."""
    if value is None or isinstance(value, datetime):
        found = value
    elif isinstance(value, date):
        found = datetime(value.year, value.month, value.day)
    else:
        try:
            found = datetime.fromisoformat(str(value))
        except ValueError:
            raise ConfigError(f"{value!r} is not a date or time (ISO 8601: 2026-11-01 or 2026-11-01T09:00Z)") from None
    if found is None:
        return None
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def charges(entries: Iterable[Entry], since: datetime | None = None,
            until: datetime | None = None) -> tuple[list[tuple[Entry, datetime]], Counter[str]]:
    """The charges among ``entries`` with their times (``since`` <= time < ``until``), and why the
    rest of the operations were left out."""
    found: list[tuple[Entry, datetime]] = []
    left_out: Counter[str] = Counter()
    entries = list(entries)
    recovered = {entry.group_id for entry in entries if entry.status == Status.RECOVERED and entry.group_id}
    for entry in entries:
        if entry.operation == BALANCE or entry.credits == 0:
            continue
        try:
            time = datetime.fromisoformat(entry.time).astimezone(UTC)
        except (TypeError, ValueError):
            left_out["without a readable time"] += 1
            continue
        if (since and time < since) or (until and time >= until):
            continue
        if entry.credits is None:
            if entry.status == Status.NO_RESPONSE:  # the charge, if any, is the recovered entry's once found
                if entry.group_id not in recovered:
                    left_out["whose answer was lost (a batch's next run finds what they made)"] += 1
            elif entry.status not in (Status.FAILED, Status.REFUNDED):  # refused: nothing was charged
                left_out["with credits not known yet (Ledger.reconcile settles them)"] += 1
            continue
        found.append((entry, time))
    return found, left_out


def write(entries: Callable[[], Iterable[Entry]], dest: Location, format: str = "csv", *, overwrite: bool = False,
          credit_price: float | None = None, currency: str | None = None, provider: str = PROVIDER,
          since: datetime | None = None, until: datetime | None = None) -> SpendExport:
    """Write the charges among ``entries()`` to the file ``dest`` (see the module); the ledger is read
    once the options and ``dest`` are found fit."""
    currency = checked_options(format, credit_price, currency, since, until, dest)
    if not str(dest).strip() or str(dest).endswith(("/", "\\")):
        raise ConfigError(f"{str(dest)!r}: name a file to write (not a folder)")
    store, name = file_to_write(dest, example=f"spend.{'parquet' if format == 'parquet' else 'csv'}")
    if not overwrite and store.exists(name):
        raise NotOursError(f"{store.url(name)} exists: pass overwrite=True to replace it")
    parquet = name.endswith(".parquet") if format == "focus" else format == "parquet"
    if parquet:
        require("pyarrow", "parquet")
    found, left_out = charges(entries(), since, until)
    if format == "focus":
        rows = [_focus_row(entry, time, float(credit_price or 0), currency, provider) for entry, time in found]
        columns = FOCUS_COLUMNS
    else:
        tag_names = sorted({tag for entry, _ in found for tag in entry.tags})
        rows = [_row(entry, time, tag_names) for entry, time in found]
        columns = COLUMNS | {f"tag_{tag}": "string" for tag in tag_names}
    store.make()  # an object store's bucket (a local folder exists already)
    with store.writer(name) as sink:
        (_write_parquet if parquet else _write_csv)(sink, rows, columns)
    total = sum(entry.credits or 0 for entry, _ in found)
    return SpendExport(store.url(name), format, len(rows), total, dict(left_out))


CURRENCIES = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN
BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS
KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN
MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR
SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD
USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU
XTS XUA XXX YER ZAR ZMW ZWG ZWL
""".split())
"""The ISO 4217 currency codes (2025, funds and precious metals included) a FOCUS file may bill in."""

_WRITES = {"csv": {"csv"}, "parquet": {"parquet"}, "focus": {"csv", "parquet"}}
"""The file names each format writes (a FOCUS file is Parquet when its name says so)."""
_DATA_SUFFIXES = {"csv", "parquet", "pq", "json", "jsonl", "ndjson", "tsv", "xlsx", "xls", "feather", "arrow", "orc",
                  "avro", "txt", "gz", "bz2", "xz", "zip", "zst"}
"""Names that promise a kind of data file (or a compressed one, which an export is not): one the
format does not write is a mistake, not a wish."""


def refuse_misnamed(dest: Location, format: str, writes: Mapping[str, set[str]]) -> None:
    """ConfigError in one line when ``dest``'s suffix promises a kind of data file ``format`` does not
    write (``thesis.txt`` for Parquet); ``writes``: each format's suffixes (none: a folder)."""
    named = posixpath.splitext(str(dest).rstrip("/"))[1].lower().lstrip(".")
    if named in _DATA_SUFFIXES and named not in writes[format]:
        other = next((kind for kind, suffixes in writes.items() if named in suffixes), None)
        name = f"name it .{sorted(writes[format])[0]}" if writes[format] else "name it without a suffix"
        raise ConfigError(f"{dest} is named .{named} and format={format!r} writes "
                          f"{' or '.join(sorted(writes[format])) or 'a folder'}: {name}"
                          + (f", or give format={other!r}" if other else ""))


def checked_options(format: str, credit_price: float | None, currency: str | None, since: datetime | None,
                    until: datetime | None, dest: Location = "") -> str:
    """An export's options (and the name of ``dest``) found fit together, before anything is read or
    written (ConfigError in one line); returns the currency's code (USD unless given; "" for
    an export in credits)."""
    if format not in FORMATS:
        raise ConfigError(f"format={format!r}: one of {', '.join(FORMATS)}")
    refuse_misnamed(dest, format, _WRITES)
    if format == "focus":
        currency = _checked_money(credit_price, currency or "USD")
    elif credit_price is not None or currency is not None:
        given = "credit_price=" if credit_price is not None else f"currency={currency!r}"
        raise ConfigError(f"{given} is for format='focus' (a {format} export counts credits)")
    if since and until and until <= since:
        raise ConfigError(f"until {until.isoformat()} is not after since {since.isoformat()}: nothing could be exported")
    return currency or ""


def _checked_money(credit_price: float | None, currency: str) -> str:
    """The currency's code, once the price and the currency are fit for a FOCUS file."""
    if credit_price is None:
        raise ConfigError("format='focus' needs credit_price= (--credit-price): what one credit costs in "
                          f"{currency} (FOCUS costs are money, not credits)")
    if isinstance(credit_price, bool) or not isinstance(credit_price, int | float) or not credit_price >= 0 \
            or credit_price == float("inf"):
        raise ConfigError(f"credit_price={credit_price!r}: give a price of 0 or more")
    if not (isinstance(currency, str) and currency.upper() in CURRENCIES):
        raise ConfigError(f"currency={currency!r}: give an ISO 4217 code such as USD or EUR")
    return currency.upper()


def _row(entry: Entry, time: datetime, tag_names: list[str]) -> dict[str, Any]:
    return {"time": time, "account": entry.account, "operation": entry.operation, "status": str(entry.status),
            "credits": entry.credits, "source": str(entry.source) if entry.source else None,
            "image_ids": entry.image_ids, "source_id": entry.source_id, "style_id": entry.style_id,
            "request_id": entry.request_id, "group_id": entry.group_id, "uid": entry.uid,
            "tags": json.dumps(entry.tags, sort_keys=True), **{f"tag_{tag}": entry.tags.get(tag) for tag in tag_names}}


def _focus_row(entry: Entry, time: datetime, price: float, currency: str, provider: str) -> dict[str, Any]:
    """One charge as FOCUS 1.0 says it: billed by the calendar month (UTC), charged in the hour it was made."""
    credits = float(entry.credits or 0)
    cost = round(credits * price, 10)
    month = time.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    hour = time.replace(minute=0, second=0, microsecond=0)
    refund = credits < 0 or entry.status == Status.REFUNDED
    category = "Credit" if refund else "Usage"
    resource = entry.image_ids[0] if entry.image_ids else entry.source_id
    resource_id = None if resource is None else f"images/{resource}"  # as the service's paths name it
    images = len(entry.image_ids)
    what = f"{entry.operation} ({entry.status})" + (f" of image {entry.source_id}" if entry.source_id else "")
    return {
        "BilledCost": cost, "EffectiveCost": cost, "ListCost": cost, "ContractedCost": cost,
        "ListUnitPrice": price, "ContractedUnitPrice": price, "PricingQuantity": credits, "PricingUnit": "Credits",
        "PricingCategory": "Standard", "BillingCurrency": currency,
        "BillingPeriodStart": month, "BillingPeriodEnd": (month + timedelta(days=32)).replace(day=1),
        "ChargePeriodStart": hour, "ChargePeriodEnd": hour + timedelta(hours=1),
        "BillingAccountId": entry.account or "(unknown)", "BillingAccountName": None,
        "ChargeCategory": category, "ChargeType": category, "ChargeClass": None,
        "ChargeFrequency": "One-Time" if refund else "Usage-Based", "ChargeDescription": what,
        "ConsumedQuantity": None if refund else float(images or 1), "ConsumedUnit": None if refund else
        ("Images" if images else "Requests"),
        "ServiceName": provider, "ServiceCategory": "AI and Machine Learning",
        "ProviderName": provider, "PublisherName": provider, "InvoiceIssuerName": provider,
        "Provider": provider, "Publisher": provider, "InvoiceIssuer": provider,
        "ResourceId": resource_id, "ResourceID": resource_id,
        "ResourceName": None, "ResourceType": None if resource is None else "Image",
        "SkuId": entry.operation,
        "SkuPriceId": f"{entry.operation}: {price:g} {currency} per credit", "SubAccountId": None, "SubAccountName": None,
        "RegionId": None, "RegionName": None, "AvailabilityZone": None,
        **dict.fromkeys(("CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
                         "CommitmentDiscountStatus", "CommitmentDiscountType")),
        "Tags": json.dumps(entry.tags, sort_keys=True),
        "x_Operation": entry.operation, "x_Status": str(entry.status),
        "x_CreditSource": str(entry.source) if entry.source else None, "x_ImageIds": json.dumps(entry.image_ids),
        "x_RequestId": entry.request_id, "x_GroupId": entry.group_id, "x_EntryUid": entry.uid,
    }


def _text(value: Any) -> Any:
    """A CSV cell: times in ISO 8601 UTC (``Z``), lists as JSON, floats exact (``repr``), null empty,
    text a spreadsheet shows as text (``inert``)."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, list):
        return json.dumps(value)
    return inert(value)


def _write_csv(sink: IO[bytes], rows: list[dict[str, Any]], columns: dict[str, str]) -> None:
    text = io.TextIOWrapper(sink, encoding="utf-8", newline="")
    try:
        table = csv.DictWriter(text, fieldnames=list(columns))
        table.writeheader()
        for row in rows:
            table.writerow({name: _text(value) for name, value in row.items()})
        text.flush()
    finally:
        text.detach()  # the sink is the store's to close


def _write_parquet(sink: IO[bytes], rows: list[dict[str, Any]], columns: dict[str, str]) -> None:
    pa = require("pyarrow", "parquet")
    pq = require("pyarrow.parquet", "parquet")
    types = {"string": pa.string(), "float": pa.float64(), "int": pa.int64(), "ints": pa.list_(pa.int64()),
             "timestamp": pa.timestamp("ms", tz="UTC")}
    schema = pa.schema([(name, types[kind]) for name, kind in columns.items()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
