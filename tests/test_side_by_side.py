"""The baselines run under the trials' conditions (issue 43): with --parallel, trials run beside one
another, so the baselines the search compares them with do too (tuner.engine._baselines); the
re-validation runs one at a time. Pure: a scripted executor, no db_bench."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from objectives.contract import Measurement
from objectives.flags import Baseline
from objectives.workloads import Phase, Workload
from search_spaces import SearchSpace
from tuner.backends import Config, EnvironmentFault
from tuner.engine._baselines import Baselines, Ended, side_by_side
from tuner.executors import Job, Outcome
from tuner.model import UsageError, machine_seconds
from tuner.outputs._answer import side_by_side as described
from tuner.outputs._report import _measured_as
from tuner.summary import Revalidation, Summary
from tuner.trials import BaselineRecord


def _measured(ops: float) -> Measurement:
    return Measurement(metrics={"ops_per_sec": ops}, details=[], options_text="", commands=[])


class Scripted:
    """An executor of ``slots``: a job runs for ``ticks[key]`` calls of :meth:`wait` (2 if not given), then
    ends as ``ends`` says for its key or the key it copies (measured by default); it records what ran at once."""

    def __init__(self, slots: int, ticks: dict[str, int] | None = None, ends: dict[str, dict[str, Any]] | None = None):
        self.slots, self.ticks, self.ends = slots, ticks or {}, ends or {}
        self.left: dict[str, int] = {}
        self.jobs: dict[str, Job] = {}
        self.submitted: list[Job] = []
        self.cancelled: list[list[str]] = []
        self.most = 0

    def submit(self, job: Job) -> None:
        assert len(self.left) < self.slots, "more jobs than slots"
        self.submitted.append(job)
        self.jobs[job.key], self.left[job.key] = job, self.ticks.get(job.key, 2)
        self.most = max(self.most, len(self.left))

    def wait(self, timeout: float) -> list[Outcome]:
        self.left = {k: n - 1 for k, n in self.left.items()}
        done = [k for k, n in self.left.items() if n <= 0]
        for k in done:
            del self.left[k]
        return [self._end(self.jobs.pop(k)) for k in done]

    def _end(self, job: Job) -> Outcome:
        how = self.ends.get(job.key, self.ends.get(job.key.split(" (")[0]))
        if how is None or (how.get("lost") and job.attempt > 0):
            return Outcome(job, measurement=_measured(1000.0 + len(self.submitted)))
        return Outcome(job, **how)

    def cancel(self) -> None:
        self.cancelled.append(sorted(self.left))
        self.left.clear()
        self.jobs.clear()

    def describe(self) -> str | None:
        return None

    def close(self) -> None:
        pass


def _jobs(*names: str) -> list[Job]:
    return [Job(f"baseline:{n}", Config.of({"name": n}), Path("out") / "baselines" / n, 1) for n in names]


def _run(executor: Scripted, jobs: list[Job], neighbours: int) -> tuple[list[str], list[Ended]]:
    started: list[str] = []
    ended: list[Ended] = []
    side_by_side(executor, jobs, neighbours, lambda job: started.append(job.key), ended.append, lambda _: None)
    return started, ended


def test_a_lone_baseline_runs_beside_copies_of_itself_until_it_ends():
    """--parallel 2: rocksdb-default runs beside a copy of itself, another copy when one ends early; the
    copy still running when it ends is stopped, and its result kept nowhere."""
    executor = Scripted(2, ticks={"baseline:rocksdb-default": 3})
    started, ended = _run(executor, _jobs("rocksdb-default"), neighbours=1)
    assert started == ["baseline:rocksdb-default"]
    assert [j.key for j in executor.submitted] == ["baseline:rocksdb-default", "baseline:rocksdb-default (neighbour 0)",
                                                   "baseline:rocksdb-default (neighbour 1)"]
    assert executor.submitted[1].log_dir == Path("out/baselines/neighbours/0-rocksdb-default")
    assert executor.cancelled == [["baseline:rocksdb-default (neighbour 1)"]]
    assert [(e.outcome.job.key, e.neighbours) for e in ended] == [("baseline:rocksdb-default", 1)]
    assert ended[0].outcome.measurement is not None and ended[0].copies_seconds >= 0.0


def test_baselines_fill_the_slots_and_copies_only_the_slots_left():
    executor = Scripted(2, ticks={"baseline:a": 1, "baseline:b": 2, "baseline:c": 3})
    started, ended = _run(executor, _jobs("a", "b", "c"), neighbours=1)
    assert started == ["baseline:a", "baseline:b", "baseline:c"]
    assert [j.key for j in executor.submitted][:3] == ["baseline:a", "baseline:b", "baseline:c"]
    assert executor.most == 2
    assert sorted((e.outcome.job.key, e.neighbours) for e in ended) == [("baseline:a", 1), ("baseline:b", 1),
                                                                      ("baseline:c", 1)]
    copies = [j.key for j in executor.submitted[3:]]
    assert copies and all("(neighbour" in k for k in copies)  # only once no baseline was left to start


@pytest.mark.parametrize("slots, neighbours", [(1, 0), (2, 0), (1, 3)])
def test_without_neighbours_baselines_run_one_at_a_time(slots, neighbours):
    """A serial study, or one trial per node (--one-trial-per-node): no copies, one at a time."""
    executor = Scripted(slots)
    _, ended = _run(executor, _jobs("a", "b"), neighbours)
    assert [j.key for j in executor.submitted] == ["baseline:a", "baseline:b"]
    assert executor.most == 1 and executor.cancelled == []
    assert [e.neighbours for e in ended] == [0, 0]


def test_a_copy_that_fails_is_not_run_again_and_the_baseline_says_it_ran_alone():
    executor = Scripted(2, ticks={"baseline:a": 3}, ends={"baseline:a (neighbour 0)": {"reason": "bad"}})
    _, ended = _run(executor, _jobs("a"), neighbours=1)
    assert [j.key for j in executor.submitted] == ["baseline:a", "baseline:a (neighbour 0)"]
    assert ended[0].neighbours == 0 and ended[0].outcome.measurement is not None


def test_a_lost_baseline_runs_once_more_and_a_failed_one_ends_failed():
    executor = Scripted(2, ends={"baseline:a": {"reason": "node died", "lost": True},
                                 "baseline:b": {"reason": "bad flag"}})
    _, ended = _run(executor, _jobs("a", "b"), neighbours=1)
    by_key = {e.outcome.job.key: e.outcome for e in ended}
    assert by_key["baseline:a"].measurement is not None and by_key["baseline:a"].job.attempt == 1
    assert by_key["baseline:b"].reason == "bad flag" and by_key["baseline:b"].measurement is None


def test_a_fault_in_any_run_stops_every_run_in_flight():
    """A full disk met by a copy stops the study as a trial's would; the baseline beside it is stopped."""
    executor = Scripted(2, ticks={"baseline:a": 3}, ends={"baseline:a (neighbour 0)": {
        "reason": "No space left on device", "fault": "the disk is full"}})
    with pytest.raises(EnvironmentFault, match="the disk is full"):
        _run(executor, _jobs("a"), neighbours=1)
    assert executor.cancelled == [["baseline:a"]]


