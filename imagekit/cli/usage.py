"""``imagekit usage``: the credit usage report of the configured account, or spend by tag.

The report reads the ledger; it asks the service (balance, plan limits, style names) only for a
configured service or with ``--refresh``: the local sandbox is never started for it unless asked."""

from __future__ import annotations

import argparse
import os
import re
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ..config import SANDBOX_SERVICE, Config, service_from_env
from ..errors import ConfigError
from ..home import home_dir
from .parsing import (
    command,
    days,
    existing_ledger,
    file_to_write_option,
    folder_option,
    mistake,
    moment_option,
    price,
    tag_name,
    time_zone,
)


def add_usage_command(commands: Any) -> None:
    """The ``usage`` command on the top-level parser's subcommands."""
    usage = command(commands, "usage", "credit usage report of the configured account (IMAGEKIT_BASE_URL "
                                        "and IMAGEKIT_API_KEY, else the local sandbox's demo account): print "
                                        "it, and with --out write CSV and PNG files")
    usage.usage = "%(prog)s [options]\n       %(prog)s export DEST [options]"  # the report, or its charges as a file
    usage.add_argument("--out", type=folder_option,
                       help="also write the CSV (and PNG) files to this folder: a new or empty one, or one an "
                            "earlier report wrote (only its files are replaced)")
    usage.add_argument("--refresh", action=argparse.BooleanOptionalAction,
                       help="ask the service for the balance, plan limits and style names now (default: a "
                            "configured service is asked; the local sandbox is not started, and the report "
                            "counts from the last balance the ledger recorded)")
    usage.add_argument("--ledger", type=existing_ledger, help="ledger: a SQLite file or a postgresql:// URL (default: "
                                        "$IMAGEKIT_LEDGER_URL, else $IMAGEKIT_HOME/ledger.sqlite)")
    usage.add_argument("--by", metavar="TAG", type=tag_name, help="spend per value of this tag over every account in the "
                                                   "ledger, and its budgets (reads the ledger only)")
    usage.add_argument("--period", choices=("day", "week", "month"),
                       help="with --by: spend this period per tag value (the top 10, the rest as one row), against "
                            "the same stretch of the period before, and when each budget runs out")
    usage.add_argument("--tz", type=time_zone, default="UTC", help="time zone of the periods' days (an IANA name, "
                                                                    "e.g. Europe/Berlin)")
    usage.add_argument("--days", type=days, help="days of spend the forecast follows (default: 7)")
    usage.set_defaults(run=cmd_usage)
    add_export_command(usage)


def cmd_usage(args: argparse.Namespace) -> int:
    from ..reports import ledger_report  # pandas first: a missing extra is said before the ledger is read

    if args.period and not args.by:
        mistake(args, "--period reports spend per tag value: give --by TAG too (e.g. --by experiment --period week)")
    if args.tz != "UTC" and not args.period:
        mistake(args, "--tz sets the days of --period: give --by TAG --period day, week or month with it")
    if args.by and args.refresh is not None:
        mistake(args, "--by reads the ledger alone: --refresh and --no-refresh are for the account's report")
    if args.by and not args.period and args.days is not None:
        mistake(args, "--days sets the rate of a forecast: give --period with --by (or leave --by out for the account's)")
    args.days = 7.0 if args.days is None else args.days
    if args.by and args.period:
        return _usage_by_period(args.ledger, args.by, args.period, args.tz, args.days, args.out)
    if args.by:
        return _usage_by_tag(args.ledger, args.by, args.out)
    base_url, api_key = service_from_env(None, None)
    if args.refresh or (args.refresh is None and (base_url or api_key)) or bool(base_url) != bool(api_key):
        return _usage_asked(args)  # (connect() says what half a configuration lacks)
    from ..ledger import Ledger, account_of, sandbox_account
    from ..ownership import owned
    from ..sandbox import EmbeddedSandbox

    if base_url and api_key:
        config = Config.from_env()
        account, whose = account_of(config.base_url, config.api_key), f"API key ...{config.api_key[-4:]}"
        where, refresh = config.service, f"asks {config.service}"
    else:
        folder = home_dir() / "sandbox"
        # a folder never started has no id, and no entry in any ledger: the report is an empty one
        account, whose = sandbox_account(EmbeddedSandbox.identity_of(folder) or ""), "the demo account"
        where, refresh = _sandbox_named(folder), "starts the local sandbox and asks it"
    ledger = Ledger(args.ledger, account=account)
    # What it prints is inside the folder's block: a reader gone (| head) undoes the files as Ctrl+C does.
    with owned(args.out, "imagekit usage", adopt=["usage-*"]) if args.out else nullcontext():
        report = ledger_report(ledger, args.out, days=args.days)
        print(f"Usage of {whose} on {where}, from the ledger alone")
        if others := _other_accounts(ledger):
            print(others)
        print(report)
        print(f"\nimagekit usage --refresh {refresh} for the balance and plan limits now.")
        if report.files:
            print(f"\nWrote {len(report.files)} files to {args.out}")
    return 0


