"""The managed schema: migrations that make exactly the tables the code maps, folders from before
migrations adopted, a database behind or ahead of the code refused by ``serve`` with what to run,
and ``--workers`` refused where the database cannot be shared."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Engine

from imagekit.sandbox.store import migrate as schema
from imagekit.sandbox.store.db import normalize_url
from imagekit.sandbox.store.tables import Base
from tests.helpers import TLS, db_args, on_both_databases

from ..serving import imagekit, serving


def engine_for(folder: Path, url: str | None) -> Engine:
    return create_engine(normalize_url(url) if url else f"sqlite:///{folder / 'sandbox.db'}")


def refused(result, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("error:") and "\n" not in line and all(word in line for word in words), line


@pytest.mark.parametrize(("given", "used"), [
    ("postgresql://u:p%40ss@h:5432/db", "postgresql+psycopg://u:p%40ss@h:5432/db"),
    ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
    ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
    ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
])
def test_the_bare_postgresql_spelling_means_psycopg(given, used):
    assert normalize_url(given) == used


def test_head_is_the_newest_migration():
    """A start reads the revision without Alembic, against ``schema.HEAD``: it must be Alembic's head."""
    assert ScriptDirectory.from_config(schema._config()).get_current_head() == schema.HEAD


def described(connection) -> dict:
    """Every table's columns (name, type, nullability), primary key, foreign keys, indexes and unique
    constraints, as the database reports them, with the names a later migration would drop them by."""
    found = inspect(connection)
    return {name: {
        "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in found.get_columns(name)],
        "primary key": found.get_pk_constraint(name)["constrained_columns"],
        "foreign keys": sorted((fk["name"] or "", fk["constrained_columns"], fk["referred_table"], fk["referred_columns"])
                               for fk in found.get_foreign_keys(name)),
        "indexes": sorted((i["name"], i["column_names"], bool(i["unique"])) for i in found.get_indexes(name)),
        "unique": sorted((u["name"], u["column_names"]) for u in found.get_unique_constraints(name)),
    } for name in sorted(found.get_table_names())}


@on_both_databases
def test_migrations_make_exactly_the_mapped_tables(tmp_path, new_database):
    """Every revision replayed by Alembic on an empty database makes the tables the code maps."""
    engine = engine_for(tmp_path, new_database())
    with engine.begin() as connection:
        schema._migrate(connection, "upgrade", "head")
    with engine.connect() as connection:
        assert MigrationContext.configure(connection).get_current_revision() == schema.HEAD
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    engine.dispose()


@on_both_databases
def test_a_new_database_is_the_one_the_migrations_make(tmp_path, new_database):
    """``upgrade`` builds an empty database from the mapped tables at once: the same tables, keys and
    indexes as the migrations make, at the head revision as Alembic reads it."""
    (tmp_path / "migrated").mkdir()
    made, migrated = engine_for(tmp_path, new_database()), engine_for(tmp_path / "migrated", new_database())
    schema.upgrade(made, tmp_path)
    with migrated.begin() as connection:
        schema._migrate(connection, "upgrade", "head")
    with made.connect() as new, migrated.connect() as replayed:
        assert schema.state(new) == "current"
        assert MigrationContext.configure(new).get_current_revision() == schema.HEAD
        assert compare_metadata(MigrationContext.configure(new), Base.metadata) == []
        assert described(new) == described(replayed)
    schema.upgrade(made, tmp_path)  # a second time changes nothing
    made.dispose()
    migrated.dispose()


@on_both_databases
def test_serve_refuses_a_database_behind_the_code_until_init_upgrades_it(tmp_path, new_database):
    url = new_database()
    db = db_args(url)
    imagekit("sandbox", "init", "--data", str(tmp_path), *db)
    engine = engine_for(tmp_path, url)
    with engine.begin() as connection:
        command.downgrade(schema._config(connection), schema.BASELINE)
    if url is None:  # SQLite: its folder is served by one process, which upgrades it itself
        with serving(tmp_path):
            pass
    else:
        refused(imagekit("sandbox", "serve", "--data", str(tmp_path), *db, "--port", "0", check=False),
                f"revision {schema.BASELINE}", "imagekit sandbox init", "--db")
        refused(imagekit("sandbox", "user", "add", "--data", str(tmp_path), *db, "--email", "x@y.z", check=False),
                "imagekit sandbox init")
        imagekit("sandbox", "init", "--data", str(tmp_path), *db)
    with engine.connect() as connection:
        assert schema.state(connection) == "current"
    key = imagekit("sandbox", "user", "add", "--data", str(tmp_path), *db, "--email", "x@y.z").stdout.splitlines()[-1]
    assert key.startswith("iks_")
    engine.dispose()


