"""The review desk: what a person decides about images (ratings, selections, votes, notes), kept as
made (in ``imagekit.decisions``) and the input to the next step, which is priced before it runs.

- ``opening``: ``review(images)``, a desk of a batch, a sweep, a folder, Images or chain results;
- ``desk``: ``Desk``, the Python face of every decision;
- ``send``: the picks through an edit chain, quoted first.

It imports the decisions, the ledger, the provenance and the workflows, never the sandbox; nothing
imports it but ``imagekit.review`` and the widget. (The package is ``desk``, not ``review``: a
submodule named as the function ``imagekit.review`` would take its place on the package once imported.)
"""

from .desk import Desk
from .opening import review

__all__ = ["Desk", "review"]

