"""Fault injection on real processes (issue 9, docs/reliability.md).

Each test runs a real `rocksdb-tuner tune` on the real db_bench and hurts the db_bench of one trial
the way production hurts it: a segfault, a hang, a full disk, a kill from outside. A failure of the
configuration (a crash, a hang, db_bench's own error) must be a FAILED trial with a reason naming the
cause, and the study must go on to its count; a failure of the environment (issue 31: a full disk,
db_bench killed from outside) must stop the study with one line naming it and the resume command,
the trial told to no sampler. No DB directory may be left behind. Full-disk tests use a small tmpfs
as the work dir (mounting needs root, as in CI).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import optuna
import pytest

from objectives.parser import ParseError, parse, require
from tests.conftest import DATA, TINY, fast, leftovers, printed_summary, summary_of
from tests.test_cli import TUNER, tuner
from tuner.summary import Summary
from tuner.trials import TrialRecord

pytestmark = [pytest.mark.dbbench, pytest.mark.faults]


def _db_bench_pids(work: Path) -> list[int]:
    r = subprocess.run(["pgrep", "-f", "--", f"--db={work}/"], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def _run_with_fault(tmp_path: Path, work: Path, fault: Callable[[int], None], *extra: str,
                    code: int = 0) -> str:
    """Run a 3-trial study (no hand-found baselines, just rocksdb-default) into ``tmp_path/out``; when
    trial 0 is done, apply ``fault`` to the next db_bench process, i.e. trial 1's. The tuner must exit
    ``code``; its stderr is returned."""
    out = tmp_path / "out"
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "3", "--seed", "3", "--sampler",
            "random", "--out", str(out), "--work-dir", str(work), "--no-plots", "--no-baselines", *extra]
    proc = subprocess.Popen([*TUNER, *fast(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    injected = threading.Event()

    def inject() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pids = _db_bench_pids(work)
            if pids:
                time.sleep(0.3)  # let it get going
                fault(pids[0])
                injected.set()
                return
            time.sleep(0.02)

    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("trial 0:") and not injected.is_set():
            threading.Thread(target=inject, daemon=True).start()
    proc.wait(timeout=300)
    stderr = "".join(lines)
    assert injected.is_set(), stderr
    assert proc.returncode == code, stderr
    return stderr


def _summary(tmp_path: Path) -> Summary:
    return summary_of(tmp_path / "out")


def _one_failure(summary: Summary) -> str:
    """The reason of the study's only failed trial; the other two (failures count toward --trials) ran."""
    assert summary.trials.complete == 2 and summary.trials.failed == 1, summary.trials
    (failure,) = summary.failures
    return failure.reason


@pytest.mark.parametrize("sig, name", [(signal.SIGSEGV, "SIGSEGV"), (signal.SIGABRT, "SIGABRT"),
                                       (signal.SIGBUS, "SIGBUS")])
def test_db_bench_crash_fails_the_trial_with_the_signal(tmp_path, work_dir, sig, name):
    """A segfault, an abort or a bus error during a trial: the configuration's failure."""
    _run_with_fault(tmp_path, work_dir, lambda pid: os.kill(pid, sig))
    assert _one_failure(_summary(tmp_path)).startswith(f"phase load: db_bench killed by {name}")
    assert leftovers(work_dir) == [] and not _db_bench_pids(work_dir)


def _stopped(stderr: str, fault: str) -> str:
    """The one line a study stopped by an environment fault ends with: it names ``fault`` and the
    resume command."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines[-1].startswith(f"stopped: {fault} (trial 1: phase load: db_bench "), stderr
    assert "resume with: rocksdb-tuner tune --study " in lines[-1] and "Traceback" not in stderr, stderr
    assert not any("FAILED" in ln for ln in lines), stderr
    return lines[-1]


def _trials(tmp_path: Path) -> list[optuna.trial.FrozenTrial]:
    db = tmp_path / "out" / "study.db"
    (name,) = optuna.get_all_study_names(f"sqlite:///{db}")
    return optuna.load_study(study_name=name, storage=f"sqlite:///{db}").trials


def test_db_bench_killed_from_outside_stops_the_study_untaught(tmp_path, work_dir):
    """SIGKILL from another process (not the trial timeout, a pruner or the OOM killer) is not the
    configuration's failure: the study stops, trial 1 is interrupted and queued to run again."""
    stderr = _run_with_fault(tmp_path, work_dir, lambda pid: os.kill(pid, signal.SIGKILL), code=75)
    _stopped(stderr, "db_bench was killed from outside (SIGKILL)")
    trials = _trials(tmp_path)
    assert [TrialRecord.of(t).outcome for t in trials] == ["complete", "interrupted", None], trials
    assert trials[1].state == optuna.trial.TrialState.FAIL and "killed by SIGKILL" in TrialRecord.of(trials[1]).fail_reason
    assert trials[2].state == optuna.trial.TrialState.WAITING
    assert trials[2].system_attrs["fixed_params"] == trials[1].params
    assert leftovers(work_dir) == [] and not _db_bench_pids(work_dir)