def _other_accounts(ledger: Any) -> str:
    """When the ledger holds nothing of its account but entries of others (a file another
    IMAGEKIT_HOME or service wrote), a line that says so; else ""."""
    if ledger.entries(readings=True):
        return ""
    accounts = Counter(entry.account for entry in ledger.entries(""))
    if not accounts:
        return ""
    held = sum(accounts.values())
    return (f"The ledger {ledger.location} holds nothing of this account, but {held} operation{'' if held == 1 else 's'} "
            f"of {len(accounts)} other account{'' if len(accounts) == 1 else 's'} (written under another IMAGEKIT_HOME "
            "or for another service): imagekit usage --by TAG reports every account's.")


def _sandbox_named(folder: Path) -> str:
    return (f"the local sandbox in {folder} (not the real service: set IMAGEKIT_BASE_URL and "
            "IMAGEKIT_API_KEY for yours)")


def _usage_asked(args: argparse.Namespace) -> int:
    """The report with the service's answers: the balance, plan limits and style names as it shows
    them now (the embedded sandbox is started for it)."""
    import imagekit

    from ..ownership import owned
    from ..reports import usage_report

    options = {"ledger": args.ledger} if args.ledger else {}
    with imagekit.connect(**options) as client, owned(args.out, "imagekit usage", adopt=["usage-*"]) if args.out \
            else nullcontext():
        try:
            me = client.me()
        except imagekit.APIConnectionError as exc:  # a service that cannot be reached still has a ledger
            raise type(exc)(f"{exc.message} (imagekit usage --no-refresh reports from the ledger alone)",
                            may_have_executed=False) from exc
        report = usage_report(client, args.out, days=args.days)
        service = client.config.service
        where = _sandbox_named(home_dir() / "sandbox") if service.startswith(SANDBOX_SERVICE) else service
        print(f"Usage of {me.email} (user {me.user_id}) on {where}")
        print(report)
        if report.files:
            print(f"\nWrote {len(report.files)} files to {args.out}")
    return 0


def _usage_by_tag(location: str | None, key: str, out: str | None) -> int:
    """Spend per value of tag ``key`` over every account in the ledger, and that tag's budgets:
    read from the ledger alone, so any machine that can reach it can print the team's figures."""
    from .._csv_cells import inert_frame
    from ..ledger import Ledger
    from ..ledger.forecasts import refuse_unknown_tag
    from ..ownership import owned
    from ..reports import spend_by_tag
    from ..reports.report import waiting_note

    ledger = Ledger(location)
    frame = ledger.to_pandas(account="")
    refuse_unknown_tag(frame, key, ledger.budgets(key), ledger.location)
    table = spend_by_tag(frame, key)
    print(f"Spend by {key} in {ledger.location} (every account)")
    for line in waiting_note(ledger):
        print(line)
    print(table.to_string() if len(table) else "(nothing yet)")
    budgets = ledger.budgets(key)
    if budgets:
        print("\nBudgets\n" + "\n".join(f"  {budget}" for budget in budgets))
    if out:
        with owned(out, "imagekit usage") as folder, folder.writer(f"usage-by-{key}.csv") as sink:
            inert_frame(table).to_csv(sink)
        print(f"\nWrote {Path(out) / f'usage-by-{key}.csv'}")
    return 0


