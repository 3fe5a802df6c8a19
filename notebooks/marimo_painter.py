import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # The mask painter in marimo

    `marimo edit notebooks/marimo_painter.py` to paint; `marimo run` to use it as an app;
    `python notebooks/marimo_painter.py` runs it as a script (no browser: the mask made in code
    below is the one cleaned up). It uses the embedded sandbox unless `IMAGEKIT_BASE_URL` and
    `IMAGEKIT_API_KEY` name a service.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import imagekit
    from imagekit.widgets import MaskPainter
    return MaskPainter, imagekit, mo


@app.cell
def _(imagekit):
    ik = imagekit.connect()
    image = ik.create("a lighthouse at dusk", style=ik.styles()[0].style_id, count=1, ratio="16:9", seed=3).images[0]
    print(f"{image!r}, {ik.usage().current_credit} credits left")
    return ik, image


@app.cell
def _(MaskPainter, image):
    painter = MaskPainter(image, brush_size=48)
    # A start made in code, so a run without a browser has something to clean up: paint over it,
    # erase it, box or grow it in the page (Brush, Eraser, Box, Grow), then press Clean up there.
    painter.select_box((painter.width // 2, painter.height // 2, painter.width // 2 + 160, painter.height // 2 + 120))
    painter
    return (painter,)


@app.cell
def _(ik, painter):
    cleaned = painter.clean_up()  # what its Clean up button does; the result shows beside the original
    print(f"cleaned up {painter.mask_array().mean():.1%} of image #{painter.source.id}: #{cleaned.id}, "
          f"{cleaned.credits_charged} credits; {ik.usage().current_credit} credits left")
    return


if __name__ == "__main__":
    app.run()