def test_an_error_while_recording_stops_the_runs_in_flight():
    executor = Scripted(2, ticks={"baseline:b": 3})

    def refuse(_: Ended) -> None:
        raise UsageError("--objective: rocksdb-default's run has no such metric")

    with pytest.raises(UsageError):
        side_by_side(executor, _jobs("a", "b"), 1, lambda _: None, refuse, lambda _: None)
    assert executor.cancelled == [["baseline:b"]]


class _Store:
    def __init__(self) -> None:
        self.kept: dict[str, BaselineRecord] = {}

    def baseline(self, name: str) -> BaselineRecord | None:
        return self.kept.get(name)

    def set_baseline(self, record: BaselineRecord) -> None:
        self.kept[record.name] = record


class _Bus:
    def __init__(self) -> None:
        self.said: list[str] = []

    def note(self, text: str) -> None:
        self.said.append(text)

    def baseline_started(self, name: str) -> None:
        self.said.append(f"started {name}")

    def baseline_done(self, snapshot: Any, record: BaselineRecord) -> None:
        self.said.append(f"done {record.name}")


def _parts(tmp_path: Path, neighbours: int) -> Any:
    workload = Workload("w", (Phase("run", ("overwrite",), scored=True),), baselines=(Baseline("benchmark.sh", {"x": 1},
                                                                                                "theirs"),))
    return SimpleNamespace(found=SimpleNamespace(defaults=None, backend="db_bench"), user_baseline=None, workload=workload,
                           out=tmp_path,
                           config=SimpleNamespace(measurement=SimpleNamespace(baselines=True, repeats=1)),
                           slot=SimpleNamespace(neighbours=neighbours), score=SimpleNamespace(flag_of=lambda _: None),
                           space=SearchSpace("none", ()))


