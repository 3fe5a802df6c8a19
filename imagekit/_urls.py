"""URLs as people may see them: the one place a journal's, a ledger's, a webhook's or a service's URL
is made fit to print. A URL is shown as scheme, host, port and path, without its user, password,
query or fragment (a webhook's path is a secret too, in most services that issue them: shown
without it). Messages of other libraries that quote a URL are cleaned of its secrets likewise.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

__all__ = ["guard_logs", "shown_url", "without_secrets"]

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")


def shown_url(location: str, *, path: bool = True) -> str:
    """``location`` fit to print: a URL without user, password, query and fragment (and without its
    path when ``path`` is False); a file path as it is."""
    if not _URL.match(location):
        return location
    parts = urlsplit(location)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is no number: not shown
        port = ""
    return f"{parts.scheme}://{host}{port}" + (parts.path if path else "")


def without_secrets(text: str, url: str, *, path: bool = True) -> str:
    """``text`` (another library's message about ``url``) with the URL as ``shown_url`` shows it and
    its password, user, query (and, when ``path`` is False, path) replaced by ``***``."""
    if not _URL.match(url):
        return text
    parts = urlsplit(url)
    text = text.replace(url, shown_url(url, path=path))
    secrets = [parts.password, parts.query, parts.fragment, parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""]
    if not path and parts.path.strip("/"):
        secrets.append(parts.path.strip("/"))
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    if parts.username and len(parts.username) > 3:  # a short name would mangle words
        text = text.replace(parts.username, "***")
    return text


_GUARDED: dict[str, bool] = {}
"""URLs holding secrets that httpx's own request log lines must not show (value: show the path)."""


class _Scrubbed(logging.Filter):
    """Rewrites a log line of httpx's (``HTTP Request: POST <url> ...``) without a guarded URL's secrets."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _GUARDED:
            text = record.getMessage()
            for url, path in list(_GUARDED.items()):
                text = without_secrets(text, url, path=path)
            record.msg, record.args = text, ()
        return True


_FILTER = _Scrubbed()


def guard_logs(url: str, *, path: bool = True) -> None:
    """Keep ``url``'s secrets (user, password, query; its path too when ``path`` is False) out of the
    lines httpx logs about its requests (at INFO, which a notebook or an app may show)."""
    parts = urlsplit(url) if _URL.match(url) else None
    if parts is None or not (parts.password or parts.username or parts.query or not path) or url in _GUARDED:
        return
    _GUARDED[url] = path
    for name in ("httpx", "httpcore"):
        if _FILTER not in logging.getLogger(name).filters:
            logging.getLogger(name).addFilter(_FILTER)
