"""Memory like production: a run (db_bench's scored phase, or a program's run) in a memory cgroup of its
own. What every backend that holds its runs to a memory limit uses (db_bench's runner, the command
backend).

A cgroup's memory limit covers what the process allocates (memtables, block cache) *and* the page
cache its reads and writes fill, so the OS cannot cache what the block cache does not hold: with
data larger than the limit, block cache size and bloom filters matter as they do on a server whose
data is many times its memory. cgroup v1 (``memory.limit_in_bytes``) and v2 (``memory.max``) are
both handled; each run's cgroup is made under the tuner's own, and removed after the run.

The child enters its cgroup itself, before it execs the command: a small Python stub writes its own
pid to ``cgroup.procs`` and execs the real command, so not a byte of it (nor of the processes it
starts, which inherit the cgroup) is charged elsewhere.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

_ENTER = "import os,sys; open(sys.argv[1], 'w').write(str(os.getpid())); os.execv(sys.argv[2], sys.argv[2:])"
_counter = itertools.count()


class MemoryLimitError(RuntimeError):
    """No usable memory cgroup on this host; the message says why."""


@dataclass(frozen=True)
class Cgroups:
    """Where this host lets us make memory cgroups."""

    version: int  # 1 or 2
    parent: Path  # our own cgroup in the memory hierarchy: runs get children of it

    @classmethod
    def detect(cls) -> Cgroups:
        """The memory cgroup hierarchy this process is in, if it can make children there."""
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError as exc:
            raise MemoryLimitError(f"cannot read /proc/self/cgroup: {exc.strerror}") from None
        mounts = _mounts()
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(",") and "cgroup" in mounts:
                return cls._usable(1, mounts["cgroup"] / path.lstrip("/"))
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if controllers == "" and "cgroup2" in mounts:
                root = mounts["cgroup2"]
                if "memory" not in (root / "cgroup.controllers").read_text().split():
                    raise MemoryLimitError(f"cgroup v2 at {root} has no memory controller")
                return cls._usable(2, root / path.lstrip("/"))
        raise MemoryLimitError("no memory cgroup hierarchy is mounted")

    @classmethod
    def _usable(cls, version: int, parent: Path) -> Cgroups:
        probe = parent / f"rocksdb-tuner-probe-{os.getpid()}"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError as exc:
            raise MemoryLimitError(f"cannot make a cgroup under {parent}: {exc.strerror}") from None
        return cls(version, parent)

    def for_run(self, limit: int, db: Path) -> MemoryCgroup:
        """A new cgroup of ``limit`` bytes for a run on the DB ``db``, whose files are dropped from the page
        cache first: what the run reads of them is then charged to its cgroup, not found cached by a load
        or an earlier run outside it."""
        evict(db)
        return self.make(limit)

    def make(self, limit: int) -> MemoryCgroup:
        """A new cgroup limited to ``limit`` bytes."""
        path = self.parent / f"rocksdb-tuner-{os.getpid()}-{next(_counter)}"
        path.mkdir()
        try:
            if self.version == 1:
                (path / "memory.limit_in_bytes").write_text(str(limit))
            else:
                (path / "memory.max").write_text(str(limit))
                (path / "memory.swap.max").write_text("0")
        except OSError:
            path.rmdir()
            raise
        return MemoryCgroup(self.version, path, limit)


@dataclass(frozen=True)
class MemoryCgroup:
    """One run's cgroup: wraps a command so that it runs inside, reports, and is removed."""

    version: int
    path: Path
    limit: int

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this cgroup (the process enters it before it execs; ``argv[0]`` a path)."""
        return [sys.executable, "-I", "-S", "-c", _ENTER, str(self.path / "cgroup.procs"), *argv]

    def report(self) -> dict[str, int | None]:
        """Peak memory (process and page cache) and how many times the OOM killer struck."""
        if self.version == 1:
            peak = _read_int(self.path / "memory.max_usage_in_bytes")
            oom = _field(self.path / "memory.oom_control", "oom_kill")
        else:
            peak = _read_int(self.path / "memory.peak")
            oom = _field(self.path / "memory.events", "oom_kill")
        return {"memory_limit_bytes": self.limit, "memory_peak_bytes": peak, "oom_kills": oom}

    @staticmethod
    def out_of_memory(report: dict[str, int | None] | None) -> str | None:
        """`` (out of memory: its cgroup's limit is N MiB)`` when a cgroup's :meth:`report` counts an OOM
        kill, else None: what a killed run's failure adds."""
        report = report or {}
        limit = report.get("memory_limit_bytes")
        if not report.get("oom_kills") or limit is None:
            return None
        return f" (out of memory: its cgroup's limit is {limit / 2**20:.0f} MiB)"

    def close(self) -> dict[str, int | None]:
        """Its :meth:`report`, the cgroup then removed."""
        try:
            return self.report()
        finally:
            self.remove()

    def remove(self) -> None:
        try:
            self.path.rmdir()  # the page cache it charged moves to the parent
        except OSError:
            pass


def evict(directory: Path) -> None:
    """Drop the files under ``directory`` from the page cache (written back first), so that a
    measured phase starts with none of the data a previous phase left cached."""
    for root, _, names in os.walk(directory):
        for name in names:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError:
                pass
            finally:
                os.close(fd)


def read_through(directory: Path) -> int:
    """Read every file under ``directory`` once from the disk, start to end (dropped from the page cache before
    and after): what a run would otherwise be first to read from the disk; the bytes read."""
    evict(directory)  # a DB just written is in the page cache: read from there, it would not touch the disk
    total = 0
    for root, _, names in os.walk(directory):
        for name in names:
            try:
                with open(os.path.join(root, name), "rb", buffering=0) as f:
                    while chunk := f.read(1 << 20):
                        total += len(chunk)
            except OSError:
                continue
    evict(directory)
    return total


def _mounts() -> dict[str, Path]:
    """Mount points of the cgroup v1 memory hierarchy (key "cgroup") and of cgroup v2."""
    found: dict[str, Path] = {}
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            _, mount, fstype, opts, *_ = line.split()
            if fstype == "cgroup" and "memory" in opts.split(","):
                found["cgroup"] = Path(mount)
            elif fstype == "cgroup2" and "cgroup2" not in found:
                found["cgroup2"] = Path(mount)
    except OSError:
        pass
    return found


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _field(path: Path, key: str) -> int | None:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return None
