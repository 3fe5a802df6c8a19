"""The seeded catalogue: plans with their prices and credit costs, and the models bound to them.

Every price the sandbox charges comes from these rows (through the database), never from code:
a style-mode image costs the style's ``creditCost``; everything else costs the caller's plan row
of the matching ``type``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from ..store.tables import CreditCost, Model, Plan

EDIT_TYPES = ("enhance-2x", "enhance-4x", "enhance-8x", "outpaint", "retry", "fill", "cleanUp",
              "removeBg", "vectorize", "upsize")
"""CreditCostInfo types of the eight edits (enhance priced per scale)."""

# type -> credits on the free plan; other plans scale these (see _PLANS "cost_factor").
_BASE_COSTS = {
    "generate": 2, "reference": 3, "collection": 3, "collection-2x": 6,
    "enhance-2x": 2, "enhance-4x": 4, "enhance-8x": 8, "outpaint": 3, "retry": 2, "fill": 3,
    "cleanUp": 2, "removeBg": 1, "vectorize": 2, "upsize": 2, "textToPrompt": 0, "imageToPrompt": 0,
}
_FREE_LOCKED = {"collection-2x", "enhance-8x"}
"""Types the free plan may use but that carry the crown marker (upgrade suggested)."""

_PLANS: list[dict[str, Any]] = [
    dict(plan_id=1, grade="free", title={"en": "Free", "ko": "무료"}, period="month", price=0,
         daily_credit=20, monthly_credit=0, default_credit=50, max_credit=500, minus_credit_allowed=0,
         simultaneous_limit=1, max_edit_number=20, max_prompt_number=20, max_style_number=3,
         max_multi_select=4, premium_available=False, history_period_month=1, upgrade=2,
         cost_factor=1.0, watermarked=True),
    dict(plan_id=2, grade="standard", title={"en": "Standard", "ko": "스탠다드"}, period="month", price=12,
         daily_credit=0, monthly_credit=1000, default_credit=0, max_credit=5000, minus_credit_allowed=0,
         simultaneous_limit=2, max_edit_number=300, max_prompt_number=300, max_style_number=10,
         max_multi_select=20, premium_available=False, history_period_month=6, upgrade=3,
         cost_factor=1.0, watermarked=False),
    dict(plan_id=3, grade="pro", title={"en": "Pro", "ko": "프로"}, period="month", price=48,
         daily_credit=0, monthly_credit=5000, default_credit=0, max_credit=20000, minus_credit_allowed=100,
         simultaneous_limit=4, max_edit_number=3000, max_prompt_number=3000, max_style_number=50,
         max_multi_select=100, premium_available=True, history_period_month=12, upgrade=4,
         cost_factor=0.5, watermarked=False),
    dict(plan_id=4, grade="enterprise", title={"en": "Enterprise", "ko": "엔터프라이즈"}, period="month",
         price=0, daily_credit=0, monthly_credit=0, default_credit=0, max_credit=1_000_000,
         minus_credit_allowed=0, simultaneous_limit=8, max_edit_number=10000, max_prompt_number=10000,
         max_style_number=200, max_multi_select=500, premium_available=True, history_period_month=24,
         upgrade=4, cost_factor=0.5, watermarked=False),
]

PLAN_GRADES = tuple(p["grade"] for p in _PLANS)
ENTERPRISE_GRADE = "enterprise"


def _price(amount: int) -> dict:
    text = f"${amount:,}" if amount else "Free"
    return {"price": amount, "price_yearly": amount * 10, "price_reg": text, "price_dis": text,
            "price_app": text, "partner_key": f"price_{amount}_m", "partner_key_yearly": f"price_{amount}_y",
            "currency": "USD"}


def _price_ko(amount: int) -> dict:
    won = amount * 1400
    text = f"₩{won:,}" if won else "무료"
    return {**_price(amount), "price": won, "price_yearly": won * 10, "price_reg": text,
            "price_dis": text, "price_app": text, "currency": "KRW"}


def seed_catalogue(session: Session, base_size: int) -> None:
    """Insert plans, their credit costs and the two procedural models."""
    main = Model(model_id=1, name="sdxl", version="procedural-v1", api_name="imagekit/procedural",
                 engine="procedural", is_main_generation=True, backup_model_id=2,
                 params={"base_size": base_size}, prompt="", name_global={"en": "Procedural", "ko": "절차적"},
                 description_global={"en": "Deterministic procedural drawing (sandbox)"})
    enterprise = Model(model_id=2, name="replicate", version="procedural-v1-enterprise",
                       api_name="imagekit/procedural-enterprise", engine="procedural",
                       is_main_generation=False, backup_model_id=1, params={"base_size": base_size},
                       name_global={"en": "Procedural (enterprise)"},
                       description_global={"en": "The procedural engine bound to enterprise accounts"})
    session.add_all([main, enterprise])
    cost_id = 1
    for spec in _PLANS:
        spec = dict(spec)
        price, upgrade = spec.pop("price"), spec.pop("upgrade")
        factor, watermarked = spec.pop("cost_factor"), spec.pop("watermarked")
        plan = Plan(**spec, name=spec["grade"], price_global={"en": _price(price), "ko": _price_ko(price)},
                    upgrade_plan_id=upgrade, one_time_payment=False, enabled=True)
        plan.models = [enterprise] if spec["grade"] == ENTERPRISE_GRADE else [main]
        for kind, credit in _BASE_COSTS.items():
            plan.costs.append(CreditCost(
                credit_cost_info_id=cost_id, upgrade_plan_id=upgrade, type=kind,
                credit=max(int(round(credit * factor)), 1 if credit else 0),
                watermarked=watermarked and kind in ("generate", "reference", "collection", "collection-2x"),
                need_upgrade=spec["grade"] == "free" and kind in _FREE_LOCKED,
                featured=kind in ("vectorize", "removeBg")))
            cost_id += 1
        session.add(plan)
