"""A folder we own: we write only into a folder that is empty or that imagekit's record says it
wrote, and we remove only files we wrote there whose content is still what we wrote (what a person
put beside them, or changed since, stays).

What proves a folder ours is its record under ``$IMAGEKIT_HOME/owned/`` (``imagekit._folder_record``),
which nothing in the folder can forge: it is keyed by the folder's real path and bound to its device
and inode, and holds a token, the names a command claimed and each file's size and SHA-256. The
manifest in the folder (``.imagekit-manifest.json``, hidden, so dataset readers pass it by) says the
same for people to read, and must carry the record's token to be believed: a copied folder with its
manifest, or a manifest planted or committed to a repository, is refused and nothing is touched. A
name is recorded *before* it is written, so a run cut short (even by kill -9) leaves nothing the next
run does not know of; its files' contents are recorded when the run ends (a file a killed run left,
unhashed, was written into a name the run claimed while it was free). Names are files: a folder we
write into (``images/``) is ours file by file, and a person's file inside it stays. A run holds a
lock on the folder; another process meeting it is refused in one line. Works through any fsspec URL,
as :class:`~imagekit.storage.Store` does.

    with owned("out", "imagekit demo", adopt=["usage-*"]) as folder:  # refuses a folder of someone else's
        with folder.writer("index.html") as sink:    # recorded, then written
            ...
        usage_report(client, "out")                  # a library call's usage-* files: recorded after

A run that raises removes what it wrote, and the folder when it made it: a failed command leaves
nothing behind. In a local folder an earlier run's results are set aside (``.imagekit-earlier``,
listed in the manifest) rather than removed, until this run ends: removed when it succeeds, put back
when it fails or is interrupted (Ctrl+C), so a second run cut short still leaves the first's. (What a library call wrote is recorded when the block ends: a kill -9 before then
leaves those files unlisted, and the folder is refused until they are removed.)
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ._folder_record import FolderInUseError, FolderLock, FolderRecord, digest
from .errors import ConfigError
from .storage import Location, Store

__all__ = ["MANIFEST", "FolderInUseError", "NotOursError", "OwnedFolder", "owned", "undone_on_failure"]

MANIFEST = ".imagekit-manifest.json"
ASIDE = ".imagekit-earlier"
"""Where an earlier run's results wait, in a local folder, until this run succeeds or fails."""
log = logging.getLogger("imagekit")


class NotOursError(ConfigError, FileExistsError):
    """A folder holds files we did not record writing: we neither replace them nor write beside them."""


