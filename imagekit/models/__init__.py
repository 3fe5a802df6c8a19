"""Lenient models of the service's resources, one module per resource family."""

from ._base import Charged, Resource
from .edits import EditedImage, EditInfo, EditResult
from .images import (
    COMPLETED,
    FAILED,
    PENDING,
    CollectionInfo,
    CreateResponse,
    DownloadLogEntry,
    GeneratedImage,
    GenerationInfo,
    ImageMeta,
    ImageRef,
    Reaction,
    UpscaledEntry,
)
from .plans import (
    AuthUserEnterprise,
    AuthUserPlan,
    CreditCostInfo,
    Enterprise,
    GenerationModel,
    Plan,
    PriceProperty,
)
from .prompts import ImageCaption, TextPrompt
from .users import EnterpriseDownload, Style, Usage, User

__all__ = [
    "AuthUserEnterprise", "AuthUserPlan", "COMPLETED", "CollectionInfo", "CreateResponse",
    "CreditCostInfo", "DownloadLogEntry", "EditInfo", "EditResult", "EditedImage", "Enterprise",
    "EnterpriseDownload", "FAILED", "GeneratedImage", "GenerationInfo", "GenerationModel",
    "ImageCaption", "ImageMeta", "ImageRef", "PENDING", "Plan", "PriceProperty", "Reaction",
    "Charged", "Resource", "Style", "TextPrompt", "UpscaledEntry", "Usage", "User",
]
