"""Which failures are the environment's and which the configuration's (issue 31): the runner's
classification of a failed db_bench phase, and how a fault reaches the engine; pure, no db_bench.
An environment fault stops the study untaught; a configuration's own failure is a FAILED trial the
sampler learns from. And the suite's own rule: a host without a memory cgroup skips the memory-limit tests,
except under CI, where it fails them."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from objectives.memory import Cgroups, MemoryLimitError
from objectives.runner import DISK_FULL, EnvironmentFault, RunFailed, environment_fault
from tests.conftest import need_memory_cgroup
from tuner.backends import Config
from tuner.engine._serial import SerialRuns
from tuner.executors import Job, Outcome

ENOSPC = ("put error: IO error: No space left on device: While appending to file: "
          "/work/rocksdb-tuner-x/db/000004.log: No space left on device")


@pytest.mark.parametrize("returncode, output", [(1, ENOSPC), (0, ENOSPC), (-signal.SIGABRT, ENOSPC)])
def test_no_space_left_is_a_full_disk_however_db_bench_ended(returncode, output):
    assert environment_fault(returncode, f"fillrandom ...\n{output}\n", oom_killed=False) == DISK_FULL


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_kill_from_outside_is_the_environments(sig):
    assert environment_fault(-sig, "", oom_killed=False) == f"db_bench was killed from outside ({sig.name})"


def test_the_oom_killers_sigkill_is_the_configurations():
    assert environment_fault(-signal.SIGKILL, "", oom_killed=True) is None


@pytest.mark.parametrize("returncode, output", [
    (-signal.SIGSEGV, ""), (-signal.SIGABRT, "db_bench: db/version_set.cc:123: Assertion failed"),
    (-signal.SIGBUS, ""), (-signal.SIGFPE, ""),
    (1, "Cannot parse compression type 'no-such-codec'"),
    (1, "Invalid argument: write_buffer_size too large"),
    (0, "no result line for benchmark fillrandom"),
])
def test_crashes_and_db_bench_errors_are_the_configurations(returncode, output):
    assert environment_fault(returncode, output, oom_killed=False) is None


class _OneOutcome:
    """An executor whose every job ends as ``Outcome(job, **outcome)``."""

    slots = 1

    def __init__(self, **outcome: Any):
        self.outcome = outcome
        self.jobs: list[Job] = []

    def submit(self, job: Job) -> None:
        self.jobs.append(job)

    def wait(self, timeout: float) -> list[Outcome]:
        return [Outcome(self.jobs.pop(), **self.outcome)] if self.jobs else []


def test_a_fault_stops_a_baseline_or_revalidation_run_instead_of_failing_it(tmp_path):
    """SerialRuns (the re-validation's runs) raises EnvironmentFault, which their `except RunFailed`
    does not record as the configuration's failure; a configuration's failure stays RunFailed."""
    job = Job("baseline:rocksdb-default", Config(), tmp_path, 1)
    killed = _OneOutcome(reason="phase load: db_bench killed by SIGTERM",
                         fault="db_bench was killed from outside (SIGTERM)")
    with pytest.raises(EnvironmentFault) as err:
        SerialRuns(killed, print).run(job)
    assert not isinstance(err.value, RunFailed)
    assert (err.value.fault, err.value.reason) == ("db_bench was killed from outside (SIGTERM)",
                                                   "baseline:rocksdb-default: phase load: db_bench killed by SIGTERM")
    with pytest.raises(RunFailed, match="db_bench killed by SIGSEGV"):
        SerialRuns(_OneOutcome(reason="phase load: db_bench killed by SIGSEGV"), print).run(job)


@pytest.mark.parametrize("ci, outcome", [("", pytest.skip.Exception), ("true", pytest.fail.Exception)])
def test_without_a_memory_cgroup_the_memory_limit_tests_skip_but_fail_under_ci(monkeypatch, ci, outcome):
    def missing() -> None:
        raise MemoryLimitError("no memory cgroup hierarchy is mounted")

    monkeypatch.setattr(Cgroups, "detect", missing)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no memory cgroup hierarchy is mounted"):
        need_memory_cgroup()
