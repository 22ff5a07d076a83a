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
from objectives.contract import Task
from search_spaces import host_ram_bytes
from tuner.backends import STOPPED, Backend, Config, EnvironmentFault, RunFailed, Setup
from tuner.executors.base import Job, Outcome, keep_options
from tuner.model import ExecutionConfig
from tuner.summary import Build
from tuner.trials import TrialNode

LOGS_PREFIX = "rocksdb-tuner-logs-"  # a run's log directory in the node's work dir (workdir.sweep_stale's glob)
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
    study's backend as its class and setup (typed and picklable: the worker rebuilds the backend from
    them, with what its node has, :meth:`Backend.on_node`)."""

    backend: type[Backend]  # the study's backend class (pickled by reference: the node imports it)
    setup: Setup
    config: Config
    repeats: int
    workload: Task | None  # the job's, else the study's
    cpus: int
    execution: ExecutionConfig  # --db-bench, --work-dir and --rocksdb-version, which a node resolves on its own

    @classmethod
    def of(cls, job: Job, backend: Backend, cpus: int, execution: ExecutionConfig) -> TaskSpec:
        """A job as a task, for ``backend`` (the study's, prepared on the driver)."""
        return cls(type(backend), backend.setup, job.config, job.repeats, job.workload or backend.setup.workload, cpus,
                   execution)


def node_facts(backend: type[Backend], execution: ExecutionConfig, where: dict[str, Any] | None = None) -> dict[str, Any]:
    """This node: ``where`` (the executor's name for it, e.g. Ray's node id and IP), host name,
    cores, memory and what it has for ``backend`` (its db_bench, or why there is none)."""
    return {**_host(where), **backend.node_facts(execution)}


def _host(where: dict[str, Any] | None) -> dict[str, Any]:
    return {"host": socket.gethostname(), **(where or {}), "cores": len(os.sched_getaffinity(0)), "ram": host_ram_bytes()}


def measure_task(spec: TaskSpec, where: dict[str, Any] | None = None,
                 stop: threading.Event | None = None) -> dict[str, Any]:
    """Runs on the worker: lease cores, pin, rebuild the study's backend for this node and measure with
    it, return the measurement (or the reason it failed), the logs' bytes and the node's facts. Once
    ``stop`` is set (the driver stops the study), the run is killed, its DB removed and the task returns
    a failure."""
    started = time.monotonic()
    backend_class = spec.backend
    here = backend_class.on_node(spec.setup, spec.execution)
    node = {**_host(where), **here.facts}
    if here.setup is None:
        return {"ok": False, "reason": f"node {node['host']}: {here.error}", "node": node, "logs": {}}
    lease = CoreLease(spec.cpus)
    before = os.sched_getaffinity(0)
    logs: Path | None = None  # the run's logs, in a marked directory of the node's work dir
    try:
        node["cores_used"] = lease.acquire(time.monotonic() + LEASE_WAIT, stop)
        os.sched_setaffinity(0, node["cores_used"])  # the run (db_bench, the command) inherits it
        node["measured_from"] = time.time()
        work_dir = workdir.prepare(spec.execution.work_dir)
        mine = tuple(work_dir / p.parent.name for p in spec.setup.preloaded)  # this node's preloaded DBs
        workdir.sweep_stale(work_dir, mine)  # what gone tuners (and killed workers) on this node left
        logs = workdir.make_owned(work_dir, LOGS_PREFIX)  # a killed worker's is swept as any trial's
        # the node's work dir; its preloaded DBs last the study (the executor removes them at its end)
        backend = backend_class(replace(here.setup, work_dir=work_dir, preloaded=()))
        try:
            backend.prepare(stop)
            workload = node_workload(backend, spec, work_dir, logs)
            result: dict[str, Any] = {"ok": True, "measurement": backend.measure(
                spec.config, logs, spec.repeats, None, workload)}
        finally:
            backend.teardown()
    except RunFailed as exc:
        result = {"ok": False, "reason": exc.reason, "broken": exc.broken}
    except EnvironmentFault as exc:
        result = {"ok": False, "reason": f"node {node['host']}: {exc.reason}", "fault": exc.fault}
    except workdir.WorkDirError as exc:  # e.g. the node's --work-dir vanished
        result = {"ok": False, "reason": f"node {node['host']}: {exc}", "fault": "the work directory is unusable"}
    finally:
        node["measured_to"] = time.time()
        os.sched_setaffinity(0, before)
        lease.release()
        files = _take_logs(logs)
    result["logs"] = files
    result["node"] = node
    result["seconds"] = time.monotonic() - started
    return result


def _take_logs(logs: Path | None) -> dict[str, bytes]:
    """The log directory's files by their relative paths, the directory then removed (none: no files)."""
    if logs is None:
        return {}
    files = {str(p.relative_to(logs)): p.read_bytes() for p in sorted(logs.rglob("*"))
             if p.is_file() and p.name != workdir.MARKER}
    workdir.remove_owned(logs)
    return files


def node_workload(backend: Backend, spec: TaskSpec, work_dir: Path, logs: Path) -> Task | None:
    """The job's workload as this node runs it: one whose runs start from a DB the study built (not a
    --db-snapshot, the user's) starts from the node's own copy, in the node's work dir under the driver's
    DB's name: the driver's itself where they share a work dir, else built here once (Backend.preload, its
    logs with the run's), under a lock on the work dir so that the node's other runs wait for it and reuse
    it; removed when the study ends (:func:`remove_node_copies`)."""
    workload = spec.workload
    if workload is None or not workload.snapshot or Path(workload.snapshot) not in spec.setup.preloaded:
        return workload
    here = work_dir / Path(workload.snapshot).parent.name / "db"
    fd = os.open(work_dir / workdir.WORKDIR_MARKER, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one build per node at a time; the rest wait and reuse it
        if not ((here.parent / workdir.MARKER).is_file() and here.is_dir()):
            backend.preload(replace(workload, snapshot=str(here)), logs / "preload")
    finally:
        os.close(fd)
    return replace(workload, snapshot=str(here))


def remove_node_copies(execution: ExecutionConfig, names: list[str]) -> list[str]:
    """On a node at the study's end: remove its copies of the study's preloaded DBs (``names``: their
    directories' names in the node's work dir), the tuner's own (marked) only, and what killed workers
    left there (:func:`workdir.sweep_stale`, e.g. a run's logs); the preloaded DBs' names it removed."""
    work_dir = workdir.prepare(execution.work_dir)
    workdir.sweep_stale(work_dir, tuple(work_dir / name for name in names))
    removed = [name for name in names if (work_dir / name / workdir.MARKER).is_file()]
    for name in removed:
        workdir.remove_owned(work_dir / name)
    return removed


def outcome_of(job: Job, result: dict[str, Any], driver_build: Build | None) -> Outcome:
    """On the driver: what a task returned as the job's Outcome, its logs (and OPTIONS) written under
    the job's log directory; the node's build (its facts' ``build``) when it is not the driver's."""
    for name, data in result.get("logs", {}).items():
        path = job.log_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    node = result["node"]
    theirs = Build.from_dict(node["build"], "build") if node.get("build") else None
    outcome = Outcome(job, node=TrialNode.from_dict(node),
                      build=theirs if theirs and theirs.path != (driver_build.path if driver_build else None) else None)
    if result["ok"]:
        outcome.measurement = result["measurement"]
        keep_options(job, outcome.measurement)
    else:
        outcome.reason, outcome.fault, outcome.broken = result["reason"], result.get("fault"), result.get("broken")
    return outcome
