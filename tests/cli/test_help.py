"""What the command line says of itself: its version, and help that reads the right way round."""

from __future__ import annotations

import argparse
import re

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
    assert re.search(r"--no-progress +no progress bar\n", helps)  # columns as wide as the longest option
    assert "(default: 8800)" in helps  # a value's default is still shown


def test_a_word_no_command_takes_is_refused_by_the_command_it_followed(capsys):
    """Every command's name in its own refusal: ``imagekit usage export``, not ``imagekit``."""
    for each in parsers(build_parser()):
        words = each.prog.split()[1:]
        with pytest.raises(SystemExit) as refused:
            build_parser().parse_args([*words, *(["d.csv"] if words[-1:] == ["export"] else []), "--bogus"])
        said = capsys.readouterr().err
        assert refused.value.code == 2 and said.count("\n") == 1, said
        assert said.startswith(f"error: {each.prog}: ") and said.endswith(f" (see {each.prog} --help)\n"), said
        assert "_command" not in said, said  # a missing command is COMMAND or VERB, not a variable's name


def test_the_usage_line_shows_the_report_and_its_export():
    usage = next(each for each in parsers(build_parser()) if each.prog == "imagekit usage")
    assert usage.format_usage() == "usage: imagekit usage [options]\n       imagekit usage export DEST [options]\n"


def test_each_command_is_listed_once_under_its_parent():
    """A command's name is not also the heading above it (``imagekit usage --help`` said export twice)."""
    for each in parsers(build_parser()):
        helps = each.format_help()
        for action in each._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name in action.choices:
                    assert len(re.findall(rf"^ +{name}(?: {{2,}}|$)", helps, flags=re.MULTILINE)) == 1, (each.prog, name, helps)
