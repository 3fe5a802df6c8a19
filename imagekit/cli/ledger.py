"""``imagekit ledger``: what waits on this machine for a shared ledger, written now."""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["add_ledger_commands"]


def add_ledger_commands(commands: Any) -> None:
    """The ``ledger`` command group on the top-level parser's subcommands."""
    text = "the credit ledger a team shares on PostgreSQL"
    ledger = commands.add_parser("ledger", help=text, description=text)
    verbs = ledger.add_subparsers(dest="verb", required=True, metavar="VERB")
    text = ("write the entries that wait on this machine (in $IMAGEKIT_HOME/spool) because the ledger's "
            "database could not be reached when they were made")
    flush = verbs.add_parser("flush", help=text, description=text)
    flush.add_argument("--ledger", default=os.environ.get("IMAGEKIT_LEDGER_URL"),
                       help="the ledger, a postgresql:// URL, however spelled (default: $IMAGEKIT_LEDGER_URL)")
    flush.set_defaults(run=cmd_flush)


def cmd_flush(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..ledger import Ledger
    from ..ledger.store import is_url

    if not args.ledger or not is_url(args.ledger):
        raise ConfigError("only a ledger on PostgreSQL keeps entries waiting: --ledger postgresql://... "
                          "(or IMAGEKIT_LEDGER_URL)")
    ledger = Ledger(args.ledger)
    written = ledger.flush()
    if written:
        print(f"Wrote {written} entr{'y' if written == 1 else 'ies'} that waited in {ledger.spool} "
              f"to the ledger at {ledger.location}")
    else:
        print(f"Nothing waits on this machine for the ledger at {ledger.location}")
    return 0
