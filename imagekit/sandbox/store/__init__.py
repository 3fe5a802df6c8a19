"""Where the sandbox keeps things: the database and the files of a data folder.

- ``db``: the SQLAlchemy engine and sessions (SQLite or PostgreSQL); ``tables``: the mapped tables;
- ``reads``: prepared reads run on the event loop's side; ``migrate`` and ``migrations/``: the schema
  by Alembic revisions;
- ``datadir``: what a data folder holds and whether it may be opened; ``files``: the stored images;
  ``disk``: the space left; ``render_cache``: rendered variants on disk;
- ``outage``: telling an unreachable database from a failing statement, and riding it out.

It imports ``interface`` and ``engines`` only (never ``domain``, ``api`` or ``serving``).
"""
