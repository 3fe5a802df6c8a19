"""What every command shares: the parser's class, a subcommand, and typed option values."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.required:
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Every (sub)command shows its options' defaults (subparsers are made of the same class)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def _command(commands, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose one-line help is also its description."""
    return commands.add_parser(name, help=text, description=text)


def command(commands, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose one-line help is also its description."""
    return commands.add_parser(name, help=text, description=text)
