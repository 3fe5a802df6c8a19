"""Setup mistakes end in a line or two that say what to do: on the command line (no traceback,
non-zero exit) and as the exception's text for a Python user. Every command's --help is plain text
that shows its defaults."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys

import pytest

import imagekit
from imagekit.cli import build_parser


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def usage(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """``imagekit usage`` in a child process with only these IMAGEKIT_* variables set."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("IMAGEKIT_")}
    return subprocess.run([sys.executable, "-m", "imagekit.cli", "usage", "--out", str(tmp_path / "usage")],
                          capture_output=True, text=True, timeout=120,
                          env={**clean, "IMAGEKIT_HOME": str(tmp_path / "home"), **env})


def assert_short_refusal(result: subprocess.CompletedProcess, *needles: str) -> str:
    text = result.stderr.strip()
    assert result.returncode != 0 and "Traceback" not in text, text
    assert 1 <= len(text.splitlines()) <= 3 and text.startswith("error: "), text
    for needle in needles:
        assert needle in text, (needle, text)
    assert "Traceback" not in result.stdout
    return text


def test_wrong_key(sandbox, tmp_path):
    text = assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL=sandbox.url, IMAGEKIT_API_KEY="iks_wrong"),
                                "wrong_api_key", sandbox.url, "IMAGEKIT_API_KEY")
    with imagekit.Client(sandbox.url, "iks_wrong") as ik, pytest.raises(imagekit.WrongAPIKeyError) as info:
        ik.me()
    assert "error: " + " ".join(str(info.value).split("\n")) == text  # what the exception says, on one line


def test_no_key(tmp_path):
    assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL="http://127.0.0.1:1"),
                         "IMAGEKIT_API_KEY is not", "unset IMAGEKIT_BASE_URL")
    assert_short_refusal(usage(tmp_path, IMAGEKIT_API_KEY="iks_x"), "IMAGEKIT_BASE_URL is not")


def test_unreachable_host_is_named(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    text = assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL=url, IMAGEKIT_API_KEY="iks_x"),
                                f"Could not reach {url}", "IMAGEKIT_BASE_URL")
    assert "/api is probably wrong" not in text
    with imagekit.Client(url, "iks_x", max_retries=0) as ik, pytest.raises(imagekit.APIConnectionError) as info:
        ik.me()
    assert str(info.value).startswith(f"Could not reach {url}")


def test_a_base_url_ending_in_api_is_called_out(sandbox, tmp_path):
    """Reachable (the sandbox answers 404 on /api/api/...) or not, the advice is the same."""
    reachable = assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL=f"{sandbox.url}/api",
                                           IMAGEKIT_API_KEY=sandbox.api_key), "not_found")
    unreachable = assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL=f"http://127.0.0.1:{closed_port()}/api/",
                                             IMAGEKIT_API_KEY="iks_x"), "Could not reach")
    assert "/api is probably wrong" in reachable and f"try IMAGEKIT_BASE_URL={sandbox.url})" in reachable
    assert "/api is probably wrong" in unreachable


def test_a_url_without_scheme_is_explained(tmp_path):
    assert_short_refusal(usage(tmp_path, IMAGEKIT_BASE_URL="localhost:8800", IMAGEKIT_API_KEY="iks_x"),
                         "localhost:8800", "http:// or https://")


def _parsers(parser: argparse.ArgumentParser, path: str = "imagekit"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_help_is_plain_text_with_its_defaults():
    seen = []
    for path, parser in _parsers(build_parser()):
        text = parser.format_help()
        seen.append(path)
        assert "``" not in text and "`" not in text, (path, text)
        assert parser.description, path
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS and action.dest != "help":
                assert action.help, (path, action.dest)
                # a flag says what it does, and an empty default is no default to show
                if action.default not in (None, [], (), argparse.SUPPRESS) and action.nargs != 0 and not action.required:
                    assert f"(default: {action.default})" in " ".join(text.split()), (path, action.dest)
    assert {"imagekit demo", "imagekit usage", "imagekit sandbox serve", "imagekit sandbox user add"} <= set(seen)
    assert "(default: [])" not in "".join(parser.format_help() for _, parser in _parsers(build_parser()))


@pytest.mark.parametrize(("hidden", "action", "hint"), [
    ("fsspec", "Store('memory://somewhere')", "pip install 'imagekit[storage]'"),
    ("s3fs", "Store('s3://a-bucket/runs')", "pip install 'imagekit[s3]'"),
    ("pyarrow", "imagekit.Client('http://127.0.0.1:9', 'key', ledger=False).batch(['a fox'], style=1)"
                ".export(out, format='parquet')", "pip install 'imagekit[parquet]'"),
])
def test_a_missing_extra_is_named_in_one_line(tmp_path, hidden, action, hint):
    """Object storage and Parquet live behind extras: without one, the call says which to install."""
    code = (f"import sys\nsys.modules[{hidden!r}] = None  # as if it were not installed\n"
            "import imagekit\nfrom imagekit.storage import Store\n"
            f"out = {str(tmp_path / 'batch.parquet')!r}\n"
            f"try:\n    {action}\nexcept imagekit.ConfigError as exc:\n    print(exc)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(hint), (result.stdout, result.stderr)


@pytest.mark.parametrize("below", ["", "/inside"])
def test_an_imagekit_home_that_is_a_file_is_said_in_one_line(tmp_path, monkeypatch, below):
    """IMAGEKIT_HOME naming a file (or a folder inside one): ``connect()`` and ``imagekit usage`` say
    so and what to set, instead of a NotADirectoryError traceback or an empty account; the file stays."""
    (tmp_path / "home").write_text("not a folder")
    home = str(tmp_path / "home") + below
    monkeypatch.setenv("IMAGEKIT_HOME", home)
    for variable in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY", "IMAGEKIT_LEDGER_URL"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(imagekit.errors.ConfigError, match="IMAGEKIT_HOME=.* a file: imagekit keeps its sandbox") as told:
        imagekit.connect()
    assert "\n" not in str(told.value)
    result = subprocess.run([sys.executable, "-m", "imagekit.cli", "usage"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "IMAGEKIT_HOME": home})
    assert_short_refusal(result, f"IMAGEKIT_HOME={home} ", "set IMAGEKIT_HOME to a folder")
    assert (tmp_path / "home").read_text() == "not a folder"
