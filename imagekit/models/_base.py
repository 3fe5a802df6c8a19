"""The base of every model: lenient on input, snake_case attributes over the service's camelCase."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, PrivateAttr
from pydantic.alias_generators import to_camel


def _blank_to_none(value: Any) -> Any:
    return None if value == "" else value


Number = int | float
"""A JSON number; numeric strings ("12", "0.5") are accepted and converted."""

Timestamp = Annotated[datetime | None, BeforeValidator(_blank_to_none)]
"""An ISO 8601 date-time; an empty string reads as None."""


class Resource(BaseModel):
    """A service object. Every field is optional and unknown fields are kept (see ``model_extra``),
    so a service that adds, drops or nulls a field does not break the client.

    Field docstrings (from the spec) sit under each attribute for readers and IDEs; they are not
    copied into ``Field.description`` because pydantic's source parsing doubles the import time.
    """

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        protected_namespaces=(),
        defer_build=True,  # schemas build on first use: keeps `import imagekit` fast
    )

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # Unset fields are the norm in a lenient model; listing them all buries what is there.
        return ((name, value) for name, value in super().__repr_args__() if value is not None)

    def to_wire(self) -> dict[str, Any]:
        """The object as the service spells it (camelCase, unknown fields included)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class Charged(Resource):
    """The result of a call that may cost credits, with the credit headers of its response."""

    _charge: tuple[Number | None, Number | None] = PrivateAttr(default=(None, None))

    @property
    def credits_charged(self) -> Number | None:
        """Credits this call consumed (``X-Credits-Consumed``), None if not reported."""
        return self._charge[0]

    @property
    def credits_remaining(self) -> Number | None:
        """Total balance left after the call (``X-Remaining-Credits``), None if not reported."""
        return self._charge[1]
