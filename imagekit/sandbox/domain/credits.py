"""Credits: grants, prices, atomic charges and refunds, and the period counters behind limits.

Balance rules (also in docs/reference/credits.md):
- Three buckets: ``dailyCredit`` (reset to the plan's daily grant at each UTC day start),
  ``monthlyCredit`` (reset to the plan's, or the enterprise's, monthly grant each month from
  ``planStartedAt``) and ``defaultCredit`` (the lasting balance: sign-up credit and top-ups).
- A grant never lifts the total of the three above ``maxCredit``; it is trimmed instead.
- A charge draws daily, then monthly, then default credit. ``defaultCredit`` may fall to
  ``-minusCreditAllowed``; a charge that would go further is refused with 402 not_enough_credit.
- Postpaid enterprise accounts are never refused: what the buckets cannot cover is billed later
  and counted in ``postpaidUsageCount`` (credits, reset each month); buckets stay at or above zero.
- A refund puts credits back into the buckets they came from.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..interface.errors import SandboxError
from ..store.db import Database
from ..store.tables import Charge, CreditCost, PromptLog, User
from .catalog import EDIT_TYPES


def _add_months(moment: datetime, months: int) -> datetime:
    month_index = moment.month - 1 + months
    year, month = moment.year + month_index // 12, month_index % 12 + 1
    days = [31, 29 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 28, 31, 30, 31, 30,
            31, 31, 30, 31, 30, 31][month - 1]
    return moment.replace(year=year, month=month, day=min(moment.day, days))


def monthly_grant(user: User) -> int:
    return user.enterprise.monthly_credit if user.enterprise else user.plan.monthly_credit


def simultaneous_limit(user: User) -> int:
    return user.enterprise.simultaneous_limit if user.enterprise else user.plan.simultaneous_limit


def max_edits(user: User) -> int:
    return user.enterprise.max_edit_number if user.enterprise else user.plan.max_edit_number


def is_postpaid(user: User) -> bool:
    return bool(user.enterprise and user.enterprise.postpaid)


def grants_due(user: User, now: datetime) -> bool:
    return user.daily_granted_on < now.date() or _add_months(user.monthly_granted_at, 1) <= now


def apply_grants(user: User, now: datetime) -> None:
    """Reset the daily and monthly buckets whose period has turned, trimmed to maxCredit."""
    if user.daily_granted_on < now.date():
        user.daily_credit = user.plan.daily_credit
        user.daily_granted_on = now.date()
    if _add_months(user.monthly_granted_at, 1) <= now:
        anchor = user.monthly_granted_at
        while _add_months(anchor, 1) <= now:
            anchor = _add_months(anchor, 1)
        user.monthly_credit = monthly_grant(user)
        user.monthly_granted_at = anchor
        user.postpaid_usage = 0
    excess = user.daily_credit + user.monthly_credit + max(user.default_credit, 0) - user.max_credit
    for bucket in ("daily_credit", "monthly_credit"):
        if excess <= 0:
            break
        trim = min(excess, getattr(user, bucket))
        setattr(user, bucket, getattr(user, bucket) - trim)
        excess -= trim


def balances(user: User) -> dict[str, int]:
    """The three balances as the create response names them."""
    return {"defaultCredit": user.default_credit, "dailyCredit": user.daily_credit,
            "monthlyCredit": user.monthly_credit}


def total_balance(user: User) -> int:
    return user.default_credit + user.daily_credit + user.monthly_credit


def cost_info(user: User, kind: str) -> CreditCost:
    """The caller's plan's CreditCostInfo entry of type ``kind``."""
    for cost in user.plan.costs:
        if cost.type == kind:
            return cost
    raise SandboxError("internal_error", f"The plan has no price for {kind!r}.")


def price(user: User, kind: str) -> int:
    """Credits the caller's plan charges for one operation of CreditCostInfo type ``kind``."""
    return cost_info(user, kind).credit


