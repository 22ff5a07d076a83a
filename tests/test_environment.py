"""Which failures are the environment's and which the configuration's (issue 31): the runner's
classification of a failed db_bench phase, pure, no db_bench. An environment fault stops the study
untaught; a configuration's own failure is a FAILED trial the sampler learns from."""

from __future__ import annotations

import signal

import pytest

from objectives.runner import DISK_FULL, environment_fault

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
