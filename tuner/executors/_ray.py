"""Jobs measured on Ray workers: the driver owns the study, workers only measure.

The engine keeps up to ``--parallel`` jobs in flight (TPE's constant liar keeps their
configurations apart); each is a plain Ray task, and outcomes come back as they finish. A task
runs on some node of the cluster: it finds what the node has for the backend (db_bench: the node's own, by
the usual discovery rules),
leases ``--cpus-per-trial`` distinct cores of the node (a lock file per core, so tasks never share
a core, whichever Ray node they belong to) and pins db_bench to them, measures in a fresh DB
directory of the node's work dir, and ships back the metrics and the logs (tuner.executors._task, the
worker's side any remote executor shares). Workers never touch the study storage or MLflow, so a
cluster needs no shared filesystem. Every Ray setting (--parallel, --ray-address, --cpus-per-trial,
--one-trial-per-node, --allow-mixed-db-bench: the study's ExecutionConfig) is read here.

A task whose worker process or node dies comes back as a lost outcome (the engine's retry policy
runs it once more). Ctrl-C stops the running tasks through a stop flag (a small actor each task polls):
each kills its db_bench, removes its DB and returns; no task is cancelled through Ray.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from tuner.backends import BACKENDS, Backend, Found
from tuner.executors._task import TaskSpec, measure_task, node_facts, outcome_of, remove_node_copies
from tuner.executors.base import ExecutorError, Job, Note, Outcome, Slot
from tuner.model import ExecutionConfig, TuneConfig, UsageError

STOP_POLL = 0.5  # seconds between a task's looks at the stop flag
STOP_WAIT = 60.0  # seconds the driver waits for stopped tasks to return before Ray shuts down
FLAG_TIMEOUT = 30.0  # seconds a task waits for the stop flag's answer before asking again


def _where() -> dict[str, Any]:
    """This worker's node as Ray names it."""
    import ray

    return {"node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}


def _probe_node(backend: type[Backend], execution: ExecutionConfig) -> dict[str, Any]:
    """A Ray task: the node's facts, and what it has for the study's backend (its db_bench)."""
    return node_facts(backend, execution, _where())


class StopFlag:
    """A Ray actor the driver keeps: each :meth:`stop` stops the tasks of the generations before it."""

    def __init__(self) -> None:
        self.generation = 0

    def stop(self) -> None:
        self.generation += 1

    def stopped(self, generation: int) -> bool:
        return self.generation > generation


def _measure_on_node(spec: TaskSpec, flag: Any, generation: int) -> dict[str, Any]:
    """A Ray task: one job measured on the node it landed on, stopped once ``flag`` (a StopFlag) stops
    ``generation``."""
    import ray

    stop, done = threading.Event(), threading.Event()

    def watch() -> None:
        while True:
            try:
                if ray.get(flag.stopped.remote(generation), timeout=FLAG_TIMEOUT):
                    stop.set()
                    return
            except ray.exceptions.GetTimeoutError:  # a busy node: look again
                pass
            except ray.exceptions.RayError:  # the flag is gone with the driver, and Ray ends this task
                return
            if done.wait(STOP_POLL):
                return

    watcher = threading.Thread(target=watch, name="rocksdb-tuner-stop", daemon=True)
    watcher.start()
    try:
        return measure_task(spec, _where(), stop)
    finally:
        done.set()
        watcher.join()


# -- on the driver --------------------------------------------------------------------------------
class RayExecutor:
    """The driver's side of Ray: connection, node checks, submitting tasks and collecting outcomes."""

    remote = True

    def __init__(self, execution: ExecutionConfig, found: Found | None, note: Note):
        assert found is not None  # tuner.api gives what the study's backend found on this host
        self.execution, self.found, self.note = execution, found, note
        self.backend: Backend | None = None  # set by bind(), once the study is prepared for the slot
        self.slots = execution.parallel
        self.started_ray = False
        self.cpus = 1
        self.neighbours = 0  # other trials beside one at once, placed by Ray (none one per node)
        self.placement: Any = None
        self.free_bundles: list[int] = []
        self.nodes: list[dict[str, Any]] = []
        self.running: dict[Any, tuple[Job, int | None]] = {}  # object ref -> (job, placement bundle)
        self.flag: Any = None  # the StopFlag actor
        self.generation = 0  # the StopFlag's: how many times cancel() stopped the tasks in flight

    @classmethod
    def check(cls, config: TuneConfig) -> None:
        cpus = config.execution.cpus_per_trial
        if cpus is not None and (not isinstance(cpus, int) or cpus < 1):
            raise UsageError(f"--cpus-per-trial: must be a whole number >= 1, got {cpus}")
        if config.search.pruner != "none":
            raise UsageError("--pruner: needs --parallel 1 without --ray-address (a pruner watches each run "
                             "second by second in this process)")

    def start(self) -> Slot:
        try:
            import ray
        except ImportError:
            raise ExecutorError("--parallel: needs Ray (pip install ray)") from None
        address = self.execution.ray_address
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
            raise ExecutorError(f"{where}: cannot start or reach Ray: {' '.join(str(exc).split())[:300]}") from None
        self.started_ray = True
        self.flag = ray.remote(StopFlag).options(num_cpus=0).remote()
        self._check_nodes(ray)
        self._size(ray)
        return Slot(*self._slot(), pinned=True, neighbours=self.neighbours)

    def _check_nodes(self, ray: Any) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        alive = [n for n in ray.nodes() if n.get("Alive")]
        probe_task = ray.remote(_probe_node)
        refs = [probe_task.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                .remote(BACKENDS[self.found.backend], self.execution) for n in alive]
        try:
            self.nodes = ray.get(refs, timeout=120)
        except Exception as exc:  # noqa: BLE001
            raise ExecutorError(f"--ray-address: a node did not answer: {' '.join(str(exc).split())[:300]}") from None
        problem = BACKENDS[self.found.backend].check_nodes(self.found, self.nodes, self.execution)
        if problem is not None:
            raise ExecutorError(f"--ray-address: {problem}")

    def _size(self, ray: Any) -> None:
        cpus = [int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
        parallel = self.execution.parallel
        if self.execution.cpus_per_trial:
            self.cpus = self.execution.cpus_per_trial
        else:
            self.cpus = max(1, min(max(cpus, default=1), sum(cpus) // parallel))
        if self.cpus > max(cpus, default=0):
            raise ExecutorError(f"--cpus-per-trial {self.cpus}: no node has that many CPUs (nodes: {cpus})")
        if self.execution.one_trial_per_node:
            from ray.util.placement_group import placement_group

            fit = sum(1 for c in cpus if c >= self.cpus)
            if fit < parallel:
                raise ExecutorError(f"--one-trial-per-node: --parallel {parallel} needs {parallel} nodes with "
                                    f"{self.cpus} CPUs; the cluster has {fit}")
            self.placement = placement_group([{"CPU": self.cpus}] * parallel, strategy="STRICT_SPREAD")
            try:
                ray.get(self.placement.ready(), timeout=60)
            except Exception as exc:  # noqa: BLE001
                raise ExecutorError(f"--one-trial-per-node: Ray could not place {parallel} trials on distinct nodes: "
                                    f"{' '.join(str(exc).split())[:200]}") from None
            self.free_bundles = list(range(parallel))
            return
        fits = sum(c // self.cpus for c in cpus)
        self.neighbours = max(0, min(parallel, fits) - 1)
        if fits < parallel:
            self.note(f"the cluster fits {fits} trials of {self.cpus} CPU(s) at once, fewer than --parallel {parallel}")

    def _slot(self) -> tuple[int, int]:
        """(cores, bytes of memory) of one trial: its pinned cores, and the smallest node's memory
        divided among the trials that node can hold at once."""
        shares = [n["ram"] // max(1, n["cores"] // self.cpus) for n in self.nodes if n["cores"] >= self.cpus]
        return self.cpus, min(shares)

    def bind(self, backend: Backend) -> None:
        self.backend = backend

    def describe(self) -> str | None:
        hosts = ", ".join(f"{n['host']} ({n['ip']}, {n['cores']} cores)" for n in self.nodes)
        how = "one per node" if self.placement else "Ray schedules them"
        return (f"{self.execution.parallel} trials at once on Ray, {self.cpus} pinned core(s) each, {how}; "
                f"nodes: {hosts}")

    def submit(self, job: Job) -> None:
        import ray

        assert self.backend is not None, "bind() first"
        spec = TaskSpec.of(job, self.backend, self.cpus, self.execution)
        options: dict[str, Any] = {"num_cpus": self.cpus, "max_retries": 0}
        bundle = None
        if self.placement is not None:
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

            bundle = self.free_bundles.pop(0)
            options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                self.placement, placement_group_bundle_index=bundle)
        task = ray.remote(_measure_on_node).options(**options)
        self.running[task.remote(spec, self.flag, self.generation)] = (job, bundle)

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
        return outcome_of(job, result, self.found.build)

    def cancel(self) -> None:
        """Stop the tasks in flight through the stop flag: each kills its db_bench, removes its DB and
        returns (within ``STOP_POLL`` and the runner's kill grace); the driver waits up to ``STOP_WAIT``
        for them, then lets them be (Ray's shutdown ends any left, and the next run's sweep removes their
        DBs). No task is cancelled through Ray: in Ray 2.60 (the newest) ``ray.cancel`` can fail a task
        on the driver while its reply is on the way, and the reply then aborts the driver
        ("task_manager.cc: Tried to complete task that was not pending"; 2 Ctrl-C test runs in 23 here,
        both from the plain cancel, none reaching the forced one); its KeyboardInterrupt also lands
        wherever the task happens to be."""
        import ray

        refs = list(self.running)
        self.running.clear()
        if not refs:
            return
        ray.get(self.flag.stop.remote())
        self.generation += 1
        _, still = ray.wait(refs, num_returns=len(refs), timeout=STOP_WAIT)
        if still:
            self.note(f"{len(still)} trial(s) did not stop within {STOP_WAIT:g} s; Ray's shutdown ends them")

    def close(self) -> None:
        """Remove each node's copies of the study's preloaded DBs, then let go of Ray."""
        if not self.started_ray:
            return
        import ray

        if self.backend is not None and self.backend.setup.preloaded:
            _remove_copies(ray, self.nodes, self.execution, sorted({p.parent.name for p in self.backend.setup.preloaded}))
        if self.placement is not None:
            from ray.util.placement_group import remove_placement_group

            try:
                remove_placement_group(self.placement)
            except Exception:  # noqa: BLE001 - the cluster may be gone
                pass
        ray.shutdown()
        self.started_ray = False


def _remove_copies(ray: Any, nodes: list[dict[str, Any]], execution: ExecutionConfig, names: list[str]) -> None:
    """Each node removes its copies of the study's preloaded DBs (tuner.executors._task.remove_node_copies);
    a node that does not answer keeps them, for its next sweep once this study's workers are gone."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(remove_node_copies)
    refs = [task.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["node_id"], soft=False))
            .remote(execution, names) for n in nodes if n.get("node_id")]
    try:
        ray.get(refs, timeout=STOP_WAIT)
    except Exception:  # noqa: BLE001 - a node gone, or the cluster
        pass


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"
