"""The public surface is typed: mypy names real classes for what the shortcuts return, sync and
async alike (``Awaitable`` of them on AsyncClient), never ``Any``."""

from __future__ import annotations

import pytest

from tests.helpers import revealed_types

SNIPPET = '''
import imagekit

async def main(ik: imagekit.Client, aik: imagekit.AsyncClient) -> None:
    reveal_type(ik.me())
    reveal_type(ik.create("a fox", style=1))
    reveal_type(ik.image(1))
    reveal_type(ik.image(1).enhance("2x"))
    reveal_type(ik.styles())
    reveal_type(ik.usage())
    reveal_type(ik.text_to_prompt("a fox"))
    reveal_type(ik.image(1).read())
    reveal_type(ik.with_options(timeout=5))
    reveal_type(ik.to_async())
    reveal_type(await aik.me())
    reveal_type(await aik.create("a fox", style=1))
    reveal_type(aik.image(1))
    reveal_type(await aik.image(1).enhance("2x"))
    reveal_type(await aik.styles())
    reveal_type(await aik.usage())
    reveal_type(await aik.text_to_prompt("a fox"))
    reveal_type(await aik.image(1).read())
    reveal_type(aik.me)
    reveal_type(imagekit.connect())
    reveal_type(imagekit.connect(asynchronous=True))
'''

EXPECTED = [
    "imagekit.models.users.User",
    "imagekit.images.CreateResult",
    "imagekit.images.Image",
    "imagekit.images.Image",
    "list[imagekit.models.users.Style]",
    "imagekit.models.users.Usage",
    "imagekit.models.prompts.TextPrompt",
    "bytes",
    "imagekit.client.Client",
    "imagekit.client.AsyncClient",
    "imagekit.models.users.User",
    "imagekit.images.AsyncCreateResult",
    "imagekit.images.AsyncImage",
    "imagekit.images.AsyncImage",
    "list[imagekit.models.users.Style]",
    "imagekit.models.users.Usage",
    "imagekit.models.prompts.TextPrompt",
    "bytes",
    "def () -> typing.Coroutine[Any, Any, imagekit.models.users.User]",
    "imagekit.client.Client",
    "imagekit.client.AsyncClient",
]


@pytest.mark.slow
def test_shortcuts_reveal_real_classes_for_both_clients(tmp_path):
    revealed, out = revealed_types(SNIPPET, tmp_path)
    assert revealed == EXPECTED, out
    assert not any("Any" in kind for kind in revealed if "Coroutine" not in kind), revealed
