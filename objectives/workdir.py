"""The work directory trial DBs are created in: chosen safely, owned by the tuner, big enough.

The tuner only ever deletes trial directories it made inside a work directory it owns (each with
its own marker; see runner.MARKER). A work directory is owned when it carries WORKDIR_MARKER: the
tuner writes it into the default one and into an empty ``--work-dir``, and refuses any other
non-empty directory, ``/``, the home directory and system directories.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

WORKDIR_MARKER = ".rocksdb-tuner-workdir"
GiB = 1 << 30
MiB = 1 << 20
# A trial needs the DB (data plus space amplification while compaction rewrites files) and the WAL.
SPACE_FACTOR = 3
# A preloaded DB (at most its raw data: compression only shrinks it) plus what one trial's checkpoint
# writes beside the hard-linked files (at most a rewrite of the whole DB).
PRELOADED_FACTOR = 2
SPACE_SLACK = 64 * MiB
_SYSTEM = {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys",
           "/usr", "/var", "/home", "/tmp", "/var/tmp"}


class WorkDirError(ValueError):
    """The work directory cannot be used; the message names --work-dir."""


def default_work_dir() -> Path:
    """``$TMPDIR/rocksdb-tuner-work-<uid>``: created (mode 700) and marked on first use."""
    return Path(tempfile.gettempdir()) / f"rocksdb-tuner-work-{os.getuid()}"


def prepare(path: Path | None) -> Path:
    """The work directory to use, owned by the tuner; WorkDirError when it is unsafe or unusable."""
    if path is None:
        path = default_work_dir()
        try:
            path.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise WorkDirError(f"--work-dir: cannot create the default {path}: {exc.strerror}") from None
        flag = f"--work-dir (default {path})"
    else:
        flag = f"--work-dir {path}"
        if not path.is_dir():
            raise WorkDirError(f"{flag}: not an existing directory")
    real = path.resolve()
    if str(real) in _SYSTEM or real == Path.home().resolve():
        raise WorkDirError(f"{flag}: refusing {real}, a system or home directory; give an empty directory "
                           "for trial DBs (e.g. a new subdirectory)")
    marker = real / WORKDIR_MARKER
    if not marker.is_file():
        try:
            entries = os.listdir(real)
        except OSError as exc:
            raise WorkDirError(f"{flag}: cannot read it: {exc.strerror}") from None
        if entries:
            raise WorkDirError(f"{flag}: not empty and not a rocksdb-tuner work directory (no {WORKDIR_MARKER}); "
                               "give an empty directory, the tuner only deletes what it created")
        try:
            marker.write_text("rocksdb-tuner creates and removes trial DB directories here\n")
        except OSError as exc:
            raise WorkDirError(f"{flag}: cannot write to it: {exc.strerror}") from None
    elif not os.access(real, os.W_OK):
        raise WorkDirError(f"{flag}: not writable")
    return real


def need_bytes(data_bytes: int, factor: int = SPACE_FACTOR) -> int:
    """Free space one trial of a workload with ``data_bytes`` of keys and values is allowed to need."""
    return factor * data_bytes + SPACE_SLACK


def largest_data(path: Path, factor: int = SPACE_FACTOR) -> int:
    """The most data whose trials the disk under ``path`` holds now."""
    return max(0, (shutil.disk_usage(path).free - SPACE_SLACK) // factor)


def check_space(path: Path, data_bytes: int, what: str, factor: int = SPACE_FACTOR) -> None:
    """WorkDirError when the disk under ``path`` has less free space than a trial may need."""
    free = shutil.disk_usage(path).free
    need = need_bytes(data_bytes, factor)
    if free < need:
        raise WorkDirError(f"--work-dir {path}: {free / MiB:,.0f} MiB free, but {what} needs about "
                           f"{need / MiB:,.0f} MiB per trial ({factor} x {data_bytes / MiB:,.0f} MiB of data "
                           f"+ {SPACE_SLACK // MiB} MiB): free some space, use a bigger disk or a smaller --scale")
