"""The sandbox's tables as Alembic migrations shipped in the package (``migrations/``).

A database is in one of five states: ``empty`` (no tables), ``legacy`` (tables made before
migrations existed, no revision recorded), ``behind`` (an older revision), ``current`` or ``ahead``
(a revision this code does not know: made by a newer imagekit). :func:`upgrade` takes any of the
first four to the head, adopting a legacy schema by stamping the baseline when its tables match it;
:func:`check` refuses anything but ``current`` with a one-line reason saying what to run.

An empty database is built as Alembic's cookbook builds a new one: the mapped tables made at once and
the head recorded, rather than every revision replayed (a test checks both make the same schema).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sqlalchemy import Column, Connection, MetaData, PrimaryKeyConstraint, String, Table, create_engine, inspect, select
from sqlalchemy.engine import Engine

from .datadir import DataDirError, holds_images
from .tables import Base

if TYPE_CHECKING:
    from alembic.config import Config

BASELINE = "0001"
"""The revision of the tables every sandbox had before migrations were introduced."""
HEAD = "0003"
"""The newest revision in ``migrations/`` (a test checks it is Alembic's head). A database at this
revision is read without loading Alembic, which only a migration needs (a tenth of a second a start)."""
VERSION_TABLE = "alembic_version"
_VERSION = Table(VERSION_TABLE, MetaData(), Column("version_num", String(32), nullable=False),
                 PrimaryKeyConstraint("version_num", name="alembic_version_pkc"))
"""Alembic's version table, as Alembic itself makes it."""
State = Literal["empty", "legacy", "behind", "current", "ahead"]


class SchemaError(DataDirError):
    """The database's schema is not the one this code needs; the message says what to run."""


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    config.attributes["connection"] = connection
    return config


def _known() -> set[str]:
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}


def _tables(connection: Connection) -> dict[str, set[str]]:
    found = inspect(connection)
    return {name: {column["name"] for column in found.get_columns(name)}
            for name in found.get_table_names() if name != VERSION_TABLE}


def _migrate(connection: Connection, how: Literal["upgrade", "stamp"], to: str) -> None:
    """Alembic's ``upgrade`` or ``stamp`` to revision ``to`` on ``connection``."""
    from alembic import command

    getattr(command, how)(_config(connection), to)


@cache
def _baseline_tables() -> dict[str, set[str]]:
    """Tables and columns of the baseline revision, made in a throwaway in-memory database."""
    engine = create_engine("sqlite://")
    with engine.begin() as connection:
        _migrate(connection, "upgrade", BASELINE)
        tables = _tables(connection)
    engine.dispose()
    return tables


def revision(connection: Connection) -> str | None:
    """The revision Alembic recorded, None when it recorded none."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    return connection.execute(select(_VERSION.c.version_num)).scalar()


def state(connection: Connection) -> State:
    current = revision(connection)
    if current is None:
        return "legacy" if _tables(connection) else "empty"
    if current == HEAD:
        return "current"
    return "behind" if current in _known() else "ahead"


MIGRATE_WAIT = 120.0
"""Seconds a process waits for another one of this machine creating or upgrading the same database."""


def upgrade(engine: Engine, data_dir: Path) -> None:
    """Bring the database to the head revision (creating every table in an empty one, unless the
    data folder holds images already: they belong to another database, whose ids a new one reuses).
    One process of the machine at a time (a lock file in the folder, when there is one): two opening
    a new folder at once would both find it empty, and the second to write would fail with
    'database is locked'."""
    from filelock import FileLock, Timeout

    if not Path(data_dir).is_dir():  # a database elsewhere (PostgreSQL), its folder not made yet: nothing to share
        _upgrade(engine, data_dir)
        return
    try:
        with FileLock(Path(data_dir) / "migrate.lock", timeout=MIGRATE_WAIT):
            _upgrade(engine, data_dir)
    except Timeout:
        raise SchemaError(f"another process has been creating or upgrading the database of {data_dir} for "
                          f"{MIGRATE_WAIT:g} s; try again when it is done") from None


def _upgrade(engine: Engine, data_dir: Path) -> None:
    with engine.begin() as connection:
        found = state(connection)
        if found == "empty" and holds_images(data_dir):
            raise SchemaError(f"the database is empty but {data_dir} holds images of another sandbox; "
                              "give that sandbox's database, or another folder")
        if found == "ahead":
            raise SchemaError(_ahead(connection))
        if found == "empty":
            _create(connection)
        elif found != "current":
            if found == "legacy":
                _adopt(connection)
            _migrate(connection, "upgrade", "head")


def _create(connection: Connection) -> None:
    """Make the mapped tables in an empty database and record the head revision."""
    Base.metadata.create_all(connection)
    _VERSION.create(connection)
    connection.execute(_VERSION.insert().values(version_num=HEAD))


def _adopt(connection: Connection) -> None:
    """Record the baseline revision in a database made before migrations, if its tables are the baseline's."""
    tables, expected = _tables(connection), _baseline_tables()
    missing = [name for name in expected if name not in tables]
    missing += [f"{name}.{column}" for name in expected if name in tables
                for column in sorted(expected[name] - tables[name])]
    if missing:
        raise SchemaError(f"the database holds tables that are not a sandbox's (missing: {', '.join(missing[:5])})")
    _migrate(connection, "stamp", BASELINE)


def check(engine: Engine, upgrade_hint: str) -> None:
    """Raise :class:`SchemaError` unless the database is at the head revision.

    ``upgrade_hint`` is the command that upgrades it (it depends on how the sandbox was named)."""
    with engine.connect() as connection:
        found = state(connection)
        if found == "current":
            return
        if found == "ahead":
            raise SchemaError(_ahead(connection))
        if found == "empty":
            raise SchemaError(f"the database holds no sandbox; run `{upgrade_hint}` first")
        at = revision(connection) or "none (made before migrations)"
        raise SchemaError(f"the database schema is at revision {at}, this imagekit needs {HEAD}: "
                          f"run `{upgrade_hint}` to upgrade it (its data is kept)")


def _ahead(connection: Connection) -> str:
    return (f"the database schema is at revision {revision(connection)}, newer than this imagekit knows "
            f"(head {HEAD}): upgrade imagekit")
