"""The sandbox's own wire schemas, written from the interface spec (not shared with the client).

Request bodies are validated by these models; responses are built as plain dicts by ``views.py``
and documented with the response models here, so ``/openapi.json`` tells what the sandbox does
(schemathesis checks responses against it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt

Ratio = Literal["square", "vertical", "horizontal", "1:1", "3:4", "4:3", "9:16", "16:9"]
Platform = Literal["web", "app", "figma", "api"]
ApiType = Literal["standard", "enterprise"]
ScaleSize = Literal["1x", "2x", "4x", "8x"]
Status = Literal["PENDING", "COMPLETED", "FAILED"]
Resolution = Annotated[str, Field(pattern=r"^\d{3,4}x\d{3,4}$")]
DateTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Id = Annotated[StrictInt, Field(ge=1, le=2**53)]
REQUEST_ID_PATTERN = r"^[A-Za-z0-9_.:-]+$"
"""Edit request ids: ASCII letters, digits and ``_.:-`` (the README's promise)."""


def _printable(text: str) -> str:
    """Refuse control characters (NUL and the like; tab and newlines pass): no prompt holds them."""
    if any(ord(c) < 32 and c not in "\t\n\r" or ord(c) == 127 for c in text):
        raise ValueError("control characters are not allowed")
    return text


def _whole_number(value: Any) -> Any:
    """A JSON integer: not true, not 1.0, not "1" (which lax validation would take as 1)."""
    if type(value) is not int:
        raise ValueError("must be a JSON integer")
    return value


Text = Annotated[str, AfterValidator(_printable)]
"""Free text of a prompt: any printable characters."""


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CreateBody(Body):
    prompt: Annotated[Text, Field(max_length=1200)]
    image: str | None = Field(None, description="Reference image: /api/images/<id>/binary of your own image, or a data: URL.")
    ratio: Ratio = "square"
    styleId: Id | None = None
    collectionId: Id | None = None
    randomPrompt: StrictBool | None = Field(None, description="The prompt was drawn at random (recorded).")
    initialPrompt: Annotated[str, Field(max_length=1200)] | None = None
    enhancedPrompt: Annotated[str, Field(max_length=1200)] | None = None
    captionPrompt: Annotated[str, Field(max_length=1200)] | None = None
    captionTPrompt: Annotated[str, Field(max_length=1200)] | None = None
    groupId: Annotated[str, Field(max_length=64)] | None = None
    count: Annotated[Literal[1, 2, 4], BeforeValidator(_whole_number)] = 1
    isAsync: StrictBool = False
    seed: Any = Field(None, description="Sandbox extension: image i of the request is drawn with seed + i "
                      "(checked by the extended sandbox, ignored by a spec-exact one).",
                      json_schema_extra={"type": "integer", "minimum": 0, "maximum": 2**31 - 1})


class ErrorBody(BaseModel):
    success: Literal[False]
    code: int
    data: str = Field(description="The error name (see the README's catalogue).")
    message: str | None = None


class PriceProperty(BaseModel):
    price: float
    price_yearly: float | None = None
    price_reg: str | None = None
    price_dis: str
    price_app: str | None = None
    partner_key: str | None = None
    partner_key_yearly: str | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class ModelOut(BaseModel):
    modelId: int
    name: Literal["sdxl", "replicate"]
    version: str
    apiName: str
    squareSize: Resolution
    horizontalSize: Resolution
    verticalSize: Resolution
    downsizing: bool
    isMainGeneration: bool
    ping: float
    params: dict[str, Any]
    example: dict[str, Any]
    backupModelId: int
    errorCount: int
    recoverCount: int
    useBackup: bool
    prompt: str
    needTranslate: bool
    nameGlobal: dict[str, Any]
    descriptionGlobal: dict[str, Any]
    logo: str


class PlanCommon(BaseModel):
    """Fields the full Plan and the User's AuthUserPlan share."""

    planId: int
    grade: str
    minusCreditAllowed: int
    maxStyleNumber: int
    simultaneousLimit: int
    maxMultiSelect: int
    maxEditNumber: int
    maxPromptNumber: int
    period: Literal["month", "day"]
    oneTimePayment: bool
    defaultCredit: int
    dailyCredit: int
    monthlyCredit: int
    CreditCostInfo: list[CostOut]


class PlanOut(PlanCommon):
    name: str
    historyPeriodMonth: int
    title: dict[str, str]
    priceGlobal: dict[str, PriceProperty]
    premiumAvailable: bool
    enabled: bool
    Models: list[ModelOut]


class CostOut(BaseModel):
    creditCostInfoId: int
    planId: int
    upgradePlanId: int
    type: str
    credit: int | str
    watermarked: bool
    needUpgrade: bool
    featured: bool
    Plan: PlanOut | None = None
    UpgradePlan: PlanOut | None = None


class AuthUserPlan(PlanCommon):
    priceObj: PriceProperty
    titleName: str


class AuthUserEnterprise(BaseModel):
    expiresAt: DateTime
    monthlyCredit: int
    yearlyCredit: int
    amount: int
    simultaneousLimit: int
    maxEditNumber: int
    paymentPeriod: Literal["monthly", "yearly", "bill"]
    name: str
    categories: str
    currency: str
    editCountPeriod: Literal["day", "month", "plan"]
    postpaid: bool
    modelUrl: Annotated[str, Field(pattern=r"^[^/]+/[^:]+:.+$")]
    logo: str
    userId: int
    canUseOwnOnly: bool
    hasSpecialLimits: bool
    Models: list[ModelOut]


class DownloadOut(BaseModel):
    enterpriseDownloadId: int
    scaleSize: ScaleSize
    credit: int
    userId: int


class UserOut(BaseModel):
    userId: int
    email: Annotated[str, Field(json_schema_extra={"format": "email"})]
    name: str
    occupation: str
    business: str
    notifyAgree: bool
    creditNotifyAgree: bool
    tutorialFinished: bool
    profileImage: str
    snsId: str
    provider: str
    role: str
    defaultCredit: int
    dailyCredit: int
    monthlyCredit: int
    customerKey: Annotated[str, Field(json_schema_extra={"format": "uuid"})]
    billingRetryDate: DateTime | None
    createdAt: DateTime
    nextPlanAt: DateTime
    planStartedAt: DateTime
    planId: int
    nextPlanId: int | None
    cardNumber: str
    cardCompany: str
    Plan: AuthUserPlan
    cardRegistered: bool
    usePartner: bool
    maxCredit: Annotated[int, Field(ge=0)]
    EnterpriseDownload: list[DownloadOut] | None = None
    Enterprise: AuthUserEnterprise | None = None


class UsageOut(BaseModel):
    # A field the interface leaves out rather than nulls has a factory default: optional in the
    # schema, and no `"default": null` in it (these models only document the answers).
    currentCredit: int
    additionalCredit: int
    maxCredit: int
    period: str
    ttpCount: int
    maxTtpCount: int
    editCount: int
    maxEditCount: int
    postpaidUsageCount: int = Field(default_factory=int, description="Postpaid accounts only (absent otherwise).")


class StyleOut(BaseModel):
    styleId: int
    createdAt: DateTime
    super: str
    main: str
    apiEnabled: bool
    creditCost: int
    mainText: str
    thumbLink: Annotated[str, Field(pattern=r"^/api/images/\d+/binary$")]


class GenerationInfoOut(BaseModel):
    originalPrompt: str
    super: str
    main: str
    variationId: int
    groupId: str
    blurReason: str


class GeneratedImage(BaseModel):
    imageId: int
    createdAt: DateTime
    generationStatus: Status
    generationError: str
    resolution: Resolution
    ownerId: int
    etc: str
    bookmarked: bool
    base64: str
    mimeType: str
    Bought: list[dict[str, Any]]
    Bookmarks: list[dict[str, Any]]
    Upscaled: list[dict[str, Any]]
    GenerationInfo: GenerationInfoOut


class CreateOut(BaseModel):
    images: list[GeneratedImage]
    defaultCredit: int
    dailyCredit: int
    monthlyCredit: int


class ImageMetaOut(BaseModel):
    imageId: int
    creditCost: int
    createdAt: DateTime
    generationStatus: Status
    generationError: str
    resolution: Resolution
    ownerId: int = Field(default_factory=int, description="Absent for public images (styles' thumbnails, collections).")
    bookmarked: bool
    Owner: dict[str, str]
    Upscaled: list[dict[str, Any]]
    DownloadLog: list[dict[str, int]]
    CollectionInfo: dict[str, Any] = Field(default_factory=dict, description="Collection images only (absent otherwise).")
    GenerationInfo: dict[str, str] = Field(description="blurReason; for a generated image also the groupId its "
                                                       "create sent (a sandbox extension)")
    UpscaleInfo: dict[str, Any] = Field(default_factory=dict, description="Enhanced or upsized images only (absent otherwise).")
    Bought: list[dict[str, Any]]
    Likes: list[dict[str, Any]]
    Dislikes: list[dict[str, Any]]


class EditInfoOut(BaseModel):
    originalPrompt: str
    super: str
    main: str
    variationId: int
    groupId: str
    blurReason: str
    sourceImageId: int | None = Field(None, description="Sandbox extension: the edited image.")


class EditedImage(BaseModel):
    imageId: int
    resolution: Resolution
    scaleSize: ScaleSize
    ownerId: int
    EditInfo: EditInfoOut


class EditOut(BaseModel):
    image: EditedImage


PlanCommon.model_rebuild()
PlanOut.model_rebuild()
AuthUserPlan.model_rebuild()
CostOut.model_rebuild()
