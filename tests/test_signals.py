"""A Ctrl-C is not lost (tuner.engine._signals): Python drops a KeyboardInterrupt raised inside a finalizer
("Exception ignored in ..."), as a fresh-clone CI run once saw in SQLAlchemy's cleanup, and the study ran
on to its end. Pure: a scripted executor, no db_bench."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from objectives.workloads import load_workload
from tests.test_side_by_side import Scripted, _jobs
from tuner.engine import STOPS, stop_signals, stopped_by
from tuner.engine._baselines import side_by_side
from tuner.engine._preload import Preloading


class _InterruptedFinalizer:
    """Receives SIGINT while it is finalized, where Python can only print the KeyboardInterrupt."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


class _Interrupting(Scripted):
    """A scripted executor whose second wait finalizes an object that receives SIGINT."""

    def __init__(self, slots: int) -> None:
        super().__init__(slots, ticks={"baseline:a": 5, "baseline:b": 5})
        self.waits = 0

    def wait(self, timeout: float) -> list[Any]:
        self.waits += 1
        if self.waits == 2:
            _InterruptedFinalizer()  # dropped at once: its __del__ runs here
        return super().wait(timeout)


def _preloading(inner: Scripted) -> Preloading:
    return Preloading(inner, load_workload("fillrandom"), store=None, bus=None, out=Path("out"),  # type: ignore[arg-type]
                      build=None, describe=lambda w: None)  # type: ignore[arg-type, return-value]


def test_a_ctrl_c_lost_in_a_finalizer_stops_the_engines_next_wait_and_the_runs_in_flight(monkeypatch):
    lost: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: lost.append(u.exc_value))
    inner = _Interrupting(slots=2)
    with stop_signals(), pytest.raises(KeyboardInterrupt):
        side_by_side(_preloading(inner), _jobs("a", "b"), 1, lambda job: None, lambda ended: None, lambda _: None)
    assert [type(e) for e in lost] == [KeyboardInterrupt]  # Python dropped the handler's own
    assert inner.waits == 2  # stopped at the wait after it, not at the jobs' end
    assert inner.cancelled == [["baseline:a", "baseline:b"]]
    assert stopped_by() == signal.SIGINT


def test_without_a_signal_waits_pass_and_a_new_entry_forgets_an_earlier_signal(monkeypatch):
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    with stop_signals():
        _InterruptedFinalizer()
    assert stopped_by() == signal.SIGINT
    with stop_signals():
        assert stopped_by() is None
        ended: list[Any] = []
        side_by_side(_preloading(Scripted(2)), _jobs("a"), 0, lambda job: None, ended.append, lambda _: None)
        assert len(ended) == 1


def test_the_handlers_before_are_restored():
    before = {s: signal.getsignal(s) for s in STOPS}
    with stop_signals(STOPS):
        assert all(signal.getsignal(s) is not before[s] for s in STOPS)
    assert {s: signal.getsignal(s) for s in STOPS} == before


_CHILD = """
import pathlib, signal, sys, time
def stop(*_):
    pathlib.Path(sys.argv[1], "cleaned").write_text("")
    sys.exit(143)
signal.signal(signal.SIGTERM, stop)
pathlib.Path(sys.argv[1], "ready").write_text("")
time.sleep(60)
"""
_SCRIPT = """
import sys
import time
from experiments._script import entry, run_child
entry(lambda: run_child([sys.executable, "-c", sys.argv[1], sys.argv[2]], check=True))
"""


def test_a_script_stopped_by_sigterm_stops_its_child_so_that_it_cleans_up(tmp_path):
    """experiments._script: a kill(1) of a research script reaches the ``rocksdb-tuner`` it runs as a stop,
    not as SIGKILL (which leaves its temporary DBs), and the script exits as stopped (128 + 15)."""
    script = subprocess.Popen([sys.executable, "-c", _SCRIPT, _CHILD, str(tmp_path)], stderr=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1])
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline and script.poll() is None, script.stderr and script.stderr.read()
        time.sleep(0.05)
    script.send_signal(signal.SIGTERM)
    _, err = script.communicate(timeout=60)
    assert script.returncode == 143, err
    assert (tmp_path / "cleaned").exists()
    assert "interrupted (SIGTERM)" in err
