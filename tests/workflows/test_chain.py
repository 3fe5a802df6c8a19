"""Edit chains against a real sandbox: lazy steps, lineage, deadlines that cancel, resuming."""

from __future__ import annotations

import time

import anyio
import pytest

import imagekit
from tests.helpers import balance


@pytest.fixture
def ik(connect):
    return connect()


@pytest.fixture
def image(ik):
    return ik.create("a lighthouse at dusk", style=ik.styles()[0]).images[0]


def test_a_chain_is_lazy_and_immutable():
    base = imagekit.chain().enhance("2x")
    longer = base.remove_bg().vectorize()
    assert len(base) == 1 and len(longer) == 3
    assert repr(longer) == "chain().enhance(scale='2x').remove_bg().vectorize()"


def test_estimate_prices_each_step_from_the_plan(ik):
    costs = {c.type: c.credit for c in ik.me().plan.credit_cost_info}
    chain = imagekit.chain(ik).enhance("4x").remove_bg().vectorize()
    assert chain.estimate() == costs["enhance-4x"] + costs["removeBg"] + costs["vectorize"]


def test_a_chain_runs_step_by_step_and_records_its_lineage(ik, image):
    before = balance(ik)
    out = imagekit.chain().enhance("2x").remove_bg().vectorize().run(image)
    assert out.ok and len(out.images) == 3 and out.image is out.images[-1]
    lineage = out.lineage
    assert list(lineage["op"]) == ["enhance", "remove_bg", "vectorize"] and set(lineage["status"]) == {"done"}
    assert list(lineage["parent_id"]) == [image.id, out.images[0].id, out.images[1].id]
    assert lineage["request_id"].is_unique and lineage["latency"].gt(0).all()
    assert before - balance(ik) == lineage["credits"].sum() > 0
    assert out.image.read("svg").lstrip().startswith(b"<")
    assert out.plot().axes


def test_a_failed_step_keeps_earlier_results_and_resume_finishes(ik, image):
    before = balance(ik)
    chain = imagekit.chain().remove_bg().enhance("2x")
    out = chain.run(image)
    first = out.images[0]
    # A deadline that cannot be met: the in-flight edit is cancelled on the server, not charged.
    cut = imagekit.chain().enhance("2x").run(first, deadline=0.001)
    assert not cut.ok and cut.failed_step == 0 and cut.image is first
    assert cut.lineage["status"].tolist() == ["timeout"]
    resumed = cut.resume()
    assert resumed.ok and resumed.lineage["status"].tolist() == ["timeout", "done"]
    assert resumed.images[0].id != first.id and resumed.source is first
    charged = out.lineage["credits"].sum() + resumed.lineage["credits"].fillna(0).sum()
    assert before - balance(ik) == charged  # the cancelled step cost nothing


def test_a_step_that_fails_is_recorded_not_raised(ik):
    out = imagekit.chain().remove_bg().run(ik.image(10**9))
    assert not out.ok and out.failed_step == 0 and isinstance(out.error, imagekit.ImageNotFoundError)
    assert out.lineage["status"].tolist() == ["failed"] and out.image.id == 10**9


def test_map_runs_a_chain_over_many_images(ik):
    images = ik.create("three foxes", style=ik.styles()[0], count=4).images[:3]
    outs = imagekit.chain().remove_bg().map(images)
    assert [o.ok for o in outs] == [True] * 3 and len({o.image.id for o in outs}) == 3


def test_async_chains_run_map_and_stop_at_a_deadline(ik, image):
    async def main():
        # The same ledger: without credit headers (spec-exact) the lineage's credits are its prices.
        async with imagekit.AsyncClient(ik.config.base_url, ik.config.api_key, ledger=ik.ledger) as aik:
            source = aik.image(image.id)
            out = await imagekit.chain().enhance("2x").remove_bg().arun(source)
            outs = await imagekit.chain().upsize().amap([source, out.image], concurrency=2)
            cut = await imagekit.chain().enhance("4x").arun(out.image, deadline=0.001)
            return out, outs, cut

    before = balance(ik)
    out, outs, cut = anyio.run(main)
    assert out.ok and out.lineage["op"].tolist() == ["enhance", "remove_bg"]
    assert list(out.lineage["parent_id"]) == [image.id, out.images[0].id]
    assert [o.ok for o in outs] == [True, True] and [o.source.id for o in outs] == [image.id, out.image.id]
    assert not cut.ok and cut.lineage["status"].tolist() == ["timeout"]
    # Cancelled on the server: free. Unless the edit finished first (on a loaded machine): then the
    # cancel says so, and the charge stands.
    assert cut.error.cancel_status in ("cancelled", "not_running")
    prices = {c.type: c.credit for c in ik.me().plan.credit_cost_info}
    charged = out.lineage["credits"].sum() + sum(o.lineage["credits"].sum() for o in outs)
    charged += prices["enhance-4x"] if cut.error.cancel_status == "not_running" else 0
    # A cancel can overtake its own edit (the deadline passed before the request left): the edit
    # then starts cancelled and is refunded moments after the chain has returned.
    deadline = time.monotonic() + 10
    while before - balance(ik) != charged and time.monotonic() < deadline:
        time.sleep(0.05)
    assert before - balance(ik) == charged, (cut.error.cancel_status, repr(cut.error))


def test_a_step_the_interface_does_not_allow_is_refused_where_the_chain_is_written():
    with pytest.raises(imagekit.ValidationError, match=r"^scale = '3x': one of 2x, 4x, 8x"):
        imagekit.chain().enhance("2x").enhance("3x")
    with pytest.raises(imagekit.ValidationError, match=r"^strength = 'wild': one of strong, subtle$"):
        imagekit.chain().retry("wild")
