"""The review desk in JupyterLab and Notebook 7: keys and the mouse make decisions the kernel reads back from the Desk."""

from __future__ import annotations

from tests.docs_pictures import keep_picture
from tests.utils.browser import in_both_frontends

THUMBS_READY = """(n) => {
    const thumbs = [...document.querySelectorAll('.ik-review img.ik-thumb')];
    return thumbs.length === n && thumbs.every((img) => img.complete && img.naturalWidth > 0);
}"""
RATINGS = "print(desk.decisions()['rating'].fillna(0).astype(int).tolist())"
# A key pressed on the desk and its current tile read in the same task, before any answer of the kernel
# can arrive: [the tile's id, its stars, whether it is marked pending, whether it is selected].
PRESSED = """(key) => {
    const root = document.querySelector('.ik-review');
    const id = root.dataset.current;
    root.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
    const tile = root.querySelector(`figure.ik-tile[data-id='${id}']`);
    return [Number(id), tile.querySelector('.ik-stars').textContent, tile.classList.contains('ik-pending'),
            tile.classList.contains('ik-selected')];
}"""


@in_both_frontends
def test_keys_and_clicks_decide_and_the_kernel_reads_them_back(notebook, shots):
    page = notebook.page
    notebook.run("import imagekit\nik = imagekit.connect()\n"
                 "images = ik.create('a kite', style=ik.styles()[0], count=4).images\n"
                 "ids = [image.id for image in images]\ndesk = imagekit.review(images)\nw = desk.widget()\nw")
    ids = [int(i) for i in notebook.run("print(*ids)").split()]
    root = page.locator(".ik-review")
    root.wait_for()
    page.wait_for_function(THUMBS_READY, arg=4)
    tile = lambda image: root.locator(f"figure.ik-tile[data-id='{image}']")  # noqa: E731

    def press(key: str) -> None:  # running a cell moves the focus to the notebook: the desk takes it back
        root.focus()
        page.keyboard.press(key)

    root.focus()  # the first image is the current one: its stars drawn at once, pending the kernel
    assert page.evaluate(PRESSED, "3") == [ids[0], "★★★☆☆", True, False]
    notebook.wait_output(RATINGS, "[3, 0, 0, 0]\n")
    page.wait_for_selector(f".ik-review figure.ik-tile[data-id='{ids[0]}']:not(.ik-pending)")
    assert tile(ids[0]).locator(".ik-stars").inner_text() == "★★★☆☆"
    press("ArrowRight")
    press(" ")
    notebook.wait_output("print([image.id for image in desk.selected] == [ids[1]])", "True\n")
    page.wait_for_selector(f".ik-review figure.ik-selected[data-id='{ids[1]}']")
    press("p")  # the current image and the next, side by side
    root.get_by_role("group", name="Which is better?").locator("img").nth(1).wait_for()
    press("ArrowRight")  # the right one (ids[2]) is better
    notebook.wait_output("print(desk.decisions()['wins'].tolist(), desk.decisions()['losses'].tolist())",
                         "[0, 0, 1, 0] [0, 1, 0, 0]\n")
    press("ArrowDown")  # a tie between ids[2] and ids[3]
    notebook.wait_output("print(desk.decisions()['ties'].tolist())", "[0, 0, 1, 1]\n")
    press("z")  # takes the tie back
    notebook.wait_output("print(desk.decisions()['ties'].tolist())", "[0, 0, 0, 0]\n")
    root.screenshot(path=shots / "keys.png")
    if notebook.frontend == "lab":  # the docs show the desk with its decisions
        keep_picture("review-desk.png", shots / "keys.png")
    press("ArrowLeft")
    press("ArrowLeft")  # back to ids[1] (the votes moved on to the last image)
    press("c")  # the next image laid over the current one, as the painter compares
    compare = root.get_by_role("group", name="Compare two images")
    compare.wait_for()
    assert compare.get_attribute("data-pair") == f"{ids[1]},{ids[2]}"
    root.get_by_role("slider", name="Before and after").focus()
    page.keyboard.press("Shift+ArrowRight")  # the divider, by ten
    notebook.wait_output("print(w.compare, w.divider)", "True 0.6\n")
    root.get_by_role("button", name="Stop comparing").click()
    compare.wait_for(state="hidden")

    # The same by mouse, each action by its accessible name.
    tile(ids[3]).click()
    root.get_by_role("button", name="Rate 5").click()
    notebook.wait_output(RATINGS, "[3, 0, 0, 5]\n")
    root.get_by_role("button", name="Select or unselect").click()
    notebook.wait_output("print([image.id for image in desk.selected] == [ids[1], ids[3]])", "True\n")
    root.get_by_role("button", name="Sort by rating").click()
    page.wait_for_function(f"() => document.querySelector('.ik-review figure.ik-tile').dataset.id === '{ids[3]}'")
    root.get_by_role("button", name="Undo").click()  # the selection of ids[3]
    notebook.wait_output("print([image.id for image in desk.selected] == [ids[1]])", "True\n")
    assert root.locator(".ik-status").inner_text() == "4 images · 2 rated · 1 selected · 1 vote"
    root.screenshot(path=shots / "mouse.png")

    # A decision the kernel refuses goes back: drawn pending, then the kernel's state and its reason.
    notebook.run("def refuse(*args, **kwargs):\n    raise ValueError('the review store is read-only')\n"
                 "desk.rate = desk.select = refuse")
    root.focus()
    current, stars, marked, _ = page.evaluate(PRESSED, "1")
    assert (stars, marked) == ("★☆☆☆☆", True)
    root.locator(".ik-status", has_text="the review store is read-only").wait_for()
    page.wait_for_selector(f".ik-review figure.ik-tile[data-id='{current}']:not(.ik-pending)")
    held = dict(zip(ids, map(int, notebook.run(RATINGS).strip(" []\n").split(", "))))[current]
    assert tile(current).locator(".ik-stars").inner_text() == "★" * held + "☆" * (5 - held)
    _, _, marked, picked = page.evaluate(PRESSED, " ")
    assert marked and picked == (current != ids[1])  # the opposite of what the kernel holds, for now
    page.wait_for_selector(f".ik-review figure.ik-tile[data-id='{current}']:not(.ik-pending)")
    assert tile(current).get_attribute("class").count("ik-selected") == (current == ids[1])

    # Virtualised: in a viewport one tile wide and one row high, only the rows in view (and one
    # beyond) are in the page; scrolling brings the others in.
    page.evaluate("() => { const v = document.querySelector('.ik-review .ik-viewport');"
                  " v.style.width = '150px'; v.style.height = '150px'; }")
    page.wait_for_function("() => document.querySelectorAll('.ik-review figure.ik-tile').length === 2")
    page.evaluate("() => { const v = document.querySelector('.ik-review .ik-viewport'); v.scrollTop = v.scrollHeight; }")
    page.wait_for_function(f"() => [...document.querySelectorAll('.ik-review figure.ik-tile')].map((f) => f.dataset.id)"
                           f".join() === '{ids[1]},{ids[2]}'")  # the last two of the rating order (unrated)


