"""The caller's account: profile, usage counters and own styles."""

from __future__ import annotations

from pydantic import Field

from ._base import Number, Resource, Timestamp
from .plans import AuthUserEnterprise, AuthUserPlan


class EnterpriseDownload(Resource):
    """A download charged to an enterprise account."""

    enterprise_download_id: int | None = None
    """Id."""
    scale_size: str | None = None
    """Scale: ``1x``, ``2x``, ``4x`` or ``8x``."""
    credit: Number | None = None
    """Credit consumed."""
    user_id: int | None = None
    """User id."""


class User(Resource):
    """The caller's profile and plan (GET /api/users/me)."""

    user_id: int | None = None
    """User id."""
    email: str | None = None
    """E-mail address."""
    name: str | None = None
    """Name."""
    occupation: str | None = None
    """Occupation."""
    business: str | None = None
    """Line of business."""
    notify_agree: bool | None = None
    """Marketing consent."""
    credit_notify_agree: bool | None = None
    """Consent to credit top-up notices."""
    tutorial_finished: bool | None = None
    """Tutorial completed."""
    profile_image: str | None = None
    """Profile image address."""
    sns_id: str | None = None
    """Id at the login provider."""
    provider: str | None = None
    """Login method."""
    role: str | None = None
    """Role (a regular user has the role ``normal``)."""
    default_credit: Number | None = None
    """Credit balance."""
    daily_credit: Number | None = None
    """Credit granted each day."""
    monthly_credit: Number | None = None
    """Credit granted each month."""
    customer_key: str | None = None
    """Customer key at the payment provider (uuid form)."""
    billing_retry_date: Timestamp = None
    """Last billing retry date."""
    created_at: Timestamp = None
    """Sign-up date."""
    next_plan_at: Timestamp = None
    """Start of the next plan; the new charge happens on this day."""
    plan_started_at: Timestamp = None
    """Plan start."""
    plan_id: int | None = None
    """Current plan id."""
    next_plan_id: int | None = None
    """Next plan id; None means the current plan stays."""
    card_number: str | None = None
    """Card number, masked."""
    card_company: str | None = None
    """Card company."""
    plan: AuthUserPlan | None = Field(None, alias="Plan")
    """Plan information."""
    card_registered: bool | None = None
    """A card is registered."""
    use_partner: bool | None = None
    """Whether the external payment partner is used."""
    max_credit: Number | None = None
    """Credit cap (at least 0)."""
    enterprise_download: list[EnterpriseDownload] | None = Field(None, alias="EnterpriseDownload")
    """Enterprise download information."""
    enterprise: AuthUserEnterprise | None = Field(None, alias="Enterprise")
    """Enterprise information."""


class Usage(Resource):
    """The caller's usage counters (GET /api/users/me/usage)."""

    current_credit: Number | None = None
    """Current credit."""
    additional_credit: Number | None = None
    """Additionally purchased credit."""
    max_credit: Number | None = None
    """Maximum credit."""
    period: str | None = None
    """Plan period."""
    ttp_count: int | None = None
    """Text-to-prompt usage."""
    max_ttp_count: int | None = None
    """Text-to-prompt maximum."""
    edit_count: int | None = None
    """Edit usage."""
    max_edit_count: int | None = None
    """Edit maximum."""
    postpaid_usage_count: int | None = None
    """Postpaid usage count (enterprise postpaid accounts only)."""


class Style(Resource):
    """One of the caller's own styles (element of GET /api/users/me/styles)."""

    style_id: int | None = None
    """Id."""
    created_at: Timestamp = None
    """Creation time."""
    super_: str | None = Field(None, alias="super")
    """Major category code."""
    main: str | None = None
    """Middle category code."""
    api_enabled: bool | None = None
    """Usable through the API."""
    credit_cost: Number | None = None
    """Credit deducted per generation."""
    main_text: str | None = None
    """Translated text."""
    thumb_link: str | None = None
    """Thumbnail link, a path of the form ``/api/images/<image_id>/binary``."""
