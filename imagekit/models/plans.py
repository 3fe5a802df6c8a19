"""Plans and what hangs off them: credit costs, prices, generation models, enterprise contracts."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import Number, Resource, Timestamp


class PriceProperty(Resource):
    """A price in one currency."""

    price: Number | None = None
    """Price."""
    price_yearly: Number | None = Field(None, alias="price_yearly")
    """Yearly price."""
    price_reg: str | None = Field(None, alias="price_reg")
    """List price, formatted text."""
    price_dis: str | None = Field(None, alias="price_dis")
    """Discounted price, formatted text."""
    price_app: str | None = Field(None, alias="price_app")
    """App price, formatted text."""
    partner_key: str | None = Field(None, alias="partner_key")
    """Price key at the payment partner."""
    partner_key_yearly: str | None = Field(None, alias="partner_key_yearly")
    """Yearly price key at the payment partner."""
    currency: str | None = None
    """Currency code, three capital letters."""


class CreditCostInfo(Resource):
    """What one kind of operation costs on a plan."""

    credit_cost_info_id: int | None = None
    """Id."""
    plan_id: int | None = None
    """Plan id."""
    upgrade_plan_id: int | None = None
    """Recommended upgrade plan id."""
    type: str | None = None
    """Kind of charge (for example ``collection-2x``)."""
    credit: Number | None = None
    """Credit consumed (the service's samples send it as a numeric string)."""
    watermarked: bool | None = None
    """Output is watermarked."""
    need_upgrade: bool | None = None
    """Crown marker: an upgrade is needed."""
    featured: bool | None = None
    """Featured marker (New badge)."""
    plan: Plan | None = Field(None, alias="Plan")
    """The plan."""
    upgrade_plan: Plan | None = Field(None, alias="UpgradePlan")
    """The recommended upgrade plan."""


class _PlanLimits(Resource):
    """Fields shared by the full plan and the plan summary on a user."""

    plan_id: int | None = None
    """Id."""
    grade: str | None = None
    """Grade."""
    minus_credit_allowed: Number | None = None
    """Credit count the balance may fall below zero."""
    max_style_number: int | None = None
    """Maximum number of styles."""
    simultaneous_limit: int | None = None
    """Concurrent generation limit."""
    max_multi_select: int | None = None
    """Maximum images in a bulk selection."""
    max_edit_number: int | None = None
    """Maximum number of edits."""
    max_prompt_number: int | None = None
    """Maximum number of prompts."""
    period: str | None = None
    """Billing period: ``month`` or ``day``."""
    one_time_payment: bool | None = None
    """One-time payment plan."""
    default_credit: Number | None = None
    """Credit."""
    daily_credit: Number | None = None
    """Daily credit grant."""
    monthly_credit: Number | None = None
    """Monthly credit grant."""
    credit_cost_info: list[CreditCostInfo] | None = Field(None, alias="CreditCostInfo")
    """Credit cost entries."""


class Plan(_PlanLimits):
    """A plan in full, as nested in credit cost entries."""

    name: str | None = None
    """Name. Deprecated by the service, still sent."""
    history_period_month: int | None = None
    """Months of history that can be queried."""
    title: dict[str, Any] | None = None
    """Localized plan name."""
    price_global: dict[str, PriceProperty] | None = None
    """Language key (``en``, ``ko``...) to price."""
    premium_available: bool | None = None
    """Premium collection usable."""
    enabled: bool | None = None
    """Plan active."""
    models: list[GenerationModel] | None = Field(None, alias="Models")
    """Models bound to the plan."""


class AuthUserPlan(_PlanLimits):
    """The caller's plan, as nested in the user profile."""

    price_obj: PriceProperty | None = None
    """Price information."""
    title_name: str | None = None
    """Localized plan name."""


class GenerationModel(Resource):
    """A generation model the service runs (the spec's "Model")."""

    model_id: int | None = None
    """Id."""
    name: str | None = None
    """Base model: ``sdxl`` or ``replicate``."""
    version: str | None = None
    """Version name."""
    api_name: str | None = None
    """API name."""
    square_size: str | None = None
    """Square size, WxH. Deprecated."""
    horizontal_size: str | None = None
    """Landscape size, WxH. Deprecated."""
    vertical_size: str | None = None
    """Portrait size, WxH. Deprecated."""
    downsizing: bool | None = None
    """Downsizing flag. Deprecated."""
    is_main_generation: bool | None = None
    """Main generation model."""
    ping: Number | None = None
    """Cold-boot ping in minutes."""
    params: dict[str, Any] | None = None
    """Parameters."""
    example: dict[str, Any] | None = None
    """Example used to verify recovery."""
    backup_model: GenerationModel | None = Field(None, alias="BackupModel")
    """Backup model."""
    backup_model_id: int | None = None
    """Backup model id."""
    error_count: int | None = None
    """Error counter."""
    recover_count: int | None = None
    """Backup recovery counter."""
    use_backup: bool | None = None
    """Backup model in use."""
    prompt: str | None = None
    """Model-specific prompt."""
    need_translate: bool | None = None
    """Translation needed."""
    name_global: dict[str, Any] | None = None
    """Localized name."""
    description_global: dict[str, Any] | None = None
    """Localized description."""
    logo: str | None = None
    """Path of the symbol logo file."""
    plans: list[Plan] | None = Field(None, alias="Plans")
    """Bound plans."""
    enterprises: list[Enterprise] | None = Field(None, alias="Enterprises")
    """Bound enterprises."""


class _EnterpriseTerms(Resource):
    """Fields shared by the enterprise contract and its summary on a user."""

    expires_at: Timestamp = None
    """Expiry."""
    monthly_credit: Number | None = None
    """Monthly credit grant."""
    yearly_credit: Number | None = None
    """Yearly credit grant."""
    amount: Number | None = None
    """Amount."""
    simultaneous_limit: int | None = None
    """Concurrent generation limit."""
    max_edit_number: int | None = None
    """Maximum edits."""
    payment_period: str | None = None
    """Payment period: ``monthly``, ``yearly`` or ``bill``."""


class Enterprise(_EnterpriseTerms):
    """An enterprise contract, as nested in a model."""

    name: str | None = None
    """Company name."""
    categories: str | None = None
    """Comma-separated category list."""
    currency: str | None = None
    """Currency."""
    edit_count_period: str | None = None
    """Edit counting restarts each ``day``, ``month`` or at ``plan`` start."""
    postpaid: bool | None = None
    """Postpaid account (may exceed the monthly credit)."""
    model_url: str | None = None
    """Model API address."""
    logo: str | None = None
    """Logo address."""
    user_id: int | None = None
    """User id."""
    can_use_own_only: bool | None = None
    """Forces use of own styles only."""
    has_special_limits: bool | None = None
    """Per-feature limits apply."""
    models: list[GenerationModel] | None = Field(None, alias="Models")
    """Bound models."""


class AuthUserEnterprise(_EnterpriseTerms):
    """The caller's enterprise contract, as nested in the user profile."""
