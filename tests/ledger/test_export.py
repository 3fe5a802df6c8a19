"""Spend exports (``Ledger.export``, ``imagekit usage export``): one row per charge with its tags, read
back by pandas and pyarrow to the ledger's total, FOCUS files the FinOps Foundation's validator
accepts, at a path or on S3, and never over a file unless asked."""

from __future__ import annotations

import errno
import json
import os
from datetime import UTC, datetime

import pandas as pd
import pyarrow.parquet as pq
import pytest

from imagekit.errors import ConfigError, StorageUnavailableError
from imagekit.ledger import Entry, Ledger, Source, Status, export as spend
from imagekit.ownership import NotOursError
from tests.focus import FocusValidator
from tests.helpers import control, run_console
from tests.utils.service import public_style


@pytest.fixture(scope="session")
def focus_validator() -> FocusValidator:
    return FocusValidator().ready()


def entry(operation: str, credits: float | None, time: str, status: Status = Status.ANSWERED, **more) -> Entry:
    return Entry(operation=operation, status=status, credits=credits, time=time, account="acct",
                 source=Source.PRICED if credits is not None else None, **more)


@pytest.fixture
def book(tmp_path) -> Ledger:
    """A ledger of one account: two charges and a refund across a year's turn, and what is no charge."""
    return filled(Ledger(tmp_path / "ledger.sqlite", account="acct"))


def filled(ledger: Ledger) -> Ledger:
    for each in (entry("create", 4.0, "2026-12-31T23:30:00.000+00:00", image_ids=[7, 8], style_id=3,
                       tags={"experiment": "grid-a"}),
                 entry("refund", -2.0, "2027-01-01T00:10:00.000+00:00", Status.REFUNDED, image_ids=[8],
                       tags={"experiment": "grid-a"}),
                 entry("enhance", 3.5, "2027-01-02T08:00:00.000+00:00", source_id=7, image_ids=[9],
                       tags={"person": "ana"}),
                 entry("create", None, "2027-01-02T09:00:00.000+00:00", Status.FAILED),  # refused: no charge
                 entry("create", None, "2027-01-02T09:05:00.000+00:00", Status.NO_RESPONSE, group_id="g.1"),  # lost
                 entry("cancelEdit", 0.0, "2027-01-02T09:06:00.000+00:00"),
                 Entry(operation="balance", status=Status.ANSWERED, balance=90.0, account="acct", tags={})):
        ledger.record(each)
    return ledger


def test_one_row_per_charge_with_its_tags_reads_back_to_the_ledgers_total(book, tmp_path):
    done = book.export(tmp_path / "spend.csv")
    assert (done.rows, done.credits) == (3, 5.5) and done.credits == book.total()
    assert "1 whose answer was lost" in str(done)
    frame = pd.read_csv(tmp_path / "spend.csv")
    assert list(frame["operation"]) == ["create", "refund", "enhance"] and frame["credits"].sum() == book.total()
    assert list(frame["tag_experiment"].fillna("")) == ["grid-a", "grid-a", ""]
    assert [json.loads(tags) for tags in frame["tags"]] == [e.tags for e in book.entries() if e.credits]
    assert list(frame["uid"]) == [e.uid for e in book.entries() if e.credits]

    book.export(tmp_path / "spend.parquet", "parquet")
    table = pq.read_table(tmp_path / "spend.parquet")
    assert table.column("credits").to_pylist() == [4.0, -2.0, 3.5] and table.column("image_ids").to_pylist()[0] == [7, 8]
    assert str(table.schema.field("time").type) == "timestamp[ms, tz=UTC]"
    assert pd.read_parquet(tmp_path / "spend.parquet")["credits"].sum() == book.total()


@pytest.mark.postgres
def test_a_shared_ledger_on_postgresql_exports_the_same_rows(book, postgres, tmp_path):
    shared = filled(Ledger(postgres.new_database(), account="acct"))
    for format, name in (("csv", "spend.csv"), ("focus", "focus.csv")):
        price = {"credit_price": 0.01} if format == "focus" else {}
        book.export(tmp_path / f"sqlite-{name}", format, **price)
        shared.export(tmp_path / f"postgresql-{name}", format, **price)
        here, there = (pd.read_csv(tmp_path / f"{kind}-{name}").drop(columns=["uid", "x_EntryUid"], errors="ignore")
                       for kind in ("sqlite", "postgresql"))  # each entry was made with a uid of its own
        pd.testing.assert_frame_equal(here, there)


def test_a_time_range_keeps_the_charges_made_in_it(book, tmp_path):
    done = book.export(tmp_path / "january.csv", since="2027-01-01", until=datetime(2027, 1, 2, 8, tzinfo=UTC))
    assert done.rows == 1 and list(pd.read_csv(tmp_path / "january.csv")["operation"]) == ["refund"]
    assert book.export(tmp_path / "later.csv", since="2027-01-02T07:00+00:00").credits == 3.5


