"""The batch engine: ``Batch`` (what a user holds: rows, estimate, run, results, export) and what
runs it, in layers, each importing only those below it (the batch engine's contract in
pyproject.toml holds it; ``a | b`` are side by side and import neither the other):

- ``batch``: ``Batch``;
- ``leases | runner``: keeping a run's leases; the runner that sends each row;
- ``export | probe | results``: datasets out; settling a lost answer by reading; what a run made,
  read from its journal (the results table, each image's record and bytes);
- ``book | outputs | pacing | window | twin``: a row's money (journal, ledger and run state
  together); images into the store; when to poll; the concurrency window; the batch's client;
- ``journals``: what a run has done, kept where its rows are claimed (a package of its own);
- ``options | rows | state``: run settings; rows and grids; what a run's runners share.

Imports nothing here: ``imagekit.workflows`` names what users import.
"""
