"""Fault injection on real processes (issue 9, docs/reliability.md).

Each test runs a real `rocksdb-tuner tune` on the real db_bench and hurts the db_bench of one trial
the way production hurts it: a segfault, a hang, the OOM killer, a full disk. That trial must be
FAILED with a reason naming the cause, the study must go on to its count, and no DB directory may
be left behind. Full-disk tests use a small tmpfs as the work dir (mounting needs root, as in CI).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

import optuna
import pytest

from objectives.parser import ParseError, parse, require
from tests.conftest import fast, DATA, TINY, leftovers
from tests.test_cli import TUNER, tuner

pytestmark = [pytest.mark.dbbench, pytest.mark.faults]


def _db_bench_pids(work: Path) -> list[int]:
    r = subprocess.run(["pgrep", "-f", "--", f"--db={work}/"], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def _run_with_fault(tmp_path: Path, work: Path, fault: Callable[[int], None], *extra: str,
                    on_failed: Callable[[], None] | None = None) -> tuple[dict, str]:
    """Run a 3-trial study (no hand-found baselines, just rocksdb-default); when trial 0 is done,
    apply ``fault`` to the next db_bench process, i.e. trial 1's."""
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

    for line in proc.stderr:
        lines.append(line)
        if line.startswith("trial 0:") and not injected.is_set():
            threading.Thread(target=inject, daemon=True).start()
        if "FAILED" in line and on_failed is not None:
            on_failed()
    proc.wait(timeout=300)
    stderr = "".join(lines)
    assert injected.is_set(), stderr
    assert proc.returncode == 0, stderr
    return json.loads((out / "summary.json").read_text()), stderr


def _one_failure(summary: dict) -> str:
    """The reason of the study's only failed trial; the other two (failures count toward --trials) ran."""
    assert summary["trials"]["complete"] == 2 and summary["trials"]["failed"] == 1, summary["trials"]
    (failure,) = summary["failures"]
    return failure["reason"]


@pytest.mark.parametrize("sig, name", [(signal.SIGSEGV, "SIGSEGV"), (signal.SIGKILL, "SIGKILL"),
                                       (signal.SIGABRT, "SIGABRT"), (signal.SIGBUS, "SIGBUS")])
def test_db_bench_crash_fails_the_trial_with_the_signal(tmp_path, work_dir, sig, name):
    """A segfault, an abort, a bus error or the OOM killer (SIGKILL) during a trial."""
    summary, _ = _run_with_fault(tmp_path, work_dir, lambda pid: os.kill(pid, sig))
    assert _one_failure(summary).startswith(f"phase load: db_bench killed by {name}")
    assert leftovers(work_dir) == [] and not _db_bench_pids(work_dir)


def test_hung_db_bench_is_killed_at_the_trial_timeout(tmp_path, work_dir):
    """SIGSTOP freezes db_bench (a hang): the runner kills it at --trial-timeout, even stopped."""
    summary, _ = _run_with_fault(tmp_path, work_dir, lambda pid: os.kill(pid, signal.SIGSTOP),
                                 "--trial-timeout", "15")
    assert _one_failure(summary) == "phase load: timeout, killed after the trial's 15 s limit"
    assert leftovers(work_dir) == [] and not _db_bench_pids(work_dir)


def test_db_bench_exiting_non_zero_names_its_error(tmp_path, work_dir):
    space = tmp_path / "s.toml"
    space.write_text('[parameters.compression_type]\ntype = "categorical"\nchoices = ["lz4", "no-such-codec"]\n'
                     'options_key = "CFOptions.compression"\n')
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(space), "--sampler", "grid",
              "--trials", "2", "--out", "o", "--work-dir", str(work_dir), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert _reason_of(summary) == "phase load: db_bench exit code 1: Cannot parse compression type 'no-such-codec'"
    assert leftovers(work_dir) == []


def _reason_of(summary: dict) -> str:
    assert summary["trials"]["complete"] == 1 and summary["trials"]["failed"] == 1
    return summary["failures"][0]["reason"]


@pytest.fixture
def tmpfs(tmp_path):
    """A 320 MiB tmpfs: enough for the free-space check of a scale-0.5 fillrandom, easy to fill."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=320m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def test_full_disk_fails_the_trial_and_the_study_goes_on(tmp_path, tmpfs):
    """Another process fills the disk during trial 1: that trial fails naming ENOSPC; once the space
    is freed the study completes, and the full disk left no DB directory behind."""
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

    summary, _ = _run_with_fault(tmp_path, work, fill, on_failed=lambda: filler.unlink(missing_ok=True))
    reason = _one_failure(summary)
    assert "No space left on device" in reason, reason
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
    assert [t.user_attrs["outcome"] for t in trials].count("complete") == 3
    assert "interrupted" not in [t.user_attrs["outcome"] for t in trials]
    assert tuner(*args).returncode == 0  # once the first is done, the same command resumes (nothing left)
