"""Command line: ``imagekit sandbox ...``, ``imagekit demo``, ``imagekit usage``, ``imagekit sweep ...``
and ``imagekit ledger ...``.

One module per command group (``sandbox``, ``demo``, ``usage``, ``sweep``, ``ledger``), each adding its commands
to the one parser built here; ``main`` runs the command asked for.
"""

from __future__ import annotations

import sys

from .demo import add_demo_command
from .ledger import add_ledger_commands
from .parsing import Parser
from .sandbox import add_sandbox_commands
from .sweep import add_sweep_commands
from .usage import add_usage_command

__all__ = ["build_parser", "main"]


def build_parser() -> Parser:
    parser = Parser(prog="imagekit", description="imagekit: the local sandbox, the demo job and the credit "
                                                 "usage report. Run a command with --help for its options.")
    commands = parser.add_subparsers(dest="command", required=True)
    add_sandbox_commands(commands)
    add_demo_command(commands)
    add_usage_command(commands)
    add_sweep_commands(commands)
    add_ledger_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from ..errors import ImagekitError

    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ImagekitError as exc:  # a setup mistake or a refusal: what to do, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
