"""Finding db_bench, reading its version, build kind and the flags it supports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

ENV_VAR = "ROCKSDB_TUNER_DB_BENCH"
# Where `make db_bench` (scripts/build_db_bench.sh) puts release builds: <version>-release/db_bench
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocksdb-tuner" / "db_bench"
_FLAG_RE = re.compile(r"^\s+-(\w+) \(", re.MULTILINE)
_VERSION_RE = re.compile(r"RocksDB:\s+version\s+(\S+)")
ASSERTIONS_WARNING = "WARNING: Assertions are enabled"


class DbBenchError(RuntimeError):
    """db_bench is missing, does not run, or lacks a flag a study needs."""


@dataclass(frozen=True)
class DbBench:
    """One db_bench binary as probed: where, which version, release or assertion build, its flags."""

    path: str
    version: str
    assertions: bool
    flags: frozenset[str]
    source: str = ""

    @property
    def build(self) -> str:
        return "assertions (debug checks on, slower)" if self.assertions else "release"

    def check_flags(self, flags: Iterable[str], where: str = "study") -> None:
        """Fail with one line naming the first flag this binary does not know."""
        for flag in flags:
            if flag not in self.flags:
                raise DbBenchError(
                    f"db_bench {self.version} at {self.path} does not support --{flag} (needed by the {where})"
                )

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "version": self.version, "assertions": self.assertions, "build": self.build,
                "source": self.source}


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in text.split("-")[0].split("."))


def release_builds(cache_dir: Path | None = None) -> list[Path]:
    """Release builds made by ``make db_bench``, newest version first."""
    found = [p for p in (cache_dir or CACHE_DIR).glob("*-release/db_bench") if os.access(p, os.X_OK)]
    return sorted(found, key=lambda p: _version_key(p.parent.name), reverse=True)


def locate(explicit: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """(path, how it was found): ``--db-bench``, else $ROCKSDB_TUNER_DB_BENCH, else the newest release
    build made by ``make db_bench``, else ``db_bench`` on PATH."""
    if explicit:
        source, candidate = "--db-bench", str(explicit)
    elif os.environ.get(ENV_VAR):
        source, candidate = ENV_VAR, os.environ[ENV_VAR]
    elif builds := release_builds():
        return str(builds[0]), "release build made by 'make db_bench'"
    else:
        found = shutil.which("db_bench")
        if not found:
            raise DbBenchError(
                "db_bench not found: install it (apt-get install rocksdb-tools, or run 'make tune'), "
                f"or pass --db-bench PATH or set {ENV_VAR}"
            )
        return found, "PATH"
    path = Path(candidate)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise DbBenchError(f"{source}: {candidate} is not an executable file")
    return str(path.resolve()), source


def probe(explicit: str | os.PathLike[str] | None = None) -> DbBench:
    """Locate db_bench and probe it with ``--help`` and a one-key run in a temporary directory."""
    path, source = locate(explicit)
    try:
        help_text = subprocess.run(
            [path, "--help"], capture_output=True, text=True, errors="replace", timeout=30
        ).stdout
        with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-probe-") as tmp:
            run = subprocess.run(
                [path, "--benchmarks=fillseq", "--num=1", f"--db={tmp}/db", "--progress_reports=false"],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=60,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DbBenchError(f"db_bench at {path} does not run: {exc}") from None
    flags = frozenset(_FLAG_RE.findall(help_text))
    output = run.stdout + run.stderr
    version = _VERSION_RE.search(output)
    if run.returncode != 0 or not flags or not version:
        first = (output.strip().splitlines() or ["no output"])[-1]
        raise DbBenchError(f"{path} does not behave like db_bench (exit {run.returncode}): {first}")
    return DbBench(path=path, version=version.group(1), assertions=ASSERTIONS_WARNING in output, flags=flags,
                   source=source)