@on_both_databases
def test_a_database_made_before_migrations_is_adopted_with_its_data(tmp_path, new_database):
    url = new_database()
    db = db_args(url)
    demo_key = imagekit("sandbox", "init", "--data", str(tmp_path), *db).stdout.splitlines()[-1]
    engine = engine_for(tmp_path, url)
    with engine.begin() as connection:  # what every folder looked like before migrations
        for table in ("concurrency_peaks", "running_slots", schema.VERSION_TABLE):
            connection.execute(text(f"DROP TABLE {table}"))
        connection.execute(text("DROP INDEX ix_images_charge_id"))  # added by 0003
        assert schema.state(connection) == "legacy"
    imagekit("sandbox", "init", "--data", str(tmp_path), *db)
    with engine.connect() as connection:
        assert schema.state(connection) == "current"
    with serving(tmp_path, *db) as served:
        assert httpx.get(f"{served.url}/api/users/me", headers={"X-Api-Key": demo_key}, verify=TLS, timeout=120).status_code == 200
    engine.dispose()


@on_both_databases
def test_tables_that_are_not_a_sandbox_or_from_a_newer_imagekit_are_refused(tmp_path, new_database):
    url = new_database()
    db = db_args(url)
    engine = engine_for(tmp_path, url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE users (user_id INTEGER PRIMARY KEY)"))
    refused(imagekit("sandbox", "init", "--data", str(tmp_path), *db, check=False), "not a sandbox's", "missing")
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE users"))
    imagekit("sandbox", "init", "--data", str(tmp_path), *db)
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE {schema.VERSION_TABLE} SET version_num = '9999'"))
    for command_line in (["init"], ["serve", "--port", "0"]):
        refused(imagekit("sandbox", *command_line, "--data", str(tmp_path), *db, check=False),
                "revision 9999", "newer")
    engine.dispose()


@on_both_databases
def test_an_empty_database_beside_another_sandboxs_images_is_refused(tmp_path, backend, new_database):
    imagekit("sandbox", "init", "--data", str(tmp_path), *db_args(new_database()))
    if backend == "sqlite":
        (tmp_path / "sandbox.db").unlink()
    refused(imagekit("sandbox", "init", "--data", str(tmp_path), *db_args(new_database()), check=False), "images")


@on_both_databases
def test_several_workers_need_a_shared_database(tmp_path, new_database):
    url = new_database()
    if url is None:
        refused(imagekit("sandbox", "serve", "--data", str(tmp_path), "--workers", "2", "--port", "0", check=False),
                "--workers", "--db")
        assert not (tmp_path / "sandbox.db").exists()  # refused before anything was made
    else:
        refused(imagekit("sandbox", "serve", "--data", str(tmp_path), "--db", url, "--workers", "2", "--port", "0",
                         check=False), "holds no sandbox", "imagekit sandbox init")


def test_two_processes_opening_a_new_folder_at_once_create_its_database_one_after_the_other(tmp_path):
    """Both would find the database empty; the second to write failed with 'database is locked'
    (1 start in 8 of two scripts on a fresh home, under load). The second now waits for the first."""
    import threading

    from filelock import FileLock

    engine = engine_for(tmp_path, None)
    done = threading.Event()
    with FileLock(tmp_path / "migrate.lock"):  # another process creating the database now
        opening = threading.Thread(target=lambda: (schema.upgrade(engine, tmp_path), done.set()))
        opening.start()
        assert not done.wait(0.5) and "alembic_version" not in inspect(engine).get_table_names()
    assert done.wait(30)
    opening.join()
    with engine.connect() as connection:
        assert schema.state(connection) == "current"
