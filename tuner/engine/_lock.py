"""One tuner per study at a time: an exclusive ``flock`` held while a study runs.

A second ``tune`` on the same study (same storage, same name) refuses with the first one's pid
and host, instead of marking its running trial as abandoned or interleaving trials. The kernel
drops the lock when the holder exits, even by SIGKILL, so a killed tuner never blocks a resume.
The lock file lives in the temp directory, so it guards studies run from one host; studies on a
shared RDB server run from several hosts are not guarded (docs/reliability.md).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import IO


class StudyBusy(ValueError):
    """Another tuner process holds the study; the message names --study and that process."""


def _normalized(storage: str) -> str:
    if storage.startswith("sqlite:///"):
        return "sqlite:///" + str(Path(storage[len("sqlite:///"):]).resolve())
    return storage


def lock_path(storage: str, study: str) -> Path:
    key = hashlib.sha256(f"{_normalized(storage)}\0{study}".encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f".rocksdb-tuner-locks-{os.getuid()}" / f"{key}.lock"


class StudyLock:
    """Hold with ``acquire()``; ``release()`` (or process exit) lets the next tuner in."""

    def __init__(self, storage: str, study: str):
        self.path = lock_path(storage, study)
        self.study = study
        self.file: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(mode=0o700, exist_ok=True)
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StudyBusy(f"--study {self.study}: already being tuned by {holder}; wait for it to finish "
                            "(or stop it), then run the same command to resume") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        handle.flush()
        self.file = handle

    def release(self) -> None:
        if self.file is not None:
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()
            self.file = None
