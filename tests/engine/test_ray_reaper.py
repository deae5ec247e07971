"""The reaper of a local Ray: a driver killed with SIGKILL leaves none of the processes it gave
the reaper running (their children, orphaned, included), and nothing else is touched."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.timeout(60)

SLEEPER = "import time; time.sleep(600)"
# A "Ray" child that starts a child of its own, as the raylet starts its agents.
PARENT = (
    "import subprocess, sys, time; "
    f"subprocess.Popen([sys.executable, '-c', {SLEEPER!r}]); time.sleep(600)"
)
DRIVER = f"""
import subprocess, sys, time
from attunebench.on_ray.reaper import Reaper
ray = subprocess.Popen([sys.executable, "-c", {PARENT!r}])
bystander = subprocess.Popen([sys.executable, "-c", {SLEEPER!r}])
time.sleep(1.0)
Reaper.watch([ray.pid])
print(ray.pid, bystander.pid, flush=True)
time.sleep(600)
"""


def test_a_killed_driver_leaves_no_process_it_gave_its_reaper() -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    started: list[psutil.Process] = []  # ended here after the test, by PID, whatever happens
    try:
        assert driver.stdout is not None
        ray_pid, bystander_pid = map(int, driver.stdout.readline().split())
        ray, bystander = psutil.Process(ray_pid), psutil.Process(bystander_pid)
        started += [ray, bystander]
        while not ray.children():
            time.sleep(0.05)
        (agent,) = ray.children()
        started.append(agent)
        time.sleep(0.5)  # the reaper has noted the agent
        driver.kill()
        driver.wait(10)
        gone, alive = psutil.wait_procs([ray, agent], timeout=20)
        assert not alive and len(gone) == 2
        assert bystander.is_running()  # not the reaper's to end
    finally:
        driver.kill()
        driver.wait(10)
        for process in started:
            if process.is_running():
                process.kill()