def test_the_price_of_the_next_step_follows_the_picks_and_the_bar_sorts_by_quality(notebook, shots):
    """The quote beside Send is the kernel's ``desk.quote()`` as the picks change by key; Send charges
    what it showed; sorting by sharpness measures the images and the thumbnails' flags come with it."""
    page = notebook.page
    notebook.run("import imagekit\nik = imagekit.connect()\n"
                 "images = ik.create('a gull', style=ik.styles()[0], count=4).images[:3]\n"
                 "ids = [image.id for image in images]\ndesk = imagekit.review(images)\n"
                 "chain = imagekit.chain().enhance('2x')\nw = desk.widget(chain)\nw")
    root = page.locator(".ik-review")
    root.wait_for()
    page.wait_for_function(THUMBS_READY, arg=3)
    quote = root.locator(".ik-quote")
    send = root.get_by_role("button", name="Send the picks")
    quote.filter(has_text="nothing is selected").wait_for()
    assert send.is_disabled()

    def press(key: str) -> None:
        root.focus()
        page.keyboard.press(key)

    def kernel_quote() -> str:  # what Python gives for the picks now
        return notebook.run("print(desk.quote().summary)").strip()

    press(" ")  # the first image
    quote.filter(has_text="on 1 selected image:").wait_for()
    assert quote.inner_text() == kernel_quote()
    press("ArrowRight")
    press(" ")
    quote.filter(has_text="on 2 selected images:").wait_for()
    assert quote.inner_text() == kernel_quote()
    each = float(notebook.run("print(chain.estimate(ik))"))
    assert send.inner_text() == f"send 2 for {2 * each:g} credits" and send.is_enabled()
    root.screenshot(path=shots / "quoted.png")
    before = float(notebook.run("print(ik.usage().current_credit)"))
    send.click()
    root.locator(".ik-status", has_text="sent: 2 images made").wait_for()
    notebook.wait_output("print(w.sent.decisions()['parent_id'].tolist() == ids[:2])", "True\n")
    assert before - float(notebook.run("print(ik.usage().current_credit)")) == 2 * each  # charged = shown

    root.get_by_role("button", name="Sort by sharpness").click()  # measured on asking
    notebook.wait_output("print(w.message or desk._quality is not None and len(w.signals['sharpness']))", "3\n",
                         timeout=60)  # (three images read and measured: real work on a loaded machine)
    page.wait_for_function("() => document.querySelector('.ik-review button[data-sort=sharpness]')"
                           ".getAttribute('aria-pressed') === 'true'")
    order = notebook.run("print(*desk.quality().sort_values('sharpness', ascending=False, kind='stable')['image_id'])")
    page.wait_for_function(f"() => [...document.querySelectorAll('.ik-review figure.ik-tile')].map((f) => f.dataset.id)"
                           f".join(' ') === '{order.strip()}'")
    # A near-duplicate and a blurred image, as the kernel says: the thumbnails flag them, by name too.
    notebook.run("w.signals = {**w.signals, 'dup_of': [None, None, ids[0]], 'blurred': [False, True, False]}")
    root.locator(f"figure.ik-tile[data-id='{ids_of(notebook)[2]}'] .ik-dup", has_text="≈ #").wait_for()
    assert root.get_by_role("img", name=f"image #{ids_of(notebook)[2]}, near-duplicate of #{ids_of(notebook)[0]}").count() == 1
    assert root.locator(f"figure.ik-tile[data-id='{ids_of(notebook)[1]}'] .ik-blurred").inner_text() == "blurred"
    root.screenshot(path=shots / "flags.png")