def test_the_study_records_how_each_baseline_ran_and_a_resume_skips_the_measured(tmp_path):
    store, bus = _Store(), _Bus()
    executor = Scripted(2, ticks={"baseline:rocksdb-default": 2})
    Baselines(_parts(tmp_path, 1), store, executor, bus, lambda: None).run()
    assert {n: r.neighbours for n, r in store.kept.items()} == {"rocksdb-default": 1, "benchmark.sh": 1}
    assert all(r.complete and r.seconds is not None for r in store.kept.values())
    assert bus.said[0].startswith("baselines run as the trials do, each beside 1 other run(s) at once")
    assert bus.said[1:3] == ["started rocksdb-default", "started benchmark.sh"]
    assert str(store.kept["benchmark.sh"].log_dir) == str(tmp_path / "baselines" / "benchmark.sh")
    again = Scripted(2)
    Baselines(_parts(tmp_path, 1), store, again, bus, lambda: None).run()
    assert again.submitted == []


def test_serial_baselines_record_that_they_ran_alone(tmp_path):
    store, bus = _Store(), _Bus()
    Baselines(_parts(tmp_path, 0), store, Scripted(1), bus, lambda: None).run()
    assert [r.neighbours for r in store.kept.values()] == [0, 0]
    assert not any(s.startswith("baselines run as the trials do") for s in bus.said)


def test_copies_count_in_the_machine_time():
    records = [BaselineRecord("a", seconds=10.0, neighbours=1, neighbour_seconds=12.5), BaselineRecord("b", seconds=5.0)]
    assert machine_seconds([], records, None).baselines == 27.5


def _summary(trials: int, default: int | None) -> Summary:
    return Summary.from_dict({"slot": {"cores": 1, "neighbours": trials},
                              "baselines": [{"name": "rocksdb-default", "neighbours": default}]})


def test_the_summary_says_which_runs_the_search_compared():
    assert described(_summary(0, 0)) is None  # one at a time: nothing to say
    assert described(_summary(1, 1)) == "each beside 1 other run(s) at once (--parallel), rocksdb-default's as the trials'"
    unlike = described(_summary(1, None))  # a study whose baseline ran alone, resumed with --parallel
    assert unlike is not None and "rocksdb-default's beside 0: not like with like" in unlike


def test_the_closing_table_says_the_re_validations_rounds_ran_one_at_a_time():
    """After a re-validation the table's figures and ratios are its rounds, run alone; the search's beside others."""
    searched = _summary(1, 1)
    assert "vs default: single runs, each beside 1 other run(s) at once (--parallel), rocksdb-default's as the " \
           "trials'" in _measured_as(searched)
    revalidated = searched.updated(revalidation=Revalidation.from_dict({"best": "trial 3", "reference": "rocksdb-default"}))
    assert ("figures and vs default: the re-validation's rounds, one run at a time (the search's trials ran beside 1 "
            "other run(s) at once)") in _measured_as(revalidated)
    assert not any("beside" in line for line in _measured_as(_summary(0, 0)))
