"""Quality signals computed offline from what is at hand: near-duplicates, sharpness, noise, entropy,
and edits that change pixels outside their mask. Signals flag and sort; they never delete or skip.

    imagekit.quality([img, "photo.png", pil_image])   # a DataFrame, one row per image
    batch.quality()                                   # the batch's images, joinable on image_id
    imagekit.edit_leak(before, after, mask)           # share of pixels outside the mask changed

Needs ``pip install 'imagekit[quality]'`` (NumPy, OpenCV, pandas: nothing is downloaded when run).
One home per concern, each importing only those above it (and never the workflows, which import it):

- ``pixels``: pure functions on pixels (hash, sharpness, noise, entropy, leak);
- ``store``: the account's signals kept beside the ledger (``hashes.sqlite``);
- ``frame``: what is measured (handles, files, PIL images, batches) and the DataFrame.
"""

from .frame import HasQualityItems, Item, edit_leak, quality
from .store import HashStore

__all__ = ["quality", "edit_leak", "Item", "HasQualityItems", "HashStore"]
