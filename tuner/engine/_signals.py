"""Stop signals that are not lost. Python raises a handler's KeyboardInterrupt wherever the main thread
is; inside a finalizer or a weakref callback (e.g. SQLAlchemy's ``InstanceState._cleanup``, which the
study's storage runs) it is printed as "Exception ignored" and dropped, and the study would run on to its
end. So a stop signal is also recorded, and every wait of the engine's loops raises it again
(:func:`raise_if_stopped`, from ``Preloading.wait``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []


def _stop(signum: int, _frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextmanager
def stop_signals(signums: Sequence[int] = (signal.SIGINT,)) -> Iterator[None]:
    """Within, each of ``signums`` stops the work as Ctrl-C does (KeyboardInterrupt), recorded until the
    next entry; the handlers before are restored after. Outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    before = {signum: signal.getsignal(signum) for signum in signums}
    for signum in signums:
        signal.signal(signum, _stop)
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def stopped_by() -> int | None:
    """The first stop signal received since the last :func:`stop_signals` entry, if any."""
    return _received[0] if _received else None


def stop_exit() -> tuple[str, int]:
    """After a stop: the signal's name and the exit status for it, 128 + its number (SIGINT when none was
    recorded, a KeyboardInterrupt of Python's own)."""
    received = stopped_by() or signal.SIGINT
    return signal.Signals(received).name, 128 + received


def raise_if_stopped() -> None:
    """KeyboardInterrupt if a stop signal was received (its own KeyboardInterrupt may have been lost)."""
    if _received:
        raise KeyboardInterrupt
