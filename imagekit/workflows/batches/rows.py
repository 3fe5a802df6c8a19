"""Batch inputs: ``grid()`` and the rows a batch is made of, each with a stable key.

A row's key is a hash of its create options, so the same inputs give the same keys on every run:
that is what lets a journal match a re-run batch to the work it already did.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from ...errors import ValidationError
from ...ledger.prices import Prices, create_key
from ...validation import COUNTS, all_mistakes, create_mistakes, misspelt, resolve_style, style_note

if TYPE_CHECKING:
    import pandas as pd

    from ...ledger import Ledger

__all__ = ["grid", "iter_grid", "check_grid_size", "check_grid", "check_rows", "MAX_ROWS", "ENV_MAX_ROWS", "Row", "RowSource", "make_rows", "named_styles", "split_grid", "CREATE_OPTIONS",
           "refuse_misplaced"]

log = logging.getLogger("imagekit")

RowSource: TypeAlias = "str | Mapping[str, Any] | Iterable[str | Mapping[str, Any]] | pd.DataFrame"
"""What a batch is made from: prompts, dicts of create options and labels, a DataFrame or a ``grid``."""

CREATE_OPTIONS = ("prompt", "style", "image", "collection", "count", "ratio", "seed", "random_prompt",
                  "initial_prompt", "enhanced_prompt", "caption_prompt", "caption_t_prompt", "platform",
                  "api_type")
"""Row fields that become create options; any other field is kept as a label."""


MAX_ROWS = 100_000
"""The most rows a grid may have unless raised: a typo'd range (``range(10**5)`` twice) is told in one
line before anything is built, not after gigabytes."""
ENV_MAX_ROWS = "IMAGEKIT_MAX_ROWS"
"""Raises (or lowers) ``MAX_ROWS`` for every grid of the process, sweep files' included."""


def grid(*, max_rows: int | None = None, **axes: Iterable[Any] | Any) -> list[dict[str, Any]]:
    """Every combination of the given values, as rows: ``grid(prompt=[...], style=[...], ratio=[...])``.

    A scalar is one value; the first axis varies slowest. A grid of more than ``max_rows`` rows
    (default ``MAX_ROWS``, or IMAGEKIT_MAX_ROWS) is refused before it is built (ValidationError).
    """
    return list(iter_grid(max_rows=max_rows, **axes))


def iter_grid(*, max_rows: int | None = None, **axes: Iterable[Any] | Any) -> Iterator[dict[str, Any]]:
    """``grid``'s rows one at a time (its size checked first): what estimates a large grid streams."""
    names = list(axes)
    sized = [v if isinstance(v, (list, tuple, range)) else [v] for v in axes.values()]
    check_grid_size(dict(zip(names, (len(v) for v in sized))), max_rows)  # before a range becomes a list
    return (dict(zip(names, combo)) for combo in itertools.product(*(list(v) for v in sized)))


def check_grid_size(sizes: Mapping[str, int], max_rows: int | None = None) -> int:
    """A grid's row count from its axes' sizes; ValidationError in one line past ``max_rows``."""
    limit = max_rows if max_rows is not None else _env_max_rows()
    total = math.prod(sizes.values())
    if total > limit:
        shape = " x ".join(f"{name} {size:,}" for name, size in sizes.items() if size != 1)
        raise ValidationError(f"a grid of {total:,} rows ({shape}) is past the limit of {limit:,} rows: check its axes "
                              f"(a typo'd range?), or raise the limit: grid(max_rows=...), [sweep] max_rows in a sweep "
                              f"file, or {ENV_MAX_ROWS}", field="max_rows", value=total)
    return total


def _env_max_rows() -> int:
    given = os.environ.get(ENV_MAX_ROWS, "").strip()
    if not given:
        return MAX_ROWS
    if not given.isdigit() or int(given) < 1:
        raise ValidationError(f"{ENV_MAX_ROWS}={given!r}: give a whole number of rows, at least 1", field=ENV_MAX_ROWS,
                              value=given)
    return int(given)


