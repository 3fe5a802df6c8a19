"""``imagekit sweep``: run a sweep file, estimate it, and read a sweep's state from its journal alone
(a SQLite file, or a PostgreSQL database any machine that can reach it can ask)."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .parsing import existing_journal, mistake, sweep_file_option

if TYPE_CHECKING:
    from ..workflows.batches.journals.journal import RowRecord
    from ..workflows.batches.rows import Row

__all__ = ["add_sweep_commands", "status_lines"]


def add_sweep_commands(commands: Any) -> None:
    """The ``sweep`` command group on the top-level parser's subcommands."""
    text = "sweeps: batches several processes and machines drain through one journal"
    sweep = commands.add_parser("sweep", help=text, description=text)
    verbs = sweep.add_subparsers(dest="verb", required=True, metavar="VERB")
    text = ("rows done, running (by whom), failed and left, credits spent, and the expected finish of a sweep, "
            "read from its journal")
    status = verbs.add_parser("status", help=text, description=text)
    status.add_argument("--journal", type=existing_journal,
                        help="the sweep's journal: its SQLite file or a postgresql:// URL (default: the sweep "
                             "file's, else $IMAGEKIT_JOURNAL_URL)")
    status.add_argument("name", help="the sweep file, or the sweep's name (its [sweep] name) with --journal")
    status.set_defaults(run=cmd_status)

    text = "run the sweep a TOML file describes (what is done already is not run again)"
    run = verbs.add_parser("run", help=text, description=text)
    run.add_argument("file", type=sweep_file_option, help="the sweep file (see 'Sweep files' in docs/guides/batches.md)")
    run.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    run.add_argument("--engine", choices=("local", "dask", "ray"), default="local",
                     help="where the requests are made: here (default), or by the tasks of a Dask cluster or of Ray; "
                          "the journal, the ledger and the account's limit stay here")
    run.add_argument("--address", help="the engine's address: a Dask scheduler's (tcp://host:8786), a Ray "
                     "cluster's (host:6379; without it --engine ray starts a local Ray)")
    run.set_defaults(run=cmd_run)
    text = "print the credits a sweep file's rows would cost and how many requests they are"
    estimate = verbs.add_parser("estimate", help=text, description=text)
    estimate.add_argument("file", type=sweep_file_option, help="the sweep file")
    estimate.set_defaults(run=cmd_estimate)


def cmd_status(args: argparse.Namespace) -> int:
    if not (_is_sweep_file(args.name) or args.journal or os.environ.get("IMAGEKIT_JOURNAL_URL")):
        mistake(args, "sweep status reads the sweep's journal: give the sweep file, or its name with "
                      "--journal FILE.sqlite or postgresql://... (or IMAGEKIT_JOURNAL_URL)")
    print("\n".join(status_lines(*_read_status(args.name, args.journal))))
    return 0


def _is_sweep_file(named: str) -> bool:
    from pathlib import Path

    return named.endswith(".toml") or Path(named).is_file()


def _read_status(named: str, journal_at: str | None) -> tuple[str, dict[str, Any]]:
    """(the name to show, ``Journal.status()``) of the sweep ``sweep status NAME`` names; one line
    (ConfigError) when there is no journal to read, or no such sweep in it."""
    from pathlib import Path

    from ..errors import ConfigError
    from ..workflows.batches.journals.either import open_journal
    from ..workflows.batches.journals.local import LocalJournal
    from ..workflows.batches.journals.shared import is_url

    name, shown, where, rows = _sweep_and_journal(named, journal_at)
    from_file = rows is not None
    keys = [row.key for row in rows] if rows is not None and not any(  # a style named: its id is the account's
        isinstance(row.options.get("style"), str) for row in rows) else None
    if not where:  # (a name without a journal is refused with the options: ``cmd_status``)
        raise ConfigError(f"{named} keeps no journal (its [sweep] has no journal and no local out_dir): "
                          "there is nothing to read")
    not_run: dict[str, Any] = {"done": 0, "failed": 0, "uncertain": 0, "unsettled": 0, "total": len(rows or ()),
                               "credits": 0.0, "running": {}, "first_done": None, "last_done": None, "not_run": True}
    if not is_url(where) and not Path(where).is_file():
        if from_file:  # a sweep file not run yet: all its rows are left
            return shown, not_run
        raise ConfigError(f"no journal at {where}: give the journal file the sweep runs with")
    journal = open_journal(where, name)
    try:
        if keys is not None:  # the file's grid, as its run would find it (another is refused there too)
            journal.check_grid(keys)
        found = journal.status()
        recorded = journal.recorded_name() if isinstance(journal, LocalJournal) else name
    finally:
        journal.close()
    if (recorded or "") != name and recorded is not None:  # a journal file holds one sweep, named by its first run
        raise ConfigError(f"{where} holds the sweep {recorded!r}, not {shown!r}")
    if not found["total"]:
        if from_file:
            return shown, not_run
        raise ConfigError(f"no sweep named {shown!r} in {where.rsplit('#', 1)[0] if is_url(where) else where}")
    return shown, found


