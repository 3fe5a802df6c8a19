"""SQLAlchemy tables of the sandbox: plans and prices, accounts, styles, images, charges."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import JSON, Boolean, Column, Date, DateTime, ForeignKey, Integer, String, Table, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


plan_models = Table(
    "plan_models", Base.metadata,
    Column("plan_id", ForeignKey("plans.plan_id"), primary_key=True),
    Column("model_id", ForeignKey("models.model_id"), primary_key=True),
)
enterprise_models = Table(
    "enterprise_models", Base.metadata,
    Column("enterprise_id", ForeignKey("enterprises.enterprise_id"), primary_key=True),
    Column("model_id", ForeignKey("models.model_id"), primary_key=True),
)


class Plan(Base):
    __tablename__ = "plans"
    plan_id: Mapped[int] = mapped_column(primary_key=True)
    grade: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(64))
    title: Mapped[dict] = mapped_column(JSON)
    period: Mapped[str] = mapped_column(String(8))
    one_time_payment: Mapped[bool] = mapped_column(Boolean, default=False)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    premium_available: Mapped[bool] = mapped_column(Boolean, default=False)
    history_period_month: Mapped[int] = mapped_column(Integer)
    minus_credit_allowed: Mapped[int] = mapped_column(Integer)
    max_style_number: Mapped[int] = mapped_column(Integer)
    simultaneous_limit: Mapped[int] = mapped_column(Integer)
    max_multi_select: Mapped[int] = mapped_column(Integer)
    max_edit_number: Mapped[int] = mapped_column(Integer)
    max_prompt_number: Mapped[int] = mapped_column(Integer)
    default_credit: Mapped[int] = mapped_column(Integer)
    daily_credit: Mapped[int] = mapped_column(Integer)
    monthly_credit: Mapped[int] = mapped_column(Integer)
    max_credit: Mapped[int] = mapped_column(Integer)
    price_global: Mapped[dict] = mapped_column(JSON)
    upgrade_plan_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    costs: Mapped[list[CreditCost]] = relationship(back_populates="plan", order_by="CreditCost.credit_cost_info_id")
    models: Mapped[list[Model]] = relationship(secondary=plan_models, back_populates="plans")


class CreditCost(Base):
    __tablename__ = "credit_costs"
    credit_cost_info_id: Mapped[int] = mapped_column(primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.plan_id"))
    upgrade_plan_id: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    credit: Mapped[int] = mapped_column(Integer)
    watermarked: Mapped[bool] = mapped_column(Boolean, default=False)
    need_upgrade: Mapped[bool] = mapped_column(Boolean, default=False)
    featured: Mapped[bool] = mapped_column(Boolean, default=False)
    plan: Mapped[Plan] = relationship(back_populates="costs")


class Model(Base):
    __tablename__ = "models"
    model_id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(16))
    version: Mapped[str] = mapped_column(String(32))
    api_name: Mapped[str] = mapped_column(String(64))
    engine: Mapped[str] = mapped_column(String(32))
    is_main_generation: Mapped[bool] = mapped_column(Boolean, default=False)
    backup_model_id: Mapped[int] = mapped_column(Integer, default=0)
    params: Mapped[dict] = mapped_column(JSON, default=dict)
    prompt: Mapped[str] = mapped_column(Text, default="")
    name_global: Mapped[dict] = mapped_column(JSON, default=dict)
    description_global: Mapped[dict] = mapped_column(JSON, default=dict)
    plans: Mapped[list[Plan]] = relationship(secondary=plan_models, back_populates="models")


class User(Base):
    __tablename__ = "users"
    user_id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(128))
    occupation: Mapped[str] = mapped_column(String(64), default="")
    business: Mapped[str] = mapped_column(String(64), default="")
    role: Mapped[str] = mapped_column(String(16), default="normal")
    customer_key: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.plan_id"))
    plan_started_at: Mapped[datetime] = mapped_column(DateTime)
    next_plan_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    default_credit: Mapped[int] = mapped_column(Integer)
    daily_credit: Mapped[int] = mapped_column(Integer)
    monthly_credit: Mapped[int] = mapped_column(Integer)
    max_credit: Mapped[int] = mapped_column(Integer)
    postpaid_usage: Mapped[int] = mapped_column(Integer, default=0)
    daily_granted_on: Mapped[date] = mapped_column(Date)
    monthly_granted_at: Mapped[datetime] = mapped_column(DateTime)
    plan: Mapped[Plan] = relationship(lazy="joined")
    enterprise: Mapped[Enterprise | None] = relationship(back_populates="user", lazy="joined")


class Enterprise(Base):
    __tablename__ = "enterprises"
    enterprise_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"), unique=True)
    name: Mapped[str] = mapped_column(String(128))
    categories: Mapped[str] = mapped_column(String(256))
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    monthly_credit: Mapped[int] = mapped_column(Integer)
    yearly_credit: Mapped[int] = mapped_column(Integer)
    amount: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    simultaneous_limit: Mapped[int] = mapped_column(Integer)
    max_edit_number: Mapped[int] = mapped_column(Integer)
    edit_count_period: Mapped[str] = mapped_column(String(8))
    payment_period: Mapped[str] = mapped_column(String(8))
    postpaid: Mapped[bool] = mapped_column(Boolean)
    model_url: Mapped[str] = mapped_column(String(256))
    logo: Mapped[str] = mapped_column(String(256))
    can_use_own_only: Mapped[bool] = mapped_column(Boolean, default=False)
    has_special_limits: Mapped[bool] = mapped_column(Boolean, default=False)
    special_limits: Mapped[dict] = mapped_column(JSON, default=dict)
    """Per-operation edit caps within editCountPeriod, applied when has_special_limits."""
    user: Mapped[User] = relationship(back_populates="enterprise")
    models: Mapped[list[Model]] = relationship(secondary=enterprise_models)


class EnterpriseDownload(Base):
    __tablename__ = "enterprise_downloads"
    enterprise_download_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"))
    scale_size: Mapped[str] = mapped_column(String(2))
    credit: Mapped[int] = mapped_column(Integer)


class ApiKey(Base):
    __tablename__ = "api_keys"
    key_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"))
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class LoginSession(Base):
    __tablename__ = "login_sessions"
    sid_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"))
    expires_at: Mapped[datetime] = mapped_column(DateTime)


class Style(Base):
    __tablename__ = "styles"
    style_id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.user_id"), nullable=True)
    """None for the public catalogue; a user id for that user's own style."""
    created_at: Mapped[datetime] = mapped_column(DateTime)
    super: Mapped[str] = mapped_column(String(32))
    main: Mapped[str] = mapped_column(String(32))
    main_text: Mapped[str] = mapped_column(String(64))
    look: Mapped[str] = mapped_column(String(32))
    api_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    credit_cost: Mapped[int] = mapped_column(Integer)
    thumb_image_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Collection(Base):
    __tablename__ = "collections"
    collection_id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.user_id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    name: Mapped[str] = mapped_column(String(64))
    look: Mapped[str] = mapped_column(String(32))
    palette: Mapped[list] = mapped_column(JSON)
    premium: Mapped[bool] = mapped_column(Boolean, default=False)
    tags_en: Mapped[list] = mapped_column(JSON, default=list)
    tags_ko: Mapped[list] = mapped_column(JSON, default=list)


