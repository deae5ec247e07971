"""Ending the local Ray a `run --ray` driver started, however the driver ends.

Ray ends the driver's direct children when it dies, but the agents the raylet starts outlive
a driver killed with SIGKILL. So the driver starts a reaper: a small process given the PIDs Ray
started, which notes their descendants as they appear and, once its stdin closes, ends every
one still running: by PID, each checked by its start time, never by name.

    python -m attunebench.on_ray.reaper PID [PID ...]   # stdin: the driver's pipe
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence

import psutil

LOOK_EVERY_S = 0.2  # how often the reaper notes new descendants
GRACE_S = 3.0  # how long processes get to end on their own once the driver has gone


class Reaper:
    """The driver's handle on its reaper."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    @classmethod
    def watch(cls, pids: Iterable[int]) -> Reaper:
        command = [sys.executable, "-m", "attunebench.on_ray.reaper", *map(str, pids)]
        return cls(subprocess.Popen(command, stdin=subprocess.PIPE))

    def finish(self, timeout_s: float = 30.0) -> None:
        """(The driver, its Ray shut down) Let the reaper end what is left, and wait for it."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout_s)


def _note(seen: dict[int, psutil.Process], roots: Sequence[psutil.Process]) -> None:
    for root in roots:
        with contextlib.suppress(psutil.Error):
            for process in [root, *root.children(recursive=True)]:
                seen.setdefault(process.pid, process)


def _driver_gone(timeout_s: float) -> bool:
    """Whether stdin reached its end (the driver's end of the pipe closed) within `timeout_s`."""
    ready, _, _ = select.select([sys.stdin], [], [], timeout_s)
    return bool(ready) and os.read(sys.stdin.fileno(), 4096) == b""


def reap(processes: Iterable[psutil.Process], grace_s: float = GRACE_S) -> list[int]:
    """End each process still running (psutil checks it is the same process, by its start
    time): a SIGTERM, then SIGKILL after `grace_s`. The PIDs it had to end."""
    running = [p for p in processes if p.is_running()]
    for process in running:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(running, timeout=grace_s)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=grace_s)
    return [p.pid for p in running]


def main(argv: Sequence[str]) -> None:
    # A Ctrl-C or a SIGTERM to the driver's process group is the driver's to handle: the
    # reaper ends with it, once its pipe closes, and ends what it leaves.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    roots = []
    for pid in argv:
        with contextlib.suppress(psutil.Error):
            roots.append(psutil.Process(int(pid)))
    seen: dict[int, psutil.Process] = {}
    while True:
        _note(seen, list(seen.values()) or roots)
        if _driver_gone(LOOK_EVERY_S):
            break
    time.sleep(0.2)  # a driver that shut its Ray down has little left to end
    _note(seen, list(seen.values()))
    reap(seen.values())


if __name__ == "__main__":
    main(sys.argv[1:])
