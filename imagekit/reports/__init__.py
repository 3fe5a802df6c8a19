"""Usage reports from the credit ledger: spend tables, balance, limits, forecast, plots, and
``usage_report`` which writes them all to a folder (what ``imagekit usage`` prints and saves).

Needs pandas and matplotlib; importing ``imagekit`` does not load this package.
"""

from ..extras import needs_extra

with needs_extra():  # without pandas (imagekit[notebook]): one line naming the extra
    from .plots import burn_down, lineage_plot, spend_by_operation_plot, spend_by_style_plot
    from .report import STALE, Report, ledger_report, usage_report
    from .sheets import contact_sheet
    from .tables import (
        MIN_HISTORY,
        Forecast,
        balance_over_time,
        forecast,
        limits,
        period_start,
        shown_limits,
        spend_by_day,
        spend_by_operation,
        spend_by_style,
        spend_by_tag,
        style_label,
    )

__all__ = [
    "usage_report", "ledger_report", "Report", "STALE",
    "spend_by_operation", "spend_by_day", "spend_by_style", "spend_by_tag", "balance_over_time", "limits", "shown_limits", "forecast", "Forecast",
    "MIN_HISTORY", "period_start", "style_label",
    "burn_down", "spend_by_operation_plot", "spend_by_style_plot", "lineage_plot", "contact_sheet",
]
