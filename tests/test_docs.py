"""The documentation holds: a short README, every shell block runs as pasted, the reference pages
drawn from the code are current, and the docs site builds with every internal link and anchor found.
(The Python blocks: tests/test_readme.py and pytest-markdown-docs.)"""

from __future__ import annotations

import ast
import fcntl
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from tests.docs_pages import CLI_PAGE, ROOT, build_site, cli_page, fences, pages
from tests.docs_pictures import KEPT_BY, PICTURES
from tests.helpers import free_ports_below_the_ephemeral_range

SHELLS = ("sh", "bash", "console")
VENV = Path(sys.executable).parent.parent


def test_the_readme_is_short_and_links_into_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


PICTURE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)")


def test_every_picture_shown_is_one_a_test_keeps_and_says_what_it_shows():
    shown: dict[str, list[str]] = {}
    for page in pages():
        for alt, target in PICTURE.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            assert path.parent == PICTURES and path.name in KEPT_BY, f"{page.name} shows {target}, made by no test"
            assert len(alt.split()) >= 3, f"{page.name}: the picture {target} needs words saying what it shows"
            shown.setdefault(path.name, []).append(page.name)
    assert "README.md" in {page for pages_ in shown.values() for page in pages_}  # the README's one picture
    for name, test in KEPT_BY.items():
        assert name in shown, f"docs/pictures/{name} is kept by {test} but no page shows it"
        source = (ROOT / test).read_text(encoding="utf-8")
        assert "keep_picture(" in source and f'"{name}"' in source, (name, test)
        with Image.open(PICTURES / name) as picture:
            assert picture.format == "PNG" and picture.width >= 300, (name, picture.format, picture.size)


def shell_blocks() -> list[tuple[Path, int, list[str], str]]:
    return [(page, number, options, code) for page in pages()
            for number, (language, options, code) in enumerate(fences(page)) if language in SHELLS]


def test_a_shell_block_not_run_says_why_and_they_are_few():
    skipped = [(page.name, options, code) for page, _, options, code in shell_blocks()
               if any(option.startswith("notest") for option in options)]
    for name, options, code in skipped:
        reasons = [option.split("=", 1)[1] for option in options if option.startswith("notest=")]
        assert reasons and reasons[0].strip(), f"a shell block of {name} not run says no reason (notest=\"why\"):\n{code}"
    # the few: the suite itself, installs into a user's venv, a team's database, a clone-relative notebook run,
    # and the sweep file (run and compared line by line in tests/test_readme.py); one more is a choice made here
    assert len(skipped) <= 7 and len(shell_blocks()) >= 13, skipped


SERVES = re.compile(r"^imagekit sandbox serve\b")


def as_script(code: str) -> str:
    """The block as bash runs it, each line as pasted. A ``make`` target is this clone's Makefile on
    the running venv (not remade); a line that serves until stopped (``imagekit sandbox serve``)
    runs in the background until it says it is serving, and is stopped by Ctrl+C at the end."""
    lines = ["set -euo pipefail -m  # -m: a job in the background hears Ctrl+C (SIGINT), as in a terminal",
             f'make() {{ command make -f "{ROOT}/Makefile" VENV="{VENV}" -o "{VENV}/.installed-dev" "$@"; }}',
             "SERVERS=()", """trap 'kill -INT "${SERVERS[@]}" 2>/dev/null || true' EXIT"""]
    for number, line in enumerate(code.replace("\\\n", " ").splitlines()):
        if SERVES.match(line):
            log = f"serve-{number}.log"
            lines += [f"{line.split('#')[0]} > {log} 2>&1 &", "SERVERS+=($!)",
                      f"for _ in $(seq 600); do grep -q '^Serving' {log} && break; sleep 0.1; done",
                      f"grep '^Serving' {log}"]
        else:
            lines.append(line)
    lines += ['for pid in "${SERVERS[@]}"; do kill -INT "$pid"; wait "$pid" || [ $? -eq 130 ]; done']
    return "\n".join(lines) + "\n"


def python_above(page: Path, number: int) -> str:
    """The Python block above a page's block ``number``, with those it continues."""
    chain: list[str] = []
    for language, options, code in fences(page)[:number]:
        if language in ("python", "py") and "notest" not in options:
            chain = [*chain, code] if "continuation" in options else [code]
    assert chain, f"no Python block above block {number} of {page.name}"
    return "\n".join(chain)


def _block_id(block) -> str:
    page, number, _, code = block
    return f"{page.relative_to(ROOT)}:{number}:{code.split()[0]}-{code.split()[1]}"


RUNNABLE = [block for block in shell_blocks() if not any(option.startswith("notest") for option in block[2])]


