"""Finding db_bench, reading its version, build kind and the flags and benchmarks it supports.

Several builds may live side by side: release builds of several RocksDB versions made by
``make db_bench ROCKSDB_VERSION=X.Y`` (in the cache), ``$ROCKSDB_TUNER_DB_BENCH``, and the
``db_bench`` on PATH (Debian's ``rocksdb-tools``, an assertion build). ``--rocksdb-version``
picks one by version."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "ROCKSDB_TUNER_DB_BENCH"
# Where `make db_bench` (objectives/build/build_db_bench.sh) puts release builds: <version>-release/db_bench
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocksdb-tuner" / "db_bench"
_FLAG_RE = re.compile(r"^\s+-(\w+) \(", re.MULTILINE)
_VERSION_RE = re.compile(r"RocksDB:\s+version\s+(\S+)")
# The end of a flag's block in --help ("  -name (description) type: T default: V", wrapped over lines).
_FLAG_DEFAULT_RE = re.compile(r"type: (\w+)\s+default: (.*?)\s*$", re.DOTALL)
# The benchmark list in --help of the --benchmarks flag: "\tfillseq       -- write N values ...".
_BENCH_RE = re.compile(r"^\s*(\w+)\s+-- ", re.MULTILINE)
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
    benchmarks: frozenset[str] = frozenset()  # those its --help lists (a few, e.g. mixgraph, it does not)
    defaults: tuple[tuple[str, str], ...] = ()  # (flag, its default as --help prints it)
    patches: tuple[str, ...] = ()  # what objectives/build/build_db_bench.sh changed in its source (BUILD_INFO.json)

    def default(self, flag: str) -> str | None:
        """This build's default of ``flag`` (as --help prints it), or None when it does not say."""
        return dict(self.defaults).get(flag)

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

    def check_benchmarks(self, names: Iterable[str], where: str = "study") -> None:
        """Fail with one line naming the first benchmark this binary does not have. A name its
        --help does not list is looked for among the binary's strings (db_bench compares each
        name with a string literal), which catches a typo such as ``nosuchbench``."""
        data: bytes | None = None
        for name in names:
            if name in self.benchmarks:
                continue
            if data is None:
                data = Path(self.path).read_bytes()
            if name.encode() + b"\0" not in data:
                raise DbBenchError(f"db_bench {self.version} at {self.path} has no benchmark {name!r} "
                                   f"(needed by the {where})")

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "version": self.version, "assertions": self.assertions, "build": self.build,
                "source": self.source, **({"patches": list(self.patches)} if self.patches else {})}


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in text.split("-")[0].split("."))


def release_builds(cache_dir: Path | None = None) -> list[Path]:
    """Release builds made by ``make db_bench``, newest version first."""
    found = [p for p in (cache_dir or CACHE_DIR).glob("*-release/db_bench") if os.access(p, os.X_OK)]
    return sorted(found, key=lambda p: _version_key(p.parent.name), reverse=True)


def version_matches(version: str, wanted: str) -> bool:
    """``9.11`` matches 9.11.2, ``9`` matches any 9.x, ``9.11.2`` only itself."""
    return version == wanted or version.startswith(wanted + ".")


def locate(explicit: str | os.PathLike[str] | None = None, version: str | None = None) -> tuple[str, str]:
    """(path, how it was found): ``--db-bench``, else $ROCKSDB_TUNER_DB_BENCH, else the newest release
    build made by ``make db_bench`` (of ``version``, when given), else ``db_bench`` on PATH."""
    if explicit:
        source, candidate = "--db-bench", str(explicit)
    elif os.environ.get(ENV_VAR):
        source, candidate = ENV_VAR, os.environ[ENV_VAR]
    elif builds := [b for b in release_builds() if version is None or version_matches(b.parent.name[:-8], version)]:
        return str(builds[0]), "release build made by 'make db_bench'"
    else:
        found = shutil.which("db_bench")
        if not found:
            if version:
                raise DbBenchError(_no_such_version(version))
            raise DbBenchError(
                "db_bench not found: install it (apt-get install rocksdb-tools, or run 'make tune'), "
                f"or pass --db-bench PATH or set {ENV_VAR}"
            )
        return found, "PATH"
    path = Path(candidate)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise DbBenchError(f"{source}: {candidate} is not an executable file")
    return str(path.resolve()), source


def _no_such_version(version: str) -> str:
    built = ", ".join(b.parent.name[:-8] for b in release_builds()) or "none"
    return (f"--rocksdb-version {version}: no db_bench of that version (release builds: {built}); "
            f"build one with: make db_bench ROCKSDB_VERSION={version}")


def probe(explicit: str | os.PathLike[str] | None = None, version: str | None = None) -> DbBench:
    """Locate db_bench (of ``version``, when given) and probe it with ``--help`` and a one-key run
    in a temporary directory."""
    path, source = locate(explicit, version)
    db = probe_path(path, source)
    if version and not version_matches(db.version, version):
        if source == "PATH":
            raise DbBenchError(_no_such_version(version) + f"; {path} is {db.version}")
        raise DbBenchError(f"--rocksdb-version {version}: {source} {path} is db_bench {db.version}")
    return db


def probe_path(path: str, source: str = "") -> DbBench:
    """Probe the db_bench at ``path``: its flags and benchmarks from ``--help``, its version and
    build kind from a one-key run in a temporary directory."""
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
    listed = help_text[help_text.find("-benchmarks ("):help_text.find(" type: string", help_text.find("-benchmarks ("))]
    return DbBench(path=path, version=version.group(1), assertions=ASSERTIONS_WARNING in output, flags=flags,
                   source=source, benchmarks=frozenset(_BENCH_RE.findall(listed)), defaults=_defaults(help_text),
                   patches=_patches(path))


def _patches(path: str) -> tuple[str, ...]:
    """The source patches of a build objectives/build/build_db_bench.sh made (its BUILD_INFO.json beside it)."""
    try:
        info = json.loads((Path(path).parent / "BUILD_INFO.json").read_text())
    except (OSError, ValueError):
        return ()
    return tuple(str(p) for p in info.get("patches") or ()) if isinstance(info, dict) else ()


def _defaults(help_text: str) -> tuple[tuple[str, str], ...]:
    marks = list(_FLAG_RE.finditer(help_text))
    found = []
    for mark, following in zip(marks, [*marks[1:], None]):
        block = help_text[mark.start(): following.start() if following else len(help_text)]
        if match := _FLAG_DEFAULT_RE.search(block):
            found.append((mark[1], match[2].strip().strip('"')))
    return tuple(found)


def installed() -> list[tuple[str, str]]:
    """Every db_bench this host has, as (path, how it is found): release builds, newest first, then
    $ROCKSDB_TUNER_DB_BENCH and the one on PATH."""
    found = [(str(b), "release build made by 'make db_bench'") for b in release_builds()]
    if os.environ.get(ENV_VAR):
        found.append((os.environ[ENV_VAR], ENV_VAR))
    if shutil.which("db_bench"):
        found.append((str(shutil.which("db_bench")), "PATH"))
    seen: set[str] = set()
    unique = []
    for path, source in found:
        key = str(Path(path).resolve())
        if key not in seen:
            seen.add(key)
            unique.append((path, source))
    return unique