def _sweep_and_journal(named: str, journal: str | None) -> tuple[str, str, str | None, list[Row] | None]:
    """(the sweep's name, the name to show, its journal, its rows when NAME is a file) for ``sweep status NAME``:
    NAME is a sweep file (its name, and the journal its runs keep unless --journal says otherwise) or a sweep's name."""
    if not _is_sweep_file(named):
        return named, named, journal or os.environ.get("IMAGEKIT_JOURNAL_URL"), None
    from ..workflows.batches.journals.either import journal_location
    from ..workflows.batches.rows import make_rows
    from ..workflows.sweep_file import load_sweep

    sweep = load_sweep(named)
    where = journal_location(journal or sweep.settings.get("journal"), sweep.settings.get("out_dir"))
    rows = make_rows(sweep.rows(), sweep.defaults, str(sweep.path))
    return sweep.name or "", sweep.name or sweep.path.stem, None if where is None else str(where), rows


def cmd_run(args: argparse.Namespace) -> int:
    import imagekit

    from ..workflows.sweep_file import load_sweep

    if args.address is not None and args.engine == "local":
        mistake(args, "--address is an engine's: give --engine dask or ray too")
    if args.engine == "dask" and args.address is None:
        mistake(args, "--engine dask needs the scheduler's --address (tcp://host:8786)")
    sweep = load_sweep(args.file, styles=_account_styles)
    try:
        with imagekit.connect() as client:
            outcome = sweep.run(client, progress=args.progress, engine=args.engine, address=args.address)
    except KeyboardInterrupt:  # how far it got, from its journal, before the one line that says why it ended
        _tell_progress(args.file)
        raise
    batch = outcome.batch
    entries = [batch.entries.get(row.key) for row in batch.rows]
    statuses = Counter(entry.status if entry is not None else "pending" for entry in entries)
    done, failed = statuses["done"], statuses["failed"]
    images = sum(len(entry.images) for entry in entries if entry is not None and entry.status == "done")
    # every run's, from the journal (as to_pandas()'s credits column sums it: pandas is not needed)
    in_all = float(sum(entry.image_credits(image) or 0 for _, entry, image in batch.image_records()))
    spent = f"{batch.spent:g} credits spent" if abs(in_all - batch.spent) < 1e-9 else \
        f"{in_all:g} credits spent in all, {batch.spent:g} by this run"
    made = f" ({_count(images, 'image')})" if any(row.count != 1 for row in batch.rows) else ""
    duplicates = "" if batch.duplicates is None else \
        f", {batch.duplicates} near-duplicate{'' if batch.duplicates == 1 else 's'} of earlier images"
    print(f"sweep {sweep.name or sweep.path.stem}: {done} of {_count(len(batch), 'row')} done{made}, {spent}{duplicates}"
          + (f"; stopped: {batch.stopped}" if batch.stopped else ""))
    reasons = Counter(_failure(entry) for entry in entries if entry is not None and entry.status == "failed")
    for reason, count in reasons.most_common():  # each kind of failure once, in the service's words
        print(f"  {_count(count, 'row')} failed: {reason}")
    if batch.restored:  # a file the user deleted comes back: said, never silently
        print(f"  {_count(batch.restored, 'image')} missing from {sweep.settings.get('out_dir')} stored again: "
              "downloaded from the service, nothing paid")
    if batch.stored_by_workers:  # where the images were written from: the engine's workers, not here
        print(f"  {_count(batch.stored_by_workers, 'image')} stored in {sweep.settings.get('out_dir')} by the "
              f"{args.engine} workers")
    if outcome.idle:  # rows a stop leaves (a budget, the balance) are not "nothing left"
        left = len(batch) - done - failed
        what = f"nothing run this time, {_count(left, 'row')} left" if left else "nothing left to run"
        print(f"  {what}: no dataset written and no MLflow run logged this time")
    if outcome.export is not None:
        print(f"dataset: {outcome.export}")
    if outcome.mlflow_run is not None:
        print(f"MLflow run: {outcome.mlflow_run}")
    print(_kept_line(sweep.settings.get("journal"), sweep.settings.get("out_dir")))
    # Rows failed, or new work stopped (a budget, the balance): the sweep is not over, and says why above.
    return 1 if failed or batch.stopped else 0


def _failure(entry: RowRecord) -> str:
    """Why a row failed, in the service's words (its own error, else its first image's)."""
    return entry.error or next((image["error"] for image in entry.images if image.get("error")), "no reason given")


