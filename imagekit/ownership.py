"""A folder we own: we write only into a folder that is empty or that holds our manifest, and we
remove only what that manifest lists (what a person put beside it stays).

The manifest (``.imagekit-manifest.json``, hidden, so dataset readers pass it by) names the files
and folders a command wrote at the top of the folder, and which command wrote them. A name is
recorded *before* it is written, so a run cut short (even by kill -9) leaves nothing the next run
does not know to be its own. Works through any fsspec URL, as :class:`~imagekit.storage.Store` does.

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
from typing import IO

from .errors import ConfigError
from .storage import Location, Store

__all__ = ["MANIFEST", "NotOursError", "OwnedFolder", "owned", "undone_on_failure"]

MANIFEST = ".imagekit-manifest.json"
ASIDE = ".imagekit-earlier"
"""Where an earlier run's results wait, in a local folder, until this run succeeds or fails."""
log = logging.getLogger("imagekit")


class NotOursError(ConfigError, FileExistsError):
    """A folder holds files we did not record writing: we neither replace them nor write beside them."""


class OwnedFolder:
    """One folder and the names our manifest lists in it (see the module)."""

    def __init__(self, location: Location, writer: str) -> None:
        self.store = Store(location)
        self.writer_name = writer
        """Who writes here, as the manifest and messages say it (``imagekit demo``, ``an export``)."""
        self.location = self.store.location
        self.made = False
        """Whether this run made the folder (a failed run removes it again)."""
        self.marked = False
        """Whether the folder held our manifest before this run."""
        self.earlier: list[str] = []
        """What an earlier run recorded here and ``open`` removed."""
        self.names: list[str] = []
        """What this run recorded."""
        self.gone: list[str] = []
        """What an earlier run wrote and ``open`` removed (an object store: it has no cheap move)."""
        self.touched = False
        """Whether ``open`` began to change the folder (before that, ``undo`` has nothing to undo)."""

    def __repr__(self) -> str:
        return f"OwnedFolder({self.location!r}, {self.writer_name!r})"

    def found(self) -> list[str]:
        """The names in the folder now (none when it does not exist)."""
        if self.store.is_file():
            raise NotOursError(f"{self.location} is a file, not a folder: name a folder")
        return [name for name in self.store.names() if name != MANIFEST]

    def check(self) -> list[str]:
        """What an earlier run of ours left here; NotOursError when the folder holds files and no
        manifest (files put beside ours later are left where they are)."""
        present = self.found()
        writer, self.earlier = self._read()
        if writer not in (None, self.writer_name) and any(name in present for name in self.earlier):
            raise NotOursError(f"{self.location} holds what {writer} wrote, not {self.writer_name}: name an empty "
                               "or new folder (or one an earlier run of the same command wrote)")
        others = [name for name in present if name not in self.earlier]
        if others and not self.store.exists(MANIFEST):
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise NotOursError(f"{self.location} holds files {self.writer_name} did not write ({shown}): "
                               "name an empty or new folder")
        return [name for name in self.earlier if name in present]

    def open(self, replace: bool = True) -> list[str]:
        """Check the folder, remove what an earlier run of ours wrote (when ``replace``; else refuse
        it), make the folder; returns the names removed."""
        self.earlier = earlier = self.check()
        if earlier and not replace:
            raise NotOursError(f"{self.location} holds an earlier result of {self.writer_name} "
                               f"({len(earlier)} file{'s' if len(earlier) != 1 else ''}): pass overwrite=True to "
                               "replace it")
        self.made = not self.store.exists()
        self.marked = self.store.exists(MANIFEST)
        self.touched = True  # from here on, undo puts the folder back as it was
        if ASIDE in earlier:  # a run killed before it ended left one: the results before it are gone
            self.store.remove(ASIDE)
            earlier.remove(ASIDE)
        if earlier and not self.store.remote:
            self._set_aside(earlier)
        for name in earlier if self.store.remote else []:
            self.store.remove(name)
            self.gone.append(name)
        self.store.make()
        self._write()
        return earlier

    def add(self, names: Iterable[str]) -> None:
        """Record ``names`` as this writer's beside what earlier runs recorded, removing nothing, and make
        the folder: for a writer that adds to its folder run after run (a batch's ``out_dir``). Call
        ``check`` first. ``undo`` then removes them again, with the manifest and folder if this made them."""
        self.made = not self.store.exists()
        self.marked = self.store.exists(MANIFEST)
        self.touched = True
        self.store.make()
        new = [name for name in dict.fromkeys(names) if name not in self.earlier]
        self.names = [*self.earlier, *new]
        if new or not self.marked:
            self._write()

    def _set_aside(self, earlier: list[str]) -> None:
        """Move the earlier run's results into ASIDE; the manifest lists what is there at each step."""
        self.names = [*earlier, ASIDE]
        self._write()
        folder = Path(self.location)
        (folder / ASIDE).mkdir()
        for name in earlier:  # one by one: undo puts back whatever moved, read from the folder
            os.replace(folder / name, folder / ASIDE / name)
        self.names = [ASIDE]

    def finish(self) -> None:
        """This run succeeded: the earlier run's results set aside go."""
        if ASIDE in self.names:
            self.store.remove(ASIDE)
            self.names.remove(ASIDE)
            self._write()

    def claim(self, *names: str) -> None:
        """Record ``names`` before writing them; refuse a name someone else's file holds."""
        new = [name for name in names if name not in self.names]
        taken = [name for name in new if self.store.exists(name)]
        if taken:
            raise NotOursError(f"{self.store.url(taken[0])} exists and {self.writer_name} did not write it")
        if new:
            self.names += new
            self._write()

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
        found = [name for name in self.found() if name not in self.names
                 and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)] if patterns else []
        if found:
            self.names += found
            self._write()

    def undo(self) -> None:
        """Remove what this run wrote, put back what it set aside, and remove the manifest when this
        run made it, and the folder likewise; nothing before ``open`` began to change it."""
        if not self.touched:
            return
        folder = Path(self.location)
        # What moved aside is read from the folder, so a Ctrl+C anywhere among the moves loses none.
        aside = [] if self.store.remote else [name for name in self.earlier if os.path.lexists(folder / ASIDE / name)]
        for name in self.names:  # an earlier run's not yet set aside stays; one set aside is back below
            if name != ASIDE and (name not in self.earlier or name in self.gone):
                self.store.remove(name)
        for name in aside:  # whatever holds its name now is this run's
            self.store.remove(name)
            os.replace(folder / ASIDE / name, folder / name)
        if not self.store.remote and (folder / ASIDE).exists():
            self.store.remove(ASIDE)
        self.names = [name for name in self.earlier if self.store.exists(name)]  # what is there again
        if self.marked:  # the folder stays ours, listing what is in it again
            self._write()
        else:
            self.store.remove(MANIFEST)
        if self.made and not self.found():
            self.store.remove_folder()

    def _read(self) -> tuple[str | None, list[str]]:
        """Who wrote the manifest here, and the names it lists (none and [] without one)."""
        if not self.store.exists(MANIFEST):
            return None, []
        try:
            with self.store.reader(MANIFEST) as source:
                kept = json.load(source)
            listed, writer = kept["names"], kept.get("writer")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise NotOursError(f"{self.store.url(MANIFEST)} is damaged ({exc}): remove it and what it "
                               "listed yourself") from None
        names = [name for name in listed if isinstance(name, str) and name and "/" not in name and name != MANIFEST]
        return (writer if isinstance(writer, str) else None), names

    def _write(self) -> None:
        with self.store.writer(MANIFEST) as sink:
            sink.write(json.dumps({"writer": self.writer_name, "names": self.names}, indent=1).encode())


@contextmanager
def owned(location: Location, writer: str, replace: bool = True, adopt: Iterable[str] = ()) -> Iterator[OwnedFolder]:
    """The folder at ``location``, opened (see ``OwnedFolder.open``) for the block, and what the block
    made there matching ``adopt`` recorded at its end; what the block wrote is removed again when it
    raises (a closed pipe and Ctrl+C included)."""
    folder = OwnedFolder(location, writer)
    try:
        folder.open(replace)  # a folder it refuses is left as it is: undo begins where open began to change it
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