def _usage_by_period(location: str | None, key: str, period: str, tz: str, days: float, out: str | None) -> int:
    """Spend per value of tag ``key`` this ``period`` (in time zone ``tz``) over every account in the
    ledger: the top values against the same stretch of the period before, and when budgets run out."""
    from datetime import UTC, datetime

    from .._csv_cells import inert_frame
    from ..ledger import Ledger
    from ..ledger.forecasts import MIN_HISTORY, refuse_unknown_tag
    from ..ledger.periods import period_bounds
    from ..ownership import owned
    from ..reports.periods import shown_period, spend_by_period
    from ..reports.report import waiting_note
    from ..reports.tables import duration_text

    ledger, now = Ledger(location), datetime.now(UTC)
    frame = ledger.to_pandas(account="")
    refuse_unknown_tag(frame, key, ledger.budgets(key), ledger.location)
    table = spend_by_period(frame, key, ledger.budgets(key), period=period, tz=tz, days=days, now=now)
    start = period_bounds(now, period, tz)[0].astimezone(table["runs_out"].dt.tz)
    this = "today" if period == "day" else f"this {period}"
    print(f"Spend by {key} {this} (since {start:%a %d %b %Y %H:%M}, {tz}) in {ledger.location} (every account)")
    for line in waiting_note(ledger):
        print(line)
    if not table["spent"].any() and not table["before"].any() and table["runs_out"].isna().all():
        print(f"(nothing spent {this} or the {period} before)")
    else:
        print(shown_period(table, period).to_string())
        print(f"\nchange: against the same stretch of the {period} before. per day: the rate of the last {days:g} days "
              f"(blank: under {duration_text(MIN_HISTORY)} of spending, too little to tell). runs out: when the tag's "
              "budget is spent at that rate, counting its reset at the end of the budget's own period (blank: it does "
              "not, or there is no budget)")
    if out:
        name = f"usage-by-{key}-{period}.csv"
        with owned(out, "imagekit usage") as folder, folder.writer(name) as sink:
            inert_frame(table).to_csv(sink)
        print(f"\nWrote {Path(out) / name}")
    return 0


def _in_options(message: str) -> str:
    """An export's mistake in the command line's words: ``--format focus``, not ``format='focus'``."""
    message = message.replace("credit_price= (--credit-price)", "--credit-price").replace("credit_price=",
                                                                                          "--credit-price")
    return re.sub(r"\b(format|currency)=(['\"])(.*?)\2", r"--\1 \3", message)


def add_export_command(usage: Any) -> None:
    """``imagekit usage export DEST``: the ledger's charges as a file (``imagekit usage`` alone stays the report)."""
    verbs = usage.add_subparsers(dest="verb", metavar="COMMAND", prog=usage.prog)
    export = command(verbs, "export", "write one row per charge of the ledger, with its tags, to a file or any "
                                      "fsspec URL: CSV, Parquet or a FinOps FOCUS 1.0 file (reads the ledger only)")
    export.add_argument("dest", type=file_to_write_option, help="the file to write (a path or a URL such as s3://bucket/spend.csv)")
    export.add_argument("--format", choices=("csv", "parquet", "focus"), default="csv",
                        help="csv, parquet, or focus (FOCUS 1.0: a CSV file, Parquet if DEST ends in .parquet)")
    export.add_argument("--ledger", type=existing_ledger, default=argparse.SUPPRESS,
                        help="ledger: a SQLite file or a postgresql:// URL (default: $IMAGEKIT_LEDGER_URL, else "
                             "$IMAGEKIT_HOME/ledger.sqlite)")
    export.add_argument("--account", help="only this account's charges (default: every account)")
    export.add_argument("--since", type=moment_option, help="only charges made at or after this date or time (ISO 8601, UTC)")
    export.add_argument("--until", type=moment_option, help="only charges made before this date or time (ISO 8601, UTC)")
    export.add_argument("--credit-price", type=price, help="focus: what one credit costs, in --currency")
    export.add_argument("--currency", help="focus: the ISO 4217 currency of --credit-price (default: USD)")
    export.add_argument("--overwrite", action="store_true", help="replace DEST if it exists")
    export.set_defaults(run=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from ..ledger import ENV_LEDGER_URL, Ledger, default_path
    from ..ledger.export import checked_options, moment
    from ..ownership import NotOursError

    try:  # options that do not go together are the command line's mistake
        checked_options(args.format, args.credit_price, args.currency, moment(args.since), moment(args.until),
                        args.dest)
    except ConfigError as exc:
        mistake(args, _in_options(str(exc)))
    given = getattr(args, "ledger", None) or os.environ.get(ENV_LEDGER_URL)
    if given is None and not default_path().is_file():  # a named one is checked with the options
        raise ConfigError(f"no ledger at {default_path()} yet: nothing was recorded in this IMAGEKIT_HOME "
                          "(a client records into it as it works; --ledger names another)")
    ledger = Ledger(given)
    try:
        done = ledger.export(args.dest, args.format, account=args.account, overwrite=args.overwrite,
                             credit_price=args.credit_price, currency=args.currency, since=args.since, until=args.until)
    except NotOursError:  # said in the command's words, not the Python call's
        raise NotOursError(f"{args.dest} exists: add --overwrite to replace it") from None
    print(f"{done}, from the ledger at {ledger.location}")
    return 0
