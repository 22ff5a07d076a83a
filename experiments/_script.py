"""How every research script starts and stops: a stop signal (Ctrl-C, a kill(1)'s SIGTERM, a closed
terminal's SIGHUP) stops it as Ctrl-C does, through the engine's :func:`tuner.engine.stop_signals` (so it
is not lost in a finalizer), its temporary DBs and directories are removed on the way out, and a
``rocksdb-tuner`` it runs is stopped the same way, so that it removes its own."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tuner.engine import STOPS, stop_exit, stop_signals, stopped_by

CHILD_GRACE = 120.0  # seconds a stopped child gets to remove what it made before it is killed


def entry(main: Callable[[], object]) -> None:
    """Run a script's ``main``; a stop signal ends it with 128 + the signal's number, nothing recorded
    past the last record written (each script says which records it writes as it goes)."""
    with stop_signals(STOPS):
        try:
            main()
            return
        except KeyboardInterrupt:
            name, status = stop_exit()
    print(f"\ninterrupted ({name}): db_bench stopped, the temporary DBs removed", file=sys.stderr)
    raise SystemExit(status)


def run_child(command: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` for a child that cleans up after itself (``rocksdb-tuner tune``): when this script
    is stopped, the child is stopped too and gets :data:`CHILD_GRACE` seconds before it is killed
    (``subprocess.run`` would kill it at once). A terminal's Ctrl-C or hang-up reaches the child itself
    (its process group); a SIGTERM sent to this script alone is passed on."""
    check = kwargs.pop("check", False)
    if kwargs.pop("capture_output", False):
        kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(command, **{"text": True, **kwargs}) as child:
        try:
            out, err = child.communicate()
        except KeyboardInterrupt:
            if stopped_by() == signal.SIGTERM:
                child.send_signal(signal.SIGTERM)
            try:
                child.wait(CHILD_GRACE)
            except subprocess.TimeoutExpired:
                child.kill()
            raise
    done = subprocess.CompletedProcess(child.args, child.returncode, out, err)
    if check:
        done.check_returncode()
    return done
