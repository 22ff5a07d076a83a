"""The work directory trial DBs are created in: chosen safely, owned by the tuner, big enough.

The tuner only ever deletes trial directories it made inside a work directory it owns (each with
its own marker, MARKER: :func:`make_owned`, :func:`remove_owned`, :func:`sweep_stale`, whichever
backend made them). A work directory is owned when it carries WORKDIR_MARKER: the tuner writes it
into the default one and into an empty ``--work-dir``, and refuses any other non-empty directory,
``/``, the home directory and system directories.
"""

from __future__ import annotations

import mmap
import os
import shutil
import socket
import tempfile
from pathlib import Path

WORKDIR_MARKER = ".rocksdb-tuner-workdir"
MARKER = ".rocksdb-tuner-owned"  # in each directory the tuner made inside a work directory (make_owned)
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


class SnapshotError(ValueError):
    """A DB runs would start from (--db-snapshot) is not one; the message names the flag."""


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


# RocksDB options that open files with O_DIRECT: a run with one on fails where the filesystem refuses it
DIRECT_IO_OPTIONS = ("use_direct_io_for_flush_and_compaction", "use_direct_reads")


def takes_direct_io(path: Path) -> bool:
    """Whether the filesystem under ``path`` takes O_DIRECT writes (tmpfs in older Linux kernels and some
    FUSE filesystems refuse them; RocksDB's direct I/O options then fail every run)."""
    probe = path / f".rocksdb-tuner-direct-io-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError:
        return False
    try:
        with mmap.mmap(-1, 4096) as block:  # page-aligned, as O_DIRECT wants
            os.write(fd, block)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
        probe.unlink()


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


def sweep_stale(work_dir: Path, keep: tuple[Path, ...] = ()) -> list[Path]:
    """Remove the trial and preload directories in ``work_dir`` of tuner processes on this host that
    are gone, but those in ``keep``."""
    removed = []
    for path in work_dir.glob("rocksdb-tuner-*"):
        owner = _owner(path)
        if path not in keep and owner and owner[0] == socket.gethostname() and not process_alive(*owner[1:]):
            remove_owned(path)
            removed.append(path)
    return removed


def clone_snapshot(snapshot: Path, db: Path) -> None:
    """A fresh copy of a DB snapshot to run on, leaving the snapshot untouched: SST and blob files,
    which RocksDB never changes once written, are hard-linked (copied across filesystems); every
    other file (MANIFEST, CURRENT, OPTIONS, WAL, ...) is copied."""
    db.mkdir(parents=True)
    for entry in sorted(snapshot.iterdir()):
        if not entry.is_file() or entry.name == "LOCK" or entry.name.startswith("LOG"):
            continue
        target = db / entry.name
        if entry.suffix in (".sst", ".blob"):
            try:
                os.link(entry, target)
                continue
            except OSError:
                pass
        shutil.copy2(entry, target)


def tree_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except FileNotFoundError:
                pass
    return total


def latest_options(db: Path) -> str:
    """The newest OPTIONS file RocksDB wrote in ``db``, "" when it wrote none."""
    files = sorted(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else -1)
    return files[-1].read_text() if files else ""


def make_owned(work_dir: Path, prefix: str = "rocksdb-tuner-") -> Path:
    """A new directory in ``work_dir``, marked as this process's: :func:`remove_owned` and the sweeps
    of stale directories remove it, and nothing unmarked."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=work_dir))
    mark(path)
    return path


def mark(path: Path) -> None:
    """Mark a directory as this process's (host, pid and the pid's start time): only marked directories
    are ever removed."""
    (path / MARKER).write_text(f"host={socket.gethostname()}\npid={os.getpid()}\nstarted={process_started(os.getpid())}\n")


def _owner(path: Path) -> tuple[str, int, str | None] | None:
    """(host, pid, the pid's start time) from a directory's marker, or None when it has no valid marker."""
    try:
        fields = dict(line.split("=", 1) for line in (path / MARKER).read_text().splitlines() if "=" in line)
        return fields["host"], int(fields["pid"]), fields.get("started")
    except (OSError, KeyError, ValueError):
        return None


_STARTED = 19  # in proc_stat's fields: /proc/PID/stat's field 22, the start time in clock ticks since boot


def proc_stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the process name (state first), None where unreadable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()  # the name in parentheses may hold spaces


def process_started(pid: int) -> str | None:
    """When a process started (clock ticks since boot, /proc/PID/stat), None where unreadable: with the
    pid it names one process, as pids are reused (32,768 of them on many hosts)."""
    fields = proc_stat(pid)
    return fields[_STARTED] if fields else None


def process_alive(pid: int, started: str | None = None) -> bool:
    """Whether the process that marked a directory still runs: the pid exists, is not a zombie (a
    killed worker whose parent died first stays one where nothing reaps it, e.g. a container's init)
    and, when the marker says when it started, it is the same process (not a later one given the
    same pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = proc_stat(pid)
    if fields is None:
        return True
    return fields[0] not in ("Z", "X") and (started is None or fields[_STARTED] == started)


def remove_owned(path: Path) -> None:
    """Remove a directory only if it carries our marker file (so never a path we did not create). The
    marker goes last: a removal killed halfway (a Ray worker shut down while it cleans up) leaves a
    directory the sweeps of stale directories still recognise, not an unmarked one they must keep."""
    if not (path / MARKER).is_file():
        return
    for child in [*(c for c in path.iterdir() if c.name != MARKER), path / MARKER]:
        try:
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        except OSError:  # what cannot be removed stays, as with rmtree(ignore_errors=True)
            pass
    try:
        path.rmdir()
    except OSError:
        pass


def snapshot_files(snapshot: Path) -> tuple[int, Path | None]:
    """A DB directory runs start from (--db-snapshot): the bytes of its files and its latest OPTIONS
    file (None if it has none)."""
    if not (snapshot / "CURRENT").is_file():
        raise SnapshotError(f"--db-snapshot {snapshot}: not a RocksDB directory (no CURRENT file)")
    files = [snapshot / f for f in os.listdir(snapshot) if (snapshot / f).is_file()]
    options = sorted((f for f in files if f.name.startswith("OPTIONS-") and f.name[8:].isdigit()),
                     key=lambda f: int(f.name[8:]))
    return sum(f.stat().st_size for f in files), options[-1] if options else None
