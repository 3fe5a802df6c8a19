"""The tables of a sweep's journal in PostgreSQL, and the connection to them: the tables made on
first use and brought forward from an earlier version's, every wait on the connection bounded."""

from __future__ import annotations

from typing import Any

from ...._urls import without_secrets
from ....errors import ConfigError
from ....extras import require
from ....ledger.store import shown_location

__all__ = ["connect", "make_tables", "wait_bound"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sweeps (name TEXT PRIMARY KEY, digest TEXT NOT NULL, row_count INTEGER NOT NULL,
        created TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS sweep_rows (sweep TEXT NOT NULL, key TEXT NOT NULL, idx INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, group_id TEXT, low_id BIGINT,
        sent_at DOUBLE PRECISION, images TEXT NOT NULL DEFAULT '[]', credits DOUBLE PRECISION, error TEXT,
        latency DOUBLE PRECISION, account TEXT, owner TEXT, lease_until TIMESTAMPTZ, run_id TEXT,
        finished_at TIMESTAMPTZ, lease_version BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (sweep, key))""",
    """CREATE TABLE IF NOT EXISTS sweep_slots (account TEXT NOT NULL, slot INTEGER NOT NULL, owner TEXT,
        lease_until TIMESTAMPTZ, PRIMARY KEY (account, slot))""",
)
_BROUGHT_FORWARD = (
    ("lease_version", "ALTER TABLE sweep_rows ADD COLUMN lease_version BIGINT NOT NULL DEFAULT 0"),
)
"""Columns a journal made by an earlier version lacks, and how each is added (its rows start at token 0)."""
_SCHEMA_LOCK = 0x5EE9
"""The advisory lock that one process at a time makes or brings forward the tables under."""


def make_tables(db: Any) -> None:
    """Make the sweep tables, or bring an earlier version's forward (one process at a time)."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        for statement in _SCHEMA:
            db.execute(statement)
        for column, statement in _BROUGHT_FORWARD:  # looked up first: ALTER TABLE locks out every claim
            if not db.execute("SELECT 1 FROM pg_attribute WHERE attrelid = 'sweep_rows'::regclass"
                              " AND attname = %s AND NOT attisdropped", (column,)).fetchone():
                db.execute(statement)


def wait_bound(lease: float) -> float:
    """The longest, in seconds, one request to the journal's database may wait with ``lease``-second
    leases: well within a lease, so a database that stops answering never outlasts a renewal."""
    return max(2.0, min(10.0, lease / 3))


def connect(url: str, lease: float, outage: bool = False) -> Any:
    """A connection to the journal's database; unreachable, a ConfigError on the first connection
    (a wrong address is the likelier cause) and psycopg's own error during an ``outage``.

    Every wait on it is bounded well within the ``lease``: a database that stops answering (a frozen
    VM, packets dropped) is an outage like a refused connection, not a renewal that never returns."""
    psycopg = require("psycopg")
    conninfo_to_dict = require("psycopg.conninfo").conninfo_to_dict
    _, rest = url.split("://", 1)
    bound = int(wait_bound(lease) * 1000)
    try:
        given = conninfo_to_dict(f"postgresql://{rest}").get("options")  # the URL's own, kept
        options = f"{given or ''} -c statement_timeout={bound} -c lock_timeout={bound}".strip()
        # Keepalives: a peer gone without a word (a network down) is noticed in seconds, not hours;
        # tcp_user_timeout and the statement and lock timeouts: one that stops answering mid-request.
        return psycopg.connect(f"postgresql://{rest}", autocommit=True, connect_timeout=2 if outage else 10,
                               keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=3,
                               tcp_user_timeout=bound, options=options)
    except psycopg.OperationalError as exc:
        if outage:
            raise
        raise ConfigError(f"cannot open the journal at {shown_location(url)}: {without_secrets(str(exc), url)}") from exc