class Image(Base):
    __tablename__ = "images"
    image_id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.user_id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    status: Mapped[str] = mapped_column(String(10))
    error: Mapped[str] = mapped_column(Text, default="")
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    file_name: Mapped[str | None] = mapped_column(String(64), nullable=True)
    vector_file: Mapped[str | None] = mapped_column(String(64), nullable=True)
    kind: Mapped[str] = mapped_column(String(12))
    """generation, edit or collection (an item of a collection)."""
    mode: Mapped[str] = mapped_column(String(16))
    """style, reference or collection for generations; the edit operation for edits."""
    prompt: Mapped[str] = mapped_column(Text, default="")
    negative: Mapped[str] = mapped_column(Text, default="")
    style_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    collection_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    member_of: Mapped[int | None] = mapped_column(ForeignKey("collections.collection_id"), nullable=True)
    group_id: Mapped[str] = mapped_column(String(64), default="")
    variation_id: Mapped[int] = mapped_column(Integer, default=0)
    credit_cost: Mapped[int] = mapped_column(Integer, default=0)
    platform: Mapped[str] = mapped_column(String(8), default="api")
    api_type: Mapped[str] = mapped_column(String(16), default="standard")
    model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    source_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    scale_size: Mapped[str] = mapped_column(String(3), default="1x")
    request_id: Mapped[str] = mapped_column(String(64), default="")
    charge_id: Mapped[int | None] = mapped_column(ForeignKey("charges.charge_id"), nullable=True, index=True)
    unit_price: Mapped[int] = mapped_column(Integer, default=0)
    """This image's share of its charge: refunded if the image fails."""
    watermarked: Mapped[bool] = mapped_column(Boolean, default=False)
    bookmarked: Mapped[bool] = mapped_column(Boolean, default=False)
    blur_reason: Mapped[str] = mapped_column(String(64), default="")
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    """Extra inputs kept for the record (initial/enhanced/caption prompts, edit parameters)."""


