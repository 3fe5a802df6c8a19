"""PromptStudio in JupyterLab: type a prompt, pick a count, click Generate, see the images."""

from __future__ import annotations


def test_generate_shows_requested_images(notebook, tmp_path):
    page = notebook.page
    notebook.run("from imagekit.widgets import PromptStudio\nstudio = PromptStudio(count=1)\nstudio")
    root = page.locator(".ik-studio")
    root.wait_for()
    before = root.locator(".ik-balance").inner_text()
    root.locator(".ik-prompt textarea").fill("a lighthouse at dusk")
    root.locator(".ik-count button", has_text="4").click()
    root.locator("button.ik-generate").click()
    page.wait_for_function("""() => {
        const thumbs = [...document.querySelectorAll('.ik-studio .ik-gallery img.ik-thumb')];
        return thumbs.length === 4 && thumbs.every((img) => img.complete && img.naturalWidth > 0);
    }""")
    assert root.locator(".ik-balance").inner_text() != before
    assert "1200" in root.inner_text()  # the live character count
    root.locator(".ik-gallery figure").nth(2).click()
    page.wait_for_selector(".ik-gallery figure.ik-selected")
    assert notebook.run("print(len(studio.selected), studio.selected[0] is studio.gallery.items[2])") == "1 True\n"
    assert notebook.run("print(repr(studio))") == "PromptStudio(count=4, images=4, selected=1)\n"
    page.screenshot(path=tmp_path / "studio.png")
