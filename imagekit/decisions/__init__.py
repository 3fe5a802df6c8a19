"""What people decide about images (ratings, selections, votes, notes), as data like a charge:

- ``log``: the decision log (SQLite under ``IMAGEKIT_HOME``, or a batch's journal, PostgreSQL
  included), keyed by service and image id, replayed into the state of every image;
- ``ranking``: a Bradley–Terry fit of the pairwise votes (NumPy).

Below the workflows (a batch's export carries each image's standing) and the review desk
(``imagekit.desk``), which shows and makes the decisions.
"""
