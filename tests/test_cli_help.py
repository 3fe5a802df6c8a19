"""What the command line says of itself: its version, and help that reads the right way round."""

from __future__ import annotations

import argparse

import pytest

import imagekit
from imagekit.cli import build_parser, main


def test_version_is_the_packages(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"imagekit {imagekit.__version__}"


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every (sub)command's parser under it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += parsers(sub)
    return found


def test_a_flag_says_what_it_does_and_an_option_shows_its_default():
    helps = "\n".join(each.format_help() for each in parsers(build_parser()))
    assert "(default: True)" not in helps and "(default: False)" not in helps
    assert "--no-progress  no progress bar\n" in helps
    assert "(default: 8800)" in helps  # a value's default is still shown
