"""The two faces of the sandbox: spec-exact answers carry no extension; both never show null where
the interface types a number or an object."""

from __future__ import annotations

import io
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from PIL import Image

from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.interface import extensions
from tests.helpers import TLS
from tests.utils.users import make_user

NULLABLE = {"billingRetryDate", "nextPlanId"}
"""The fields the interface lets be null ("nullable", "null means the current plan stays")."""
MASK = np.zeros((256, 256), np.uint8)
MASK[96:160, 96:160] = 255


def _png(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module", params=["extended", "spec-exact"])
def box(request, tmp_path_factory) -> Iterator[EmbeddedSandbox]:
    with EmbeddedSandbox(tmp_path_factory.mktemp("box"), base_size=256,
                         spec_exact=request.param == "spec-exact") as running:
        running.spec_exact = request.param == "spec-exact"
        yield running


def session(box: EmbeddedSandbox, plan: str = "pro") -> tuple[httpx.Client, list[httpx.Response]]:
    """A raw client for a fresh user, and every answer it receives."""
    answers: list[httpx.Response] = []
    client = httpx.Client(base_url=box.url, headers={"X-Api-Key": make_user(box, plan)[1]}, timeout=60,
                          event_hooks={"response": [lambda r: r.read() and answers.append(r) or None]}, verify=TLS)
    return client, answers


def every_call(api: httpx.Client) -> None:
    """Each endpoint once, with the extension request field (``seed``) on the create."""
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    api.get("/api/users/me"), api.get("/api/users/me/usage"), api.get("/api/users/me/collectionCount")
    created = api.post("/api/images/create", json={"prompt": "a red apple", "styleId": style, "seed": 7, "count": 2})
    assert created.status_code == 200, created.text
    image = created.json()["images"][0]["imageId"]
    pending = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style, "isAsync": True})
    assert pending.status_code == 200, pending.text
    for op, kwargs in [("enhance", {"json": {"scaleSize": "2x"}}), ("upsize", {}), ("removeBg", {}),
                       ("retry", {"json": {}}), ("vectorize", {}),
                       ("cleanUp", {"files": {"mask": ("m.png", _png(MASK), "image/png")}}),
                       ("outpaint", {"json": {"canvasSize": [320, 256], "originalImageSize": [256, 256],
                                              "originalImageLocation": [32, 0]}})]:
        response = api.post(f"/api/images/{image}/{op}", **kwargs)
        assert response.status_code == 200, (op, response.text)
        api.get(f"/api/images/{response.json()['image']['imageId']}")
    api.get(f"/api/images/{image}"), api.get(f"/api/images/{image}/binary")
    assert api.post("/api/images/textToPrompt", json={"text": "a fox"}).status_code == 200
    assert api.post("/api/images/imageToPrompt", json={"image": f"/api/images/{image}/binary"}).status_code == 200
    api.post("/api/images/cancelEdit/gone-1")


def keys(value) -> Iterator[tuple[str, object]]:
    """Every (key, value) pair anywhere in a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


def test_spec_exact_answers_carry_no_extension(box):
    api, answers = session(box)
    with api:
        every_call(api)
    assert len(answers) > 20
    shown = {name for response in answers for name in extensions.HEADERS if name in response.headers}
    fields = {key for response in answers if "json" in response.headers.get("content-type", "")
              for key, _ in keys(response.json()) if key == "sourceImageId"}
    metas = [r.json() for r in answers if r.request.method == "GET" and r.url.path.count("/") == 3
             and r.url.path.startswith("/api/images/")]
    grouped = [meta["imageId"] for meta in metas if "groupId" in meta["GenerationInfo"]]
    if box.spec_exact:
        assert not shown and not fields and not grouped
    else:  # the extensions are there, so the test above could see them
        assert shown == set(extensions.HEADERS) and fields and grouped


def test_spec_exact_ignores_a_seed_like_any_unknown_field(box):
    api, _ = session(box)
    with api:
        style = api.get("/api/users/me/styles").json()[0]["styleId"]
        response = api.post("/api/images/create", json={"prompt": "a fox", "styleId": style, "seed": "not a seed"})
        if box.spec_exact:
            assert response.status_code == 200, response.text
        else:
            assert response.status_code == 400 and response.json()["data"] == "invalid_request"
            seeded = api.post("/api/images/create", json={"prompt": "a fox", "styleId": style, "seed": 41})
            assert seeded.json()["images"][0]["GenerationInfo"]["variationId"] == 41
    documented = httpx.get(f"{box.url}/openapi.json", verify=TLS, timeout=120).json()["components"]["schemas"]
    assert ("seed" in documented["CreateBody"]["properties"]) is not box.spec_exact
    assert ("sourceImageId" in documented["EditInfoOut"]["properties"]) is not box.spec_exact


def test_numbers_and_objects_are_never_null(box):
    api, answers = session(box)
    postpaid, postpaid_answers = session(box, "enterprise")
    with api, postpaid:
        every_call(api)
        for seeded in range(1, 30):  # the public thumbnails and collection items come first
            api.get(f"/api/images/{seeded}")
        billed = postpaid.get("/api/users/me/usage").json()
    usage = next(r.json() for r in answers if r.url.path == "/api/users/me/usage")
    assert "postpaidUsageCount" not in usage and isinstance(billed["postpaidUsageCount"], int)
    metas = [r.json() for r in answers if r.url.path.startswith("/api/images/") and r.url.path.count("/") == 3
             and r.request.method == "GET"]
    assert any("CollectionInfo" in meta for meta in metas) and any("UpscaleInfo" in meta for meta in metas)
    assert any("CollectionInfo" not in meta and "UpscaleInfo" not in meta for meta in metas)
    nulls = {key for response in answers + postpaid_answers if "json" in response.headers.get("content-type", "")
             for key, value in keys(response.json()) if value is None}
    assert nulls <= NULLABLE, nulls - NULLABLE


@pytest.mark.parametrize("flag", ["--spec-exact", "--spec-metadata"])
def test_serve_takes_the_switch_and_lists_it(flag, capsys):
    from imagekit.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["sandbox", "serve", "--data", "d", flag]).spec_exact is True
    assert parser.parse_args(["sandbox", "serve", "--data", "d"]).spec_exact is False
    with pytest.raises(SystemExit):
        parser.parse_args(["sandbox", "serve", "--help"])
    assert "--spec-exact" in capsys.readouterr().out
