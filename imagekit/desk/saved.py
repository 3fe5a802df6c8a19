"""An image a desk opens from the file imagekit saved it to: its provenance says which image it is, its
pixels are the file's. A folder's desk needs no service to rate, select, vote, note and export; only
sending the picks on does (``Desk.send`` then asks for a client of the service that made them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ValidationError
from ..provenance.record import Provenance

__all__ = ["SavedImage", "offline_line"]


@dataclass(eq=False)
class SavedImage:
    """One image of a folder: its id on the service that made it, its record and its file."""

    provenance: Provenance
    file: Path

    @property
    def id(self) -> int:
        """The image's id on its service."""
        return self.provenance.image_id

    @property
    def credits(self) -> float | None:
        """What it cost, as its file says."""
        return self.provenance.credits

    def __repr__(self) -> str:
        return f"SavedImage(#{self.id}, {str(self.file)!r})"

    def read(self) -> bytes:
        """The file's bytes."""
        return self.file.read_bytes()

    def _repr_png_(self) -> bytes | None:
        from ..media import thumbnail_png

        return thumbnail_png(self.read()) if self.file.is_file() else None


def offline_line(service: str | None, where: str, what: str) -> ValidationError:
    """The one line for what a desk opened from files cannot do without a client of its service."""
    made = f"made by {service}" if service else "whose service their files do not name"
    return ValidationError(f"{what} needs the service: the images of {where} are opened from their files ({made}), "
                           f"and no client of it was given: open the desk with one, "
                           f"imagekit.review({where!r}, client)", field="client", value=service)
