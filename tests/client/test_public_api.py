"""The public surface is a contract: pinned names, docstrings, sync/async symmetry, a light import."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import imagekit
from imagekit import images as handles
from imagekit.resources import edits, images, prompts, users

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = [
    "APIConnectionError", "APIError", "APITimeoutError", "Alert", "AsyncClient", "AsyncCreateResult", "AsyncImage",
    "AuthenticationError", "BadRequestError", "Batch", "Budget", "BudgetExceededError", "BudgetWarning", "Chain",
    "Client", "Config", "ConfigError", "ConflictError", "CreateResponse", "CreateResult", "Desk", "EditResult",
    "GeneratedImage", "GenerationFailedError", "Image", "ImageCaption", "ImageMeta", "ImagekitError",
    "InsufficientStorageError", "InternalServerError", "JournalMismatchError", "JournalUnavailableError", "Ledger",
    "LedgerUnavailableError", "MethodNotAllowedError", "NotEnoughCreditError", "NotFoundError",
    "PayloadTooLargeError", "PaymentRequiredError", "PermissionDeniedError", "Plan", "Provenance",
    "RateLimitedError", "RetryPolicy", "ServerError", "ServiceUnavailableError", "SimultaneousLimitExceededError",
    "StorageUnavailableError", "Style", "TextPrompt", "TooManyRequestsError", "UnsupportedMediaTypeError", "Usage",
    "User", "ValidationError", "WaitTimeoutError", "Wire", "chain", "connect", "edit_leak", "grid", "quality",
    "read_provenance", "reproduce", "review", "tags",
]

TWINS = [
    (imagekit.Client, imagekit.AsyncClient),
    (imagekit.Image, imagekit.AsyncImage),
    (imagekit.CreateResult, imagekit.AsyncCreateResult),
    (users.Users, users.AsyncUsers),
    (images.Images, images.AsyncImages),
    (edits.Edits, edits.AsyncEdits),
    (prompts.Prompts, prompts.AsyncPrompts),
]
LIFECYCLE = {"close", "aclose", "to_async"}  # to_async: a blocking client's way to its async twin
BLOCKING_EXTRAS = {"read_blocking"}  # the async side's escape hatch for notebook display
NOT_AWAITED = {"image", "batch", "with_options", "copy", "tags", "budget", "download_request"}  # build an object or write the ledger: no request


def public_methods(cls: type) -> dict[str, object]:
    return {name: member for name, member in inspect.getmembers(cls, callable)
            if not name.startswith("_") and not isinstance(member, type)}


def test_all_is_pinned():
    assert sorted(imagekit.__all__) == PUBLIC
    assert all(hasattr(imagekit, name) for name in imagekit.__all__)


def test_the_class_of_each_error_name_lives_in_errors_and_is_still_read_at_the_top():
    from imagekit import errors

    per_name = [name for name in errors.__all__ if name.endswith("Error") and name not in imagekit.__all__]
    assert "ImageNotFoundError" in per_name and "WrongAPIKeyError" in per_name
    assert all(getattr(imagekit, name) is getattr(errors, name) for name in per_name)


def test_every_public_name_and_method_has_a_docstring():
    namespaces = [cls for pair in TWINS for cls in pair]
    for obj in [getattr(imagekit, name) for name in imagekit.__all__] + namespaces:
        assert inspect.getdoc(obj), obj
        if isinstance(obj, type) and obj.__module__.startswith("imagekit") and not issubclass(obj, Exception):
            for method_name, method in public_methods(obj).items():
                if getattr(method, "__module__", "").startswith("imagekit"):
                    assert inspect.getdoc(method), f"{obj.__name__}.{method_name}"


def test_sync_and_async_twins_expose_the_same_methods():
    for sync_cls, async_cls in TWINS:
        sync_methods, async_methods = public_methods(sync_cls), public_methods(async_cls)
        assert set(sync_methods) - LIFECYCLE == set(async_methods) - LIFECYCLE - BLOCKING_EXTRAS, async_cls
        for name in set(sync_methods) - LIFECYCLE:
            method, twin = sync_methods[name], async_methods[name]
            assert inspect.signature(method).parameters.keys() == inspect.signature(twin).parameters.keys(), name
            assert not inspect.iscoroutinefunction(method), name
            if name not in NOT_AWAITED:
                assert inspect.iscoroutinefunction(twin), f"{async_cls.__name__}.{name}"


def test_client_shortcuts_cover_the_issue_surface():
    for name in ("me", "usage", "styles", "collection_count", "create", "image", "cancel_edit", "text_to_prompt",
                 "image_to_prompt"):
        assert name in public_methods(imagekit.Client) and name in public_methods(imagekit.AsyncClient)
    for name in ("meta", "read", "pil", "save", "wait", "enhance", "outpaint", "retry", "fill", "clean_up",
                 "remove_bg", "vectorize", "upsize"):
        assert name in public_methods(handles.Image)


def test_lazy_names_load_on_first_use():
    code = ("import sys, imagekit; imagekit.User; imagekit.grid; imagekit.Ledger; "
            "print(all(m in sys.modules for m in ('imagekit.models.users', 'imagekit.workflows', 'imagekit.ledger')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert set(imagekit.__all__) <= set(dir(imagekit))


def test_a_plain_client_loads_no_experiment_library(sandbox, tmp_path):
    """Creating an image and saving it (its provenance inside) loads none of the extras' libraries."""
    from tests.utils.users import make_user

    _, key = make_user(sandbox)
    code = (f"import sys, imagekit\nwith imagekit.Client({sandbox.url!r}, {key!r}) as ik:\n"
            f"    ik.create('a fox', style=ik.styles()[0]).images[0].save({str(tmp_path / 'fox.png')!r})\n"
            "print([m for m in ('datasets', 'pyarrow', 'fsspec', 's3fs', 'moto', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_import_stays_light():
    heavy = ["pandas", "matplotlib", "ipywidgets", "fastapi", "sqlalchemy", "cv2", "uvicorn", "PIL", "numpy", "tqdm",
             # loaded on first use (see imagekit/__init__.py): async code, the ledger, workflows, the models
             "asyncio", "anyio", "sqlite3", "imagekit.ledger", "imagekit.workflows", "imagekit.models.users",
             "psycopg", "imagekit.integrations", "mlflow", "papermill",
             # experiments leaving the notebook, each behind an extra: datasets, object storage
             "datasets", "pyarrow", "fsspec", "s3fs", "moto", "imagekit.provenance", "imagekit.storage",
             # quality signals, behind their extra
             "imagekit.signals"]
    code = f"import sys, imagekit; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
