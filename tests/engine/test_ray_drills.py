"""`run --ray` as a cluster runs it, and its three fault drills.

One cluster for the module, as docs/scale.md sets one up: a head and a second node on
127.0.0.1, each `ray start`ed with its own temp dir, free ports, one CPU and a small object
store, with token authentication (RAY_AUTH_MODE=token and one token on both nodes and in the
driver); stopped by PID. `run --ray --ray-address` against it equals a single-process run.

The drills (Ctrl-C to the driver, a shard's worker killed, the driver killed: the last on the
cluster and on a local Ray the driver starts, `--ray-address local`) each end with calls made
(the fault server's count, a shard's call after its driver died included) = items planned +
the calls lost at the fault (at most those held on the wire then, one per shard and
concurrency slot), the ledger equal to the calls made, and no process of the run left
running.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from attunebench.data.sample import sample_path
from testkit.ray_cluster import RayCluster, ray_env
from testkit.ray_drills import (
    CONCURRENCY,
    LATENCY_S,
    SHARDS,
    DrillOutcome,
    RayDrill,
    cli_command,
    interrupt,
    kill,
    run_drill,
    shard_workers,
    still_running,
)
from testkit.records import diff_records, run_records
from testkit.servers.fault_server import FaultPlan, FaultServer

pytestmark = pytest.mark.timeout(900)
TASK = "emotion"  # one call an item: 41 items of the sample's first 20 conversations
LEFT_WAIT_S = 30.0  # how long the run's processes get to end once its driver has


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    with RayCluster(nodes=2) as started:
        yield started


class Watch:
    """Every process that appears under `roots` while the watch runs (noted every 0.1 s),
    besides those already there: the processes of the run."""

    def __init__(self, roots: list[psutil.Process]) -> None:
        self._roots = roots
        self._before = {p.pid for root in roots for p in _tree(root)}
        self.seen: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._look, daemon=True)

    def add(self, root: psutil.Process) -> None:
        self._roots.append(root)

    def _look(self) -> None:
        while not self._stop.wait(0.1):
            for root in list(self._roots):
                for process in _tree(root):
                    if process.pid not in self._before:
                        self.seen.setdefault(process.pid, process)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _check(outcome: DrillOutcome, drill: RayDrill) -> None:
    """The drill's arithmetic: nothing paid twice but the calls lost at the fault."""
    said = f"{outcome}\n{drill.tail()}"
    print(outcome)  # the drill's counts, for the record (pytest -s)
    assert outcome.sessions[-1] == 0 and outcome.planned == 41, said
    assert outcome.ledger_total == outcome.received, said  # the ledger counts every call made
    assert outcome.received == outcome.planned + outcome.ledger_lost, said
    assert outcome.ledger_lost <= outcome.in_flight <= SHARDS * CONCURRENCY, said
    if len(outcome.sessions) > 1:  # every answer that came back was in the run's cache: the
        # resumed command made only the calls that had not come back
        resumed = outcome.received - outcome.received_at_fault
        assert resumed == outcome.planned - outcome.kept_at_fault, said
    assert outcome.left == [], said
    # The models endpoint read and the pre-flight sent once a command, by its driver alone.
    assert outcome.preflights == outcome.model_lists == len(outcome.sessions), said


def test_a_two_node_token_cluster_runs_a_ray_run(cluster: RayCluster, tmp_path: Path) -> None:
    common = ["run", "--data", str(sample_path()), "--model", "mock/default", "--task", "emotion"]
    common += ["--limit", "30", "--no-progress", "--no-cache"]
    one = subprocess.run(
        [*cli_command(), *common, "--out", str(tmp_path / "one")], capture_output=True, check=False
    )
    assert one.returncode == 0, one.stderr
    ray_run = [*cli_command(), *common, "--out", str(tmp_path / "ray"), "--ray"]
    ray_run += ["--ray-shards", "2", "--ray-address", cluster.address]
    done = subprocess.run(ray_run, env=cluster.env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    single, merged = run_records(tmp_path / "one"), run_records(tmp_path / "ray")
    assert single and diff_records(single, merged) == []
    client = [*cli_command(), *common, "--out", str(tmp_path / "client"), "--ray"]
    client += ["--ray-shards", "2", "--ray-address", cluster.client_address]  # Ray Client
    done = subprocess.run(client, env=cluster.env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert diff_records(single, run_records(tmp_path / "client")) == []


def test_ray_drill_ctrl_c_to_the_driver(cluster: RayCluster, tmp_path: Path) -> None:
    with FaultServer(FaultPlan(fail_rate=0.0), latency_s=LATENCY_S) as server:
        drill = RayDrill(sample_path(), TASK, tmp_path, server, cluster.address, cluster.env())
        with Watch(cluster.starters()) as watch:
            outcome = run_drill(drill, interrupt)
        outcome.left = still_running(watch.seen, LEFT_WAIT_S)
    assert outcome.sessions[0] == 130  # interrupted, resumable
    assert "interrupted; what was recorded is kept" in drill.tail()
    _check(outcome, drill)


def test_ray_drill_a_worker_killed(cluster: RayCluster, tmp_path: Path) -> None:
    killed: list[int] = []

    def kill_a_worker(driver: subprocess.Popen[bytes]) -> None:
        workers = shard_workers(cluster.starters())
        assert workers, "no shard's worker found"
        workers[0].send_signal(signal.SIGKILL)
        killed.append(workers[0].pid)

    with FaultServer(FaultPlan(fail_rate=0.0), latency_s=LATENCY_S) as server:
        drill = RayDrill(sample_path(), TASK, tmp_path, server, cluster.address, cluster.env())
        with Watch(cluster.starters()) as watch:
            outcome = run_drill(drill, kill_a_worker)
        outcome.left = still_running(watch.seen, LEFT_WAIT_S)
    assert killed and outcome.sessions == [0]  # the driver tried the shard again itself
    _check(outcome, drill)


def test_ray_drill_the_driver_killed_on_a_cluster(cluster: RayCluster, tmp_path: Path) -> None:
    with FaultServer(FaultPlan(fail_rate=0.0), latency_s=LATENCY_S) as server:
        drill = RayDrill(sample_path(), TASK, tmp_path, server, cluster.address, cluster.env())
        with Watch(cluster.starters()) as watch:
            outcome = run_drill(drill, kill)
        outcome.left = still_running(watch.seen, LEFT_WAIT_S)  # Ray ends the dead job's
    assert outcome.sessions[0] == -signal.SIGKILL and len(outcome.sessions) == 2
    _check(outcome, drill)


def test_ray_drill_the_driver_killed(tmp_path: Path) -> None:
    env = ray_env(None)
    with FaultServer(FaultPlan(fail_rate=0.0), latency_s=LATENCY_S) as server:
        drill = RayDrill(sample_path(), TASK, tmp_path, server, "local", env)
        seen: dict[int, psutil.Process] = {}

        def kill_the_driver(driver: subprocess.Popen[bytes]) -> None:
            seen.update({p.pid: p for p in _tree(psutil.Process(driver.pid))[1:]})
            kill(driver)

        outcome = run_drill(drill, kill_the_driver)
        time.sleep(1.0)
        outcome.left = still_running(seen, LEFT_WAIT_S)
    assert outcome.sessions[0] == -signal.SIGKILL and len(outcome.sessions) == 2
    _check(outcome, drill)
