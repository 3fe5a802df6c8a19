"""Client and AsyncClient: connection lifecycle, one attribute per resource, and shortcuts.

The endpoints live in ``imagekit.resources``; the clients add shortcuts for the common calls
(``ik.me()`` is ``ik.users.me()``). Each client types its own: ``Client.me()`` returns a User,
``AsyncClient.me()`` a coroutine of one. ``with_options()`` (alias ``copy()``) derives a client
with some settings changed, ``Client.to_async()`` an AsyncClient twin; both keep the transport.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack

import httpx

from ._http import AsyncHTTP, SyncHTTP, Transport
from ._kept import KEPT
from ._transport import LentTransport
from ._urls import shown_url
from .config import ClientOptions, Config
from .errors import ConfigError
from .resources.edits import AsyncEdits, Edits
from .resources.images import AsyncImages, CreateOptions, Images
from .resources.prompts import AsyncPrompts, Prompts
from .resources.users import AsyncUsers, Users
from .tags import tags as _tags

if TYPE_CHECKING:
    from .images import AsyncCreateResult, AsyncImage, CreateResult, Image
    from .ledger import Alert, Budget, Ledger
    from .media import ImageSource
    from .models import ImageCaption, Style, TextPrompt, Usage, User
    from .workflows.batches.batch import Batch
    from .workflows.batches.rows import RowSource

__all__ = ["Client", "AsyncClient"]

C = TypeVar("C", bound="_ClientBase")


class _ClientBase:
    """Settings, ledger and derivation shared by both clients."""

    _http: SyncHTTP | AsyncHTTP

    def __init__(self, base_url: str | None = None, api_key: str | None = None,
                 **options: Unpack[ClientOptions]) -> None:
        _check(options)
        self._setup(Config.from_env(base_url, api_key).updated(options), options)

    def _setup(self, config: Config, options: ClientOptions) -> None:
        self._config = config
        self._transport = options.get("transport")
        self._open(self._transport)
        self._ledger = _ledger_for(options.get("ledger"), options.get("account"), config)
        if self._ledger is not None:
            from .ledger.recorder import Recorder

            # an account given (the embedded sandbox's, a derived client's) is kept; else the user's, once known
            self._http.hooks.append(Recorder(self._ledger, self._config, adopts=options.get("account") is None))

    def _open(self, transport: Transport | None) -> None:
        raise NotImplementedError

    def _derived(self, config: Config, options: ClientOptions) -> ClientOptions:
        """Options for a client derived from this one: its transport (lent) and ledger, unless changed."""
        derived: ClientOptions = {**options}
        if "transport" not in derived and self._transport is not None:
            derived["transport"] = LentTransport(self._transport)
        if "ledger" not in derived:
            derived["ledger"] = self._ledger or False
            if self._ledger is not None and (config.base_url, config.api_key) == (self.config.base_url,
                                                                                 self.config.api_key):
                derived.setdefault("account", self._ledger.account)
        return derived

    def with_options(self, *, base_url: str | None = None, api_key: str | None = None,
                     **options: Unpack[ClientOptions]) -> Self:
        """A new client of this kind with these settings changed and the rest (transport and ledger
        included) kept. Closing it leaves this client's transport open."""
        return self._derive(type(self), options, base_url=base_url, api_key=api_key)

    copy = with_options

    def _derive(self, kind: type[C], options: ClientOptions, *, base_url: str | None = None,
                api_key: str | None = None) -> C:
        _check(options)
        config = self._config.updated(options, base_url=base_url, api_key=api_key)
        client = kind.__new__(kind)
        client._setup(config, self._derived(config, options))
        return client

    @property
    def config(self) -> Config:
        """The settings this client was built with (the API key stays out of its repr)."""
        return self._config

    @property
    def ledger(self) -> Ledger | None:
        """The credit ledger recording this client's operations (None when turned off)."""
        return self._ledger

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={shown_url(self._config.base_url)!r})"

    def tags(self, mapping: Mapping[str, object] | None = None, /,
             **values: object) -> AbstractContextManager[dict[str, str]]:
        """``with ik.tags(experiment="grid-a"):`` tags every operation inside (``imagekit.tags``)."""
        return _tags(mapping, **values)

    def _set_budget(self, tag: Mapping[str, object] | None, tag_values: Mapping[str, object], *, limit: float,
                    warn_at: float | None, hard: bool, alerts: Sequence[float] | None, period: str | None,
                    tz: str, on_alert: Callable[[Alert], object] | None, webhook: str | None,
                    user: User | None = None) -> Budget:
        """``budget``'s work, once the plan (``user``) is known where ``period`` is the plan's."""
        if self._ledger is None:
            raise ConfigError("budgets live in the ledger, and this client has none (ledger=False)")
        if user is not None:  # the plan's own period: its month from the plan's start, or the UTC day
            from .ledger.periods import plan_period

            period = plan_period(user.plan.period if user.plan else None, user.plan_started_at)
            tz = "UTC" if period == "day" else tz
        return self._ledger.set_budget(tag, limit=limit, warn_at=warn_at, hard=hard, alerts=alerts, period=period,
                                       tz=tz, on_alert=on_alert, webhook=webhook, **tag_values)