def ids_of(notebook) -> list[int]:
    return [int(i) for i in notebook.run("print(*ids)").split()]


def test_a_desk_longer_than_its_first_screen_draws_the_rows_scrolled_to(notebook):
    """The first 60 thumbnails go with the widget; the rows scrolled to (and a screen ahead) are asked
    for, drawn by the kernel and shown: a desk of 1,000 no longer sends every thumbnail before it opens."""
    page = notebook.page
    notebook.run("import imagekit\nik = imagekit.connect()\n"
                 "rows = [{'prompt': f'a kite, take {n}'} for n in range(16)]\n"
                 "desk = imagekit.review(ik.batch(rows, style=ik.styles()[0], count=4).run(progress=False))\n"
                 "w = desk.widget()\nw")
    root = page.locator(".ik-review")
    root.wait_for()
    shown = "() => [...document.querySelectorAll('.ik-review img.ik-thumb')].every((img) => img.complete && img.naturalWidth > 0)"
    page.wait_for_function(shown)
    last = notebook.run("print(desk.images[-1].id)").strip()
    root.locator(".ik-viewport").evaluate("viewport => { viewport.scrollTop = viewport.scrollHeight; }")
    page.wait_for_function(f"() => {{ const img = document.querySelector(\".ik-review figure[data-id='{last}'] img\");"
                           " return img !== null && img.complete && img.naturalWidth > 0; }")
    page.wait_for_function(shown)
    # every thumbnail was drawn once, 60 with the widget and the rest when the page asked (a screen ahead)
    assert notebook.run("print(sum(url is not None for url in w._thumbnails), w.drawn['batch'] > 1)") == "64 True\n"
