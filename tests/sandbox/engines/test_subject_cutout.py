"""Background removal of the sandbox's own images is exact: the engine knows where it drew the
subject, keeps that mask with the image (and with its enhanced or upsized results), and removeBg
cuts the subject out by it; other images go through the classical segmentation."""

from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image

from imagekit.sandbox.engines.base import GenerationRequest
from imagekit.sandbox.engines.procedural import ProceduralEngine

ROBOT = "a red robot on a foggy beach at night with the moon and clouds"


def cut_out(api, image_id: int) -> np.ndarray:
    """removeBg of the image: its result's alpha (H, W)."""
    made = api.post(f"/api/images/{image_id}/removeBg").raise_for_status().json()["image"]["imageId"]
    picture = Image.open(io.BytesIO(api.get(f"/api/images/{made}/binary", params={"type": "png"}).content))
    assert picture.mode == "RGBA"
    return np.asarray(picture)[..., 3]


def stored_subject(box, image_id: int) -> np.ndarray:
    return np.asarray(Image.open(box.data_dir / "images" / f"{image_id}.subject.png")) > 127


def test_the_engine_says_where_it_drew_the_subject_and_only_then():
    engine = ProceduralEngine()
    pixels, subject = engine.draw(GenerationRequest(prompt=ROBOT, width=320, height=256, seed=7))
    assert np.array_equal(pixels, engine.generate(GenerationRequest(prompt=ROBOT, width=320, height=256, seed=7)))
    assert subject is not None and subject.shape == (256, 320) and 0.01 < subject.mean() < 0.6
    assert not subject[: 256 // 4].any()  # the sky (moon, clouds) is not the subject
    assert engine.draw(GenerationRequest(prompt="rolling hills at dawn", width=64, height=64, seed=7))[1] is None


def test_remove_bg_of_a_drawn_image_keeps_the_subject_and_nothing_else(sandbox, api):
    image_id = api.post("/api/images/create", json={"prompt": ROBOT, "styleId": api.get("/api/users/me/styles").json()[0]["styleId"],
                                                    "count": 1}).raise_for_status().json()["images"][0]["imageId"]
    subject = stored_subject(sandbox, image_id)
    alpha = cut_out(api, image_id)
    assert np.mean((alpha > 127) == subject) > 0.995
    assert alpha[: alpha.shape[0] // 4].max() == 0  # moon and clouds are gone

    enhanced = api.post(f"/api/images/{image_id}/enhance", json={"scaleSize": "2x"}).raise_for_status().json()["image"]["imageId"]
    grown = cv2.resize(subject.astype(np.uint8) * 255, (subject.shape[1] * 2, subject.shape[0] * 2)) > 127
    assert np.array_equal(stored_subject(sandbox, enhanced), grown)  # the mask follows the result
    assert np.mean((cut_out(api, enhanced) > 127) == grown) > 0.995


def test_images_the_engine_did_not_compose_are_cut_out_by_segmentation(sandbox, api):
    reference = np.full((64, 64, 3), 235, np.uint8)
    assert ProceduralEngine().draw(GenerationRequest(prompt=ROBOT, width=64, height=64, seed=1,
                                                     reference=reference))[1] is None
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    image_id = api.post("/api/images/create", json={"prompt": ROBOT, "styleId": style}).raise_for_status().json()["images"][0]["imageId"]
    reimagined = api.post(f"/api/images/{image_id}/retry").raise_for_status().json()["image"]["imageId"]
    assert not (sandbox.data_dir / "images" / f"{reimagined}.subject.png").exists()  # its subject moved
    alpha = cut_out(api, reimagined)
    assert alpha.min() == 0 and alpha.max() == 255
