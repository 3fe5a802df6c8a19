"""Where files go: a local folder, or any fsspec URL (``s3://bucket/prefix``, ``gs://...``, ``memory://...``).

Local paths need only the standard library. URLs load fsspec (``imagekit[storage]``) and the package
of their store (``imagekit[s3]`` for s3://, gcsfs for gs://...), configured as that package is (for
S3: the AWS environment, ``AWS_ENDPOINT_URL`` included). A file written through a Store appears whole
or not at all: a local one is written beside its name and renamed, a remote one is committed when
complete (fsspec's transactions: an S3 object is made by the upload's last request) and discarded if
writing it fails.

A store that cannot take or give a file (a full or read-only disk, an object store out of reach, a
bucket that does not exist) raises ``StorageUnavailableError`` naming the store, whatever library
failed underneath; a file that is simply not there is a ``FileNotFoundError``. A store never creates
a bucket: on S3 that would be a new bucket in the user's account with none of the team's settings.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import posixpath
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .errors import ConfigError, ImagekitError, StorageUnavailableError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

__all__ = ["Store", "Location", "is_url", "opened", "split", "spool", "SPOOL_BYTES", "WRITE_BLOCK"]

log = logging.getLogger("imagekit")
Location = str | os.PathLike[str]
SPOOL_BYTES = 8 << 20
"""An image larger than this waits on disk rather than in memory between download and store."""
WRITE_BLOCK = 5 << 20
"""Bytes a remote file gathers before it sends them: an S3 part of the smallest size S3 accepts,
where fsspec's default (50 MB for S3) would hold a large file's next part, and its copies, in memory."""
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")
_STORE_LIBRARIES = ("botocore", "aiobotocore", "aiohttp", "s3fs", "gcsfs", "google", "adlfs", "azure", "fsspec",
                    "requests", "urllib3")
"""Packages whose own exceptions (a connection refused, a timeout) mean the object store failed."""
_NOT_THERE = (FileNotFoundError, IsADirectoryError, NotADirectoryError, FileExistsError)


def is_url(location: Location) -> bool:
    """Whether ``location`` names a store by URL (``s3://...``) rather than a local path."""
    return bool(_URL.match(os.fspath(location)))


def spool() -> IO[bytes]:
    """A seekable scratch file: in memory up to SPOOL_BYTES, on disk beyond."""
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115  (the caller closes it)


@contextmanager
def opened(location: Location) -> Iterator[IO[bytes]]:
    """The file at ``location`` (a local path or a URL), open for reading."""
    store, name = split(location)
    with store.reader(name) as source:
        yield source


def split(location: Location) -> tuple[Store, str]:
    """A file's location as the Store of its folder and its name."""
    text = os.fspath(location)
    if is_url(text):
        folder, name = posixpath.split(text.rstrip("/"))
        return Store(folder), name
    path = Path(text)
    return Store(path.parent), path.name


def file_to_write(location: Location, example: str = "image.png") -> tuple[Store, str]:
    """``split``, for a file about to be written: a local one must be a file name (not a folder's) in a
    folder that exists, else ConfigError in one line (a folder is answered with ``example`` in it),
    before anything is fetched or read for it."""
    store, name = split(location)
    if store.remote:
        return store, name
    path = Path(store.location) / name
    if path.is_dir():
        raise ConfigError(f"{path} is a folder: name the file to write, for example {path / example}")
    if not Path(store.location).is_dir():
        raise ConfigError(f"{store.location} is not a folder that exists: create it first, or name another place")
    return store, name


class Store:
    """A folder, local or behind an fsspec URL, that files are written into and read from by name."""

    def __init__(self, location: Location) -> None:
        text = os.fspath(location)
        self.location = text.rstrip("/") if is_url(text) else text
        """The folder as given (a path or a URL)."""
        self._fs: AbstractFileSystem | None = None
        self._root = self.location
        if is_url(text):
            self._fs, self._root = _filesystem(self.location)

    def __repr__(self) -> str:
        return f"Store({self.location!r})"

    @property
    def remote(self) -> bool:
        """Whether files go through fsspec rather than the local disk."""
        return self._fs is not None

    def url(self, name: str) -> str:
        """Where the file ``name`` lives: a local path or a URL."""
        return f"{self.location}/{name}" if self.remote else str(Path(self.location) / name)

    def _path(self, name: str) -> str:
        return f"{self._root}/{name}" if self._fs is not None else str(Path(self.location) / name)

    def make(self) -> None:
        """Create the folder; in an object store, check that its bucket exists (prefixes need no making,
        and a bucket is never made here)."""
        if self._fs is None:
            with self._failing("create the folder"):
                Path(self.location).mkdir(parents=True, exist_ok=True)
            return
        with self._failing("reach it"):
            bucket = self._bucket()
            if bucket is None:
                self._fs.makedirs(self._root, exist_ok=True)
                return
            try:  # one look at the bucket (``exists`` would say False for a store out of reach too)
                self._fs.info(bucket)
            except PermissionError:
                pass  # a key that may write a prefix but not look at its bucket: the writes will tell
            except FileNotFoundError:
                scheme = self.location.split("://", 1)[0]
                raise StorageUnavailableError(
                    f"{scheme}://{bucket} does not exist: imagekit never creates a bucket; create it (with your "
                    "team's settings) or check its name") from None

    def _bucket(self) -> str | None:
        """The bucket of an object store's folder (None for a store with real folders: memory://, a
        local file system behind a URL)."""
        assert self._fs is not None
        if getattr(self._fs, "root_marker", "/") != "" or not self._root:
            return None
        return self._root.split("/", 1)[0]

    @contextmanager
    def _failing(self, doing: str) -> Iterator[None]:
        """Turn the store's failure (not a missing file) into StorageUnavailableError naming it."""
        try:
            yield
        except (ImagekitError, *_NOT_THERE):
            raise
        except OSError as exc:
            raise StorageUnavailableError(f"{self.location}: could not {doing}: {_reason(exc)}") from exc
        except Exception as exc:
            if type(exc).__module__.split(".", 1)[0] not in _STORE_LIBRARIES:
                raise
            raise StorageUnavailableError(f"{self.location}: could not {doing}: {_reason(exc)}") from exc

    def exists(self, name: str = "") -> bool:
        """Whether the file ``name`` (or, without a name, the folder) exists."""
        path = self._path(name) if name else self._root
        with self._failing("look for a file"):
            return self._fs.exists(path) if self._fs is not None else os.path.exists(path)

    def names(self) -> list[str]:
        """The names of the files in the folder (none when it does not exist)."""
        with self._failing("list its files"):
            if self._fs is None:
                folder = Path(self.location)
                return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
            if not self._fs.exists(self._root):
                return []
            return sorted(posixpath.basename(p.rstrip("/")) for p in self._fs.ls(self._root, detail=False))

    def walk(self) -> list[str]:
        """Every file in the folder and the folders under it, as paths relative to it with ``/``
        (a link is a file here: never followed)."""
        with self._failing("list its files"):
            if self._fs is None:
                found = []
                for top, folders, files in os.walk(self.location):
                    inner = os.path.relpath(top, self.location)
                    for name in [*files, *(f for f in folders if os.path.islink(os.path.join(top, f)))]:
                        found.append(name if inner == "." else f"{inner}/{name}".replace(os.sep, "/"))
                return sorted(found)
            if not self._fs.exists(self._root):
                return []
            return sorted(posixpath.relpath(path, self._root) for path in self._fs.find(self._root))

    def walk_under(self, name: str) -> list[str]:
        """``walk``'s files at or under ``name`` (``[name]`` for a file; none when nothing is there)."""
        if not self.exists(name):
            return []
        if not self.is_dir(name):
            return [name]
        return [f"{name}/{path}" for path in Store(self.url(name)).walk()]

    def is_dir(self, name: str) -> bool:
        """Whether ``name`` is a folder (a link to one is not)."""
        if self._fs is None:
            path = Path(self._path(name))
            return path.is_dir() and not path.is_symlink()
        return bool(self._fs.isdir(self._path(name)))

    def prune(self, name: str) -> None:
        """Remove the folders at and under ``name`` that are empty (in an object store, ``name`` when it
        holds no file)."""
        if self._fs is not None:
            if self.is_dir(name) and not self._fs.find(self._path(name)):
                self._fs.rm(self._path(name), recursive=True)
            return
        if self.is_dir(name):
            for top, _, _ in os.walk(self._path(name), topdown=False):
                with contextlib.suppress(OSError):
                    os.rmdir(top)

    def is_file(self) -> bool:
        """Whether the location is a file where a folder was expected."""
        return self._fs.isfile(self._root) if self._fs is not None else os.path.isfile(self.location)

    def remove(self, name: str) -> None:
        """Remove the file or folder ``name`` (and a ``.part`` a cut-short write left of it), if there."""
        if self._fs is None:
            path = Path(self._path(name))
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
            path.with_name(path.name + ".part").unlink(missing_ok=True)
        elif self._fs.exists(self._path(name)):
            self._fs.rm(self._path(name), recursive=True)

    def remove_folder(self) -> None:
        """Remove the folder itself when it is empty (an object store's prefix vanishes by itself)."""
        if self._fs is None:
            with contextlib.suppress(OSError):
                Path(self.location).rmdir()

    @contextmanager
    def reader(self, name: str) -> Iterator[IO[bytes]]:
        """The file ``name``, open for reading."""
        with self._failing(f"read {name}"), (self._fs.open(self._path(name), "rb") if self._fs is not None
                                              else open(self._path(name), "rb")) as source:
            yield source

    @contextmanager
    def writer(self, name: str) -> Iterator[IO[bytes]]:
        """The file ``name``, open for writing; it appears when the block ends, and not if it raises."""
        with self._failing(f"write {name}"), self._writing(name) as sink:
            yield sink

    @contextmanager
    def _writing(self, name: str) -> Iterator[IO[bytes]]:
        if self._fs is None:
            path = Path(self._path(name))
            part = path.with_name(path.name + ".part")
            try:
                with open(part, "wb") as sink:
                    yield sink
                part.replace(path)
            except BaseException:
                part.unlink(missing_ok=True)
                raise
            return
        target = self._path(name)
        sink = self._fs.open(target, "wb", autocommit=False, block_size=WRITE_BLOCK)
        try:
            yield sink
            sink.close()
            sink.commit()
        except BaseException:
            try:
                sink.discard()
                if getattr(sink, "autocommit", True):  # a store that made the file on opening (memory://)
                    self._fs.rm_file(target)
            except Exception as exc:  # noqa: BLE001  (the error that stopped the writing is the one to raise)
                log.warning("could not discard the unfinished %s: %s", self.url(name), exc)
            raise


def _reason(exc: BaseException) -> str:
    """What went wrong, in words (a full disk by name, whatever the library's wording)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full (no space left on device)"
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return "the disk is read-only"
    return f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc).splitlines()[0]


def _filesystem(url: str) -> tuple[AbstractFileSystem, str]:
    """The fsspec file system of ``url`` and the path inside it, or a one-line ConfigError."""
    from .extras import require  # the one home of "which extra installs it"

    fsspec = require("fsspec", "storage")
    try:
        # No listings kept between calls: other processes write to the same store (a resumed run, a team).
        fs, root = fsspec.core.url_to_fs(url, use_listings_cache=False)
    except ImportError as exc:  # fsspec knows the protocol; its package is missing
        protocol = url.split("://", 1)[0]
        hint = "pip install 'imagekit[s3]'" if protocol in ("s3", "s3a") else str(exc)
        raise ConfigError(f"{url}: {hint}") from exc
    except ValueError as exc:  # a protocol fsspec does not know
        raise ConfigError(f"{url}: {exc}") from exc
    return fs, str(root).rstrip("/")

