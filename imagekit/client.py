"""Client and AsyncClient: connection lifecycle and one attribute per resource; and ``connect()``.

The endpoints live in ``imagekit.resources``; the clients add shortcuts for the common calls
(``ik.me()`` is ``ik.users.me()``). Shortcuts are shared: on AsyncClient they return awaitables.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager as ContextManager
from typing import Any, Unpack

from . import config as _config
from ._http import AsyncHTTP, SyncHTTP
from ._retry import RetryPolicy
from .config import Config
from .errors import ConfigError
from .budgets import Budget
from .ledger import Ledger, account_of, sandbox_account
from .resources.edits import AsyncEdits, Edits
from .resources.images import AsyncImages, CreateOptions, Images
from .resources.prompts import AsyncPrompts, Prompts
from .resources.users import AsyncUsers, Users
from .tags import tags as _tags
from .wire import DEFAULT_WIRE, Wire

log = logging.getLogger("imagekit")

__all__ = ["Client", "AsyncClient", "connect"]


class _ClientBase:
    """Settings and shortcuts shared by both clients."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        platform: str | None = "api",
        api_type: str | None = None,
        wire: Wire | None = None,
        retry_policy: RetryPolicy | None = None,
        transport: Any = None,
        ledger: Ledger | str | os.PathLike | bool | None = None,
        account: str | None = None,
    ) -> None:
        self._config = Config.from_env(
            base_url,
            api_key,
            timeout=timeout,
            platform=platform,
            api_type=api_type,
            retry=retry_policy or RetryPolicy(max_retries=max_retries),
            wire=wire or DEFAULT_WIRE,
        )
        self._open(transport)
        self._ledger = _ledger_for(ledger, account or account_of(self._config.base_url, self._config.api_key))
        if self._ledger is not None:
            self._http.hooks.append(self._ledger.hook(self._config))

    def _open(self, transport: Any) -> None:
        raise NotImplementedError

    @property
    def config(self) -> Config:
        """The settings this client was built with (the API key stays out of its repr)."""
        return self._config

    @property
    def ledger(self) -> Ledger | None:
        """The credit ledger recording this client's operations (None when turned off)."""
        return self._ledger

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._config.base_url!r})"

    def batch(self, rows: Any, *, tags: Mapping[str, object] | None = None, **defaults: Any) -> Any:
        """A batch of create requests: ``rows`` is a list of prompts, of dicts, a DataFrame or a
        ``imagekit.grid(...)``; ``defaults`` (style, ratio, count...) fill what rows leave out;
        ``tags`` label its ledger entries (over the tags in effect where it runs)."""
        from .workflows.batch import Batch

        return Batch(self, rows, tags=tags, **defaults)

    def tags(self, mapping: Mapping[str, object] | None = None, /, **values: object) -> ContextManager[dict[str, str]]:
        """``with ik.tags(experiment="grid-a"):`` tags every operation inside (``imagekit.tags``)."""
        return _tags(mapping, **values)

    def budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = 0.8,
               hard: bool = True, **tag_values: object) -> Budget:
        """Cap what one tag value may spend, in this client's ledger (shared by everyone writing to
        it): ``ik.budget(experiment="grid-a", limit=50)``; see ``Ledger.set_budget``."""
        if self._ledger is None:
            raise ConfigError("budgets live in the ledger, and this client has none (ledger=False)")
        return self._ledger.set_budget(tag, limit=limit, warn_at=warn_at, hard=hard, **tag_values)

    def me(self) -> Any:
        """The caller's profile and plan (User)."""
        return self.users.me()

    def usage(self) -> Any:
        """The caller's usage counters (Usage)."""
        return self.users.usage()

    def styles(self) -> Any:
        """The caller's own styles (list of Style)."""
        return self.users.styles()

    def collection_count(self) -> Any:
        """How many images are in the caller's collection."""
        return self.users.collection_count()

    def create(self, prompt: str, **options: Unpack[CreateOptions]) -> Any:
        """Generate images from ``prompt`` plus one of ``image=``, ``style=`` or ``collection=``.

        Also ``count`` (1, 2, 4), ``ratio``, ``seed``, ``is_async`` (then ``wait()`` on the result)
        and the less common fields of CreateOptions. Returns the images, balances and cost.
        """
        return self.images.create(prompt, **options)

    def image(self, image_id: int) -> Any:
        """A handle on an existing image; no request is made."""
        return self.images.image(image_id)

    def cancel_edit(self, request_id: str) -> Any:
        """Cancel an edit by its request id: "cancelled" or "not_running" (already finished)."""
        return self.edits.cancel(request_id)

    def text_to_prompt(self, text: str, *, style: Any = None) -> Any:
        """An enhanced prompt from ``text``, optionally for a style (TextPrompt)."""
        return self.prompts.text_to_prompt(text, style=style)

    def image_to_prompt(self, image: Any, *, language: str | None = "en") -> Any:
        """Caption prompts describing an image (ImageCaption)."""
        return self.prompts.image_to_prompt(image, language=language)


