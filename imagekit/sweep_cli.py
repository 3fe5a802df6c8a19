"""``imagekit sweep``: a sweep's state, read from its shared journal alone (any machine that can
reach the database can ask)."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from typing import Any

__all__ = ["add_sweep_commands", "status_lines"]


def add_sweep_commands(commands: Any) -> None:
    """The ``sweep`` command group on the top-level parser's subcommands."""
    text = "sweeps: batches several processes and machines drain through one journal"
    sweep = commands.add_parser("sweep", help=text, description=text)
    verbs = sweep.add_subparsers(dest="verb", required=True, metavar="VERB")
    text = ("rows done, running (by whom), failed and left, credits spent, and the expected finish of a sweep "
            "in a shared journal")
    status = verbs.add_parser("status", help=text, description=text)
    status.add_argument("--journal", default=os.environ.get("IMAGEKIT_JOURNAL_URL"),
                        help="the sweep's journal, a postgresql:// URL (default: $IMAGEKIT_JOURNAL_URL)")
    status.add_argument("name", help="the sweep's name")
    status.set_defaults(run=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    from .errors import ConfigError
    from .workflows.shared_journal import SharedJournal, is_url

    if not args.journal or not is_url(args.journal):
        raise ConfigError("sweep status reads a shared journal: --journal postgresql://... (or IMAGEKIT_JOURNAL_URL)")
    journal = SharedJournal(args.journal, args.name)
    try:
        found = journal.status()
    finally:
        journal.close()
    if not found["total"]:
        raise ConfigError(f"no sweep named {args.name!r} in {journal.path.rsplit('#', 1)[0]}")
    print("\n".join(status_lines(args.name, found)))
    return 0


def status_lines(name: str, found: dict[str, Any], now: datetime | None = None) -> list[str]:
    """What ``sweep status`` prints for one sweep (``SharedJournal.status``)."""
    done, total, running = found["done"], found["total"], found["running"]
    left = total - done - found["failed"] - found["uncertain"]
    lines = [f"sweep {name}: {done} of {total} rows done, {sum(running.values())} running, {found['failed']} failed, "
             f"{found['uncertain']} uncertain, {left} left; {found['credits']:g} credits spent"]
    lines += [f"  running on {owner}: {count}" for owner, count in running.items()]
    first, last = found["first_done"], found["last_done"]
    if left and done >= 2 and first is not None and last > first:
        per_row = (last - first) / (done - 1)
        finish = (now or datetime.now(UTC)) + per_row * left
        lines.append(f"  at the pace so far ({per_row.total_seconds():.2f} s a row): done around "
                     f"{finish:%Y-%m-%d %H:%M:%S} UTC")
    elif not left:
        lines.append("  nothing left to run")
    return lines

