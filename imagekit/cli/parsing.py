"""What every command shares: the parser's class, a subcommand, and typed option values.

A type here refuses a bad value before anything runs or is created, in the one line the parser
prints (``Parser.error``): ``imagekit sandbox serve: --port: 70000 is not a port (0..65535)``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = ["Parser", "command", "mistake", "port", "seconds", "positive", "days", "price", "folder_option",
           "existing_ledger", "existing_journal", "tag_name", "time_zone", "moment_option", "file_to_write_option",
           "sweep_file_option"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        # A flag (it takes no value) says what it does: "--no-progress  no progress bar (default:
        # True)" read backwards; an empty default ("(default: [])") is none to show.
        if action.default in (None, [], ()) or action.nargs == 0 or action.required:
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Every (sub)command shows its options' defaults (subparsers are made of the same class), and
    a mistake in the options is one line on stderr and exit code 2, not the usage text."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        _refuse(self.prog, message)

    def parse_known_args(self, args=None, namespace=None):
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, _COMMAND):  # the innermost command parsed sets it first; the rest keep it
            setattr(parsed, _COMMAND, self.prog)
        return parsed, extras

    def parse_args(self, args=None, namespace=None):
        """The options; a word no command takes is refused by the command it was typed after
        (``imagekit usage export: unrecognized arguments: --bogus``), not by ``imagekit``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            _refuse(getattr(parsed, _COMMAND), f"unrecognized arguments: {' '.join(extras)}")
        return parsed


_COMMAND = "_command_prog"
"""Where a parsed namespace keeps the innermost command's name, for the one line a mistake gets."""


def _refuse(prog: str, message: str) -> NoReturn:
    print(f"error: {prog}: {message} (see {prog} --help)", file=sys.stderr)
    sys.exit(2)


def mistake(args: argparse.Namespace, message: str) -> NoReturn:
    """Options that cannot go together (or one that needs another), found once they are parsed:
    refused as the parser refuses a bad value, in one line and exit code 2."""
    _refuse(getattr(args, _COMMAND, "imagekit"), message)


def command(commands, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose one-line help is also its description."""
    return commands.add_parser(name, help=text, description=text)


def _typed(name: str, check: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type whose ``check`` raises ValueError with the reason."""
    def convert(text: str) -> object:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = name
    return convert


def _number(text: str, kind: type = float) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _port(text: str) -> int:
    value = int(_number(text, int))
    if not 0 <= value <= 65535:
        raise ValueError(f"{value} is not a port (0..65535; 0 takes any free one)")
    return value


def _seconds(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise ValueError(f"{text} seconds: give 0 or more")
    return value


def _positive(text: str) -> float:
    value = _number(text)
    if value <= 0:
        raise ValueError(f"{text}: give a number above 0")
    return value


def _folder(text: str) -> str:
    """A folder to write into: not a file, and in a folder that exists (made by the command, if new)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{text} is a file, not a folder")
    parent = path.absolute().parent
    if not path.exists() and not parent.is_dir():
        raise ValueError(f"no folder {parent} to make {path.name} in (create it first)")
    return text


def _existing(what: str, advice: str) -> Callable[[str], str]:
    """A ledger or journal to read: a PostgreSQL URL, or a SQLite file that is there (a mistyped name
    is not an empty one)."""
    def check(text: str) -> str:
        from ..ledger.store import TABLES, checked_location, is_url
        from ..workflows.batches.journals.local import TABLES as JOURNAL_TABLES

        location = checked_location(text, f"a {what}", JOURNAL_TABLES if what == "journal" else TABLES)
        if not is_url(location) and not os.path.isfile(location):
            raise ValueError(f"no {what} at {text}: {advice}, or a postgresql:// URL")
        return location
    return check


def _moment(text: str) -> str:
    from ..ledger.export import moment

    moment(text)
    return text


def _file_to_write(text: str) -> str:
    """A file to write, local (not a folder, in a folder that exists) or at an fsspec URL."""
    from ..storage import file_to_write

    file_to_write(text, example="spend.csv")
    return text


def _sweep_file(text: str) -> str:
    """A sweep file that is there (its content is checked when it is read)."""
    path = Path(text)
    if path.is_dir():
        raise ValueError(f"{text} is a folder: give the sweep file in it (a .toml file)")
    if not path.exists():
        raise ValueError(f"{text}: no such sweep file")
    return text


def _price(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise ValueError(f"{text}: give a price of 0 or more")
    return value


def _days(text: str) -> float:
    value = _number(text)
    if not 1 <= value <= 3660:  # a rate needs a day of spending (forecasts.MIN_HISTORY)
        raise ValueError(f"{text}: give a number of days from 1 to 3660 (ten years)")
    return value


def _tag_name(text: str) -> str:
    from ..tags import checked_tags

    checked_tags({text: None})
    return text


def _zone(text: str) -> str:
    from ..ledger.periods import checked_zone

    checked_zone(text)
    return text


port = _typed("port", _port)
seconds = _typed("seconds", _seconds)
positive = _typed("positive", _positive)
days = _typed("days", _days)
tag_name = _typed("tag name", _tag_name)
time_zone = _typed("time zone", _zone)
price = _typed("price", _price)
folder_option = _typed("folder", _folder)
existing_ledger = _typed("ledger", _existing("ledger", "name the SQLite file a client records into"))
existing_journal = _typed("journal", _existing("journal", "name the SQLite file the sweep runs with"))
moment_option = _typed("moment", _moment)
file_to_write_option = _typed("file", _file_to_write)
sweep_file_option = _typed("sweep file", _sweep_file)
