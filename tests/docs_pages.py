"""The documentation as the tests read it: the pages (README.md and docs/), their fenced blocks, and
the reference page drawn from the code (the command line from its parser, docs/reference/cli.md:
``python -m tests.docs_pages`` writes it; tests/test_docs.py fails when it is stale). mkdocs also
loads this file as a hook (``on_page_markdown``)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"


def build_site(site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the docs into ``site`` (with the running venv's mkdocs)."""
    return subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet", "--site-dir",
                           str(site)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def pages() -> list[Path]:
    """README.md and every page of the docs site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def fences(page: Path) -> list[tuple[str, list[str], str]]:
    """A page's fenced blocks: language, options (the info string's other words), content."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt().parse(page.read_text(encoding="utf-8"))
    found = []
    for token in tokens:
        if token.type == "fence" and token.info.strip():
            language, *options = shlex.split(token.info)
            found.append((language, options, token.content))
    return found


def section_fences(page: Path, heading: str) -> dict[str, str]:
    """The fenced blocks under a page's heading, by language (the first of each)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt().parse(page.read_text(encoding="utf-8"))
    inside, found = False, {}
    for token in tokens:
        if token.type == "inline" and token.content == heading:
            inside = True
        elif inside and token.type == "heading_open" and token.tag in ("h1", "h2", "h3"):
            break
        elif inside and token.type == "fence":
            found.setdefault(token.info.split()[0], token.content)
    return found

EXIT_CODES = """\
| code | when |
|---|---|
| `0` | done |
| `1` | the command ran and was refused or did not finish its work (a folder holding someone else's files, rows that failed, a budget reached, an error of the service) |
| `2` | the command line itself was wrong, as in any argparse tool (an unknown option, a value of the wrong kind such as a file where a folder goes), and a sandbox folder or port `serve` cannot use |
| `130` | Ctrl+C |
| `143` | SIGTERM (`kill`, `timeout`, a container stopped): the command stops as Ctrl+C stops it |
| `141` | a closed pipe (the reader went away, as with `\\| head`): the command ends quietly |
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_row(action: argparse.Action) -> str:
    names = ", ".join(f"`{name}`" for name in action.option_strings) or f"`{action.metavar or action.dest}`"
    if action.nargs != 0:
        value = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices else
                                   action.dest.upper())
        names += f" `{value}`" if action.option_strings else ""
    default = "" if action.default in (None, [], (), argparse.SUPPRESS) or action.nargs == 0 or action.required \
        else f"`{action.default}`"
    need = "required" if action.required and action.option_strings else ""
    return f"| {names} | {_cell(action.help or '')} | {default or need} |"


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """Every command under ``parser``, depth first: its full name, its one-line help, its parser."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((sub.prog, helps.get(name, ""), sub))
                found.extend(_commands(sub))
    return found


def cli_page() -> str:
    """docs/reference/cli.md: every command's usage, its options (with defaults) and the exit codes."""
    from imagekit.cli import build_parser

    parser = build_parser()
    lines = ["# Command line", "",
             "Drawn from the parser itself (`python -m tests.docs_pages` writes this page; the suite fails when it",
             "is stale). Every command prints `--help`; a mistake is one `error:` line and an exit code,",
             "`IMAGEKIT_DEBUG=1` shows the traceback ([environment variables](environment.md)).", "",
             "## Exit codes", "", EXIT_CODES]
    for prog, summary, sub in _commands(parser):
        lines += [f"## `{prog}`", ""]
        if sub.description or summary:
            lines += [_cell(sub.description or summary), ""]
        usage = " ".join(sub.format_usage().removeprefix("usage: ").split())
        lines += ["```text", usage, "```", ""]
        options = [action for action in sub._actions
                   if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)]
        if options:
            lines += ["| option | what | default |", "|---|---|---|", *map(_option_row, options), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    CLI_PAGE.write_text(cli_page(), encoding="utf-8")
    sys.stdout.write(f"wrote {CLI_PAGE.relative_to(ROOT)}\n")


_FENCE_OPTIONS = re.compile(r"^(?P<fence>[ \t]*(?:```+|~~~+)[\w+-]+)[ \t]+[^`\n]*$", re.MULTILINE)


def on_page_markdown(markdown: str, **kwargs) -> str:
    """mkdocs hook: a fence's options for the tests (``python continuation``, ``sh notest="why"``) are
    dropped before the page is drawn; pymdownx.superfences takes only the language there."""
    return _FENCE_OPTIONS.sub(r"\g<fence>", markdown)
