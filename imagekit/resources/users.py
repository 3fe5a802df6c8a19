"""The caller's account: profile, usage, own styles, collection count."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import models  # the model classes load on the first response (see imagekit.models)
from .._http import ME, Call, Response
from ._common import AsyncNamespace, Namespace, parse

if TYPE_CHECKING:
    from ..models import Style, Usage, User

USAGE = Call("GET", "/api/users/me/usage", read="usage")
STYLES = Call("GET", "/api/users/me/styles", read="styles")
COLLECTION_COUNT = Call("GET", "/api/users/me/collectionCount")


def _styles(response: Response) -> list[Style]:
    return [models.Style.model_validate(item) for item in response.json()]


def _count(response: Response) -> int:
    return int(json.loads(response.content))


class Users(Namespace):
    """The caller's account."""

    def me(self) -> User:
        """The caller's profile and plan."""
        return parse(models.User, self._http.send(ME))

    def usage(self) -> Usage:
        """The caller's usage counters."""
        return parse(models.Usage, self._http.send(USAGE))

    def styles(self) -> list[Style]:
        """The caller's own styles."""
        return _styles(self._http.send(STYLES))

    def collection_count(self) -> int:
        """How many images are in the caller's collection."""
        return _count(self._http.send(COLLECTION_COUNT))


class AsyncUsers(AsyncNamespace):
    """The caller's account (awaitable)."""

    async def me(self) -> User:
        """The caller's profile and plan."""
        return parse(models.User, await self._http.send(ME))

    async def usage(self) -> Usage:
        """The caller's usage counters."""
        return parse(models.Usage, await self._http.send(USAGE))

    async def styles(self) -> list[Style]:
        """The caller's own styles."""
        return _styles(await self._http.send(STYLES))

    async def collection_count(self) -> int:
        """How many images are in the caller's collection."""
        return _count(await self._http.send(COLLECTION_COUNT))
