"""A run stopped from outside ends as a run stopped with Ctrl-C does.

Slurm, Kubernetes, `timeout` and `kill` send SIGTERM, whose default ends the process with no
`finally` run: the ledger and run.json left stale, every llama-server the run started left
running. Within `stop_signals()`, SIGTERM goes to whatever handles SIGINT. A `local/` server
still loading its model is stopped at once (`llamacpp_server.STOPPING`): its start blocks the
event loop, and a scheduler's SIGKILL may come first. The exit code is 128 plus the signal's
number, as a shell reports it, so a scheduler can tell a stopped run from a failed one.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from attunebench.models.llamacpp_server import STOPPING as SERVERS_STOPPING


@dataclass
class Stop:
    """The signal that stopped the process: SIGINT unless SIGTERM came."""

    signal: int = signal.SIGINT

    @property
    def exit_code(self) -> int:
        return 128 + self.signal

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name


@contextmanager
def stop_signals() -> Iterator[Stop]:
    """SIGTERM handled as SIGINT while the block runs (in the main thread: elsewhere signals
    cannot be handled, and nothing changes); the Stop says which came."""
    stop = Stop()

    def terminated(signum: int, frame: FrameType | None) -> None:
        stop.signal = signum
        SERVERS_STOPPING.set()
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored, as in a job started in the background: stop all the same
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous)
        SERVERS_STOPPING.clear()


def main_stoppable(main: Callable[[], None]) -> None:
    """A script's `main`, stopped by Ctrl-C or SIGTERM as a run is: each run keeps what it
    recorded, and the exit code names the signal."""
    with stop_signals() as stop:
        try:
            main()
        except KeyboardInterrupt:
            sys.stderr.write(f"{stop.name}: stopped; each run keeps what it recorded\n")
            sys.exit(stop.exit_code)
