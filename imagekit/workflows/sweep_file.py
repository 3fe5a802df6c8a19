"""Sweep files: a batch written down in TOML, checked key by key, run by ``imagekit sweep``.

    [sweep]
    name = "lighthouses"
    budget = 40
    out_dir = "out/lighthouses"          # or an fsspec URL
    journal = "lighthouses.sqlite"       # or postgresql://...
    export = "imagefolder"               # or "parquet"; written when the sweep ends
    dedupe = true                        # count images that nearly repeat earlier ones (never skipped)
    tags = { experiment = "lighthouse-v1" }

    [axes]                               # the grid: every combination is one row
    prompt = ["a lighthouse at dusk", "a lighthouse in fog"]
    style = [1, 2]

    [defaults]                           # applied to every row
    count = 1

Every mistake is told at once, in one line naming each key (or row) and what it allows; the rows are
checked against the interface as any batch's are (``imagekit.validation``). Keys (API keys) never live in the
file: the client comes from the environment (``imagekit.connect()``). A relative ``out_dir`` or
``journal`` is in the file's own folder, from wherever the sweep is run: a rerun always finds its
journal (and pays for nothing twice). A file that names no journal keeps one beside it (``_kept``).
"""

from __future__ import annotations

import itertools
import math
import os
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ValidationError
from ..storage import Store, is_url
from ..validation import one_slip
from .batches.rows import CREATE_OPTIONS, check_grid, check_grid_size, grid, make_rows, named_styles

if TYPE_CHECKING:
    from ..client import Client
    from ..ledger.prices import Estimate
    from .batches.batch import Batch
    from .batches.export import Export

__all__ = ["SweepFile", "SweepOutcome", "load_sweep", "EXPORT_FORMATS"]

EXPORT_FORMATS = ("imagefolder", "parquet")
"""What ``export`` may name."""


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


_SWEEP_KEYS: dict[str, tuple[Callable[[object], bool], str]] = {
    "name": (_text, "a name (text)"),
    "budget": (_number, "a number of credits, at least 0"),
    "out_dir": (_text, "a folder or an fsspec URL (text)"),
    "journal": (_text, "a SQLite file or a postgresql:// URL (text)"),
    "export": (lambda v: v in EXPORT_FORMATS, " or ".join(f'"{f}"' for f in EXPORT_FORMATS)),
    "tags": (lambda v: isinstance(v, dict) and all(isinstance(x, (str, int, float)) for x in v.values()),
             "a table of tag names and text values, e.g. { experiment = \"v1\" }"),
    "lease": (lambda v: _number(v) and bool(v), "seconds, above 0"),
    "concurrency": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a whole number, at least 1"),
    "dedupe": (lambda v: isinstance(v, bool), "true or false"),
    "max_rows": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                 "a whole number of rows, at least 1 (the grid's limit; default 100,000)"),
    "mlflow": (lambda v: isinstance(v, bool) or (isinstance(v, dict) and set(v) <= {"experiment", "run_name",
                                                                                    "tracking_uri"}),
               "true, or a table with experiment, run_name and tracking_uri"),
}
_TABLES = ("sweep", "axes", "defaults")
_PRICED = ("style", "collection", "count")
"""The row fields a create's price depends on."""