def charge(session: Session, user: User, operation: str, credits: int, now: datetime,
           request_id: str = "") -> Charge:
    """Take ``credits`` from the user's buckets in one step, or refuse with 402; ``user`` must have
    been read with its row lock (:meth:`Database.locked`) in this session."""
    row = Charge(user_id=user.user_id, created_at=now, operation=operation, credits=credits,
                 request_id=request_id)
    remaining = credits
    for bucket, field in (("daily_credit", "from_daily"), ("monthly_credit", "from_monthly")):
        take = min(remaining, max(getattr(user, bucket), 0))
        setattr(user, bucket, getattr(user, bucket) - take)
        setattr(row, field, take)
        remaining -= take
    if remaining:
        if is_postpaid(user):
            take = min(remaining, max(user.default_credit, 0))
            row.from_default, row.postpaid = take, remaining - take
            user.default_credit -= take
            user.postpaid_usage += row.postpaid
        elif user.default_credit - remaining < -user.plan.minus_credit_allowed:
            raise SandboxError("not_enough_credit",
                               f"This needs {credits} credits; the balance allows "
                               f"{credits - remaining + user.default_credit + user.plan.minus_credit_allowed}.")
        else:
            row.from_default = remaining
            user.default_credit -= remaining
    session.add(row)
    session.flush()
    return row


def refund(session: Session, row: Charge, credits: int | None = None) -> None:
    """Give back ``credits`` (all that is left by default) to the buckets they came from."""
    user = Database.locked(session, User, row.user_id)
    row = Database.locked_one(session, Charge, row.charge_id)  # what another process refunded meanwhile counts
    give = row.credits - row.refunded if credits is None else min(credits, row.credits - row.refunded)
    row.refunded += give
    row.status = "refunded" if row.refunded == row.credits else "partial"
    for field, bucket in (("postpaid", "postpaid_usage"), ("from_default", "default_credit"),
                          ("from_monthly", "monthly_credit"), ("from_daily", "daily_credit")):
        back = min(give, getattr(row, field))
        if not back:
            continue
        setattr(row, field, getattr(row, field) - back)
        delta = -back if bucket == "postpaid_usage" else back
        setattr(user, bucket, getattr(user, bucket) + delta)
        give -= back


def period_start(user: User, period: str, now: datetime) -> datetime:
    """Start of the counting period: day = today, month = this month, plan = since the plan began."""
    if period == "day":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "plan":
        return user.plan_started_at
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def edit_period(user: User) -> str:
    return user.enterprise.edit_count_period if user.enterprise else user.plan.period


def edit_count(session: Session, user: User, now: datetime, prefix: str | None = None) -> int:
    """Edits charged (and not refunded, i.e. not cancelled or failed) in the current edit period."""
    kinds = [k for k in EDIT_TYPES if prefix is None or k.startswith(prefix)]
    return session.scalar(select(func.count()).select_from(Charge).where(
        Charge.user_id == user.user_id, Charge.operation.in_(kinds), Charge.status != "refunded",
        Charge.created_at >= period_start(user, edit_period(user), now))) or 0


def prompt_count(session: Session, user: User, now: datetime) -> int:
    return session.scalar(select(func.count()).select_from(PromptLog).where(
        PromptLog.user_id == user.user_id,
        PromptLog.created_at >= period_start(user, user.plan.period, now))) or 0


def watermarked(user: User, kind: str) -> bool:
    """Whether the plan watermarks what an operation of this CreditCostInfo type produces."""
    return bool(cost_info(user, kind).watermarked)


def check_special_limit(session: Session, user: User, operation: str, now: datetime) -> None:
    """Enterprise per-feature caps (``hasSpecialLimits``): operation family -> uses per edit period."""
    enterprise = user.enterprise
    family = operation.split("-")[0]
    cap = enterprise.special_limits.get(family) if enterprise and enterprise.has_special_limits else None
    if cap is None:
        return
    used = session.scalar(select(func.count()).select_from(Charge).where(
        Charge.user_id == user.user_id, Charge.operation.startswith(family), Charge.status != "refunded",
        Charge.created_at >= period_start(user, edit_period(user), now))) or 0
    if used >= cap:
        raise SandboxError("special_limit_exceeded",
                           f"This account may use {family} {cap} time(s) per {edit_period(user)}.")