class Client(_ClientBase):
    """A blocking client for the service (or the sandbox). Safe to use inside a running event loop.

    ``base_url`` and ``api_key`` default to ``IMAGEKIT_BASE_URL`` and ``IMAGEKIT_API_KEY``; the
    options (``ClientOptions``): ``timeout`` per request in seconds; ``max_retries`` (or a whole
    ``retry_policy``) bounds the safe retries; ``platform`` and ``api_type`` fill their headers;
    ``wire`` renames what the spec leaves unnamed; ``transport`` takes an httpx transport (tests
    use ``httpx.MockTransport``); ``ledger`` is the credit ledger: a SQLite file, a PostgreSQL URL
    a team shares (``postgresql://...``, needs ``imagekit[postgres]``), a Ledger, or False for none
    (default: ``IMAGEKIT_LEDGER_URL``, else ``$IMAGEKIT_HOME/ledger.sqlite``); ``account`` names the
    account in it (default: from base URL and key).
    """

    _http: SyncHTTP

    def _open(self, transport: Transport | None) -> None:
        self._http = SyncHTTP(self._config, _of_kind(transport, httpx.BaseTransport, 'Client'))
        self.users = Users(self)
        """Account endpoints."""
        self.images = Images(self)
        """Create, metadata and binaries."""
        self.edits = Edits(self)
        """Edits and their cancellation."""
        self.prompts = Prompts(self)
        """Text-to-prompt and image-to-prompt."""

    def to_async(self, **options: Unpack[ClientOptions]) -> AsyncClient:
        """An AsyncClient twin: the same service, key, settings, ledger and transport (a blocking-only
        transport serves it from worker threads), with ``options`` changed."""
        return self._derive(AsyncClient, options)

    def close(self) -> None:
        """Close pooled connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- shortcuts ---------------------------------------------------------------------------

    def me(self) -> User:
        """The caller's profile and plan."""
        return self.users.me()

    def usage(self) -> Usage:
        """The caller's usage counters."""
        return self.users.usage()

    def styles(self) -> list[Style]:
        """The caller's own styles."""
        return self.users.styles()

    def collection_count(self) -> int:
        """How many images are in the caller's collection."""
        return self.users.collection_count()

    def create(self, prompt: str, **options: Unpack[CreateOptions]) -> CreateResult:
        """Generate images from ``prompt`` plus one of ``image=``, ``style=`` or ``collection=``.

        Also ``count`` (1, 2, 4), ``ratio``, ``seed``, ``is_async`` (then ``wait()`` on the result)
        and the less common fields of CreateOptions. Returns the images, balances and cost.
        """
        return self.images.create(prompt, **options)

    def image(self, image_id: int) -> Image:
        """A handle on an existing image; no request is made."""
        return self.images.image(image_id)

    def cancel_edit(self, request_id: str) -> str:
        """Cancel an edit by its request id: "cancelled" or "not_running" (already finished)."""
        return self.edits.cancel(request_id)

    def text_to_prompt(self, text: str, *, style: Style | int | None = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        return self.prompts.text_to_prompt(text, style=style)

    def image_to_prompt(self, image: ImageSource, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing an image."""
        return self.prompts.image_to_prompt(image, language=language)

    def batch(self, rows: RowSource, *, tags: Mapping[str, object] | None = None, name: str | None = None,
              keys: Sequence[str] | None = None, **defaults: Any) -> Batch:
        """A batch of create requests: ``rows`` is a list of prompts, of dicts, a DataFrame or a
        ``imagekit.grid(...)``; ``defaults`` (style, ratio, count...) fill what rows leave out;
        ``tags`` label its ledger entries (over the tags in effect where it runs). ``name`` makes it
        a sweep several processes can drain through one PostgreSQL journal; ``keys`` spreads its
        rows over several accounts (default: this client's key)."""
        from .workflows.batches.batch import Batch

        return Batch(self, rows, tags=tags, name=name, keys=keys, **defaults)

    def budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = KEPT,
               hard: bool = KEPT, alerts: Sequence[float] | None = KEPT, period: str | None = KEPT,
               tz: str = KEPT, on_alert: Callable[[Alert], object] | None = None, webhook: str | None = KEPT,
               **tag_values: object) -> Budget:
        """Cap what one tag value (or, with none, this client's account) may spend, in this client's
        ledger (shared by everyone writing to it): ``ik.budget(experiment="grid-a", limit=500,
        period="month", tz="Europe/Berlin", on_alert=print)``; ``period="plan"`` counts over the plan's
        own period (its month from the plan's start, as the service grants credit; asks the service
        once). See ``Ledger.set_budget``."""
        return self._set_budget(tag, tag_values, limit=limit, warn_at=warn_at, hard=hard, alerts=alerts, period=period,
                                tz=tz, on_alert=on_alert, webhook=webhook, user=self.me() if period == "plan" else None)


class AsyncClient(_ClientBase):
    """An asyncio client with the same methods and settings as Client, awaitable. Works under
    Jupyter's running loop and keeps working when a new event loop replaces the old one."""

    _http: AsyncHTTP

    def _open(self, transport: Transport | None) -> None:
        self._http = AsyncHTTP(self._config, _of_kind(transport, httpx.AsyncBaseTransport, 'AsyncClient'))
        self.users = AsyncUsers(self)
        """Account endpoints."""
        self.images = AsyncImages(self)
        """Create, metadata and binaries."""
        self.edits = AsyncEdits(self)
        """Edits and their cancellation."""
        self.prompts = AsyncPrompts(self)
        """Text-to-prompt and image-to-prompt."""

    def to_async(self, **options: Unpack[ClientOptions]) -> AsyncClient:
        """This client with ``options`` changed (``with_options``): an AsyncClient is its own
        twin, so code given either kind of client can ask for the asynchronous one alike."""
        return self.with_options(**options)

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- shortcuts ---------------------------------------------------------------------------

    async def me(self) -> User:
        """The caller's profile and plan."""
        return await self.users.me()

    async def usage(self) -> Usage:
        """The caller's usage counters."""
        return await self.users.usage()

    async def styles(self) -> list[Style]:
        """The caller's own styles."""
        return await self.users.styles()

    async def collection_count(self) -> int:
        """How many images are in the caller's collection."""
        return await self.users.collection_count()

    async def create(self, prompt: str, **options: Unpack[CreateOptions]) -> AsyncCreateResult:
        """Generate images from ``prompt`` plus one of ``image=``, ``style=`` or ``collection=``
        (the options as for ``Client.create``)."""
        return await self.images.create(prompt, **options)

    def image(self, image_id: int) -> AsyncImage:
        """A handle on an existing image; no request is made."""
        return self.images.image(image_id)

    async def cancel_edit(self, request_id: str) -> str:
        """Cancel an edit by its request id: "cancelled" or "not_running" (already finished)."""
        return await self.edits.cancel(request_id)

    async def text_to_prompt(self, text: str, *, style: Style | int | None = None) -> TextPrompt:
        """An enhanced prompt from ``text``, optionally for a style."""
        return await self.prompts.text_to_prompt(text, style=style)

    async def image_to_prompt(self, image: ImageSource, *, language: str | None = "en") -> ImageCaption:
        """Caption prompts describing an image."""
        return await self.prompts.image_to_prompt(image, language=language)

    def batch(self, rows: RowSource, *, tags: Mapping[str, object] | None = None, name: str | None = None,
              keys: Sequence[str] | None = None, **defaults: Any) -> Batch:
        """A batch of create requests, as ``Client.batch``; run it with ``await batch.arun()``."""
        from .workflows.batches.batch import Batch

        return Batch(self, rows, tags=tags, name=name, keys=keys, **defaults)

    async def budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = KEPT,
                     hard: bool = KEPT, alerts: Sequence[float] | None = KEPT, period: str | None = KEPT,
                     tz: str = KEPT, on_alert: Callable[[Alert], object] | None = None, webhook: str | None = KEPT,
                     **tag_values: object) -> Budget:
        """As ``Client.budget``; it awaits the service only for ``period="plan"``."""
        user = await self.me() if period == "plan" else None
        return self._set_budget(tag, tag_values, limit=limit, warn_at=warn_at, hard=hard, alerts=alerts, period=period,
                                tz=tz, on_alert=on_alert, webhook=webhook, user=user)


def _check(options: ClientOptions) -> None:
    unknown = set(options) - ClientOptions.__optional_keys__
    if unknown:
        raise TypeError(f"unexpected client options: {', '.join(sorted(unknown))}")


T = TypeVar("T", httpx.BaseTransport, httpx.AsyncBaseTransport)


def _of_kind(transport: Transport | None, kind: type[T], client: str) -> T | None:
    if transport is None or isinstance(transport, kind):
        return transport
    raise TypeError(f"{client} needs an httpx.{kind.__name__}, not {type(transport).__name__}"
                    + (" (Client.to_async() lends a blocking one to an AsyncClient)" if client == "AsyncClient" else ""))


def _ledger_for(option: Ledger | str | os.PathLike[str] | bool | None, account: str | None,
                config: Config) -> Ledger | None:
    """The ledger a client records into: its own file by default, a given one, or none."""
    if option is False:
        return None
    from .ledger import Ledger, account_of  # sqlite3 and the ledger load when a client is made, not on import

    account = account or account_of(config.base_url, config.api_key)
    if isinstance(option, Ledger):
        return option.for_account(account)
    return Ledger(None if option is None or option is True else option, account=account)