@dataclass(frozen=True)
class Row:
    """One create request of a batch."""

    key: str
    """Stable id: a hash of the options (and the occurrence, for repeated rows)."""
    index: int
    """Position in the batch."""
    options: dict[str, Any]
    """Create options, ``prompt`` included."""
    labels: dict[str, Any]
    """Every input field, for tables and contact sheets."""

    @property
    def count(self) -> int:
        """Images this row asks for."""
        return int(self.options.get("count") or 1)

    @property
    def style(self) -> int | None:
        """The style its create names, if any (a name not yet resolved by ``named_styles``: None)."""
        style = self.options.get("style")
        return style if isinstance(style, int) else None

    @property
    def collection(self) -> int | None:
        """The collection its create names, if any."""
        return _id(self.options.get("collection"))

    @property
    def price_key(self) -> str:
        """The price key of one of its images (see ``imagekit.ledger.prices``)."""
        return create_key(self.style, self.collection)

    def cost(self, prices: Prices) -> float:
        """Credits its create costs (an upper bound while the price is unknown)."""
        return prices.create(self.style, self.collection, self.count)

    def remaking(self, missing: int | None) -> Row:
        """The create that makes ``missing`` of its images again (None: the row as it is): the
        largest count the interface allows within them, so nothing already paid is made twice
        (three missing: two now, one after)."""
        if missing is None or missing == self.count:
            return self
        count = max(size for size in COUNTS if size <= max(missing, 1))
        return replace(self, options={**self.options, "count": count})


def make_rows(source: RowSource, defaults: Mapping[str, Any], where: str | None = None) -> list[Row]:
    """Rows from prompts, dicts, a DataFrame or a grid, with ``defaults`` filling missing options.

    Every row is checked against the interface (``imagekit.validation``) before anything is sent or
    priced: one ValidationError tells every row's mistakes (``where``: the file they came from). A
    style may be named; ``named_styles`` then resolves it among the account's styles."""
    fields = [{**defaults, **{k: v for k, v in record.items() if not _missing(v)}} for record in _records(source)]
    options: list[dict[str, Any]] = []
    for each in _checked(fields, where):
        options.append(each)
    return _keyed(options, [{k: _plain(v) for k, v in each.items()} for each in fields])


def check_rows(records: Iterable[Mapping[str, Any]], defaults: Mapping[str, Any], where: str | None = None) -> int:
    """``make_rows``' checks, one row at a time, keeping none (a large grid's rows are checked in
    bounded memory); the number of rows, or one ValidationError telling every row's mistakes."""
    return sum(1 for _ in _checked(({**defaults, **{k: v for k, v in record.items() if not _missing(v)}}
                                    for record in records), where))


def check_grid(axes: Mapping[str, list[Any]], defaults: Mapping[str, Any], where: str | None = None,
               max_rows: int | None = None) -> int:
    """A grid's rows checked as ``make_rows`` checks them, in time and memory of its axes, not its
    rows: every row holds the same fields, and each field is checked alone but for which fields are
    there, so the first row and each axis value put into it are checked; only when one is wrong are
    all rows checked (streamed), for the answer to name them. Returns the number of rows."""
    total = check_grid_size({name: len(values) for name, values in axes.items()}, max_rows)
    first = {name: values[0] for name, values in axes.items()}
    probes = [first, *({**first, name: value} for name, values in axes.items() for value in values[1:])]
    try:
        check_rows(probes, defaults)
    except ValidationError:
        check_rows(iter_grid(max_rows=max_rows, **axes), defaults, where)
    return total


def _checked(fields: Iterable[Mapping[str, Any]], where: str | None) -> Iterator[dict[str, Any]]:
    """Each row's create options as sent, checked against the interface; every row's mistakes raised
    together (one ValidationError) once all are seen."""
    mistakes: list[tuple[str, ValidationError]] = []
    slips: dict[str, ValidationError | None] = {}
    for index, each in enumerate(fields):
        for name in each:
            if name not in CREATE_OPTIONS and name not in slips:
                slips[name] = misspelt(str(name), CREATE_OPTIONS)
        mistakes += [(f"row {index}", slip) for name in each if (slip := slips.get(name)) is not None]
        given = {k: _plain(each[k]) for k in CREATE_OPTIONS if k in each and not _missing(each[k])}
        checked, found = create_mistakes(given.get("prompt"), {k: v for k, v in given.items() if k != "prompt"},
                                         names=True)
        mistakes += [(f"row {index}", mistake) for mistake in found]
        yield {"prompt": given.get("prompt"), **checked}
    error = all_mistakes(mistakes, where)
    if error is not None:
        raise error


