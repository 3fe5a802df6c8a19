import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # The prompt studio in marimo

    `marimo edit notebooks/marimo_studio.py`: write a prompt, pick a style (or a reference image, or
    a collection), a ratio and a count, press Generate, and click images in the gallery to select them;
    run the last cell again to read the selection. `python notebooks/marimo_studio.py` runs it as a
    script (no browser: the generate in code below makes the images). It uses the embedded sandbox
    unless `IMAGEKIT_BASE_URL` and `IMAGEKIT_API_KEY` name a service.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import imagekit
    from imagekit.widgets import PromptStudio
    return PromptStudio, imagekit, mo


@app.cell
def _(PromptStudio, imagekit):
    ik = imagekit.connect()
    studio = PromptStudio(ik, prompt="a lighthouse at dusk", count=2)
    studio.generate().result()  # what its Generate button does, so a run without a browser has images
    studio
    return ik, studio


@app.cell
def _(ik, studio):
    chosen = studio.selected or studio.result.images[:1]  # the first image until some are selected
    print(f"{len(studio.result.images)} images made, chosen: {', '.join(f'#{image.id}' for image in chosen)}; "
          f"{ik.usage().current_credit} credits left")
    return


if __name__ == "__main__":
    app.run()
