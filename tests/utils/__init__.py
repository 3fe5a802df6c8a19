"""What the tests share beyond one folder's fixtures, a module a concern; tests and conftests import
these, never a conftest (tests/helpers.py keeps the small shared constants and waits).

- ``users``: fresh users of a sandbox (embedded or served), made through its controls;
- ``service``: what a sandbox holds, read from its own side (what was really made and charged);
- ``workflow_fixtures``: the sandboxes and fresh-user clients of the tests that run batches, chains
  and desks (the workflows', the desk's and the integrations' conftests name them);
- ``scripted_http``: canned answers for failures the sandbox cannot produce, a transport that counts
  what it sends, and an async object driven from a sync test;
- ``browser``: a chromium tab traced for failures, the two front-ends mark, figures kept beside
  screenshots, an edit as the sandbox made it;
- ``tracking``: an empty MLflow tracking store per test.
"""
