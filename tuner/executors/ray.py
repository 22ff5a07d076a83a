"""Jobs measured on Ray workers: the driver owns the study, workers only measure.

The engine keeps up to ``--parallel`` jobs in flight (TPE's constant liar keeps their
configurations apart); each is a plain Ray task, and outcomes come back as they finish. A task
runs on some node of the cluster: it finds that node's own db_bench (the usual discovery rules),
leases ``--cpus-per-trial`` distinct cores of the node (a lock file per core, so tasks never share
a core, whichever Ray node they belong to) and pins db_bench to them, measures in a fresh DB
directory of the node's work dir, and ships back the metrics and the logs. Workers never touch the
study storage or MLflow, so a cluster needs no shared filesystem.

A task whose worker process or node dies comes back as a lost outcome (the engine's retry policy
runs it once more). Ctrl-C cancels the running tasks.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from objectives import workdir
from objectives.dbbench import DbBench, DbBenchError, probe
from objectives.measurement import measure
from objectives.runner import EnvironmentFault, Runner, RunFailed
from objectives.workloads import Flag, Workload
from search_spaces import host_ram_bytes
from tuner.executors import Job, Outcome
from tuner.model import TuneConfig
_LEASE_WAIT = 600.0  # seconds a task waits for free cores (Ray's CPU accounting should make it instant)


class ParallelError(ValueError):
    """Ray or the cluster cannot run this study; the message names the flag."""


# -- on the worker --------------------------------------------------------------------------------
class CoreLease:
    """``count`` distinct cores of this machine, held through lock files until released."""

    def __init__(self, count: int, lock_dir: Path | None = None):
        self.count = count
        self.lock_dir = lock_dir or Path(tempfile.gettempdir()) / f".rocksdb-tuner-cores-{os.getuid()}"
        self.held: list[tuple[int, int]] = []  # (core, fd)

    def acquire(self, deadline: float) -> list[int]:
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
    """Everything a worker needs to measure one configuration (pickled to the node)."""

    workload: Workload
    flags: dict[str, Flag]
    repeats: int
    seed: int
    timeout: float
    cpus: int
    db_bench: str | None  # an explicit --db-bench path, else the node's own discovery
    work_dir: str | None
    rocksdb_version: str | None = None  # the node's build of this version (--rocksdb-version)
    memory_limit: int | None = None  # scored phases in a memory cgroup of this size


def node_facts(db_bench: str | None, version: str | None = None) -> dict[str, Any]:
    """This node: Ray node id, host name, IP, cores and its db_bench (or why there is none)."""
    return _node(db_bench, version)[0]


def _node(explicit: str | None, version: str | None) -> tuple[dict[str, Any], DbBench | None]:
    import ray

    facts: dict[str, Any] = {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                             "ip": ray.util.get_node_ip_address(), "cores": len(os.sched_getaffinity(0)),
                             "ram": host_ram_bytes()}
    try:
        db = probe(explicit, version)
    except DbBenchError as exc:
        facts["db_bench_error"] = str(exc)
        return facts, None
    facts["db_bench"] = db.to_dict()
    return facts, db


def measure_task(spec: TaskSpec) -> dict[str, Any]:
    """Runs in a Ray worker: lease cores, pin, measure, return metrics and the logs' bytes."""
    started = time.monotonic()
    node, db = _node(spec.db_bench, spec.rocksdb_version)
    if db is None:
        return {"ok": False, "reason": f"node {node['host']}: {node['db_bench_error']}", "node": node, "logs": {}}
    lease = CoreLease(spec.cpus)
    before = os.sched_getaffinity(0)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-logs-") as tmp:
        logs = Path(tmp)
        try:
            node["cores_used"] = lease.acquire(time.monotonic() + _LEASE_WAIT)
            os.sched_setaffinity(0, node["cores_used"])  # db_bench inherits it
            node["measured_from"] = time.time()
            work_dir = workdir.prepare(Path(spec.work_dir) if spec.work_dir else None)
            runner = Runner(db, work_dir=work_dir, timeout=spec.timeout, memory_limit=spec.memory_limit)
            runner.sweep_stale()
            result: dict[str, Any] = {"ok": True,
                                      "measurement": measure(runner, spec.workload, spec.flags, logs, spec.repeats, spec.seed)}
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


