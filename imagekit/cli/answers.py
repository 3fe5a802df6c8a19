"""How a command ends: the one place an exception becomes a one-line answer and an exit code, and
a closed pipe ends the command quietly.

- a refusal or a setup mistake (``ImagekitError``, a data folder the sandbox cannot use, a port in
  use): ``error: <what to do>``, exit 1 (2 for a sandbox folder or port: scripts rely on it);
- anything else: ``error: <Type>: <message>``, exit 1; ``IMAGEKIT_DEBUG=1`` shows the traceback;
- Ctrl+C: ``interrupted``, exit 130;
- SIGTERM (``kill``, ``timeout``, a container or a job scheduler stopping it): the command stops as
  Ctrl+C stops it (its journal and ledger written, its leases let go), ``terminated``, exit 143;
- stdout or stderr closed by the reader (``imagekit demo | head -2``): the command stops as Ctrl+C
  stops it (its folder removed, its leases let go), prints nothing more and exits 141, as a Unix
  tool killed by SIGPIPE does.
"""

from __future__ import annotations

import _thread
import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["answer", "guarded_pipes", "PIPE_CLOSED"]

PIPE_CLOSED = 141
"""128 + SIGPIPE: what a shell reports for a Unix tool whose reader went away."""
INTERRUPTED = 130
"""128 + SIGINT."""
TERMINATED = 143
"""128 + SIGTERM."""


class _Guarded:
    """A text stream whose reader may go away: the first write that finds the pipe closed sends the
    rest to /dev/null and interrupts the main thread (from any thread: tqdm writes from the batch's)."""

    closed_pipe = False
    """Whether a reader went away (the command then ends with PIPE_CLOSED)."""
    quiet = False
    """Whether the command is over (a pipe found closed then interrupts nothing)."""
    terminated = False
    """Whether SIGTERM stopped the command (it then ends with TERMINATED)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        try:  # later writes, and Python's own flush at exit, go nowhere instead of failing again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
        first, _Guarded.closed_pipe = not _Guarded.closed_pipe, True  # set before the signal: it may land at once
        if first and not _Guarded.quiet:
            if hasattr(signal, "pthread_kill"):  # a real signal: it wakes a main thread waiting on a lock
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
            else:
                _thread.interrupt_main()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def guarded_pipes() -> Iterator[None]:
    """sys.stdout and sys.stderr behind ``_Guarded`` for the block (those on a file descriptor: a
    test's StringIO has no pipe to lose); what they hold is flushed before the block ends, so that
    Python's own flush at exit never meets a closed pipe."""
    saved = sys.stdout, sys.stderr
    _Guarded.closed_pipe = False
    sys.stdout, sys.stderr = (_Guarded(stream) if _has_fd(stream) else stream for stream in saved)
    handler = signal.getsignal(signal.SIGINT) if _main_thread() else None
    ignoring = handler is signal.SIG_IGN
    if ignoring:  # started deaf to Ctrl+C (nohup, a script's background job): still hear our own interrupt
        signal.signal(signal.SIGINT, _only_a_closed_pipe)
    _Guarded.terminated = False
    on_term = signal.getsignal(signal.SIGTERM) if _main_thread() else None
    if on_term is signal.SIG_DFL:  # (a caller's own handler, or SIGTERM ignored, is left as it is)
        signal.signal(signal.SIGTERM, _stop_as_ctrl_c)
    try:
        yield
    finally:
        _Guarded.quiet = True  # the command is over: nothing left to interrupt
        if on_term is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if (_Guarded.closed_pipe or ignoring) and handler is not None:
            # an interrupt of ours still on its way lands on nothing, then the caller's handler is back:
            # left ignoring, a process that ran a command (a test, a notebook) never heard Ctrl+C again,
            # and every program it started after inherited the deafness
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _let_signals_land()
            signal.signal(signal.SIGINT, handler)
        sys.stdout, sys.stderr = saved
        _Guarded.quiet = False


def _let_signals_land() -> None:
    """A Python call: the interpreter runs the handlers of signals already delivered as it makes one."""


def _only_a_closed_pipe(signum: int, frame: Any) -> None:
    """SIGINT's handler where the command was started ignoring it: the Ctrl+C of a reader gone
    interrupts (it is ours), any other SIGINT is ignored as the caller asked."""
    if _Guarded.closed_pipe and not _Guarded.quiet:
        raise KeyboardInterrupt


def _stop_as_ctrl_c(signum: int, frame: Any) -> None:
    """SIGTERM's handler while a command runs: the command stops by Ctrl+C's path, where a run
    writes its journal and ledger and lets its leases go; the default would end the process at once."""
    if not _Guarded.quiet:
        _Guarded.terminated = True
        raise KeyboardInterrupt


def _main_thread() -> bool:
    """Whether this is the main thread (the only one that may set a signal's handler)."""
    return threading.current_thread() is threading.main_thread()


def _has_fd(stream: TextIO | None) -> bool:
    try:
        return stream is not None and not isinstance(stream, _Guarded) and stream.fileno() >= 0
    except (OSError, ValueError):
        return False


def answer(args: argparse.Namespace) -> int:
    """Run the command ``args`` names; its exit code, and every failure as one line on stderr."""
    from ..errors import ImagekitError

    debug = os.environ.get("IMAGEKIT_DEBUG", "").strip() not in ("", "0")
    try:
        return args.run(args)
    except KeyboardInterrupt:
        if _Guarded.closed_pipe:
            return PIPE_CLOSED
        if debug:
            raise
        print("terminated" if _Guarded.terminated else "interrupted", file=sys.stderr)
        return TERMINATED if _Guarded.terminated else INTERRUPTED
    except BrokenPipeError:
        _Guarded.closed_pipe = True
        return PIPE_CLOSED
    except Exception as exc:  # noqa: BLE001  (this is the one place that turns them into answers)
        if debug:
            raise
        from ..extras import missing_extra

        exc = missing_extra(exc) or exc
        if isinstance(exc, ImagekitError):  # written to be read; its advice joins it on the one line
            said = " ".join(line.strip() for line in str(exc).strip().splitlines())
            print(f"error: {said or type(exc).__name__}", file=sys.stderr)
            return 1
        if isinstance(exc, (OSError, *_sandbox_refusals())):
            print(f"error: {_os_error(exc) if isinstance(exc, OSError) else _first_line(exc)}", file=sys.stderr)
            return 2
        print(f"error: {type(exc).__name__}: {_first_line(exc)} (IMAGEKIT_DEBUG=1 shows where)", file=sys.stderr)
        return 1


def _sandbox_refusals() -> tuple[type[Exception], ...]:
    """A data folder the sandbox cannot use (when the sandbox is installed at all)."""
    try:
        from ..sandbox.operations import DataDirError
    except ModuleNotFoundError:
        return ()
    return (DataDirError,)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _os_error(exc: OSError) -> str:
    if exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return _first_line(exc)


def pipe_closed() -> bool:
    """Whether a reader of this process's output went away."""
    return _Guarded.closed_pipe