class Client(_ClientBase):
    """A blocking client for the service (or the sandbox). Safe to use inside a running event loop.

    ``base_url`` and ``api_key`` default to ``IMAGEKIT_BASE_URL`` and ``IMAGEKIT_API_KEY``;
    ``timeout`` is per request in seconds; ``max_retries`` (or a whole ``retry_policy``) bounds the
    safe retries; ``platform`` and ``api_type`` fill their headers; ``wire`` renames what the spec
    leaves unnamed; ``transport`` takes an httpx transport (tests use ``httpx.MockTransport``);
    ``ledger`` is the credit ledger: a SQLite file, a PostgreSQL URL a team shares
    (``postgresql://...``, needs ``imagekit[postgres]``), a Ledger, or False for none (default:
    ``IMAGEKIT_LEDGER_URL``, else ``$IMAGEKIT_HOME/ledger.sqlite``); ``account`` names the account
    in it (default: from base URL and key).
    """

    def _open(self, transport: Any) -> None:
        self._http = SyncHTTP(self._config, transport)
        self.users = Users(self)
        """Account endpoints."""
        self.images = Images(self)
        """Create, metadata and binaries."""
        self.edits = Edits(self)
        """Edits and their cancellation."""
        self.prompts = Prompts(self)
        """Text-to-prompt and image-to-prompt."""

    def close(self) -> None:
        """Close pooled connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class AsyncClient(_ClientBase):
    """An asyncio client with the same methods and settings as Client, awaitable. Works under
    Jupyter's running loop and keeps working when a new event loop replaces the old one."""

    def _open(self, transport: Any) -> None:
        self._http = AsyncHTTP(self._config, transport)
        self.users = AsyncUsers(self)
        """Account endpoints."""
        self.images = AsyncImages(self)
        """Create, metadata and binaries."""
        self.edits = AsyncEdits(self)
        """Edits and their cancellation."""
        self.prompts = AsyncPrompts(self)
        """Text-to-prompt and image-to-prompt."""

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


def _ledger_for(option: Any, account: str) -> Ledger | None:
    """The ledger a client records into: its own file by default, a given one, or none."""
    if option is False:
        return None
    if isinstance(option, Ledger):
        return option.for_account(account)
    return Ledger(None if option in (None, True) else option, account=account)


_embedded: dict[bool, Any] = {}
"""The process's embedded sandboxes, by spec-exactness."""
_embedded_lock = threading.Lock()
_SANDBOX_EXTRAS = {"fastapi", "starlette", "uvicorn", "sqlalchemy", "multipart", "python_multipart", "cv2", "vtracer",
                   "resvg_py", "numpy", "filelock"}


def _embedded_sandbox(spec_exact: bool = False) -> Any:
    """The process's embedded sandbox, started on first use and stopped at exit."""
    with _embedded_lock:
        if spec_exact not in _embedded:
            from .sandbox import EmbeddedSandbox  # FastAPI, SQLAlchemy... load on start(), only here

            try:
                sandbox = _start_embedded(functools.partial(EmbeddedSandbox, spec_exact=spec_exact))
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] not in _SANDBOX_EXTRAS:
                    raise  # a bug, not a missing extra
                raise ConfigError(
                    "no IMAGEKIT_BASE_URL/IMAGEKIT_API_KEY, and the local sandbox needs "
                    f"pip install 'imagekit[sandbox]' ({exc.name} is missing)"
                ) from exc
            atexit.register(sandbox.stop)
            _embedded[spec_exact] = sandbox
        return _embedded[spec_exact]


def _start_embedded(factory: Any) -> Any:
    """The shared sandbox in IMAGEKIT_HOME, or a private one when another process serves it."""
    from .sandbox.service import DataDirInUse

    try:
        return factory(data_dir=_config.home_dir() / "sandbox").start()
    except DataDirInUse as exc:
        log.warning("%s; this process uses a temporary sandbox of its own", exc)
        return factory().start()


def connect(base_url: str | None = None, api_key: str | None = None, *, asynchronous: bool = False,
            spec_exact: bool = False, **options: Any) -> Client | AsyncClient:
    """A client for the configured service, or for a local sandbox when none is configured.

    Uses ``base_url``/``api_key``, else ``IMAGEKIT_BASE_URL``/``IMAGEKIT_API_KEY``; with neither,
    starts one embedded sandbox per process (data in ``IMAGEKIT_HOME``, default ``~/.imagekit``)
    and connects as its demo user; ``spec_exact=True`` makes that sandbox answer exactly as the
    interface shows, without its extensions. ``asynchronous=True`` returns an AsyncClient.
    """
    base_url = base_url or os.environ.get(_config.ENV_BASE_URL)
    api_key = api_key or os.environ.get(_config.ENV_API_KEY)
    if bool(base_url) != bool(api_key):
        given, missing = ((_config.ENV_BASE_URL, _config.ENV_API_KEY) if base_url
                          else (_config.ENV_API_KEY, _config.ENV_BASE_URL))
        what = f"your API key for {base_url}" if base_url else "the service's address"
        raise ConfigError(f"{given} is set but {missing} is not: set {missing} to {what} "
                          f"(set both to reach a service), or unset {given} to use the local sandbox.")
    if not base_url:
        sandbox = _embedded_sandbox(spec_exact)
        base_url, api_key = sandbox.url, sandbox.api_key
        # Its port and the demo user's key change every session; the data folder's id does not.
        options.setdefault("account", sandbox_account(sandbox.identity))
    elif spec_exact:
        raise ConfigError("spec_exact=True applies to the embedded sandbox; a configured service answers as it does")
    return (AsyncClient if asynchronous else Client)(base_url, api_key, **options)