def test_focus_rows_are_billed_by_the_month_and_a_refund_is_a_credit(book, tmp_path):
    book.export(tmp_path / "focus.csv", "focus", credit_price=0.01, currency="eur")
    frame = pd.read_csv(tmp_path / "focus.csv")
    assert list(frame["ChargeCategory"]) == ["Usage", "Credit", "Usage"]
    assert list(frame["BillingPeriodStart"]) == ["2026-12-01T00:00:00.000Z"] + ["2027-01-01T00:00:00.000Z"] * 2
    assert frame.loc[0, "BillingPeriodEnd"] == "2027-01-01T00:00:00.000Z"  # the year's turn
    assert frame["PricingQuantity"].sum() == book.total() and set(frame["PricingUnit"]) == {"Credits"}
    assert frame["BilledCost"].sum() == pytest.approx(book.total() * 0.01) and set(frame["BillingCurrency"]) == {"EUR"}
    assert json.loads(frame.loc[0, "Tags"]) == {"experiment": "grid-a"}


def test_an_existing_file_is_replaced_only_when_asked_and_a_failure_leaves_the_old_one(book, tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    mine = tmp_path / "out" / "spend.csv"
    mine.write_text("my own numbers\n")
    with pytest.raises(NotOursError, match="exists: pass overwrite=True"):
        book.export(mine)
    assert mine.read_text() == "my own numbers\n"

    def cut_short(sink, rows, columns):
        sink.write(b"time,account\n")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spend, "_write_csv", cut_short)
    with pytest.raises(StorageUnavailableError, match="could not write spend.csv: the disk is full"):
        book.export(mine, overwrite=True)
    assert mine.read_text() == "my own numbers\n" and [p.name for p in mine.parent.iterdir()] == ["spend.csv"]
    monkeypatch.undo()
    assert book.export(mine, overwrite=True).rows == 3 and mine.read_text().startswith("time,account,")


@pytest.mark.parametrize(("options", "said"), [
    ({"format": "xlsx"}, "one of csv, parquet, focus"),
    ({"format": "focus"}, "needs credit_price="),
    ({"format": "focus", "credit_price": -1}, "a price of 0 or more"),
    ({"format": "focus", "credit_price": True}, "a price of 0 or more"),
    ({"format": "focus", "credit_price": 0.01, "currency": "euro"}, "ISO 4217"),
    ({"format": "focus", "credit_price": 0.01, "currency": "€"}, "ISO 4217"),
    ({"format": "focus", "credit_price": 0.01, "currency": "ZZZ"}, "ISO 4217"),  # three letters, but no currency
    ({"format": "csv", "credit_price": 0.01}, "is for format='focus'"),
    ({"currency": "EUR"}, r"currency='EUR' is for format='focus' \(a csv export counts credits\)"),
    ({"since": "last tuesday"}, "not a date or time"),
    ({"since": "2026-12-01", "until": "2026-11-01"}, "is not after since"),
])
def test_a_mistake_is_one_line_and_nothing_is_written(book, tmp_path, options, said):
    with pytest.raises(ConfigError, match=said):
        book.export(tmp_path / "out.csv", **options)
    assert not (tmp_path / "out.csv").exists()


def test_a_folder_or_a_missing_folder_is_not_a_file_to_write(book, tmp_path):
    with pytest.raises(ConfigError, match=r"is a folder: name the file to write, for example .*spend\.csv"):
        book.export(tmp_path)
    for folder in (f"{tmp_path}/new/", ""):
        with pytest.raises(ConfigError, match="name a file to write"):
            book.export(folder)
    assert not (tmp_path / "new").exists()
    with pytest.raises(ConfigError, match=r"nowhere is not a folder that exists: create it first"):
        book.export(tmp_path / "nowhere" / "spend.csv")


@pytest.mark.parametrize(("name", "options", "said"), [
    ("spend.json", {}, r"spend\.json is named \.json and format='csv' writes csv: name it \.csv$"),
    ("spend.parquet", {}, r"name it \.csv, or give format='parquet'"),
    ("spend.csv", {"format": "parquet"}, r"writes parquet: name it \.parquet, or give format='csv'"),
    ("spend.xlsx", {"format": "focus", "credit_price": 0.01}, r"writes csv or parquet: name it \.csv$"),
    ("spend.csv.gz", {}, r"spend\.csv\.gz is named \.gz and format='csv' writes csv: name it \.csv$"),
])
def test_a_file_named_for_another_kind_of_data_is_refused(book, tmp_path, name, options, said):
    with pytest.raises(ConfigError, match=said):
        book.export(tmp_path / name, **options)
    assert not (tmp_path / name).exists()


