"""A preloaded workload's DB, built once per study just before the first run that starts from it (and,
when the trials are smaller than the target, the target's before the re-validation's first run); every
run then starts on a hard-linked checkpoint of it (the backend builds it: Backend.preload)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from objectives.contract import Task
from tuner.backends import Description, Preloaded, RunFailed
from tuner.engine._signals import raise_if_stopped
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.executors import Executor, Job, Outcome
from tuner.fmt import fmt_bytes
from tuner.model import UsageError
from tuner.summary import Preload, PreloadedDb

Build = Callable[[Task, Path], Preloaded]  # builds a workload's preloaded DB, its logs in the path
Describe = Callable[[Task], Description]  # what the backend says of a workload (Backend.describe)


def run_preload(store: StudyStore, bus: EventBus, build: Build, describe: Describe, workload: Task, out: Path,
                role: str = "trials") -> None:
    """Build the DB every run of ``workload`` starts from (``role``: the trials', or the target's for the
    re-validation), or reuse the one a killed run of this study left; ``describe``: the backend's words
    for how it is built. Its machine time is saved in the study (``preload``) and counts toward the
    --budget."""
    assert workload.kind == "preloaded"
    said = describe(workload)
    saved = store.stored("preload", Preload) or Preload.from_dict({"seconds": 0.0, "builds": 0})
    logs = out / f"preload-{role}"
    bus.note(f"preloading the DB every {'run' if role == 'trials' else 'run at the target'} starts from: "
             f"{said.preload or workload.name}; each run works on a hard-linked checkpoint "
             "of it")
    try:
        done = build(workload, logs)
    except RunFailed as exc:
        raise UsageError(f"{said.builder}: building the preloaded DB failed: {exc.reason} (logs in {logs})") from None
    if not done.reused:
        saved = saved.updated(seconds=saved.seconds + round(done.seconds, 2), builds=saved.builds + 1)
    built = PreloadedDb(path=str(done.path), size_bytes=done.size_bytes, seconds=round(done.seconds, 2),
                        data_bytes=workload.data_bytes())
    store.keep("preload", saved.updated(**{role: built}))
    bus.note(f"preloaded DB: {fmt_bytes(done.size_bytes)} on disk, "
             + ("reused from a stopped run of this study" if done.reused else f"built in {done.seconds:,.0f} s")
             + (f"; {done.said}" if done.said else ""))


class Preloading:
    """The study's executor, building the preloaded DB a job starts from just before the first job that
    needs it: a study with nothing left to measure (one resumed to re-report) builds none."""

    def __init__(self, inner: Executor, workload: Task, store: StudyStore, bus: EventBus, out: Path,
                 build: Build | None, describe: Describe, given: str | None = None):
        self.inner, self.workload, self.store, self.bus, self.out = inner, workload, store, bus, out
        self.slots = inner.slots
        self.build = build  # the backend's preload (Backend.preload); None where no job starts from a preloaded DB
        self.words = describe  # the backend's words for it (Backend.describe)
        self.built: set[str] = {given} if given else set()  # given: the user's DB (--db-snapshot), never built

    def submit(self, job: Job) -> None:
        workload = job.workload or self.workload
        if workload.kind == "preloaded" and str(workload.snapshot) not in self.built:
            assert self.build is not None, "a preloaded workload needs a builder"
            run_preload(self.store, self.bus, self.build, self.words, workload, self.out,
                        "trials" if job.workload is None else "target")
            self.built.add(str(workload.snapshot))
        self.inner.submit(job)

    def wait(self, timeout: float) -> list[Outcome]:
        """The inner executor's outcomes; every loop of the engine waits here, so a stop signal whose own
        KeyboardInterrupt was lost stops it here (tuner.engine._signals)."""
        raise_if_stopped()
        return self.inner.wait(timeout)

    def cancel(self) -> None:
        self.inner.cancel()

    def describe(self) -> str | None:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()