def test_hung_db_bench_is_killed_at_the_trial_timeout(tmp_path, work_dir):
    """SIGSTOP freezes db_bench (a hang): the runner kills it at --trial-timeout, even stopped."""
    _run_with_fault(tmp_path, work_dir, lambda pid: os.kill(pid, signal.SIGSTOP), "--trial-timeout", "15")
    assert _one_failure(_summary(tmp_path)) == "phase load: timeout, killed after the trial's 15 s limit"
    assert leftovers(work_dir) == [] and not _db_bench_pids(work_dir)


def test_db_bench_exiting_non_zero_names_its_error(tmp_path, work_dir):
    space = tmp_path / "s.toml"
    space.write_text('[parameters.compression_type]\ntype = "categorical"\nchoices = ["lz4", "no-such-codec"]\n'
                     'options_key = "CFOptions.compression"\n')
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(space), "--sampler", "grid",
              "--trials", "2", "--out", "o", "--work-dir", str(work_dir), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert _reason_of(summary) == "phase load: db_bench exit code 1: Cannot parse compression type 'no-such-codec'"
    assert leftovers(work_dir) == []


def _reason_of(summary: Summary) -> str:
    assert summary.trials.complete == 1 and summary.trials.failed == 1
    return summary.failures[0].reason


@pytest.fixture
def tmpfs(tmp_path):
    """A 320 MiB tmpfs: enough for the free-space check of a scale-0.5 fillrandom, easy to fill."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=320m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def test_full_disk_stops_the_study_and_the_resume_runs_the_trial_again(tmp_path, tmpfs):
    """Another process fills the disk during trial 1 (issue 31): the study stops with one line naming
    the full disk and the resume command; trial 1 is interrupted, not failed (no sampler learns that
    its configuration is bad), and its DB is removed. Once the space is freed, the resume runs that
    configuration again and completes the study."""
    work = tmpfs / "work"
    work.mkdir()
    filler = tmpfs / "filler"

    def fill(_pid: int) -> None:
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError:
                pass

    line = _stopped(_run_with_fault(tmp_path, work, fill, code=75), "the disk is full")
    assert "No space left on device" in line, line
    assert leftovers(work) == [] and not _db_bench_pids(work)
    (interrupted,) = [t for t in _trials(tmp_path) if TrialRecord.of(t).outcome == "interrupted"]
    assert "No space left on device" in TrialRecord.of(interrupted).fail_reason
    filler.unlink()
    resume = line.split("resume with: rocksdb-tuner ", 1)[1].split()
    r = tuner(*resume, "--work-dir", str(work), "--no-baselines", "--seed", "3", "--sampler", "random")
    assert r.returncode == 0, r.stderr
    summary = _summary(tmp_path)
    assert summary.trials.complete == 3 and summary.trials.failed == 0, summary.trials
    assert summary.trials.interrupted == 1
    again = [t for t in _trials(tmp_path) if t.number > interrupted.number and t.params == interrupted.params]
    assert [TrialRecord.of(t).outcome for t in again] == ["complete"]
    assert leftovers(work) == []


def test_too_little_free_disk_is_refused_before_anything_runs(tmp_path, tmpfs):
    work = tmpfs / "work"
    work.mkdir()
    r = tuner("tune", "--workload", "fillrandom", "--scale", "2", "--work-dir", str(work), "--out", "never")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"--work-dir {work}: 320 MiB free, but workload fillrandom with 221 MiB of data needs about" in r.stderr
    assert not (tmp_path / "never").exists() and not (tmp_path / "mlruns").exists()


def test_truncated_and_garbage_output_never_parses_as_a_result():
    """Every prefix of real db_bench output either parses to the full result or raises ParseError
    (what a killed or disk-starved db_bench leaves), and so does output of the wrong program."""
    text = (DATA / "fillrandom-7.8.3.txt").read_text()
    full = parse(text)
    require(full, ("fillrandom",))
    cuts = sorted({*range(0, len(text), max(1, len(text) // 400)), len(text) - 1})
    complete = 0
    for cut in cuts:
        try:
            out = parse(text[:cut])
            require(out, ("fillrandom",))
        except ParseError:
            continue
        complete += 1
        assert out.results[0].ops_per_sec == full.results[0].ops_per_sec
    assert complete < len(cuts)
    for garbage in ("", "\0\0\0", "fillrandom : nan micros/op", "Segmentation fault (core dumped)\n",
                    (DATA / "README.md").read_text()):
        with pytest.raises(ParseError):
            require(parse(garbage), ("fillrandom",))


def test_two_tuners_on_one_study_the_second_refuses(tmp_path):
    """The second `tune` on a running study exits 2 naming the first; the first is not disturbed."""
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "3", "--seed", "1", "--study", "shared",
            "--out", str(tmp_path / "o"), "--no-plots", "--no-baselines"]
    first = subprocess.Popen([*TUNER, *fast(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in first.stderr:
        if line.startswith("trial 0:"):
            break
    second = tuner(*args)
    assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
    assert f"--study shared: already being tuned by pid {first.pid} on " in second.stderr
    first.communicate(timeout=300)
    assert first.returncode == 0
    trials = optuna.load_study(study_name="shared", storage=f"sqlite:///{tmp_path / 'o' / 'study.db'}").trials
    assert [TrialRecord.of(t).outcome for t in trials].count("complete") == 3
    assert "interrupted" not in [TrialRecord.of(t).outcome for t in trials]
    assert tuner(*args).returncode == 0  # once the first is done, the same command resumes (nothing left)
