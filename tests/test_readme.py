"""The Python blocks of the README and of every docs page run in the suite (pytest-markdown-docs, see
conftest.py at the root); the only ones they skip are notebook-only, and the notebooks they name (run
by nbval) make the same calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.docs_pages import ROOT, fences, pages, section_fences

CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
README = ROOT / "README.md"


def python_fences(page: Path) -> list[tuple[set[str], str]]:
    return [(set(options), code) for language, options, code in fences(page) if language in ("python", "py")]


def notebook_code(name: str) -> str:
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    return "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")


def test_the_readme_has_python_blocks_that_run():
    assert sum("notest" not in options for options, _ in python_fences(README)) >= 2


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_a_skipped_block_is_notebook_only_and_its_notebooks_make_the_same_calls(page):
    skipped = [(options, code) for options, code in python_fences(page) if "notest" in options]
    for options, code in skipped:
        notebooks = [option.split(":", 1)[1] for option in options if option.startswith("notebook:")]
        assert notebooks, f"a skipped block of {page.name} names no notebook that runs it:\n{code}"
        covered = "\n".join(notebook_code(name) for name in notebooks)
        missing = {name for name in CALL.findall(re.sub(r"#.*", "", code)) if f"{name}(" not in covered}
        assert not missing, (notebooks, missing)


def test_the_sweep_files_numbers_are_the_programs(tmp_path, monkeypatch, capsys):
    """The batch guide's sweep file, run as a reader would (an empty folder, the embedded sandbox): each
    command prints exactly the lines the guide shows under it (``...`` ends a line that varies)."""
    from imagekit.cli import main

    blocks = section_fences(ROOT / "docs" / "guides" / "batches.md", "Sweep files")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IMAGEKIT_BASE_URL", raising=False)
    monkeypatch.delenv("IMAGEKIT_API_KEY", raising=False)
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))
    (tmp_path / "sweep.toml").write_text(blocks["toml"])
    commands: list[tuple[list[str], list[str]]] = []
    for line in blocks["sh"].splitlines():
        if line.startswith("# "):
            commands[-1][1].append(line[2:])
        elif line.strip():
            commands.append((line.split("#")[0].split()[1:], []))
    assert [argv[:2] for argv, _ in commands] == [["sweep", "estimate"], ["sweep", "run"], ["sweep", "estimate"],
                                                  ["sweep", "status"]]
    for argv, shown in commands:
        capsys.readouterr()
        assert main(argv) == 0
        printed = capsys.readouterr().out.splitlines()
        assert len(printed) == len(shown), (argv, printed)
        for said, expected in zip(printed, shown):
            assert said.startswith(expected[:-3]) if expected.endswith("...") else said == expected, (said, expected)


def test_the_front_end_table_names_tests_that_exist():
    """Each front end the notebook guide calls tested names the tests (or notebook) that test it, and they exist;
    the others say they are known by reasoning only."""
    text = (ROOT / "docs" / "guides" / "notebook.md").read_text(encoding="utf-8")
    section = text.split("## Where the widgets run", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    known = {row[0].strip(): row[-1].strip() for row in rows[1:]}
    assert {"JupyterLab 4", "Notebook 7", "marimo 0.25", "VS Code", "Google Colab"} <= set(known)
    for front_end, how in known.items():
        assert how.startswith(("tested:", "by reasoning only")), (front_end, how)
        for name in re.findall(r"`([\w/*.]+\.py)`", how) if how.startswith("tested:") else ():
            found = list(ROOT.glob(name)) or list((ROOT / "tests" / "widgets").glob(name))
            assert found, (front_end, name)
