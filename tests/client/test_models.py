"""Models are lenient the way a long-lived client must be."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from imagekit import models

USER = {
    "userId": 7, "email": "ada@example.com", "name": "Ada", "occupation": "", "business": "",
    "notifyAgree": True, "creditNotifyAgree": False, "tutorialFinished": True, "profileImage": "",
    "snsId": "", "provider": "email", "role": "normal", "defaultCredit": 120, "dailyCredit": 0,
    "monthlyCredit": 500, "customerKey": "9b2f7c1e-0000-4000-8000-000000000000",
    "billingRetryDate": None, "createdAt": "2024-01-02T03:04:05.000Z", "nextPlanAt": "2024-02-02T00:00:00Z",
    "planStartedAt": "2024-01-02T00:00:00Z", "planId": 2, "nextPlanId": None, "cardNumber": "****1234",
    "cardCompany": "Visa", "cardRegistered": True, "usePartner": False, "maxCredit": 1000,
    "Plan": {
        "planId": 2, "grade": "standard", "minusCreditAllowed": 0, "maxStyleNumber": 10,
        "simultaneousLimit": 2, "maxMultiSelect": 20, "maxEditNumber": 100, "maxPromptNumber": 50,
        "period": "month", "oneTimePayment": False, "defaultCredit": 500, "dailyCredit": 0,
        "monthlyCredit": 500, "titleName": "Standard",
        "priceObj": {"price": 10, "price_dis": "$10", "currency": "USD", "partner_key": "pk_1"},
        "CreditCostInfo": [
            {"creditCostInfoId": 1, "planId": 2, "upgradePlanId": 3, "type": "collection-2x", "credit": "2",
             "watermarked": False, "needUpgrade": False, "featured": True,
             "UpgradePlan": {"planId": 3, "name": "Pro (deprecated name)", "squareSize": "1024x1024",
                             "priceGlobal": {"en": {"price": 30, "price_dis": "$30", "currency": "USD"}},
                             "Models": [{"modelId": 1, "name": "sdxl", "squareSize": "1024x1024",
                                         "downsizing": False, "BackupModel": {"modelId": 2}}]}},
        ],
    },
    "EnterpriseDownload": [{"enterpriseDownloadId": 1, "scaleSize": "2x", "credit": 4, "userId": 7}],
    "Enterprise": {"expiresAt": "2025-01-01T00:00:00Z", "monthlyCredit": 1, "yearlyCredit": 12,
                   "amount": 0, "simultaneousLimit": 4, "maxEditNumber": 9, "paymentPeriod": "bill"},
}


def test_a_full_user_parses_into_snake_case():
    user = models.User.model_validate(USER)
    assert (user.user_id, user.default_credit, user.role) == (7, 120, "normal")
    assert user.created_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert user.plan.price_obj.price_dis == "$10" and user.plan.price_obj.partner_key == "pk_1"
    cost = user.plan.credit_cost_info[0]
    assert cost.credit == 2 and cost.type == "collection-2x"
    assert cost.upgrade_plan.price_global["en"].price == 30
    assert cost.upgrade_plan.models[0].backup_model.model_id == 2
    assert user.enterprise_download[0].scale_size == "2x" and user.enterprise.payment_period == "bill"


def test_deprecated_fields_stay_readable():
    plan = models.User.model_validate(USER).plan.credit_cost_info[0].upgrade_plan
    assert plan.name == "Pro (deprecated name)"
    assert plan.models[0].square_size == "1024x1024" and plan.models[0].downsizing is False


@pytest.mark.parametrize(("raw", "value"), [("2", 2), ("0.5", 0.5), (3, 3), (1.25, 1.25), (None, None)])
def test_credit_accepts_numeric_strings(raw, value):
    cost = models.CreditCostInfo.model_validate({"credit": raw})
    assert cost.credit == value and type(cost.credit) is type(value)


def test_unknown_fields_are_kept_and_round_trip():
    user = models.User.model_validate({**USER, "brandNewField": {"x": 1}})
    assert user.model_extra == {"brandNewField": {"x": 1}}
    assert user.to_wire()["brandNewField"] == {"x": 1}
    assert user.to_wire()["Plan"]["priceObj"]["price_dis"] == "$10"  # spec spellings, not camelCase guesses


def test_nulls_and_missing_fields_are_fine():
    user = models.User.model_validate({"userId": 1, "billingRetryDate": None, "nextPlanId": None, "Plan": None})
    assert user.billing_retry_date is None and user.next_plan_id is None and user.plan is None and user.email is None
    assert models.User.model_validate({}).user_id is None
    assert models.Usage.model_validate({"currentCredit": None}).current_credit is None


def test_blank_dates_read_as_none():
    assert models.User.model_validate({"billingRetryDate": ""}).billing_retry_date is None


def test_generated_image_repr_never_shows_base64():
    image = models.GeneratedImage.model_validate({"imageId": 5, "base64": "iVBORw0KGgo" * 1000, "generationStatus": "COMPLETED"})
    assert "iVBOR" not in repr(image) and "iVBOR" not in str(image)
    assert repr(image) == "GeneratedImage(image_id=5, generation_status='COMPLETED')"


def test_image_meta_and_nested_entries():
    meta = models.ImageMeta.model_validate({
        "imageId": 9, "creditCost": "1", "generationStatus": "FAILED", "generationError": "boom",
        "Owner": {"name": "Ada"}, "Upscaled": [{"imageId": 10, "scaleSize": "2x", "Image": {"imageId": 10, "ownerId": 7}}],
        "Likes": [{"likeId": 1, "userId": 7, "imageId": 9, "createdAt": "2024-01-01T00:00:00Z", "platform": "api"}],
        "CollectionInfo": {"enabled": True, "is2x": False, "CollectionEnTags": [{"title": "sea"}]},
        "GenerationInfo": {"blurReason": ""},
    })
    assert meta.credit_cost == 1 and meta.generation_error == "boom" and meta.owner == {"name": "Ada"}
    assert meta.upscaled[0].image.owner_id == 7 and meta.likes[0].like_id == 1
    assert meta.collection_info.collection_en_tags == [{"title": "sea"}] and meta.collection_info.is2x is False


def test_edit_result_and_style():
    result = models.EditResult.model_validate({"image": {"imageId": 3, "resolution": "2048x2048", "scaleSize": "2x",
                                                         "ownerId": 1, "EditInfo": {"variationId": 4, "super": "art"}}})
    assert result.image.edit_info.variation_id == 4 and result.image.edit_info.super_ == "art"
    style = models.Style.model_validate({"styleId": 1, "super": "photo", "thumbLink": "/api/images/1/binary"})
    assert style.super_ == "photo" and style.to_wire()["super"] == "photo"


def test_create_response_defaults_to_no_images():
    assert models.CreateResponse.model_validate({}).images == []
