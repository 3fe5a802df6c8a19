"""The review desk: what a person decides about images (ratings, selections, votes, notes), kept as
made and the input to the next step, which is priced before it runs.

- ``store``: the decision log (SQLite under ``IMAGEKIT_HOME``, or a batch's journal, PostgreSQL
  included), keyed by service and image id, replayed into a desk's state;
- ``ranking``: a Bradley–Terry fit of the pairwise votes (NumPy);
- ``desk``: ``review(images)`` and ``Desk``, the Python face of every decision;
- ``send``: the picks through an edit chain, quoted first.

It imports the ledger, the provenance and the workflows, never the sandbox, and nothing imports it
but ``imagekit.review`` and the widget.
"""

from .desk import Desk, review

__all__ = ["Desk", "review"]


class _Package(type(__import__("sys"))):  # type: ignore[misc]
    """This package, callable as ``review``: importing ``imagekit.review.store`` first makes
    ``imagekit.review`` the package rather than the function, and ``imagekit.review(images)`` works either way."""

    def __call__(self, *args: object, **kwargs: object) -> Desk:
        return review(*args, **kwargs)  # type: ignore[arg-type]


__import__("sys").modules[__name__].__class__ = _Package
