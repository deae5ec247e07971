"""A Ray cluster of its own on 127.0.0.1, for testing `run --ray` as a cluster is run: a head
and further nodes, each started with `ray start --block` in a private `--temp-dir`, on free
ports, with `--num-cpus 1` and a small object store, and token authentication as Ray 2.60
asks for it (`RAY_AUTH_MODE=token` and the same token on every node, and in the driver).

It is stopped by PID: each `ray start --block` is ended, then every process it started (seen
while the cluster ran) that is still alive. Never `ray stop`, which ends every Ray on the
machine, other users' too.

    with RayCluster(nodes=2) as cluster:
        subprocess.run([..., "--ray-address", cluster.address], env=cluster.env())
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HOST = "127.0.0.1"
OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's smallest store is 75 MiB
WORKER_PORTS = 12  # a node's workers each listen on one port of their range
START_TIMEOUT_S = 120.0


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def free_ports(count: int, taken: set[int]) -> list[int]:
    """`count` consecutive ports free on 127.0.0.1 (and not in `taken`), from a random base so
    that clusters started side by side rarely meet."""
    rng = random.SystemRandom()
    for _ in range(200):
        base = rng.randrange(20000, 60000 - count)
        ports = list(range(base, base + count))
        if not taken.intersection(ports) and all(_free(p) for p in ports):
            taken.update(ports)
            return ports
    raise RuntimeError("no free ports on 127.0.0.1")


def ray_env(token: str | None) -> dict[str, str]:
    """This process's environment for a Ray node or driver: token authentication with
    `token`, or none; no other RAY_ setting of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["RAY_AUTH_MODE"] = "token" if token is not None else "disabled"
    if token is not None:
        env["RAY_AUTH_TOKEN"] = token
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def ray_command() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else "ray"


class RayCluster:
    """`nodes` Ray nodes on this machine (the first the head) of `cpus` CPUs each,
    token-authenticated unless `auth` is False."""

    def __init__(self, nodes: int = 2, *, auth: bool = True, cpus: int = 1) -> None:
        self.nodes = nodes
        self.cpus = cpus
        self.token = secrets.token_hex(32)
        self.auth = auth
        self.address = ""  # HOST:PORT of the head, once started
        self.client_address = ""  # ray://HOST:PORT, the head's Ray Client server
        self._root = Path(tempfile.mkdtemp(prefix="ab-ray-"))  # short: Ray's sockets live there
        self._starters: list[subprocess.Popen[bytes]] = []
        self._seen: dict[int, float] = {}  # pid: create time, of every process of the cluster
        self._ports: set[int] = set()

    def env(self) -> dict[str, str]:
        """The environment a node or a driver of this cluster runs with."""
        return ray_env(self.token if self.auth else None)

    def starters(self) -> list[psutil.Process]:
        """Each node's `ray start`: every process of the cluster descends from one."""
        found = []
        for starter in self._starters:
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(starter.pid))
        return found

    def _node_args(self, index: int) -> list[str]:
        manager, objects, listen, grpc, runtime, metrics, client = free_ports(7, self._ports)
        workers = free_ports(WORKER_PORTS, self._ports)
        args = [
            "--block",
            f"--node-ip-address={HOST}",
            f"--temp-dir={self._root / f'node{index}'}",
            f"--num-cpus={self.cpus}",
            f"--object-store-memory={OBJECT_STORE_BYTES}",
            f"--node-manager-port={manager}",
            f"--object-manager-port={objects}",
            f"--dashboard-agent-listen-port={listen}",
            f"--dashboard-agent-grpc-port={grpc}",
            f"--runtime-env-agent-port={runtime}",
            f"--metrics-export-port={metrics}",
            f"--min-worker-port={workers[0]}",
            f"--max-worker-port={workers[-1]}",
            "--disable-usage-stats",
        ]
        if index == 0:
            (gcs,) = free_ports(1, self._ports)
            self.address = f"{HOST}:{gcs}"
            self.client_address = f"ray://{HOST}:{client}"
            args += ["--head", f"--port={gcs}", "--include-dashboard=false"]
            args += [f"--ray-client-server-port={client}"]
        else:
            args.append(f"--address={self.address}")
        return args

    def __enter__(self) -> RayCluster:
        try:
            for index in range(self.nodes):
                log = (self._root / f"node{index}.log").open("wb")
                command = [ray_command(), "start", *self._node_args(index)]
                self._starters.append(
                    subprocess.Popen(command, env=self.env(), stdout=log, stderr=log)
                )
                self._wait_for_nodes(index + 1)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self, index: int) -> str:
        return (self._root / f"node{index}.log").read_text(errors="replace")

    def processes(self) -> list[psutil.Process]:
        """Every process the cluster's nodes started that is alive now (remembered too)."""
        alive = []
        for starter in self._starters:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(starter.pid)
                alive += [root, *root.children(recursive=True)]
        for process in alive:
            with contextlib.suppress(psutil.Error):
                self._seen.setdefault(process.pid, process.create_time())
        return alive

    def _wait_for_nodes(self, count: int) -> None:
        """Until `count` raylets run under the starters (a node is up once its raylet is)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for index, starter in enumerate(self._starters):
                if starter.poll() is not None:
                    raise RuntimeError(f"ray start of node {index} exited:\n{self.log(index)}")
            raylets = [p for p in self.processes() if _name(p) == "raylet"]
            if len(raylets) >= count and self._connected(count):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Ray cluster did not start {count} nodes in {START_TIMEOUT_S}s")

    def _connected(self, count: int) -> bool:
        """Whether the head lists `count` live nodes (asked in a process of its own, so that
        this one never joins the cluster)."""
        script = (
            "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False, "
            "logging_level='ERROR'); print(sum(n['Alive'] for n in ray.nodes()))"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, self.address],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        return (
            done.returncode == 0
            and bool(lines)
            and lines[-1].isdigit()
            and (int(lines[-1]) >= count)
        )

    def stop(self) -> None:
        """End each node's `ray start`, then whatever they started that is left: by PID."""
        self.processes()  # the last look at what runs
        for starter in reversed(self._starters):
            if starter.poll() is None:
                starter.terminate()
        for starter in self._starters:
            with contextlib.suppress(subprocess.TimeoutExpired):
                starter.wait(20)
        left = []
        for pid, created in self._seen.items():
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                if process.create_time() == created:
                    left.append(process)
        for process in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(left, timeout=20)
        shutil.rmtree(self._root, ignore_errors=True)


def _name(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        return str(process.name())
    return ""