def test_an_account_the_ledger_never_saw_is_refused_in_one_line_and_nothing_is_written(book, tmp_path):
    with pytest.raises(ConfigError, match=r"has no account 'nobody'; its accounts: "):
        book.export(tmp_path / "nobody.csv", account="nobody")
    assert not (tmp_path / "nobody.csv").exists()


@pytest.mark.slow(25)
def test_a_focus_file_passes_the_finops_validator_and_a_broken_one_does_not(book, tmp_path, focus_validator):
    book.export(tmp_path / "focus.csv", "focus", credit_price=0.01)
    valid, said = focus_validator.validate(tmp_path / "focus.csv")
    assert valid, said
    broken = pd.read_csv(tmp_path / "focus.csv").drop(columns=["BillingCurrency"])
    broken.to_csv(tmp_path / "broken.csv", index=False)
    valid, said = focus_validator.validate(tmp_path / "broken.csv")
    assert not valid and "BillingCurrency" in said  # the validator does read what it is given


@pytest.mark.slow(40)
def test_a_real_run_exports_exactly_and_focus_passes_the_validator(connect, box, tmp_path, focus_validator):
    """Both faces: tagged creates (some of whose images fail and are refunded) and an edit."""
    ik = connect()
    control(box, "POST", "faults", {"fail_generation_rate": 0.5, "seed": 7})
    with ik.tags(experiment="grid-a"):
        batch = ik.batch([f"prompt {i}" for i in range(8)], style=public_style(box), count=2, tags={"run": "1"})
        batch.run(progress=False)
    control(box, "DELETE", "faults")
    done = batch.to_pandas().query("status == 'COMPLETED'")
    ik.image(int(done["image_id"].iloc[0])).remove_bg()
    ledger = ik.ledger
    assert (ledger.to_pandas()["status"] == "refunded").any()  # the run had refunds to export

    ledger.export(tmp_path / "spend.csv")
    ledger.export(tmp_path / "spend.parquet", "parquet")
    csv, parquet = pd.read_csv(tmp_path / "spend.csv"), pq.read_table(tmp_path / "spend.parquet").to_pandas()
    charged = [e for e in ledger.entries() if e.credits]
    for frame in (csv, parquet):
        assert len(frame) == len(charged) and frame["credits"].sum() == pytest.approx(ledger.total())
        assert dict(zip(frame["uid"], frame["credits"])) == {e.uid: e.credits for e in charged}
        assert set(frame.query("operation == 'create'")["tag_experiment"]) == {"grid-a"}

    for name in ("focus.csv", "focus.parquet"):
        ledger.export(tmp_path / name, "focus", credit_price=0.002, currency="USD")
        valid, said = focus_validator.validate(tmp_path / name)
        assert valid, (name, said)
    focus = pd.read_parquet(tmp_path / "focus.parquet")
    assert focus["PricingQuantity"].sum() == pytest.approx(ledger.total())
    assert focus["BilledCost"].sum() == pytest.approx(ledger.total() * 0.002)


def test_an_export_to_s3_reads_back_and_is_never_replaced_unasked(book, s3):
    url = f"s3://{s3.bucket()}/finance/spend.csv"
    assert book.export(url).location == url
    assert pd.read_csv(url)["credits"].sum() == book.total()  # through s3fs, as finance would read it
    with pytest.raises(NotOursError, match="exists"):
        book.export(url, "focus", credit_price=0.01)
    assert "BilledCost" not in pd.read_csv(url).columns
    book.export(url, "focus", credit_price=0.01, overwrite=True)
    assert pd.read_csv(url)["PricingQuantity"].sum() == book.total()


def test_a_lost_answer_a_batch_recovered_is_one_charge_and_not_left_out(book, tmp_path):
    book.record(entry("create", 2.0, "2027-01-02T09:07:00.000+00:00", Status.RECOVERED, group_id="g.1", image_ids=[10]))
    done = book.export(tmp_path / "spend.csv")
    assert (done.rows, done.credits) == (4, 7.5) and "left out" not in str(done)