_RUN_OPTIONS = ("budget", "concurrency", "progress", "out_dir", "journal")
"""What ``Batch.run`` takes: given to ``ik.batch`` it would be a label of each row, silently."""


def refuse_misplaced(defaults: Mapping[str, Any], ledger: Ledger | None) -> None:
    """ValidationError for a keyword of ``ik.batch`` that would become a label of each row though it
    was surely meant otherwise: ``tag=``, an option of ``run()`` (``budget=5`` capped nothing), or
    the name of a tag that has a budget (``experiment="a"``: the work would escape that budget)."""
    from ...errors import LedgerUnavailableError

    for name, value in defaults.items():
        if name == "tag":
            raise ValidationError(f"tag={value!r} is not an option of a batch: did you mean tags=?", field=name,
                                  value=value)
        if name in _RUN_OPTIONS:
            raise ValidationError(f"{name}= is an option of run(), not of the batch: batch.run({name}={value!r})",
                                  field=name, value=value)
    if ledger is None or not defaults:
        return
    try:
        budgeted = {budget.key for budget in ledger.budgets() if budget.key}
    except LedgerUnavailableError:
        return  # what is sent is checked against the budgets as it is sent, as ever
    for name in sorted(budgeted & set(defaults)):
        raise ValidationError(f"{name}={defaults[name]!r} would be a label of each row, not a tag, and the budgets of "
                              f"{name} would not count its work: give tags={{{name!r}: {defaults[name]!r}}} (or name "
                              "the label otherwise)", field=name, value=defaults[name])


def named_styles(rows: list[Row], styles: Iterable[Any], where: str | None = None) -> list[Row]:
    """``rows`` with each style given by name replaced by its id among ``styles`` (the account's own),
    each name told once; ValidationError names the rows whose names match none (and ``where``, the
    file they came from)."""
    styles, found, mistakes = list(styles), {}, []
    for row in rows:
        name = row.options.get("style")
        if isinstance(name, str) and name not in found:
            try:
                found[name] = resolve_style(name, styles)
            except ValidationError as exc:
                mistakes.append((f"row {row.index}", exc))
    error = all_mistakes(mistakes, where)
    if error is not None:
        raise error
    for name, style_id in found.items():  # told once the rows are known to be sent
        log.warning("%s", style_note(name, style_id, styles))
    if not found:
        return rows
    return _keyed([{**row.options, **({"style": found[row.options["style"]]} if row.options.get("style") in found
                                       else {})} for row in rows],
                  [{**row.labels, **({"style": found[row.labels["style"]]} if row.labels.get("style") in found
                                     else {})} for row in rows])


def _keyed(options: list[dict[str, Any]], labels: list[dict[str, Any]]) -> list[Row]:
    """Rows with their keys: a hash of the options, numbered from the second time the same occurs."""
    seen: Counter[str] = Counter()
    rows = []
    for index, (each, labelled) in enumerate(zip(options, labels)):
        digest = hashlib.sha256(json.dumps(each, sort_keys=True, default=str).encode()).hexdigest()[:16]
        seen[digest] += 1
        key = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"
        rows.append(Row(key=key, index=index, options=each, labels=labelled))
    return rows


def split_grid(rows: Iterable[Row]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """(axes, constants) of rows: each field that varies with its values in order of first use, and
    each field that is the same in every row with that value (a row without the field has None)."""
    rows = list(rows)
    names = list(dict.fromkeys(name for row in rows for name in row.labels))
    values: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        for name in names:
            value = row.labels.get(name)
            if value not in values[name]:
                values[name].append(value)
    return ({name: found for name, found in values.items() if len(found) > 1},
            {name: found[0] for name, found in values.items() if len(found) == 1})


def _records(source: RowSource) -> list[Mapping[str, Any]]:
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a DataFrame, without importing pandas
        return [{str(name): value for name, value in record.items()} for record in source.to_dict("records")]
    if isinstance(source, (str, Mapping)):
        source = [source]
    return [{"prompt": item} if isinstance(item, str) else dict(item) for item in source]


def _plain(value: Any) -> Any:
    """Ids rather than objects (a Style becomes its id); NumPy scalars become Python ones."""
    value = getattr(value, "style_id", value)
    return value.item() if getattr(value, "ndim", None) == 0 else value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # NaN from DataFrames


def _id(value: Any) -> int | None:
    """An id option as an int (options are plain already: a Style became its id)."""
    return None if value is None else int(value)
