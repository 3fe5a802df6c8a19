"""Making an image again from its file: the request its provenance names, checked, priced, then sent.

The file is data: ``provenance.trust.request_of`` holds it to what the toolkit writes before anything else
happens, and the price shown is a ceiling (``max_credits``) the request must stay under.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from ..config import SANDBOX_SERVICE
from ..errors import BudgetExceededError, ValidationError
from ..provenance.read import read_provenance
from ..provenance.record import Provenance, file_service, service_of
from ..provenance.trust import Request, request_of

if TYPE_CHECKING:
    from ..client import Client
    from ..images import CreateResult, Image
    from ..ledger.prices import Estimate

__all__ = ["reproduce", "price", "send"]

log = logging.getLogger("imagekit")


def reproduce(path: str | os.PathLike[str], client: Client, *, max_credits: float | None = None,
              confirm: bool = False) -> CreateResult | Image | None:
    """Send the request that made the image in ``path`` (a file the toolkit wrote: a path or an fsspec
    URL) again through ``client`` (default ``imagekit.connect()``), after printing the request and
    its price. A create answers a CreateResult, an edit (of the same parent image) an Image.

    The file is checked first (``ValidationError`` names the field and the file: a local path, a field
    the toolkit does not write, a count or ratio the interface does not allow). ``max_credits``: the
    most it may cost (default: the price shown), refused beyond with BudgetExceededError;
    ``confirm=True`` asks before sending (None when the answer is not yes). Nothing is charged when
    it is refused. A service without seeds draws a new variation of the same request."""
    where = os.fspath(path)
    try:
        record = read_provenance(path)
    except ValueError as exc:
        raise ValidationError(f"{where}: {exc}", where=where) from exc
    request = request_of(record, where)
    here = service_of(file_service(client.config))
    named = request.parent_id if request.parent_id is not None else request.options.get("image")
    if record.service not in (None, here) and named is not None:  # an image id means another image elsewhere
        local = (" (another local sandbox: another IMAGEKIT_HOME's, or the one imagekit demo runs against, "
                 "removed when the demo ends)") if record.service.startswith(SANDBOX_SERVICE) else ""
        raise ValidationError(f"{where}: image {named} is an image of {record.service}{local}, where it was made, not "
                              f"of {here}: give a client of that service; nothing was sent", field="service",
                              value=record.service, where=where)
    cost = price(record, client, where)
    made = "" if record.service in (None, here) else f" (it was made at {record.service})"
    print(f"Reproducing image {record.image_id} at {here}{made}: {record.describe()}, "
          f"{'about' if cost.exact else 'at most'} {cost:g} credits")
    for note in cost.notes():
        print(f"  {note}")
    limit = cost if max_credits is None else max_credits
    if cost > limit:
        raise BudgetExceededError(f"{where}: {record.describe()} may cost {cost:g} credits, more than max_credits="
                                  f"{limit:g}; nothing was sent", budget=limit, cost=float(cost))
    if confirm and input(f"Send it, for up to {cost:g} credits? [y/N] ").strip().lower() not in ("y", "yes"):
        print("Not sent.")
        return None
    result = _sent(request, client)
    charged = result.credits_charged
    if charged is not None and charged > limit:  # a price model out of date: said, since it cannot be undone
        log.warning("%s: the service charged %g credits, more than max_credits=%g", where, charged, limit)
    if (differs := _size_note(where, result)) is not None:
        print(f"  {differs}")
    return result


def _size_note(where: str, result: CreateResult | Image) -> str | None:
    """A line when the image drawn again is not the original's size (a service set to draw another
    size, as the demo's sandbox draws 512 px): None when it is, or when either size is unknown."""
    from PIL import Image as PILImage, UnidentifiedImageError

    from ..storage import opened

    images = getattr(result, "images", None)  # a create's result; an edit answers its Image
    made = images[0] if images else result
    drawn = getattr(made, "resolution", None)
    try:
        with opened(where) as source, PILImage.open(source) as original:
            size = "x".join(map(str, original.size))
    except (OSError, UnidentifiedImageError):  # an SVG, a file gone since
        return None
    if not drawn or drawn == size:
        return None
    return (f"the original is {size}; this service drew {drawn} for the same request (it is set to draw another "
            "size: a sandbox draws its --base-size)")


def price(record: Provenance, client: Client, where: str = "the file") -> Estimate:
    """Credits sending ``record``'s request again through ``client`` costs (the one price model:
    the plan's prices, the caller's styles and what the ledger learned); the request is checked first."""
    from ..ledger import Prices

    request = request_of(record, where)
    learned = client.ledger.prices() if client.ledger is not None else {}
    if request.operation == "create":
        prices = Prices.of_account(client.me(), client.styles(), learned)
        options = request.options
        return prices.estimate([(options.get("style"), options.get("collection"), options.get("count") or 1)])
    return Prices.of_account(client.me(), (), learned).edit_estimate(request.operation, request.options.get("scale"))


def send(record: Provenance, client: Client, where: str = "the file") -> CreateResult | Image:
    """Send ``record``'s request through ``client``, as it was sent when the image was made (checked
    first, as ``reproduce`` checks it)."""
    return _sent(request_of(record, where), client)


def _sent(request: Request, client: Client) -> CreateResult | Image:
    from ..resources.edits import OPERATION_OF

    if request.operation == "create":
        assert request.prompt is not None
        return client.create(request.prompt, **request.options)
    method = {operation: name for name, operation in OPERATION_OF.items()}[request.operation]
    assert request.parent_id is not None
    options: dict[str, Any] = dict(request.options)
    result: Image = getattr(client.image(request.parent_id), method)(**options)
    return result
