"""Settings of one sandbox instance; passed to ``create_app``, never read from module globals."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SandboxSettings:
    """Where a sandbox keeps its data and how it behaves."""

    data_dir: Path
    database_url: str | None = None
    """Any SQLAlchemy URL; default: SQLite (WAL) at ``<data_dir>/sandbox.db``."""
    latency: float = 0.0
    """Seconds every generation and every edit takes at least (for testing clients)."""
    base_size: int = 1024
    """Long side, in pixels, of a generated image (ratios map onto it)."""
    controls: bool = True
    """Serve the sandbox-only controls under ``/sandbox`` (clock, faults, users)."""
    controls_need_token: bool = False
    """The controls answer only requests carrying the admin token in ``X-Sandbox-Token``; ``serve``
    turns this on whenever it listens beyond loopback."""
    allowed_hosts: tuple[str, ...] = ()
    """Names a request's Host header may give besides IP literals and localhost; any other name is
    refused (a page whose name was re-bound to this address must not reach the sandbox)."""
    max_upload_bytes: int = 30 * 1024 * 1024
    """Largest request body, mask or ``data:`` URL accepted (Clipdrop's anchor: 30 MB)."""
    max_upload_pixels: int = 25_000_000
    """Largest decoded upload (Clipdrop's anchor: 16-25 MP)."""
    render_slots: int = 1
    """Binary variants (scaled, watermarked, re-encoded) rendered at once; an 8x render holds a few
    hundred MB, so more slots trade memory for speed. Each variant is rendered once, then cached."""
    render_cache_mb: float = 512
    """Most MB the rendered variants in ``images/cache/`` may hold; the least recently used go first
    (``serve --render-cache-mb``; 0 keeps none: every variant is rendered for its answer)."""
    spec_exact: bool = False
    """Answer exactly as the interface shows, without the sandbox's extensions (the credit headers,
    ``groupId`` in image metadata, ``sourceImageId`` in EditInfo; ``seed`` is ignored like any
    unknown field). Every rule (credits, limits, cancellation) is the same in both modes."""
    outage_patience: float = 30.0
    """Seconds charged work waits for an unreachable database to record its outcome; past that it
    is answered 503 and refunded once the database answers again (see ``outage.py``)."""
    db_wait: float = 30.0
    """The longest one statement, commit or connection check may wait on a PostgreSQL database before
    it counts as unreachable, however it went silent (a frozen server too; see ``store/db.py``)."""
    workers: int = 16
    """Threads that run asynchronous generations (enough for the largest simultaneousLimit, 8, twice)."""
    worker_header: bool = False
    """Name the serving process in an ``X-Sandbox-Worker`` header of every response (``serve
    --worker-header``): tests and benchmarks check with it that load reaches every worker."""

    @property
    def url(self) -> str:
        return self.database_url or f"sqlite:///{Path(self.data_dir) / 'sandbox.db'}"

    @property
    def image_dir(self) -> Path:
        return Path(self.data_dir) / "images"