@dataclass
class SweepFile:
    """A sweep as its file describes it."""

    path: Path
    axes: dict[str, list[Any]]
    """Each axis and its values: the grid's rows are every combination."""
    defaults: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    """The ``[sweep]`` table, checked."""

    @property
    def name(self) -> str | None:
        """The sweep's name (several processes drain it together through a PostgreSQL journal)."""
        return self.settings.get("name")

    def rows(self) -> list[dict[str, Any]]:
        """The grid's rows (refused past ``max_rows`` before they are built)."""
        return grid(max_rows=self.settings.get("max_rows"), **self.axes)

    def estimate(self, client: Client) -> tuple[int, int, Estimate]:
        """(requests, images, credits) of the whole grid, without making its rows: a row's price
        depends only on its style, collection and count, so each combination of those axes is priced
        once and counted as often as the other axes repeat it (time and memory of the axes, however
        many rows ``max_rows`` allows). Styles given by name are resolved among ``client``'s."""
        from ..ledger import Prices
        from ..validation import resolve_style

        styles, me = client.styles(), client.me()
        prices = Prices.of_account(me, styles, client.ledger.prices() if client.ledger is not None else {})
        names = {value for value in (*self.axes.get("style", []), self.defaults.get("style"))
                 if isinstance(value, str) and not value.strip().isdigit()}
        for name in names:
            try:
                resolve_style(name, styles)
            except ValidationError:  # told as a batch tells it, naming the rows (the grid is within max_rows)
                named_styles(make_rows(self.rows(), self.defaults, str(self.path)), styles, str(self.path))
                raise
        pricing = {name: values for name, values in self.axes.items() if name in _PRICED}
        repeats = check_grid_size({name: len(values) for name, values in self.axes.items()},
                                  self.settings.get("max_rows")) // max(math.prod(map(len, pricing.values())), 1)
        requests = images = 0

        def creates() -> Iterator[tuple[int | None, int | None, int]]:
            nonlocal requests, images
            for combo in itertools.product(*pricing.values()):
                row = {**self.defaults, **dict(zip(pricing, combo))}
                style, count = row.get("style"), int(row.get("count") or 1)
                if isinstance(style, str) and not style.strip().isdigit():
                    style = resolve_style(style, styles)
                requests, images = requests + repeats, images + count * repeats
                yield (int(style) if style is not None else None,
                       int(row["collection"]) if row.get("collection") is not None else None, count * repeats)

        credits = prices.estimate(creates())
        return requests, images, credits


    def batch(self, client: Client) -> Batch:
        """The sweep as a batch of ``client``'s."""
        batch = client.batch(self.rows(), name=self.name, tags=self.settings.get("tags"), **self.defaults)
        batch.source = str(self.path)
        return batch

    def run(self, client: Client, progress: bool = True, engine: Any = None, address: str | None = None) -> SweepOutcome:
        """Run what is not done yet (running it again finishes the rest), its requests made by an
        ``engine``'s tasks when given (``Batch.run``); then export the dataset and log the run to
        MLflow, where the file asks for them."""
        options: dict[str, Any] = {key: self.settings[key] for key in ("budget", "out_dir", "journal", "concurrency", "lease", "dedupe")
                   if key in self.settings}
        batch = self.batch(client)
        if "budget" in options:  # the file's budget is the sweep's: what earlier runs spent counts against it
            options["spent_before"] = batch.recorded_credits(options.get("journal"), options.get("out_dir"))
        batch = batch.run(progress=progress, engine=engine, address=address, **options)
        outcome = SweepOutcome(batch, idle=not batch.changed)
        if "export" in self.settings:
            format = self.settings["export"]
            dest = f"{str(self.settings['out_dir']).rstrip('/')}/{'dataset.parquet' if format == 'parquet' else 'dataset'}"
            if not outcome.idle or not Store(dest).exists():  # an earlier run's dataset is this one's
                outcome.export = batch.export(dest, format, overwrite=True, progress=progress)
        mlflow = self.settings.get("mlflow")
        if mlflow and not outcome.idle:  # a run that did nothing logs nothing new
            from ..extras import require
            from ..integrations.mlflow import log_batch

            tracking = require("mlflow", "mlflow")  # a missing extra is one line that names it

            chosen = mlflow if isinstance(mlflow, dict) else {}
            if "tracking_uri" in chosen:
                tracking.set_tracking_uri(_beside(self.path, chosen["tracking_uri"]))
            elif not tracking.is_tracking_uri_set():  # MLflow's default, sqlite:///mlflow.db, beside the file
                tracking.set_tracking_uri(_beside(self.path, "sqlite:///mlflow.db"))
            # A database store keeps artifacts apart (MLflow's default: ./mlruns wherever it runs): beside the file.
            beside = tracking.get_tracking_uri().startswith("sqlite:")
            outcome.mlflow_run = log_batch(batch, chosen.get("run_name") or self.name,
                                           experiment=chosen.get("experiment") or self.name or self.path.stem,
                                           artifacts=(self.path.resolve().parent / "mlruns").as_uri() if beside else None)
        return outcome