class OwnedFolder:
    """One folder and the names our record lists in it (see the module)."""

    def __init__(self, location: Location, writer: str) -> None:
        self.store = Store(location)
        self.writer_name = writer
        """Who writes here, as the manifest and messages say it (``imagekit demo``, ``an export``)."""
        self.location = self.store.location
        self.record = FolderRecord(self.store)
        self.lock = FolderLock(self.record, self.location)
        self.token = FolderRecord.new_token()
        self.made = False
        """Whether this run made the folder (a failed run removes it again)."""
        self.marked = False
        """Whether the folder was ours (on record) before this run."""
        self.earlier: list[str] = []
        """What an earlier run recorded here (top-level names) and are there."""
        self.earlier_files: dict[str, Any] = {}
        """Each file an earlier run recorded (path inside the folder: ``[size, sha256]``, or None)."""
        self.names: list[str] = []
        """What this run recorded (top-level names)."""
        self.files: dict[str, Any] = {}
        """What this run wrote, file by file (as ``earlier_files``; None until the run ends)."""
        self.before: set[str] = set()
        """The files in the folder when this run began: a failed run removes none of them."""
        self.kept: list[str] = []
        """Files an earlier run wrote and someone changed since: left where they are."""
        self.gone: list[str] = []
        """What an earlier run wrote and ``open`` removed (an object store: it has no cheap move)."""
        self.touched = False
        """Whether ``open`` began to change the folder (before that, ``undo`` has nothing to undo)."""
        self.undone = False

    def __repr__(self) -> str:
        return f"OwnedFolder({self.location!r}, {self.writer_name!r})"

    def found(self) -> list[str]:
        """The names in the folder now (none when it does not exist)."""
        if self.store.is_file():
            raise NotOursError(f"{self.location} is a file, not a folder: name a folder")
        return [name for name in self.store.names() if name != MANIFEST]

    def check(self) -> list[str]:
        """What an earlier run of ours left here; NotOursError when the folder holds files and is not
        ours on record, or holds a manifest the record does not match (files put beside ours later are
        left where they are)."""
        present = self.found()
        kept = self.record.read()
        manifest = self._read()
        if manifest is not None and (kept is None or manifest != kept["token"]):
            raise NotOursError(f"{self.store.url(MANIFEST)} was not written there by imagekit (copied with its folder, "
                               "put there, or written with another IMAGEKIT_HOME): nothing in the folder was touched; name an empty or new folder")
        writer = kept.get("writer") if kept else None
        listed = [name for name in kept.get("names", []) if isinstance(name, str)] if kept else []
        self.earlier = [name for name in listed if name in present]
        self.earlier_files = {path: value for path, value in kept["files"].items()
                              if path.split("/", 1)[0] in self.earlier} if kept else {}
        if kept:
            self.token = kept["token"]
        if writer not in (None, self.writer_name) and self.earlier:
            raise NotOursError(f"{self.location} holds what {writer} wrote, not {self.writer_name}: name an empty "
                               "or new folder (or one an earlier run of the same command wrote)")
        others = [name for name in present if name not in listed]
        if others and kept is None:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise NotOursError(f"{self.location} holds files {self.writer_name} did not write ({shown}): "
                               "name an empty or new folder")
        self.marked = kept is not None
        return list(self.earlier)

    def open(self, replace: bool = True, adopt: Iterable[str] = ()) -> list[str]:
        """Lock and check the folder, remove what an earlier run of ours wrote and is unchanged (when
        ``replace``; else refuse it), make the folder; returns the top-level names it removed from.
        ``adopt``: the names a library call of this run writes (see ``_refuse_changed``)."""
        self.lock.acquire()
        try:
            earlier = self.check()
            if earlier and not replace:
                raise NotOursError(f"{self.location} holds an earlier result of {self.writer_name} "
                                   f"({len(earlier)} file{'s' if len(earlier) != 1 else ''}): pass overwrite=True "
                                   "to replace it")
        except BaseException:
            self.lock.release()
            raise
        self.made = not self.store.exists()
        self.before = set(self.store.walk())
        self.touched = True  # from here on, undo puts the folder back as it was
        if ASIDE in earlier:  # a run killed before it ended left one: the results before it are gone
            self.store.remove(ASIDE)
            earlier.remove(ASIDE)
            self.before = {path for path in self.before if path.split("/", 1)[0] != ASIDE}
        ours = self._ours(earlier)
        self._refuse_changed(adopt)  # before anything of the earlier run's moves
        if ours and not self.store.remote:
            self._set_aside(earlier, ours)
        for path in ours if self.store.remote else []:
            self.store.remove(path)
            self.gone.append(path)
        # what this run finds is what is left: a name the earlier run used is this run's once written
        # again (sealed, adopted, removed by undo); counted before the move, the third run found the
        # second's files unrecorded and refused them as not ours
        self.before = set(self.store.walk())
        self.store.make()
        self._write()
        return earlier

    def _ours(self, earlier: list[str]) -> list[str]:
        """The files under ``earlier`` still as an earlier run wrote them (a file it claimed and could
        not record, cut short, included); the rest are kept, and said."""
        ours = []
        for name in earlier:
            recorded = {path: value for path, value in self.earlier_files.items()
                        if path == name or path.startswith(name + "/")}
            if self.store.is_dir(name) and set(recorded) <= {name}:
                continue  # a folder claimed but never recorded file by file: what is in it is not known to be ours
            for path, value in recorded.items():
                if value is None or digest(self.store, path) == value:
                    ours.append(path)
                elif self.store.exists(path):
                    self.kept.append(path)
        for path in self.kept:
            log.warning("%s changed since %s wrote it: kept", self.store.url(path), self.writer_name)
        return ours

    def add(self, names: Iterable[str]) -> None:
        """Record ``names`` as this writer's beside what earlier runs recorded, removing nothing, and make
        the folder: for a writer that adds to its folder run after run (a batch's ``out_dir``). Call
        ``hold`` and ``check`` first. ``undo`` then removes them again, with the manifest and folder if
        this made them; ``settle`` records what was written and lets go of the folder."""
        self.lock.acquire()
        self.made = not self.store.exists()
        self.touched = True
        self.store.make()
        self.before = set(self.store.walk())
        new = [name for name in dict.fromkeys(names) if name not in self.earlier]
        self.names = [*self.earlier, *new]
        self.files = {**self.earlier_files, **dict.fromkeys(new)}
        if new or not self.marked:
            self._write()

    def hold(self) -> None:
        """Take the folder's lock (FolderInUseError when another run holds it); ``settle`` or ``undo``
        lets go."""
        self.lock.acquire()

    def _set_aside(self, earlier: list[str], ours: list[str]) -> None:
        """Move the earlier run's files into ASIDE; the manifest lists what is there at each step."""
        self.names = [*earlier, ASIDE]
        self.files = {**self.earlier_files, ASIDE: None}
        self._write()
        folder = Path(self.location)
        for path in ours:  # one by one: undo puts back whatever moved, read from the folder
            (folder / ASIDE / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(folder / path, folder / ASIDE / path)
        for name in earlier:
            self.store.prune(name)
        self.names = [ASIDE, *(name for name in earlier if self.store.is_dir(name))]  # a folder with files kept in it
        self.files = dict.fromkeys(self.names)

    def finish(self) -> None:
        """This run succeeded: the earlier run's results set aside go; what it wrote is recorded."""
        if ASIDE in self.names:
            self.store.remove(ASIDE)
            self.names.remove(ASIDE)
            self.files.pop(ASIDE, None)
        self.settle()

    def settle(self) -> None:
        """Record the size and hash of each file this run claimed and wrote, and let go of the folder."""
        try:
            if self.touched and not self.undone:
                self._seal()
                self._write()
        except Exception as exc:  # noqa: BLE001  (a store that failed: its files stay ours, unhashed)
            log.warning("could not record what was written in %s: %s", self.location, exc)
        finally:
            self.lock.release()

    def _seal(self) -> None:
        for name in self.names:
            if name == ASIDE or not self.store.exists(name):
                continue
            if not self.store.is_dir(name):
                if self.files.get(name) is None:
                    self.files[name] = self._sealed(name)
                continue
            self.files.pop(name, None)
            for path in self.store.walk_under(name):
                if path not in self.before and self.files.get(path) is None:
                    self.files[path] = self._sealed(path)

    def _sealed(self, path: str) -> list[Any] | None:
        """What ``path`` is on record as: its size and hash, or None (ours by name) for a SQLite
        database still open with its write-ahead log beside it (a run's journal): its file changes
        once the process that has it open ends and the log is folded in."""
        return None if self.store.exists(f"{path}-wal") else digest(self.store, path)

    def claim(self, *names: str) -> None:
        """Record ``names`` before writing them; refuse a name someone else's file holds (a folder
        there is written into file by file)."""
        new = [name for name in names if name not in self.names]
        taken = [name for name in new if self.store.exists(name) and not self.store.is_dir(name)]
        if taken:
            if taken[0] in self.kept:
                raise self._changed(taken[0])
            raise NotOursError(f"{self.store.url(taken[0])} exists and {self.writer_name} did not write it")
        if new:
            self.names += new
            self.files.update(dict.fromkeys(new))
            self._write()

    def _refuse_changed(self, patterns: Iterable[str]) -> None:
        """NotOursError, before anything is written, for a file of an earlier run that its user changed
        (kept) and that a library call of this run would write again: its name matches ``patterns``
        (what ``adopt`` records). Such a call writes where it is told, over the user's edit."""
        patterns = list(patterns)
        for path in self.kept:
            if any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns):
                raise self._changed(path)

    def _changed(self, path: str) -> NotOursError:
        return NotOursError(f"{self.store.url(path)} changed since {self.writer_name} wrote it, so it was kept: "
                            "move it, or name another folder")

    @contextmanager
    def writer(self, name: str) -> Iterator[IO[bytes]]:
        """The file ``name`` open for writing (see ``Store.writer``), recorded first."""
        self.claim(name)
        with self.store.writer(name) as sink:
            yield sink

    def adopt(self, patterns: Iterable[str]) -> None:
        """Record what another writer (a library call given this folder) put here: the names now
        present that match ``patterns`` and were not there when this run began."""
        patterns = list(patterns)
        found = [name for name in self.found() if name not in self.names and name not in self.before
                 and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)] if patterns else []
        if found:
            self.names += found
            self.files.update(dict.fromkeys(found))
            self._write()

    def undo(self) -> None:
        """Remove what this run wrote, put back what it set aside, and remove the manifest when this
        run made it, and the folder likewise; nothing before ``open`` began to change it."""
        try:
            self._undo()
        finally:
            self.undone = True
            self.lock.release()

    def _undo(self) -> None:
        if not self.touched or self.undone:
            return
        folder = Path(self.location)
        for name in self.names:  # what this run wrote: files not there when it began (or removed by it)
            if name == ASIDE:
                continue
            for path in self.store.walk_under(name):
                if path not in self.before or path in self.gone:
                    self.store.remove(path)
            self.store.prune(name)
        # What moved aside is read from the folder, so a Ctrl+C anywhere among the moves loses none.
        aside = Store(folder / ASIDE).walk() if not self.store.remote and (folder / ASIDE).is_dir() else []
        for path in aside:  # whatever holds its name now is this run's
            self.store.remove(path)
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(folder / ASIDE / path, folder / path)
        if not self.store.remote and (folder / ASIDE).exists():
            self.store.remove(ASIDE)
        self.names = [name for name in self.earlier if self.store.exists(name)]  # what is there again
        self.files = {path: value for path, value in self.earlier_files.items() if self.store.exists(path)}
        if self.marked:  # the folder stays ours, listing what is in it again
            self._write()
        else:
            self.store.remove(MANIFEST)
            self.record.forget()
        if self.made and not self.found():
            self.store.remove_folder()

    def _read(self) -> str | None:
        """The token of the manifest here (None without one); NotOursError for one that is damaged."""
        if not self.store.exists(MANIFEST):
            return None
        try:
            with self.store.reader(MANIFEST) as source:
                kept = json.load(source)
            token = kept.get("token")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise NotOursError(f"{self.store.url(MANIFEST)} is damaged ({exc}): nothing in the folder was touched; "
                               "name an empty or new folder") from None
        return token if isinstance(token, str) else ""

    def _write(self) -> None:
        """The record first, then the manifest: a manifest is never there without its record."""
        self.record.write({"writer": self.writer_name, "token": self.token, "names": self.names, "files": self.files})
        manifest = {"writer": self.writer_name, "names": self.names, "token": self.token}
        with self.store.writer(MANIFEST) as sink:
            sink.write(json.dumps(manifest, indent=1).encode())