class Charge(Base):
    """One charge for one operation, with the buckets it drew from (so a refund puts them back)."""

    __tablename__ = "charges"
    charge_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    operation: Mapped[str] = mapped_column(String(24))
    credits: Mapped[int] = mapped_column(Integer)
    refunded: Mapped[int] = mapped_column(Integer, default=0)
    from_daily: Mapped[int] = mapped_column(Integer, default=0)
    from_monthly: Mapped[int] = mapped_column(Integer, default=0)
    from_default: Mapped[int] = mapped_column(Integer, default=0)
    postpaid: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(12), default="charged")
    """charged, refunded (all of it), partial (some images failed)."""
    request_id: Mapped[str] = mapped_column(String(64), default="")


class PromptLog(Base):
    __tablename__ = "prompt_logs"
    ttp_log_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    style_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    initial_prompt: Mapped[str] = mapped_column(Text)
    enhanced_prompt: Mapped[str] = mapped_column(Text)


class DownloadLog(Base):
    __tablename__ = "download_logs"
    download_id: Mapped[int] = mapped_column(primary_key=True)
    image_id: Mapped[int] = mapped_column(Integer, index=True)
    user_id: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class RequestId(Base):
    """An edit request id of a user, kept for ``jobs.REQUEST_ID_RETENTION`` so that it is used once
    (across restarts too) and ``cancelEdit`` keeps answering for it."""

    __tablename__ = "request_ids"
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    state: Mapped[str] = mapped_column(String(12))
    """running, completed, cancelled, failed; precancelled when the cancel came before the edit."""


class State(Base):
    """Key/value state of the sandbox itself (clock offset, cookie secret)."""

    __tablename__ = "sandbox_state"
    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class RunningSlot(Base):
    """A generation or edit running now; a user's rows are counted against simultaneousLimit. Kept
    in the database so that every worker counts every other's (see ``slots.py``)."""

    __tablename__ = "running_slots"
    slot_id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"), index=True)
    started_at: Mapped[datetime] = mapped_column(DateTime)
    pid: Mapped[int] = mapped_column(Integer)
    """The process running it (for the log and for tests)."""
    expires_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    """End of the lease (wall clock, UTC), renewed by the running process while it lives."""
    charge_id: Mapped[int | None] = mapped_column(
        ForeignKey("charges.charge_id", name="fk_running_slots_charge_id_charges"), nullable=True)
    """The charge its work made, once made: what is refunded if the work dies (the key is named as
    migration 0003 names it, so that its downgrade finds it in a database made from these tables)."""
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """An edit's request id, once taken: its state is settled with the slot."""


class ConcurrencyPeak(Base):
    """The most operations a user had running at once (``GET /sandbox/stats``)."""

    __tablename__ = "concurrency_peaks"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.user_id"), primary_key=True)
    peak: Mapped[int] = mapped_column(Integer)