def _beside(path: Path, tracking_uri: str) -> str:
    """An MLflow tracking URI whose relative file or SQLite path is the sweep file's folder's (as its
    out_dir and journal are), wherever the sweep is run from; any other URI as it is."""
    scheme, sep, rest = tracking_uri.partition(":///")
    if sep and scheme in ("sqlite", "file") and not rest.startswith("/"):
        return f"{scheme}:///{(path.resolve().parent / rest).as_posix()}"
    if "://" not in tracking_uri and not Path(tracking_uri).is_absolute():  # a folder: MLflow's file store
        return str(path.resolve().parent / tracking_uri)
    return tracking_uri


@dataclass
class SweepOutcome:
    """What running a sweep file made: the batch, and its dataset and MLflow run where asked for."""

    batch: Batch
    idle: bool = False
    """The run found nothing left to do: it exported and logged nothing new."""
    export: Export | None = None
    mlflow_run: str | None = None
    """The MLflow run id."""


def load_sweep(path: str | Path, styles: Callable[[], Iterable[Any]] | None = None) -> SweepFile:
    """Read and check a sweep file: its settings, and every row against the interface, before anything
    is sent or priced. Every mistake is told in one answer (ConfigError for the file's settings,
    ValidationError for its rows), each naming the key or the rows and the value. ``styles``: the
    account's styles, asked for only when the file has other mistakes and names a style, so that a
    name that matches none is told with them (else the run resolves names, and refuses it then)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such sweep file") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a folder: give the sweep file in it (a .toml file)") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file; a sweep file is TOML") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not TOML ({exc})") from exc
    mistakes: list[str] = []
    tables = {name: _table(path, data, name) for name in _TABLES}
    loose = [key for key, value in data.items() if key not in _TABLES and not isinstance(value, dict)]
    if loose:  # keys before any table: where each kind goes, once
        mistakes.append(f"{', '.join(loose)} {'is' if len(loose) == 1 else 'are'} outside any table: a sweep file "
                        "gives its settings under [sweep] (name, budget, out_dir...) and the rows' fields under "
                        "[axes] (lists to combine, e.g. prompt = [...]) or [defaults] (one value each)")
    mistakes += [f"unknown table [{table}]; a sweep file has " + ", ".join(f"[{name}]" for name in _TABLES)
                 for table, value in data.items() if table not in _TABLES and isinstance(value, dict)]
    misplaced = bool(mistakes)  # then what the rows lack follows from it: not told again
    settings, defaults = tables["sweep"], tables["defaults"]
    for key, value in settings.items():
        if key not in _SWEEP_KEYS:
            meant = next((known for known in _SWEEP_KEYS if one_slip(key, known)), None)
            mistakes.append(f"[sweep] {key} is not a sweep setting" + (f": did you mean {meant}?" if meant else
                                                                        f"; allowed: {', '.join(_SWEEP_KEYS)}"))
        elif not _SWEEP_KEYS[key][0](value):
            mistakes.append(f"[sweep] {key} = {value!r}: use {_SWEEP_KEYS[key][1]}")
    axes = {key: value if isinstance(value, list) else [value] for key, value in tables["axes"].items()}
    mistakes += [f"[axes] {key} is empty: give it at least one value" for key, values in axes.items() if not values]
    mistakes += [f"[defaults] {key} = {value!r}: a default is one value (an axis goes in [axes])"
                 for key, value in defaults.items() if isinstance(value, (list, dict))]
    if "export" in settings and "out_dir" not in settings and "journal" in settings:
        mistakes.append("[sweep] export needs out_dir: the dataset is written there")
    mistakes += [f"[{table}] {key} = {value!r}: use a whole number, without quotes"
                 for table, values in (("axes", axes), ("defaults", {k: [v] for k, v in defaults.items()}))
                 for key in _WHOLE if key in values
                 for value in dict.fromkeys(v for v in values[key] if isinstance(v, str))]
    if "prompt" not in axes and "prompt" not in defaults and not misplaced:
        mistakes.append("no prompt: give [axes] prompt = [...] (or [defaults] prompt = \"...\")")
    mistakes += [f"{key} belongs in [sweep], not among the rows' fields"
                 for key in (*axes, *defaults) if key not in CREATE_OPTIONS and key in _NOT_LABELS]
    if not mistakes:
        settings.update(_kept(path, settings))
    for key in ("out_dir", "journal"):  # the file's own folder, wherever it is run from: a rerun finds its journal
        value = settings.get(key)
        if isinstance(value, str) and value and not is_url(value) and not Path(value).is_absolute():
            where = path.absolute().parent / value
            settings[key] = min(os.path.relpath(where), str(where), key=len)  # the shorter, as the working folder allows
    sweep = SweepFile(path, axes, defaults, settings)
    try:  # every row's mistakes at once, with the settings' ones; the grid's size before any row is made
        if all(axes.values()) and not any(isinstance(v, (list, dict)) for v in defaults.values()) and not misplaced:
            check_grid(axes, defaults, str(path), settings.get("max_rows") if _SWEEP_KEYS["max_rows"][0](
                settings.get("max_rows")) else None)
    except ValidationError as exc:
        if not mistakes:
            raise
        mistakes.append(str(exc).removeprefix(f"{path}: "))
    if mistakes and styles is not None:
        mistakes += _unknown_styles(axes, defaults, styles)
    if mistakes:
        raise ConfigError(f"{path}: " + "; ".join(mistakes))
    return sweep


_WHOLE = ("count", "seed", "collection")
"""Row fields a sweep file gives as TOML numbers: ``count = "4"`` is a mistake, not 4."""


def _unknown_styles(axes: Mapping[str, list[Any]], defaults: Mapping[str, Any],
                    styles: Callable[[], Iterable[Any]]) -> list[str]:
    """The file's style names that match none of the account's styles, each told once (nothing when
    the service cannot be asked: the other mistakes are told alone)."""
    from ..errors import ImagekitError
    from ..validation import resolve_style

    named = {(table, value) for table, values in (("axes", axes.get("style", [])), ("defaults", [defaults.get("style")]))
             for value in values if isinstance(value, str) and not value.strip().isdigit()}
    if not named:
        return []
    try:
        known = list(styles())
    except ImagekitError:
        return []
    told = []
    for table, value in sorted(named):
        try:
            resolve_style(value, known)
        except ValidationError as exc:
            told.append(f"[{table}] {exc}")
    return told


def _kept(path: Path, settings: Mapping[str, Any]) -> dict[str, str]:
    """Where a file that names no journal keeps one (and its images), so that every run after the
    first finishes what is left and the file's budget is the sweep's: beside the file, as its relative
    paths are, so a rerun from any folder, ``sweep status FILE`` and a copy of the folder all find it
    (a store under IMAGEKIT_HOME would be one machine's, and two files of one name would share it).
    ``out_dir`` defaults to ``<stem>-out`` (its ``journal.sqlite`` inside); a remote ``out_dir``'s
    journal is ``<stem>-journal.sqlite``. IMAGEKIT_JOURNAL_URL, when set, is the journal instead."""
    from .batches.journals.either import ENV_JOURNAL_URL

    if "journal" in settings:
        return {}
    if "out_dir" not in settings:
        return {"out_dir": f"{path.stem}-out"}
    if is_url(str(settings["out_dir"])) and not os.environ.get(ENV_JOURNAL_URL):
        return {"journal": f"{path.stem}-journal.sqlite"}
    return {}


_NOT_LABELS = frozenset(_SWEEP_KEYS)
"""Sweep settings put among the rows by mistake (any other field is a create option or a label)."""


def _table(path: Path, data: Mapping[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {name} must be a table, [{name}]")
    return dict(table)
