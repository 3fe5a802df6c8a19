"""Alembic environment of the sandbox's schema (``imagekit.sandbox.store.migrate`` runs it in-process).

The caller hands over an open connection (``config.attributes["connection"]``); the ``alembic``
command line, used to write new revisions, gives ``sqlalchemy.url`` instead."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from imagekit.sandbox.store.tables import Base

config = context.config


def _run(connection) -> None:
    # SQLite cannot ALTER most things in place: batch mode copies the table instead.
    context.configure(connection=connection, target_metadata=Base.metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


given = config.attributes.get("connection")
if given is not None:
    _run(given)
else:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("alembic: give the sandbox database as sqlalchemy.url or a connection")
    with create_engine(url).connect() as opened:
        _run(opened)