@pytest.mark.slow(seconds=50)
def outside_make() -> dict[str, str]:
    """This process's environment as a shell a person types in has it: under ``make test`` the
    variables of make's job server (MAKEFLAGS...) would make a ``make`` run here warn on stderr."""
    return {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


@pytest.mark.parametrize("block", RUNNABLE, ids=map(_block_id, RUNNABLE))
def test_a_shell_block_runs_as_pasted(block, tmp_path):
    """Each shell block, in an empty folder with a fresh IMAGEKIT_HOME and no service configured,
    against this venv's ``imagekit`` command, exits 0."""
    page, number, options, code = block
    env = {name: value for name, value in outside_make().items() if not name.startswith("IMAGEKIT_")}
    env.update(IMAGEKIT_HOME=str(tmp_path / "home"), PATH=f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=f"{ROOT}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(ROOT))
    if "after-python" in options:  # the block reads what the Python block above it made (a ledger, files)
        (tmp_path / "above.py").write_text(python_above(page, number), encoding="utf-8")
        above = subprocess.run([sys.executable, "above.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=180)
        assert above.returncode == 0, above.stderr[-3000:]
    with open(Path(tempfile.gettempdir()) / "imagekit-docs-serve.lock", "w") as lock:
        if any(SERVES.match(line) for line in code.splitlines()):  # the pasted port is one: one block at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["bash", "-c", as_script(code)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=180)
    assert done.returncode == 0, (page.name, code, done.stdout[-3000:], done.stderr[-3000:])


def test_the_command_line_page_is_drawn_from_the_parser():
    """docs/reference/cli.md is what the parser says now (``python -m tests.docs_pages`` redraws it):
    every command, every option and the exit codes."""
    assert CLI_PAGE.read_text(encoding="utf-8") == cli_page(), "docs/reference/cli.md is stale: python -m tests.docs_pages"
    from imagekit.cli import build_parser

    text = CLI_PAGE.read_text(encoding="utf-8")
    help_text = build_parser().format_help()
    for command in ("sandbox serve", "sweep run", "usage export", "ledger flush", "demo"):
        assert f"## `imagekit {command}`" in text
    assert "--allowed-host" in text and "`141`" in text and "COMMAND" in help_text


def environment_variables_read() -> set[str]:
    """Every environment variable imagekit's code reads: ``os.environ.get(X)``, ``os.environ[X]``,
    ``os.getenv(X)``, X a string or a module constant holding one."""
    constants: dict[str, str] = {}
    reads: list[ast.expr] = []
    for path in (ROOT / "imagekit").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                constants.update({target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)})
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
                reads.append(node.args[0])
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                reads.append(node.slice)
    names = set()
    for read in reads:
        if isinstance(read, ast.Constant):
            names.add(read.value)
        else:
            names.add(constants[ast.unparse(read).split(".")[-1]])
    return names


def test_every_environment_variable_the_code_reads_is_in_the_table():
    table = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", "".join(rows)))
    read = environment_variables_read()
    assert {"IMAGEKIT_BASE_URL", "IMAGEKIT_HOME", "IMAGEKIT_LEDGER_URL", "PGUSER"} <= read
    assert read <= listed, read - listed


class _Links(HTMLParser):
    """A built page's links (href) and the ids it holds (anchors)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        if tag in ("a", "link") and found.get("href"):
            self.links.append(found["href"] or "")
        if tag == "img" and found.get("src"):  # a picture is a link the page needs found
            self.links.append(found["src"] or "")


@pytest.mark.slow(seconds=25)
def test_the_site_builds_strictly_and_every_internal_link_and_anchor_is_found(tmp_path):
    site = tmp_path / "site"
    built = build_site(site)
    assert built.returncode == 0, built.stderr[-3000:]
    parsed: dict[Path, _Links] = {}
    for page in site.rglob("*.html"):  # 404.html links from the site's root, which a build on disk has not
        parsed[page] = _Links()
        parsed[page].feed(page.read_text(encoding="utf-8"))
    broken = []
    for page, links in parsed.items():
        if page.name == "404.html":
            continue
        for href in links.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((str(page.relative_to(site)), href))
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parsed[target].ids:
                broken.append((str(page.relative_to(site)), href))
    assert len(parsed) > 20 and not broken, broken
    ledger_page = parsed[site / "api" / "ledger" / "index.html"].ids  # members drawn, inherited from its parts too
    assert {f"imagekit.Ledger.{name}" for name in ("to_pandas", "set_budget", "forecast", "export", "close")} <= ledger_page
    workflows_page = parsed[site / "api" / "workflows" / "index.html"].ids  # an Image's id, from its handle's base
    assert {"imagekit.Image.id", "imagekit.Image.request_id", "imagekit.AsyncImage.id"} <= workflows_page


def test_the_api_reference_shows_every_public_name_and_no_internal_of_the_ledger():
    """Each name ``imagekit`` exports has its entry in docs/api/ (the errors: the errors page draws the
    module's hierarchy and the catalogue lists them), and the ledger's page lists its public members
    only, not the bookkeeping the toolkit calls (``hold``, ``settle``, ``adopt``...)."""
    import imagekit
    from imagekit import errors

    api = "".join(page.read_text(encoding="utf-8") for page in (ROOT / "docs" / "api").glob("*.md"))
    drawn = set(re.findall(r"^::: imagekit\.(\w+)", api, re.MULTILINE))
    missing = {name for name in imagekit.__all__ if name not in drawn and not hasattr(errors, name)}
    assert not missing, missing
    ledger = (ROOT / "docs" / "api" / "ledger.md").read_text(encoding="utf-8")
    members = re.search(r"members: \[([^\]]*)\]", ledger)
    assert members is not None
    listed = {name.strip() for name in members.group(1).split(",")}
    assert not listed & {"adopt", "settle", "hold", "learn_price", "created_in_group", "max_image_id", "record"}
    assert {"to_pandas", "export", "set_budget", "forecast"} <= listed
    assert all(callable(getattr(imagekit.Ledger, name, None)) or hasattr(imagekit.Ledger, name) for name in listed)


@pytest.mark.slow(seconds=35)
def test_make_docs_on_a_busy_port_says_so_in_one_line_and_serves_on_the_next_free_one():
    """The port asked for is busy: the docs are served on the next, said in one line. That next port
    taken while mkdocs builds (before it binds): the port after it, said in one more line."""
    import signal
    import socket

    port = free_ports_below_the_ephemeral_range(3)
    with socket.socket() as busy, socket.socket() as taken_meanwhile:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        served = subprocess.Popen(
            ["make", "--no-print-directory", "docs", f"VENV={VENV}", "-o", f"{VENV}/.installed-dev", f"DOCS_PORT={port}"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            env={**outside_make(), "PYTHONPATH": str(ROOT)})
        printed: list[str] = []
        try:
            assert served.stdout is not None
            printed.append(served.stdout.readline())
            assert printed[0] == f"port {port} is in use: serving the docs on http://127.0.0.1:{port + 1}\n", printed
            taken_meanwhile.bind(("127.0.0.1", port + 1))  # the build takes seconds: mkdocs binds after it
            for line in served.stdout:
                printed.append(line)
                if "Serving on" in line:
                    break
            else:
                raise AssertionError(f"mkdocs never served: {''.join(printed)[-3000:]}")
            announced = [line for line in printed if line.startswith("port ")]
            assert announced == [printed[0], f"port {port + 1} is in use: serving the docs on http://127.0.0.1:{port + 2}\n"]
            assert f"http://127.0.0.1:{port + 2}/" in printed[-1]
            assert not any("Traceback" in line for line in printed), printed
        finally:
            os.killpg(served.pid, signal.SIGINT)
            served.wait(timeout=30)


def test_make_test_without_chromium_or_postgresql_stops_at_once_naming_the_command():
    """Not root (as root, the check runs as nobody: apt cannot be used): one line naming what to install
    and how, exit 1; with both present (the paths given), nothing printed and exit 0."""
    import tempfile

    check = ROOT / ".ci" / "system-needs"
    as_user = (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []) + [str(check)]
    with tempfile.TemporaryDirectory() as named:  # in /tmp, which nobody can reach (pytest's folders are root's)
        folder = Path(named)
        folder.chmod(0o755)
        missing = subprocess.run(as_user, capture_output=True, text=True, timeout=30, env={
            **os.environ, "IMAGEKIT_TEST_CHROMIUM": str(folder / "none"), "IMAGEKIT_TEST_POSTGRES_BIN": named})
        assert missing.returncode == 1 and missing.stdout == ""
        assert missing.stderr == ("error: make test needs chromium postgresql: run sudo apt-get install -y chromium "
                                  "postgresql (or set IMAGEKIT_TEST_CHROMIUM / IMAGEKIT_TEST_POSTGRES_BIN)\n")
        for made in ("chromium", "initdb"):
            (folder / made).write_text("#!/bin/sh\n")
            (folder / made).chmod(0o755)
        present = subprocess.run(as_user, capture_output=True, text=True, timeout=30, env={
            **os.environ, "IMAGEKIT_TEST_CHROMIUM": str(folder / "chromium"), "IMAGEKIT_TEST_POSTGRES_BIN": named})
        assert (present.returncode, present.stdout, present.stderr) == (0, "", "")


def test_the_readmes_links_into_the_docs_name_headings_that_exist():
    """A README link to a page's section (``docs/guides/x.md#heading``) names a heading of that page, by
    the slug GitHub and mkdocs both make (lower case, punctuation dropped, spaces as hyphens)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\((docs/[^)#]+)#([^)]+)\)", readme.replace("\n", " ")):
        headings = re.findall(r"^#+ (.+)$", (ROOT / target).read_text(encoding="utf-8"), re.MULTILINE)
        slugs = {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-") for heading in headings}
        assert anchor in slugs, (target, anchor)
