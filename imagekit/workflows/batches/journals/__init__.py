"""A run's journal: the rows claimed and done, the images kept, in layers (the journals' contract
in pyproject.toml holds it; ``a | b`` are side by side and import neither the other):

- ``either``: the journal at a location, whichever kind it names (``open_journal``);
- ``local | shared``: the journals, SQLite for one machine and PostgreSQL for a team, each with its
  feed of rows;
- ``journal | feed | tables``: the journal's interface; the feed the journals share; the PostgreSQL
  tables.
"""
