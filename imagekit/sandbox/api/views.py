"""Rows rendered as the interface's JSON resources (the only place wire field names are spelled)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from ..domain.clock import iso
from ..domain.credits import _add_months, balances, edit_count, is_postpaid, max_edits, prompt_count, total_balance
from ..store.tables import Enterprise, EnterpriseDownload, Image, Model, Plan, Style, User


def model_view(model: Model, base_size: int) -> dict:
    short = base_size * 3 // 4
    return {
        "modelId": model.model_id, "name": model.name, "version": model.version, "apiName": model.api_name,
        "squareSize": f"{base_size}x{base_size}", "horizontalSize": f"{base_size}x{short}",
        "verticalSize": f"{short}x{base_size}", "downsizing": False,
        "isMainGeneration": model.is_main_generation, "ping": 0, "params": model.params,
        "example": {"prompt": "a lighthouse at dusk", "seed": 7}, "backupModelId": model.backup_model_id,
        "errorCount": 0, "recoverCount": 0, "useBackup": False, "prompt": model.prompt,
        "needTranslate": False, "nameGlobal": model.name_global, "descriptionGlobal": model.description_global,
        "logo": f"/static/models/{model.model_id}.svg",
    }


def _cost_view(cost) -> dict:
    return {"creditCostInfoId": cost.credit_cost_info_id, "planId": cost.plan_id,
            "upgradePlanId": cost.upgrade_plan_id, "type": cost.type, "credit": cost.credit,
            "watermarked": cost.watermarked, "needUpgrade": cost.need_upgrade, "featured": cost.featured}


def auth_plan_view(plan: Plan) -> dict:
    """The plan as User.Plan shows it (the sandbox caches this per plan: plans never change)."""
    return {
        "planId": plan.plan_id, "grade": plan.grade, "minusCreditAllowed": plan.minus_credit_allowed,
        "maxStyleNumber": plan.max_style_number, "simultaneousLimit": plan.simultaneous_limit,
        "maxMultiSelect": plan.max_multi_select, "maxEditNumber": plan.max_edit_number,
        "maxPromptNumber": plan.max_prompt_number, "period": plan.period,
        "oneTimePayment": plan.one_time_payment, "defaultCredit": plan.default_credit,
        "dailyCredit": plan.daily_credit, "monthlyCredit": plan.monthly_credit,
        "CreditCostInfo": [_cost_view(c) for c in plan.costs], "priceObj": plan.price_global["en"],
        "titleName": plan.title["en"],
    }


def enterprise_view(enterprise: Enterprise, base_size: int) -> dict:
    return {
        "expiresAt": iso(enterprise.expires_at), "monthlyCredit": enterprise.monthly_credit,
        "yearlyCredit": enterprise.yearly_credit, "amount": enterprise.amount,
        "simultaneousLimit": enterprise.simultaneous_limit, "maxEditNumber": enterprise.max_edit_number,
        "paymentPeriod": enterprise.payment_period, "name": enterprise.name,
        "categories": enterprise.categories, "currency": enterprise.currency,
        "editCountPeriod": enterprise.edit_count_period, "postpaid": enterprise.postpaid,
        "modelUrl": enterprise.model_url, "logo": enterprise.logo, "userId": enterprise.user_id,
        "canUseOwnOnly": enterprise.can_use_own_only, "hasSpecialLimits": enterprise.has_special_limits,
        "Models": [model_view(m, base_size) for m in enterprise.models],
    }


def user_view(user: User, plan_view: dict, base_size: int, downloads: list[EnterpriseDownload]) -> dict:
    view: dict[str, Any] = {
        "userId": user.user_id, "email": user.email, "name": user.name, "occupation": user.occupation,
        "business": user.business, "notifyAgree": False, "creditNotifyAgree": True,
        "tutorialFinished": True, "profileImage": f"/static/profiles/{user.user_id}.png",
        "snsId": f"sandbox-{user.user_id}", "provider": "sandbox", "role": user.role,
        **balances(user), "customerKey": user.customer_key, "billingRetryDate": None,
        "createdAt": iso(user.created_at), "nextPlanAt": iso(_add_months(user.monthly_granted_at, 1)),
        "planStartedAt": iso(user.plan_started_at), "planId": user.plan_id, "nextPlanId": user.next_plan_id,
        "cardNumber": "**** **** **** 4242", "cardCompany": "Sandbox Card", "Plan": plan_view,
        "cardRegistered": True, "usePartner": False, "maxCredit": max(user.max_credit, 0),
    }
    if user.enterprise is not None:
        view["Enterprise"] = enterprise_view(user.enterprise, base_size)
        view["EnterpriseDownload"] = [
            {"enterpriseDownloadId": d.enterprise_download_id, "scaleSize": d.scale_size,
             "credit": d.credit, "userId": d.user_id} for d in downloads]
    return view


def usage_view(session, user: User, now) -> dict:
    """GET /api/users/me/usage; ``postpaidUsageCount`` only for postpaid accounts (a number, never null)."""
    view = {
        "currentCredit": total_balance(user), "additionalCredit": user.default_credit,
        "maxCredit": user.max_credit, "period": user.plan.period,
        "ttpCount": prompt_count(session, user, now), "maxTtpCount": user.plan.max_prompt_number,
        "editCount": edit_count(session, user, now), "maxEditCount": max_edits(user),
    }
    if is_postpaid(user):
        view["postpaidUsageCount"] = user.postpaid_usage
    return view


def style_view(style: Style) -> dict:
    return {"styleId": style.style_id, "createdAt": iso(style.created_at), "super": style.super,
            "main": style.main, "apiEnabled": style.api_enabled, "creditCost": style.credit_cost,
            "mainText": style.main_text, "thumbLink": f"/api/images/{style.thumb_image_id}/binary"}


def generation_info(image: Image, style: Style | None) -> dict:
    return {"originalPrompt": image.prompt, "super": style.super if style else image.mode,
            "main": style.main if style else (image.meta or {}).get("main", ""),
            "variationId": image.variation_id, "groupId": image.group_id, "blurReason": image.blur_reason}


def _meta_generation_info(image: Image, tagged: bool) -> dict:
    info = {"blurReason": image.blur_reason}
    if tagged and image.kind == "generation":
        info["groupId"] = image.group_id
    return info


def generated_image_view(image: Image, style: Style | None, base64_jpeg: str = "") -> dict:
    etc = {"mode": image.mode, "platform": image.platform, "apiType": image.api_type,
           "modelId": image.model_id, "seed": image.variation_id, "watermarked": image.watermarked}
    return {
        "imageId": image.image_id, "createdAt": iso(image.created_at), "generationStatus": image.status,
        "generationError": image.error, "resolution": f"{image.width}x{image.height}",
        "ownerId": image.owner_id, "etc": json.dumps(etc), "bookmarked": image.bookmarked,
        "base64": base64_jpeg, "mimeType": "image/jpeg" if base64_jpeg else "",
        "Bought": [], "Bookmarks": [], "Upscaled": [], "GenerationInfo": generation_info(image, style),
    }


def _image_ref(image: Image) -> dict:
    return {"imageId": image.image_id, "ownerId": image.owner_id}


def image_meta_view(image: Image, *, owner: User | None, upscaled: list[Image], downloads: list,
                    collection=None, source: Image | None = None, tagged: bool = False) -> dict:
    """GET /api/images/{id}: the image with its upscales, downloads and collection data (objects the
    interface types as objects are left out when there is nothing to show, never null)."""
    optional: dict[str, Any] = {} if image.owner_id is None else {"ownerId": image.owner_id}  # public images have no owner
    if collection is not None:
        optional["CollectionInfo"] = {
            "enabled": True, "is2x": collection.premium,
            "CollectionEnTags": [{"title": t} for t in collection.tags_en],
            "CollectionKoTags": [{"title": t} for t in collection.tags_ko],
            "Style": {"main": collection.look, "mainText": collection.name},
            "Theme": [{"code": collection.look, "nameText": collection.name}], "promptText": image.prompt}
    if source is not None:  # the image is an upscale of ``source``
        optional["UpscaleInfo"] = {"imageId": source.image_id, "scaleSize": image.scale_size, "Image": _image_ref(source)}
    return {
        "imageId": image.image_id, "creditCost": image.credit_cost, "createdAt": iso(image.created_at),
        "generationStatus": image.status, "generationError": image.error,
        "resolution": f"{image.width}x{image.height}", "bookmarked": image.bookmarked,
        "Owner": {"name": owner.name if owner else "imagekit",
                  "profileImage": f"/static/profiles/{owner.user_id if owner else 0}.png"},
        "Upscaled": [{"imageId": u.image_id, "scaleSize": u.scale_size, "Image": _image_ref(u)} for u in upscaled],
        "DownloadLog": [{"imageId": d.image_id, "userId": d.user_id} for d in downloads],
        "GenerationInfo": _meta_generation_info(image, tagged), **optional,
        "Bought": [], "Likes": [], "Dislikes": [],
    }


class RenderedViews:
    """Each user's last rendered document with the row it was rendered from: a view is a function of
    its rows alone, so while the row reads the same the bytes can be sent again as they are."""

    def __init__(self, users: int = 1024) -> None:
        self._documents: OrderedDict[int, tuple[tuple[Any, ...], bytes]] = OrderedDict()
        self._users = users
        self._lock = threading.Lock()
        self._plans: dict[int, dict] = {}

    def plan(self, plan: Plan) -> dict:
        """User.Plan for a plan, rendered once (a plan's rows never change while serving)."""
        if plan.plan_id not in self._plans:
            self._plans[plan.plan_id] = auth_plan_view(plan)
        return self._plans[plan.plan_id]

    def get(self, user_id: int, row: tuple[Any, ...]) -> bytes | None:
        with self._lock:
            kept = self._documents.get(user_id)
            if kept is None or kept[0] != row:
                return None
            self._documents.move_to_end(user_id)
            return kept[1]

    def put(self, user_id: int, row: tuple[Any, ...], document: bytes) -> bytes:
        with self._lock:
            self._documents[user_id] = (row, document)
            self._documents.move_to_end(user_id)
            while len(self._documents) > self._users:
                self._documents.popitem(last=False)
        return document
