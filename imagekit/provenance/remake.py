"""Making an image again from its file: the request its provenance names, priced, then sent."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .read import read_provenance
from .record import NOT_KEPT, Provenance, service_of

if TYPE_CHECKING:
    from ..client import Client
    from ..images import CreateResult, Image

__all__ = ["reproduce", "price", "send"]


def reproduce(path: str | os.PathLike[str], client: Client | None = None) -> CreateResult | Image:
    """Send the request that made the image in ``path`` (a file the toolkit wrote: a path or an fsspec
    URL) again through ``client`` (default ``imagekit.connect()``), after printing the request and
    its price. A create answers a CreateResult, an edit (of the same parent image) an Image."""
    record = read_provenance(path)
    if client is None:
        from ..embedded import connect

        client = connect()
    here = service_of(client.config.base_url)
    made = "" if record.service in (None, here) else f" (it was made at {record.service})"
    print(f"Reproducing image {record.image_id} at {here}{made}: {record.describe()}, "
          f"about {price(record, client):g} credits")
    return send(record, client)


def price(record: Provenance, client: Client) -> float:
    """Credits sending ``record``'s request again through ``client`` costs (the one price model:
    the plan's prices, the caller's styles and what the ledger learned)."""
    from ..ledger import Prices
    from ..resources.edits import OPERATION_OF

    learned = client.ledger.prices() if client.ledger is not None else {}
    if record.operation == "create":
        prices = Prices.of_account(client.me(), client.styles(), learned)
        collection = record.params.get("collection")
        return prices.create(record.style, None if collection is None else int(collection), record.count or 1)
    if record.operation not in OPERATION_OF.values():
        raise ValueError(f"image {record.image_id} was made by {record.operation!r}, which this toolkit cannot send")
    return Prices.of_account(client.me(), (), learned).edit(record.operation, record.params.get("scale"))


def send(record: Provenance, client: Client) -> CreateResult | Image:
    """Send ``record``'s request through ``client``, as it was sent when the image was made."""
    from ..resources.edits import OPERATION_OF

    lost = sorted(name for name, value in record.params.items() if value == NOT_KEPT)
    if lost:
        raise ValueError(f"image {record.image_id}: {record.describe()} cannot be sent again from its file: "
                         f"{', '.join(lost)} {'is' if len(lost) == 1 else 'are'} not kept in files")
    if record.operation == "create":
        if record.prompt is None:
            raise ValueError(f"image {record.image_id}: its file names no prompt")
        options: dict[str, Any] = {"style": record.style, "ratio": record.ratio, "count": record.count, **record.params}
        return client.create(record.prompt, **{name: value for name, value in options.items() if value is not None})
    method = {operation: name for name, operation in OPERATION_OF.items()}.get(record.operation)
    if method is None or record.parent_id is None:
        raise ValueError(f"image {record.image_id}: its file names no edit this toolkit can send")
    edit = getattr(client.image(record.parent_id), method)
    result: Image = edit(**record.params)
    return result
