"""A third backend on the measurement contract alone (tuner/backends/base.py): a small Python driver on rocksdict,
defined here and registered for the test, runs a target study with a load, a memory limit, Ray's workers and the
re-validation, without a line of the engine knowing it. Its task is a :class:`RunTask` (no phases), its
configurations rendered by their options' catalogue names (``tuner.apply``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from objectives.contract import Measurement, Preloaded, RunFailed, RunTask, Task
from objectives.memory import Cgroups
from objectives.workdir import clone_snapshot, make_owned, remove_owned, tree_size
from tests.test_backends import assert_written_as_chosen
from tuner import tune
from tuner.backends import BACKENDS, Backend, Config, Found
from tuner.model import TuneConfig
from tuner.observers import SilentProgress
from tuner.trials import TrialRecord

PREFIX = "rocksdb-tuner-driver-"  # its preloaded DB's directory in the work dir (the tuner's sweeps know the prefix)
LOAD = r"""
import os, sys, rocksdict
db, data = sys.argv[1], int(sys.argv[2])
store = rocksdict.Rdict(db)
for i in range(data // 108):
    store[i.to_bytes(8, "big")] = os.urandom(100)
store.close()
"""
RUN = r"""
import json, os, sys, time, rocksdict
from tuner import apply
values, db, seconds = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3])
options = apply(values)
store = rocksdict.Rdict(db, options, column_families={"default": options})  # not the options rocksdict kept
count, started = 0, time.perf_counter()
while time.perf_counter() - started < seconds:
    store[os.urandom(8)] = os.urandom(100)
    count += 1
store.close()
options = max((n for n in os.listdir(db) if n.startswith("OPTIONS-")), key=lambda n: int(n.split("-")[1]))
print(json.dumps({"ops_per_sec": count / (time.perf_counter() - started), "options": options}))
"""


class Driver(Backend):
    """RocksDB written by a Python driver in a process of its own: each run on a hard-linked copy of the DB its
    load built once, within the run's memory limit (a memory cgroup), for the task's duration."""

    name = "driver"
    targets = True
    distributed = True

    @classmethod
    def task(cls, config: TuneConfig) -> Task:
        d, m = config.target, config.measurement
        return RunTask(cls.name, "a Python driver on rocksdict", d.target_data or 1 << 20, m.duration or 1.0,
                       preloaded=True)

    @classmethod
    def preload_path(cls, found: Found, work_dir: Path, workload: Task, seed: int) -> Path:
        return work_dir / f"{PREFIX}{os.getpid()}-{workload.data_bytes()}-{seed}" / "db"

    def preload(self, workload: Task, log_dir: Path) -> Preloaded:
        assert workload.snapshot is not None
        final = Path(workload.snapshot).parent
        building = make_owned(self.setup.work_dir, PREFIX)
        started = time.monotonic()
        try:
            subprocess.run([sys.executable, "-c", LOAD, str(building / "db"), str(workload.data_bytes())], check=True,
                           timeout=300)
            os.rename(building, final)
        finally:
            remove_owned(building)
        return Preloaded(final / "db", time.monotonic() - started, tree_size(final / "db"))

    def memory_how(self, remote: bool) -> str | None:
        return "a memory cgroup per run"

    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: object,
                 workload: Task | None) -> Measurement:
        task = workload or self.setup.workload
        assert task is not None and task.snapshot is not None and task.duration is not None
        run = make_owned(self.setup.work_dir)
        try:
            clone_snapshot(Path(task.snapshot), run / "db")
            limit = task.memory or self.setup.memory_limit
            cgroup = Cgroups.detect().for_run(limit, run / "db") if limit else None
            argv = [sys.executable, "-c", RUN, json.dumps(config.values()), str(run / "db"), str(task.duration)]
            done = subprocess.run(cgroup.wrap(argv) if cgroup else argv, capture_output=True, text=True, timeout=120)
            memory = cgroup.close() if cgroup else {}
            if done.returncode != 0:
                raise RunFailed(f"the driver failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
            said = json.loads(done.stdout.splitlines()[-1])
            written = (run / "db" / said["options"]).read_text()
        finally:
            remove_owned(run)
        return Measurement({"ops_per_sec": said["ops_per_sec"]}, [{"memory": memory, "node_pid": os.getpid()}],
                           written, [argv[:1]])


@pytest.mark.ray
def test_a_third_backend_runs_a_target_study_with_a_load_a_memory_limit_ray_and_the_revalidation(
        tmp_path, monkeypatch, memory_cgroup):
    """The driver's study at a 4 MiB target within 128 MiB, two trials at once on Ray's workers: the load ran once
    on this host (the workers share its work dir), each trial ran on a copy of it within the memory limit in a
    worker process, with its configuration's values as RocksDB wrote them, and the re-validation confirmed the
    answer in paired rounds; nothing is left in the work dir."""
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers know no test module
    monkeypatch.setitem(BACKENDS, "driver", Driver)  # the registration line
    work = tmp_path / "work"
    work.mkdir()
    result = tune(backend="driver", target_data=4 << 20, target_memory=128 << 20, duration=1.0, parallel=2, trials=4,
                  sampler="random", seed=3, out=tmp_path / "out", work_dir=work, mlflow=False, plots=False,
                  revalidate=2, revalidate_rounds=2, revalidate_max_rounds=2, ablation=False, baselines=False,
                  starts=False, progress=SilentProgress())
    done = [t for t in result.summary.optuna_study(tmp_path / "out").trials if TrialRecord.of(t).outcome == "complete"]
    assert len(done) == 4 and result.summary.revalidation is not None
    assert result.summary.preload is not None and result.summary.preload.builds == 1
    for t in done:
        record = TrialRecord.of(t)
        assert record.node is not None and len(record.node.cores_used or []) == 1
        assert record.phases[0]["memory"]["memory_limit_bytes"] == 128 << 20
        assert record.phases[0]["node_pid"] != os.getpid()  # measured in a worker, not the driver
    assert_written_as_chosen(tmp_path / "out", [(t.number, t.params) for t in done])
    assert not [p for p in work.iterdir() if p.name.startswith("rocksdb-tuner")]
