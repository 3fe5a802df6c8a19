"""PromptStudio in JupyterLab (and Notebook 7): type a prompt, pick a count, Generate or Enhance, read the balance."""

from __future__ import annotations

import httpx

from tests.docs_pictures import keep_picture
from tests.helpers import TLS
from tests.utils.browser import in_both_frontends
from tests.utils.users import make_user

GALLERY_READY = """(n) => {
    const thumbs = [...document.querySelectorAll('.ik-studio .ik-gallery img.ik-thumb')];
    return thumbs.length === n && thumbs.every((img) => img.complete && img.naturalWidth > 0);
}"""


def shown_balance(root) -> str:
    return root.locator(".ik-balance").inner_text().removesuffix(" credits left")


def kernel_balance(notebook) -> str:
    """The balance as the interface reports it (GET /api/users/me/usage), asked from the kernel."""
    return notebook.run("print(studio.client.usage().current_credit)").strip()


@in_both_frontends
def test_generate_shows_requested_images_and_the_usage_balance(notebook, shots):
    page = notebook.page
    notebook.run("from imagekit.widgets import PromptStudio\nstudio = PromptStudio(count=1)\nstudio")
    root = page.locator(".ik-studio")
    root.wait_for()
    before = shown_balance(root)
    root.get_by_role("textbox", name="Prompt").fill("a lighthouse at dusk")
    root.get_by_role("radiogroup", name="Count").get_by_role("radio", name="4").click()
    root.get_by_role("radio", name="4", checked=True).wait_for()
    root.locator("button.ik-generate").click()
    page.wait_for_function(GALLERY_READY, arg=4)
    root.locator(".ik-progress").wait_for(state="hidden")
    assert shown_balance(root) != before
    assert shown_balance(root) == kernel_balance(notebook)
    assert "1200" in root.inner_text()  # the live character count
    root.locator(".ik-gallery figure").nth(2).click()
    page.wait_for_selector(".ik-gallery figure.ik-selected")
    notebook.wait_output("print(len(studio.selected), studio.selected[0] is studio.gallery.items[2])", "1 True\n")
    assert notebook.run("print(repr(studio))") == "PromptStudio(count=4, images=4, selected=1)\n"
    page.screenshot(path=shots / "studio.png")
    if notebook.frontend == "lab":  # the docs show the studio with its four images
        keep_picture("studio.png", root.screenshot())


def test_a_refused_generate_leaves_no_progress_and_shows_the_real_balance(notebook, shots, lab_sandbox):
    page = notebook.page
    user_id, key = make_user(lab_sandbox)
    cost = httpx.get(f"{lab_sandbox.url}/api/users/me/styles", headers={"X-Api-Key": key}, verify=TLS, timeout=120).json()[0]["creditCost"]
    httpx.post(f"{lab_sandbox.url}/sandbox/users/{user_id}/credits",  # one image's worth, not four
               json={"defaultCredit": cost, "dailyCredit": 0, "monthlyCredit": 0}, verify=TLS, timeout=120).raise_for_status()
    notebook.run(f"import imagekit\nfrom imagekit.widgets import PromptStudio\n"
                 f"studio = PromptStudio(imagekit.Client({lab_sandbox.url!r}, {key!r}), prompt='a kite', count=4)\n"
                 f"studio")
    root = page.locator(".ik-studio")
    root.wait_for()
    progress = root.locator(".ik-progress")
    root.locator("button.ik-generate").click()
    root.locator(".ik-message", has_text="Not enough credit (402)").wait_for()
    progress.wait_for(state="hidden")
    page.wait_for_function("() => !document.querySelector('.ik-studio button.ik-generate').disabled")
    assert shown_balance(root) == kernel_balance(notebook) == str(cost)
    page.screenshot(path=shots / "refused.png")

    root.get_by_role("radio", name="1").click()  # one image fits the balance
    root.locator("button.ik-generate").click()
    page.wait_for_function(GALLERY_READY, arg=1)
    progress.wait_for(state="hidden")
    page.wait_for_function("() => !document.querySelector('.ik-studio button.ik-generate').disabled")
    assert shown_balance(root) == kernel_balance(notebook) == "0"
    page.screenshot(path=shots / "generated.png")


def test_enhance_shows_both_prompts_side_by_side_and_replaces_nothing_until_chosen(notebook, shots):
    page = notebook.page
    typed = "a lighthouse on a rocky island at dusk, " * 6  # long: the versions must stay readable
    notebook.run(f"from imagekit.widgets import PromptStudio\nstudio = PromptStudio(prompt={typed!r})\nstudio")
    root = page.locator(".ik-studio")
    root.wait_for()
    prompt = root.get_by_role("textbox", name="Prompt")
    root.get_by_role("button", name="Enhance prompt").click()
    suggestion = root.locator(".ik-suggestion")
    suggestion.wait_for()
    assert prompt.input_value() == typed
    keep, use = root.locator(".ik-use-initial"), root.locator(".ik-use-enhanced")
    mine, theirs = keep.locator("xpath=.."), use.locator("xpath=..")
    left, right = mine.bounding_box(), theirs.bounding_box()
    assert left["x"] + left["width"] <= right["x"] + 1, (left, right)  # side by side, not overlapping
    initial, enhanced = notebook.run("print(*studio._enhanced, sep='\\n')").splitlines()
    assert initial.strip() in mine.inner_text() and enhanced.strip() in theirs.inner_text()
    page.screenshot(path=shots / "suggestion.png")
    use.click()
    suggestion.wait_for(state="hidden")
    assert prompt.input_value() == enhanced