def _kept_line(journal: str | None, out_dir: str | None) -> str:
    """Where a sweep keeps what it made: its images (a local or remote ``out_dir``) and its journal."""
    from ..config import service_of_url
    from ..workflows.batches.journals.either import journal_location
    from ..workflows.batches.journals.shared import is_url

    where = journal_location(journal, out_dir)
    shown = service_of_url(where) if isinstance(where, str) and is_url(where) else where  # no password shown
    if out_dir is not None and where is not None and Path(str(where)).parent == Path(out_dir):
        return f"kept in {out_dir}: the images and the journal (a rerun finishes what is left)"
    images = f"the images in {out_dir}" if out_dir is not None else "the images on the service (their ids in the journal)"
    return f"kept: {images}, the journal in {shown} (a rerun finishes what is left)"


def _account_styles() -> list[Any]:
    """The caller's styles, for a sweep file's style names to be checked with its other mistakes."""
    import imagekit

    with imagekit.connect() as client:
        return list(client.styles())


def _tell_progress(file: str) -> None:
    """After a Ctrl+C: the sweep's state as its journal holds it, and that a rerun finishes it (nothing,
    when there is no journal to read: the run did not get that far, or keeps its journal in memory)."""
    from ..errors import ImagekitError

    try:
        shown, found = _read_status(file, None)
    except ImagekitError:
        return
    if found.get("not_run"):
        return
    left = found["total"] - found["done"] - found["failed"] - found["uncertain"] - found.get("unsettled", 0)
    print(status_lines(shown, found)[0].replace(": ", ": interrupted with ", 1)
          + ("; run it again to finish it" if left else ""), flush=True)


def cmd_estimate(args: argparse.Namespace) -> int:
    import imagekit

    from ..storage import Store
    from ..workflows.batches.journals.either import journal_location
    from ..workflows.batches.journals.journal import FINISHED
    from ..workflows.batches.outputs import check_out_dir
    from ..workflows.sweep_file import load_sweep

    sweep = load_sweep(args.file, styles=_account_styles)
    out_dir = sweep.settings.get("out_dir")
    where = journal_location(sweep.settings.get("journal"), out_dir)
    with imagekit.connect() as client:
        if where is None or (isinstance(where, Path) and not where.is_file()):  # nothing run yet: rows streamed
            if out_dir is not None:  # a folder the run would refuse is told now
                check_out_dir(Store(out_dir), [])
            requests, images, credits = sweep.estimate(client)
            kept: dict[str, Any] = {}
            done: set[str] = set()
            left = credits
        else:
            batch = sweep.batch(client)
            credits = batch.estimate()
            kept = batch.recorded(sweep.settings.get("journal"), out_dir)
            if out_dir is not None:
                check_out_dir(Store(out_dir), batch.rows)
            done = {key for key, entry in kept.items() if entry.status in FINISHED}
            left = batch.estimate(skip=done) if done else credits
            requests, images = len(batch), sum(row.count for row in batch.rows)
    budget = sweep.settings.get("budget")
    print(f"sweep {sweep.name or sweep.path.stem}: {_count(requests, 'request')}, {_count(images, 'image')}, "
          f"{'about' if credits.exact else 'at most'} {credits:g} credits"
          + (f" (budget {budget:g})" if budget is not None else ""))
    if done:  # a rerun sends only what is not done: say what that costs
        spent = _spent(kept)
        rest = requests - len(done)
        print(f"  {_count(len(done), 'row')} done already ({spent:g} credits spent): "
              + (f"the {_count(rest, 'row')} left, {'about' if left.exact else 'at most'} {left:g} credits"
                 if rest else "nothing left to run"))
    for note in left.notes(budget, _spent(kept)):
        print(f"  {note}")
    return 0


def _spent(kept: dict[str, Any]) -> float:
    return sum(entry.credits or 0.0 for entry in kept.values())


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def status_lines(name: str, found: dict[str, Any], now: datetime | None = None) -> list[str]:
    """What ``sweep status`` prints for one sweep (``SharedJournal.status``)."""
    done, total, running = found["done"], found["total"], found["running"]
    unsettled = found.get("unsettled", 0)  # a local journal's rows in flight when its run stopped
    left = total - done - found["failed"] - found["uncertain"] - unsettled
    lines = [f"sweep {name}: {done} of {total} rows done, {sum(running.values())} running, {found['failed']} failed, "
             f"{found['uncertain']} uncertain, {left} left; {found['credits']:g} credits spent"
             + (f"; {unsettled} more row{'' if unsettled == 1 else 's'} sent when the run stopped may have been "
                "charged: the next run settles them" if unsettled else "")]
    lines += [f"  running on {owner}: {count}" for owner, count in running.items()]
    first, last = found["first_done"], found["last_done"]
    if left and done >= 2 and first is not None and last > first:
        per_row = (last - first) / (done - 1)
        finish = (now or datetime.now(UTC)) + per_row * left
        lines.append(f"  at the pace so far ({per_row.total_seconds():.2f} s a row): done around "
                     f"{finish:%Y-%m-%d %H:%M:%S} UTC")
    elif found.get("not_run"):
        lines.append("  not run yet: `imagekit sweep run` with the sweep file runs it")
    elif not left and not unsettled:
        lines.append("  nothing left to run")
    return lines