# -- on the driver --------------------------------------------------------------------------------
class RayExecutor:
    """The driver's side of Ray: connection, node checks, submitting tasks and collecting outcomes."""

    def __init__(self, config: TuneConfig, db_bench: DbBench, note: Callable[[str], None]):
        self.config, self.db_bench, self.note = config, db_bench, note
        self.workload: Workload | None = None  # set by bind(), once the study is prepared for the slot
        self.seed, self.memory_limit = 1, None
        self.slots = config.parallel
        self.started_ray = False
        self.cpus = 1
        self.placement: Any = None
        self.free_bundles: list[int] = []
        self.nodes: list[dict[str, Any]] = []
        self.running: dict[Any, tuple[Job, int | None]] = {}  # object ref -> (job, placement bundle)

    def start(self) -> None:
        try:
            import ray
        except ImportError:
            raise ParallelError("--parallel: needs Ray (pip install ray)") from None
        address = self.config.ray_address
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "WARNING",
                                  "configure_logging": True}
        if address:
            # Ship this package to the cluster: its nodes need only Python, Ray and the dependencies.
            root = Path(__file__).resolve().parents[2]
            kwargs["runtime_env"] = {"py_modules": [str(root / p) for p in ("objectives", "search_spaces", "tuner")]}
        else:
            kwargs["num_cpus"] = len(os.sched_getaffinity(0))
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            ray.init(address=address, **kwargs)
        except Exception as exc:  # noqa: BLE001 - ConnectionError, RuntimeError, ValueError from Ray
            where = f"--ray-address {address}" if address else "--parallel: a local Ray instance"
            raise ParallelError(f"{where}: cannot start or reach Ray: {' '.join(str(exc).split())[:300]}") from None
        self.started_ray = True
        self._check_nodes(ray)
        self._size(ray)

    def _check_nodes(self, ray: Any) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        alive = [n for n in ray.nodes() if n.get("Alive")]
        probe_task = ray.remote(node_facts)
        refs = [probe_task.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                .remote(self.config.db_bench, self.config.rocksdb_version) for n in alive]
        try:
            self.nodes = ray.get(refs, timeout=120)
        except Exception as exc:  # noqa: BLE001
            raise ParallelError(f"--ray-address: a node did not answer: {' '.join(str(exc).split())[:300]}") from None
        mine = self.db_bench
        problems = []
        for node in self.nodes:
            theirs = node.get("db_bench")
            if theirs is None:
                problems.append(f"{node['host']} ({node['ip']}): {node['db_bench_error']}")
            elif (theirs["version"], theirs["assertions"]) != (mine.version, mine.assertions):
                problems.append(f"{node['host']} ({node['ip']}) has db_bench {theirs['version']} "
                                f"({'assertions' if theirs['assertions'] else 'release'}) at {theirs['path']}")
        missing = [p for p in problems if "has db_bench" not in p]
        if missing or (problems and not self.config.allow_mixed_db_bench):
            raise ParallelError(
                f"--ray-address: this study runs db_bench {mine.version} ({mine.build}); " + "; ".join(problems)
                + ("" if missing else ". Measurements would not compare; --allow-mixed-db-bench accepts it"))

    def _size(self, ray: Any) -> None:
        cpus = [int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
        parallel = self.config.parallel
        if self.config.cpus_per_trial:
            self.cpus = self.config.cpus_per_trial
        else:
            self.cpus = max(1, min(max(cpus, default=1), sum(cpus) // parallel))
        if self.cpus > max(cpus, default=0):
            raise ParallelError(f"--cpus-per-trial {self.cpus}: no node has that many CPUs (nodes: {cpus})")
        if self.config.one_trial_per_node:
            from ray.util.placement_group import placement_group

            fit = sum(1 for c in cpus if c >= self.cpus)
            if fit < parallel:
                raise ParallelError(f"--one-trial-per-node: --parallel {parallel} needs {parallel} nodes with "
                                    f"{self.cpus} CPUs; the cluster has {fit}")
            self.placement = placement_group([{"CPU": self.cpus}] * parallel, strategy="STRICT_SPREAD")
            try:
                ray.get(self.placement.ready(), timeout=60)
            except Exception as exc:  # noqa: BLE001
                raise ParallelError(f"--one-trial-per-node: Ray could not place {parallel} trials on distinct nodes: "
                                    f"{' '.join(str(exc).split())[:200]}") from None
            self.free_bundles = list(range(parallel))
        elif sum(c // self.cpus for c in cpus) < parallel:
            self.note(f"the cluster fits {sum(c // self.cpus for c in cpus)} trials of "
                      f"{self.cpus} CPU(s) at once, fewer than --parallel {parallel}")

    def slot(self) -> tuple[int, int]:
        """(cores, bytes of memory) of one trial: its pinned cores, and the smallest node's memory
        divided among the trials that node can hold at once."""
        shares = [n["ram"] // max(1, n["cores"] // self.cpus) for n in self.nodes if n["cores"] >= self.cpus]
        return self.cpus, min(shares)

    def bind(self, workload: Workload, seed: int, memory_limit: int | None) -> None:
        """What every task measures with."""
        self.workload, self.seed, self.memory_limit = workload, seed, memory_limit

    def describe(self) -> str | None:
        hosts = ", ".join(f"{n['host']} ({n['ip']}, {n['cores']} cores)" for n in self.nodes)
        how = "one per node" if self.placement else "Ray schedules them"
        return (f"{self.config.parallel} trials at once on Ray, {self.cpus} pinned core(s) each, {how}; "
                f"nodes: {hosts}")

    def submit(self, job: Job) -> None:
        import ray

        assert self.workload is not None, "bind() first"
        spec = TaskSpec(job.workload or self.workload, job.flags, job.repeats, self.seed, self.config.trial_timeout, self.cpus,
                        self.config.db_bench, str(self.config.work_dir) if self.config.work_dir else None,
                        self.config.rocksdb_version, self.memory_limit)
        options: dict[str, Any] = {"num_cpus": self.cpus, "max_retries": 0}
        bundle = None
        if self.placement is not None:
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

            bundle = self.free_bundles.pop(0)
            options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                self.placement, placement_group_bundle_index=bundle)
        self.running[ray.remote(measure_task).options(**options).remote(spec)] = (job, bundle)

    def wait(self, timeout: float) -> list[Outcome]:
        import ray

        if not self.running:
            return []
        ready, _ = ray.wait(list(self.running), num_returns=1, timeout=timeout)
        return [self._outcome(ref) for ref in ready]

    def _outcome(self, ref: Any) -> Outcome:
        import ray

        job, bundle = self.running.pop(ref)
        if bundle is not None:
            self.free_bundles.append(bundle)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # our task raised: a bug or an unexpected error, not worth a retry
            return Outcome(job, reason=f"worker error: {_short(exc)}")
        except ray.exceptions.RayError as exc:  # the worker process or its node died
            return Outcome(job, reason=_short(exc), lost=True)
        write_logs(job.log_dir, result)
        node = result["node"]
        theirs = node.get("db_bench") or {}
        outcome = Outcome(job, node={k: node.get(k) for k in ("node_id", "host", "ip", "cores_used", "measured_from",
                                                               "measured_to")},
                          db_bench={k: theirs.get(k) for k in ("path", "version", "assertions")}
                          if theirs and theirs.get("path") != self.db_bench.path else None)
        if result["ok"]:
            outcome.measurement = result["measurement"]
        else:
            outcome.reason, outcome.fault = result["reason"], result.get("fault")
        return outcome

    def cancel(self) -> None:
        import ray

        for ref in self.running:
            ray.cancel(ref, force=True)
        self.running.clear()

    def close(self) -> None:
        if not self.started_ray:
            return
        import ray

        if self.placement is not None:
            from ray.util.placement_group import remove_placement_group

            try:
                remove_placement_group(self.placement)
            except Exception:  # noqa: BLE001 - the cluster may be gone
                pass
        ray.shutdown()
        self.started_ray = False


def write_logs(log_dir: Path, result: dict[str, Any]) -> None:
    """The worker's log files, under the driver's log directory."""
    for name, data in result.get("logs", {}).items():
        path = log_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"