@contextmanager
def owned(location: Location, writer: str, replace: bool = True, adopt: Iterable[str] = ()) -> Iterator[OwnedFolder]:
    """The folder at ``location``, opened (see ``OwnedFolder.open``) for the block, and what the block
    made there matching ``adopt`` recorded at its end; what the block wrote is removed again when it
    raises (a closed pipe and Ctrl+C included)."""
    folder = OwnedFolder(location, writer)
    try:
        folder.open(replace, adopt)  # a folder it refuses is left as it is: undo begins where open began to change it
        try:
            yield folder
        finally:
            folder.adopt(adopt)
        folder.finish()
    except BaseException:
        try:
            folder.undo()
        except Exception as exc:  # noqa: BLE001  (the error that stopped the run is the one to raise)
            log.warning("could not remove what was written in %s: %s", folder.location, exc)
        raise


@contextmanager
def undone_on_failure(location: Location) -> Iterator[None]:
    """For a folder a command sets up (a sandbox's data folder): when the block raises, remove what
    appeared at its top during the block, and the folder when the block made it; nothing else."""
    store = Store(location)
    made = not store.exists()
    before = set() if made else set(store.names())
    try:
        yield
    except BaseException:
        try:
            for name in set(store.names()) - before:
                store.remove(name)
            if made:
                store.remove_folder()
        except Exception as exc:  # noqa: BLE001  (the error that stopped the command is the one to raise)
            log.warning("could not remove what was made in %s: %s", location, exc)
        raise
