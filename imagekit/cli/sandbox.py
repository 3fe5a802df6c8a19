"""``imagekit sandbox init|serve|token|user add``: the local sandbox on its own.

These commands are a contract other scripts rely on: ``init`` and ``user add`` print the API key as
the last line of stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..ownership import undone_on_failure
from .parsing import command, folder_option, port, seconds

if TYPE_CHECKING:
    from ..sandbox.service import Sandbox


def add_sandbox_commands(commands: Any) -> None:
    """The ``sandbox`` command group on the top-level parser's subcommands."""
    from ..sandbox.operations import DEFAULT_RENDER_CACHE_MB

    sandbox = command(commands, "sandbox", "the local sandbox service").add_subparsers(
        dest="sandbox_command", required=True, metavar="COMMAND")
    init = command(sandbox, "init", "create (or upgrade) the database, plans and demo user; print its API key")
    init.add_argument("--data", required=True, type=folder_option, help="data directory")
    _db_option(init)
    init.set_defaults(run=cmd_init)

    user = command(sandbox, "user", "manage users").add_subparsers(dest="user_command", required=True, metavar="VERB")
    add = command(user, "add", "add a user and print its API key")
    add.add_argument("--data", required=True, type=folder_option, help="data directory")
    _db_option(add)
    add.add_argument("--email", required=True, help="the new user's e-mail address")
    add.add_argument("--plan", default="standard", help="free, standard, pro or enterprise")
    add.set_defaults(run=cmd_user_add)

    serve = command(sandbox, "serve", "serve the API")
    serve.add_argument("--data", required=True, type=folder_option, help="data directory (initialised when empty; a --db database "
                                                      "is initialised by init)")
    _db_option(serve)
    serve.add_argument("--workers", type=_workers, default=1,
                       help="worker processes behind the port (above 1 needs --db)")
    serve.add_argument("--worker-header", action="store_true",
                       help="name the serving worker process in an X-Sandbox-Worker header (with --workers)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=port, default=8800, help="port to listen on (0: any free port, printed)")
    serve.add_argument("--latency", type=seconds, default=0.0,
                       help="seconds every generation and edit takes at least")
    serve.add_argument("--render-cache-mb", type=_megabytes, default=DEFAULT_RENDER_CACHE_MB, metavar="N",
                       help="most MB of rendered variants (scaled, watermarked, re-encoded) kept in images/cache; "
                            "the least recently used go first (0: keep none)")
    serve.add_argument("--base-size", type=_base_size, default=1024,
                       help="long side in pixels of generated images (smaller draws faster)")
    serve.add_argument("--spec-exact", "--spec-metadata", dest="spec_exact", action="store_true",
                       help="answer exactly as the interface shows: no extension headers or fields, "
                            "seed ignored (--spec-metadata is an older name)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                       help="server log level (debug also logs each request)")
    serve.add_argument("--no-controls", action="store_true",
                       help="serve no /sandbox controls (clock, faults, users, keys, credits)")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="a host name clients use to reach this server (repeatable); IP addresses and "
                            "localhost always pass, other names in the Host header are refused")
    serve.set_defaults(run=cmd_serve)

    token = command(sandbox, "token", "print the admin token the /sandbox controls need beyond loopback")
    token.add_argument("--data", required=True, type=folder_option, help="data directory")
    _db_option(token)
    token.set_defaults(run=cmd_token)


@contextmanager
def _initialised(data: str, db: str | None) -> Iterator[Sandbox]:
    """The sandbox of an initialised folder, closed afterwards; nothing is left of a folder that
    holds none."""
    from ..sandbox import operations

    with undone_on_failure(data), operations.initialised(data, db) as sandbox:
        yield sandbox


def cmd_init(args: argparse.Namespace) -> int:
    from ..sandbox import operations

    with undone_on_failure(args.data):
        done = operations.init(args.data, args.db)
    print(f"{'Created' if done.fresh else 'Reused'} sandbox data in {args.data}; API key of {done.email}:")
    print(done.api_key)
    return 0


def cmd_user_add(args: argparse.Namespace) -> int:
    from ..sandbox import operations

    with _initialised(args.data, args.db) as sandbox:
        try:
            user_id, key = operations.add_user(sandbox, args.email, args.plan)
        except operations.SandboxError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
    print(f"Added user {user_id} <{args.email}> on plan {args.plan}; API key:")
    print(key)
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from ..sandbox import operations

    with _initialised(args.data, args.db) as sandbox:
        print(operations.admin_token(sandbox))
    return 0


def _allowed_hosts(host: str, extra: list[str]) -> tuple[str, ...]:
    """Names a Host header may give: those asked for, plus this machine's names when listening on all."""
    import socket

    names = list(extra)
    if host in ("0.0.0.0", "::"):
        names += [socket.gethostname(), socket.getfqdn()]
    elif not host.replace(".", "").isdigit() and ":" not in host:
        names.append(host)
    return tuple(dict.fromkeys(names))


def cmd_serve(args: argparse.Namespace) -> int:
    from ..sandbox import operations

    exposed = not operations.is_loopback(args.host)
    with undone_on_failure(args.data):  # a serve that cannot start leaves no half-made folder
        served = operations.serving(
            args.data, args.db, args.host, args.port, args.workers, latency=args.latency, base_size=args.base_size,
            spec_exact=args.spec_exact, controls=not args.no_controls, controls_need_token=exposed,
            allowed_hosts=_allowed_hosts(args.host, args.allowed_host), worker_header=args.worker_header,
            render_cache_mb=args.render_cache_mb)
    if served.seeded:
        print(f"Initialised {args.data}; demo API key: {served.demo_key}", flush=True)
    shortage = served.disk_warning()
    if shortage:
        print(f"warning: {shortage}", file=sys.stderr, flush=True)
    mode = ", spec-exact" if args.spec_exact else ""
    workers = f", {args.workers} workers" if args.workers > 1 else ""
    print(f"Serving the imagekit sandbox on http://{args.host}:{served.port} (latency {args.latency}s{mode}{workers})",
          flush=True)
    if exposed and not args.no_controls:
        print(f"The /sandbox controls need the header X-Sandbox-Token: `imagekit sandbox token --data {args.data}`",
              flush=True)
    served.run(args.log_level)
    return 0


def _db_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--db", metavar="URL", type=_database_url,
                         help="database URL, e.g. postgresql://USER:PW@HOST:PORT/DB (image files stay in "
                              "--data); default: SQLite in the data directory")


def _workers(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError("workers must be 1..64")
    return value


def _megabytes(text: str) -> float:
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("a size in MB must be 0 or more")
    return value


def _base_size(text: str) -> int:
    """At least 256 so every ratio keeps 3-digit sides (the interface's resolution pattern)."""
    value = int(text)
    if not 256 <= value <= 4096:
        raise argparse.ArgumentTypeError("base size must be 256..4096 pixels")
    return value


def _database_url(text: str) -> str:
    """A database SQLAlchemy can open for the sandbox: PostgreSQL (or an explicit SQLite file)."""
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme.split("+")[0] not in ("postgresql", "sqlite"):
        raise argparse.ArgumentTypeError(f"{text.split('@')[-1]!r} is not a database URL: "
                                         "postgresql://USER:PW@HOST:PORT/DB")
    return text
