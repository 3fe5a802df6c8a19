"""Plots of usage (matplotlib): burn-down, spend by operation and by style, an edit chain's lineage.

Figures are built with ``matplotlib.figure.Figure``, not pyplot: no global state, no GUI backend,
safe in scripts, servers and notebooks alike.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .tables import Forecast

__all__ = ["burn_down", "spend_by_operation_plot", "spend_by_style_plot", "lineage_plot"]

FEW = 20
"""Up to this many balances, the burn-down marks each one."""
SHORTEST_SPAN = timedelta(seconds=10)
"""The narrowest time axis: whole seconds ticked, and a short run drawn across most of it."""


def _figure(width: float = 6.4, height: float = 3.6) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def burn_down(balance: pd.DataFrame, forecast: Forecast | None = None) -> Figure:
    """Balance over time (from ``balance_over_time``), with the forecast's run-out date if given."""
    figure, ax = _figure()
    ax.set(title="Credit burn-down", ylabel="credits")
    if not len(balance):  # a report with nothing spent is a report: it says so
        ax.text(0.5, 0.5, "nothing spent yet", ha="center", va="center", transform=ax.transAxes, color="0.4")
        ax.set_xticks([])
        ax.set_yticks([])
        return figure
    # A few spends are drawn as points too: one spend alone is a step of no length.
    ax.step(balance["time"], balance["balance"], where="post", label="balance",
            marker="o" if len(balance) < FEW else None)
    runs_out = forecast.runs_out if forecast is not None else None
    if runs_out is not None and len(balance):
        last = balance.iloc[-1]
        ax.plot([last["time"], pd.Timestamp(runs_out)], [last["balance"], 0], "--", label="forecast")
    ax.legend(loc="upper right")
    _time_axis(ax)
    return figure


def _time_axis(ax: Axes) -> None:
    """Ticks a person reads (``14:03``, ``14:03:20``, ``10 Mar``; the date beside them), over
    ``SHORTEST_SPAN`` at least: a run of a second would otherwise be ticked in fractions
    (``42:11.000000``), and a few seconds' run still fills most of the width."""
    from matplotlib.dates import SECONDLY, AutoDateLocator, ConciseDateFormatter

    low, high = ax.dataLim.intervalx  # in days, matplotlib's date unit
    shortest = SHORTEST_SPAN.total_seconds() / 86_400
    if ax.has_data() and high - low < shortest:
        middle = (low + high) / 2
        ax.set_xlim(middle - shortest / 2, middle + shortest / 2)
    locator = AutoDateLocator(minticks=3, maxticks=8)  # type: ignore[no-untyped-call]
    locator.intervald[SECONDLY] = [1, 2, 5, 10, 15, 30]  # ticks every 2 s too: three across the shortest span
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(  # type: ignore[no-untyped-call]
        locator, formats=["%Y", "%b", "%d %b", "%H:%M", "%H:%M", "%H:%M:%S"],
        zero_formats=["", "%Y", "%b", "%d %b", "%H:%M", "%H:%M:%S"],
        offset_formats=["", "%Y", "%b %Y", "%d %b %Y", "%d %b %Y", "%d %b %Y"]))
    ax.set_xlabel("time (UTC)")


def _bars(table: pd.DataFrame, title: str) -> Figure:
    figure, ax = _figure(6.4, 0.4 + 0.35 * max(len(table), 2))
    if not len(table):
        ax.text(0.5, 0.5, "nothing spent yet", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.barh(table.index.astype(str)[::-1], table["credits"][::-1])
    ax.set(title=title, xlabel="credits")
    return figure


def spend_by_operation_plot(table: pd.DataFrame) -> Figure:
    """Bars of ``spend_by_operation``."""
    return _bars(table, "Spend by operation")


def spend_by_style_plot(table: pd.DataFrame) -> Figure:
    """Bars of ``spend_by_style``."""
    return _bars(table, "Spend by style")


def lineage_plot(lineage: pd.DataFrame, source_id: int) -> Figure:
    """An edit chain's steps as boxes joined by arrows, source image first."""
    figure, ax = _figure(2.2 * (len(lineage) + 1), 1.6)
    labels = [f"#{source_id}\nsource"] + [
        f"{record['op']}\n#{'—' if pd.isna(record['image_id']) else record['image_id']}\n{record['status']}"
        for record in lineage.to_dict("records")]
    for x, label in enumerate(labels):
        failed = x > 0 and lineage.iloc[x - 1]["status"] != "done"
        ax.text(x, 0, label, ha="center", va="center", fontsize=8,
                bbox={"boxstyle": "round", "facecolor": "#f4c7c3" if failed else "#d9ead3"})
        if x:
            ax.annotate("", xy=(x - 0.3, 0), xytext=(x - 0.7, 0), arrowprops={"arrowstyle": "->"})
    ax.set(xlim=(-0.6, len(labels) - 0.4), ylim=(-1, 1))
    ax.set_axis_off()
    return figure
