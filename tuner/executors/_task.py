"""What runs on a worker, for any executor whose jobs run away from the driver (Ray's today; a Slurm
or Kubernetes one would reuse it): a :class:`TaskSpec` pickled to the node, :func:`measure_task`
running it there (cores leased and pinned, the study's backend rebuilt from its typed setup with
what the node has, e.g. its own db_bench, a fresh DB in the node's work dir), and :func:`outcome_of`
turning what it returns into the engine's Outcome on the driver. Workers never touch the study
storage or MLflow, so a cluster needs no shared filesystem.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from objectives import workdir
from objectives.workloads import Flag, Workload
from search_spaces import host_ram_bytes
from tuner.backends import BACKENDS, STOPPED, Backend, EnvironmentFault, RunFailed, Setup
from tuner.executors.base import Job, Outcome, keep_options
from tuner.model import ExecutionConfig

LEASE_WAIT = 600.0  # seconds a task waits for free cores (the scheduler's CPU accounting should make it instant)


class CoreLease:
    """``count`` distinct cores of this machine, held through lock files until released."""

    def __init__(self, count: int, lock_dir: Path | None = None):
        self.count = count
        self.lock_dir = lock_dir or Path(tempfile.gettempdir()) / f".rocksdb-tuner-cores-{os.getuid()}"
        self.held: list[tuple[int, int]] = []  # (core, fd)

    def acquire(self, deadline: float, stop: threading.Event | None = None) -> list[int]:
        """The cores leased, waiting for free ones until ``deadline`` (RunFailed then, or once ``stop`` is set)."""
        self.lock_dir.mkdir(mode=0o700, exist_ok=True)
        allowed = sorted(os.sched_getaffinity(0))
        if self.count > len(allowed):
            raise RunFailed(f"--cpus-per-trial {self.count}: node {socket.gethostname()} has {len(allowed)} cores")
        while True:
            for core in allowed:
                if len(self.held) == self.count:
                    break
                fd = os.open(self.lock_dir / f"core-{core}.lock", os.O_CREAT | os.O_RDWR, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self.held.append((core, fd))
                except BlockingIOError:
                    os.close(fd)
            if len(self.held) == self.count:
                return [c for c, _ in self.held]
            self.release()
            if stop is not None and stop.is_set():
                raise RunFailed(STOPPED)
            if time.monotonic() > deadline:
                raise RunFailed(f"no {self.count} free cores on {socket.gethostname()}: other trials hold them "
                                f"(lock files in {self.lock_dir})")
            time.sleep(0.2)

    def release(self) -> None:
        for _, fd in self.held:
            os.close(fd)  # closing drops the flock
        self.held = []


@dataclass
class TaskSpec:
    """Everything a worker needs to measure one configuration (pickled to the node): the job, and the
    study's backend as its name and setup (typed and picklable: the worker rebuilds the backend from
    them, with what its node has, :meth:`Backend.on_node`)."""

    backend: str  # a name of tuner.backends.BACKENDS
    setup: Setup
    flags: dict[str, Flag]
    repeats: int
    workload: Workload | None  # the job's, else the study's
    cpus: int
    execution: ExecutionConfig  # --db-bench, --work-dir and --rocksdb-version, which a node resolves on its own

    @classmethod
    def of(cls, job: Job, backend: Backend, cpus: int, execution: ExecutionConfig) -> TaskSpec:
        """A job as a task, for ``backend`` (the study's, prepared on the driver)."""
        return cls(backend.name, backend.setup, job.flags, job.repeats, job.workload or backend.setup.workload, cpus,
                   execution)


def node_facts(backend: str, execution: ExecutionConfig, where: dict[str, Any] | None = None) -> dict[str, Any]:
    """This node: ``where`` (the executor's name for it, e.g. Ray's node id and IP), host name,
    cores, memory and what it has for ``backend`` (its db_bench, or why there is none)."""
    return {**_host(where), **BACKENDS[backend].node_facts(execution)}


def _host(where: dict[str, Any] | None) -> dict[str, Any]:
    return {"host": socket.gethostname(), **(where or {}), "cores": len(os.sched_getaffinity(0)), "ram": host_ram_bytes()}


def measure_task(spec: TaskSpec, where: dict[str, Any] | None = None,
                 stop: threading.Event | None = None) -> dict[str, Any]:
    """Runs on the worker: lease cores, pin, rebuild the study's backend for this node and measure with
    it, return the measurement (or the reason it failed), the logs' bytes and the node's facts. Once
    ``stop`` is set (the driver stops the study), the run is killed, its DB removed and the task returns
    a failure."""
    started = time.monotonic()
    backend_class = BACKENDS[spec.backend]
    here = backend_class.on_node(spec.setup, spec.execution)
    node = {**_host(where), **here.facts}
    if here.setup is None:
        return {"ok": False, "reason": f"node {node['host']}: {here.error}", "node": node, "logs": {}}
    lease = CoreLease(spec.cpus)
    before = os.sched_getaffinity(0)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-logs-") as tmp:
        logs = Path(tmp)
        try:
            node["cores_used"] = lease.acquire(time.monotonic() + LEASE_WAIT, stop)
            os.sched_setaffinity(0, node["cores_used"])  # the run (db_bench, the command) inherits it
            node["measured_from"] = time.time()
            work_dir = workdir.prepare(spec.execution.work_dir)
            workdir.sweep_stale(work_dir)  # what gone tuners on this node left
            # the node's work dir; the driver's preloaded DBs and --out are the driver's to remove and write
            backend = backend_class(replace(here.setup, work_dir=work_dir, preloaded=()))
            try:
                backend.prepare(stop)
                result: dict[str, Any] = {"ok": True, "measurement": backend.measure(
                    spec.flags, logs, spec.repeats, None, spec.workload)}
            finally:
                backend.teardown()
        except RunFailed as exc:
            result = {"ok": False, "reason": exc.reason}
        except EnvironmentFault as exc:
            result = {"ok": False, "reason": f"node {node['host']}: {exc.reason}", "fault": exc.fault}
        except workdir.WorkDirError as exc:  # e.g. the node's --work-dir vanished
            result = {"ok": False, "reason": f"node {node['host']}: {exc}", "fault": "the work directory is unusable"}
        finally:
            node["measured_to"] = time.time()
            os.sched_setaffinity(0, before)
            lease.release()
        result["logs"] = {str(p.relative_to(logs)): p.read_bytes() for p in sorted(logs.rglob("*")) if p.is_file()}
    result["node"] = node
    result["seconds"] = time.monotonic() - started
    return result


def outcome_of(job: Job, result: dict[str, Any], driver_db_bench: str) -> Outcome:
    """On the driver: what a task returned as the job's Outcome, its logs (and OPTIONS) written under
    the job's log directory."""
    for name, data in result.get("logs", {}).items():
        path = job.log_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    node = result["node"]
    theirs = node.get("db_bench") or {}
    outcome = Outcome(job, node={k: node.get(k) for k in ("node_id", "host", "ip", "cores_used", "measured_from",
                                                           "measured_to")},
                      db_bench={k: theirs.get(k) for k in ("path", "version", "assertions")}
                      if theirs and theirs.get("path") != driver_db_bench else None)
    if result["ok"]:
        outcome.measurement = result["measurement"]
        keep_options(job, outcome.measurement)
    else:
        outcome.reason, outcome.fault = result["reason"], result.get("fault")
    return outcome
