"""Command line: ``imagekit sandbox ...``, ``imagekit demo``, ``imagekit usage``, ``imagekit sweep ...``
and ``imagekit ledger ...``.

One module per command group (``sandbox``, ``demo``, ``usage``, ``sweep``, ``ledger``), each adding
its commands to the one parser built here; ``main`` runs the command asked for, and ``answers``
turns whatever stops it into one line and an exit code.
"""

from __future__ import annotations

from ..config import VERSION
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
    parser.add_argument("--version", action="version", version=f"imagekit {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_sandbox_commands(commands)
    add_demo_command(commands)
    add_usage_command(commands)
    add_sweep_commands(commands)
    add_ledger_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; every mistake ends in one line and a non-zero exit code (see ``answers``)."""
    from .answers import PIPE_CLOSED, answer, guarded_pipes, pipe_closed

    with guarded_pipes():
        code = answer(build_parser().parse_args(argv))
    return PIPE_CLOSED if pipe_closed() else code