def test_the_command_writes_the_file_and_says_so_in_one_line(book, tmp_path):
    env = {"IMAGEKIT_HOME": str(tmp_path / "home")}
    ledger = str(book.path)
    done = run_console("usage", "export", "spend.csv", "--format", "focus", "--credit-price", "0.01",
                       "--ledger", ledger, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"3 charges (5.5 credits) exported to spend.csv (focus); left out: 1 whose answer was " \
                          f"lost (a batch's next run finds what they made), from the ledger at {ledger}\n"
    assert pd.read_csv(tmp_path / "spend.csv")["PricingQuantity"].sum() == book.total()
    again = run_console("usage", "export", "spend.csv", "--ledger", ledger, cwd=tmp_path, env=env)
    assert again.returncode == 1 and again.stderr.splitlines() == [
        "error: spend.csv exists: add --overwrite to replace it"]
    replaced = run_console("usage", "export", "spend.csv", "--overwrite", "--since", "2999-01-01", "--ledger", ledger,
                           cwd=tmp_path, env=env)
    assert replaced.returncode == 0 and replaced.stdout.startswith("0 charges (0 credits)"), replaced.stderr
    nobody = run_console("usage", "export", "other.csv", "--account", "nobody", "--ledger", ledger, cwd=tmp_path, env=env)
    assert nobody.returncode == 1 and nobody.stderr.startswith(f"error: the ledger at {ledger} has no account 'nobody'; "
                                                               "its accounts: ")
    assert len(nobody.stderr.splitlines()) == 1 and not (tmp_path / "other.csv").exists()


FORMULAS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]
"""Tag values a spreadsheet would take for formulas (a tag value's leading tab or CR is trimmed when
tagged: ``test_a_cell_that_starts_like_a_formula_is_text`` has those)."""


def test_a_cell_that_starts_like_a_formula_is_text():
    from imagekit._csv_cells import inert, restored

    for value in [*FORMULAS, "\tx", "\r=1+1", "-", "'=already quoted", "''-x", "'plain"]:
        assert restored(inert(value)) == value
    assert [inert(v) for v in ("\tx", "\r=1", "=1", "-x", "@a", "+a")] == ["'\tx", "'\r=1", "'=1", "'-x", "'@a", "'+a"]
    assert [inert(v) for v in (-2.0, 3, None, "-5", "+1.5e3", "-.5", "plain", "a=b", "")] == [
        -2.0, 3, None, "-5", "+1.5e3", "-.5", "plain", "a=b", ""]


def raw_cells(path) -> list[list[str]]:
    import csv

    with open(path, newline="", encoding="utf-8") as source:
        return list(csv.reader(source))


def test_every_csv_finance_opens_shows_a_formula_as_text(connect, box, tmp_path):
    """Both faces: work tagged with formulas (and a plain negative number as a tag value). In spend.csv,
    usage-ledger.csv and ``usage --by team``'s CSV each such cell starts with a quote, pandas reads
    it back recognisably (``restored`` gives the value), and numbers, a refund's negative credits
    included, stay unquoted numbers."""
    from imagekit._csv_cells import restored
    from imagekit.reports import usage_report

    ik = connect()
    for index, value in enumerate([*FORMULAS, "-5"]):
        with ik.tags(team=value, row=str(index)):
            ik.create(f"a kite {index}", style=public_style(box))
    ik.usage()  # the spec-exact face says no credits: the balance tells them
    ik.ledger.reconcile()
    ik.ledger.record(Entry(operation="refund", status=Status.REFUNDED, credits=-2.0, time=datetime.now(UTC).isoformat(),
                           account=ik.ledger.account, source=Source.PRICED, tags={"team": FORMULAS[0]}))
    ik.ledger.export(tmp_path / "spend.csv")
    usage_report(ik, tmp_path / "report")
    done = run_console("usage", "--by", "team", "--out", str(tmp_path / "by-team"), "--ledger", str(ik.ledger.location),
                       cwd=tmp_path, env={"IMAGEKIT_HOME": os.environ["IMAGEKIT_HOME"]})
    assert done.returncode == 0, done.stderr
    for path, column in ((tmp_path / "spend.csv", "tag_team"), (tmp_path / "report" / "usage-ledger.csv", "tag_team"),
                         (tmp_path / "by-team" / "usage-by-team.csv", "team")):
        cells = raw_cells(path)
        header, rows = cells[0], cells[1:]
        shown = [row[header.index(column)] for row in rows]
        assert all(cell.startswith("'") for cell in shown if cell not in ("", "-5")), (path, shown)
        assert all(not cell.lstrip("'").startswith(("=", "+", "@", "\t", "\r")) or cell.startswith("'")
                   for row in rows for cell in row), path  # no live formula anywhere in the file
        frame = pd.read_csv(path, keep_default_na=False, dtype={column: str})
        assert {restored(value) for value in frame[column]} - {""} == {*FORMULAS, "-5"}, path
        assert "'-5" not in shown and "-5" in shown, path
        number = [name for name in ("credits", "spent") if name in header][0]
        assert pd.api.types.is_float_dtype(pd.read_csv(path)[number]) and not any(
            row[header.index(number)].startswith("'") for row in rows), path
    spend = raw_cells(tmp_path / "spend.csv")
    assert "-2.0" in [row[spend[0].index("credits")] for row in spend[1:]]  # a refund: a negative number, unquoted
