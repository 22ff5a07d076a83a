"""Applying a study's best configuration: export as OPTIONS file, db_bench flags or rocksdict code,
``apply()`` to a live ``rocksdict.Options``, and ``verify()`` an OPTIONS file for real.

The option catalogue (``search_spaces/catalogue.toml``) names the rocksdict call that sets each
option; ``apply()`` runs those calls and ``--format python`` writes them out, so the two cannot drift
apart.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from search_spaces.catalogue import catalogue
from tuner import options_file
from tuner.summary import Summary, SummaryError

FORMATS = ("options", "flags", "python")
_COMPRESSION = {"none": "none", "snappy": "snappy", "zlib": "zlib", "bzip2": "bz2", "lz4": "lz4",
                "lz4hc": "lz4hc", "zstd": "zstd"}
_COMPACTION_STYLE = {0: "level", 1: "universal", 2: "fifo"}  # db_bench's number -> DBCompactionStyle's name


class ExportError(ValueError):
    """No best configuration to export, or one that cannot be expressed in the asked format."""


@dataclass
class Best:
    params: dict[str, Any]
    flags: dict[str, str]
    options_text: str
    note: str = ""  # what is exported when it is not a tuned configuration the study recommends


def load_best(summary: Path, tuned: bool = False) -> Best:
    """What a study's ``summary.json`` answers (OPTIONS.ini beside it): its best configuration, or, when the answer
    keeps the defaults (or your --baseline), nothing to set, said in ``note``; ``tuned``: the best tuned
    configuration even then (not recommended: its OPTIONS file is not kept, so it has no options text)."""
    try:
        found = Summary.load(summary)
    except SummaryError as exc:
        raise ExportError(f"--summary {exc}") from None
    best = found.best
    if not best:
        raise ExportError(f"--summary {summary}: the study has no best configuration (no trial completed)")
    options = Path(summary).with_name("OPTIONS.ini")
    text = options.read_text() if options.exists() else ""
    kept = found.answer if found.answer is not None and found.answer.recommend == "reference" else None
    if kept is None:
        return Best(best.params, best.flags, text)
    name = f"trial {best.trial}"
    if tuned:
        return Best(best.params, best.flags, "", f"{name}, the best tuned configuration, which the answer does not "
                                                 f"recommend: {kept.why}")
    return Best({}, {}, text, f"the answer keeps {kept.name}: nothing to set ({kept.why}); --best exports {name}, "
                              "the best tuned configuration, not recommended")


def _calls(params: dict[str, Any]) -> list[tuple[str, str, str]]:
    calls = []
    for name, value in params.items():
        known = catalogue().get(name)
        if known is None or known.rocksdict is None:
            settable = ", ".join(n for n, o in catalogue().items() if o.rocksdict)
            raise ExportError(f"parameter {name!r} has no rocksdict call in the option catalogue (known: {settable})")
        target, method, template = known.rocksdict_call()
        if name in ("bloom_bits", "rate_limiter_bytes_per_sec") and int(value) <= 0:
            continue  # 0 = no filter, no limiter: RocksDB's default
        if name == "compression_type":
            if value not in _COMPRESSION:
                raise ExportError(f"compression_type {value!r} has no rocksdict equivalent")
            value = _COMPRESSION[value]
        elif name == "compaction_style":
            if value not in _COMPACTION_STYLE:
                raise ExportError(f"compaction_style {value!r} is not 0 (leveled), 1 (universal) or 2 (FIFO)")
            value = _COMPACTION_STYLE[value]
        elif not isinstance(value, (int, float)):
            raise ExportError(f"{name}: expected a number, got {value!r}")
        calls.append((target, method, template.format(v=value)))
    return calls


def apply(params: dict[str, Any], options: Any = None) -> Any:
    """Set the tuned values on a ``rocksdict.Options`` (a new one if none is given) and return it."""
    import rocksdict

    options = options if options is not None else rocksdict.Options()
    table = rocksdict.BlockBasedOptions()
    namespace = {"options": options, "table": table, "Cache": rocksdict.Cache,
                 "DBCompressionType": rocksdict.DBCompressionType, "DBCompactionStyle": rocksdict.DBCompactionStyle}
    calls = _calls(params)
    for target, method, args in calls:
        eval(f"{target}.{method}({args})", {"__builtins__": {}}, namespace)  # args come from the catalogue only
    if any(target == "table" for target, _, _ in calls):
        options.set_block_based_table_factory(table)
    return options


def as_python(params: dict[str, Any]) -> str:
    calls = _calls(params)
    lines = [
        '"""RocksDB options found by rocksdb-tuner, for rocksdict."""',
        "from rocksdict import BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, Options",
        "",
        "options = Options()",
        "table = BlockBasedOptions()",
        *(f"{target}.{method}({args})" for target, method, args in calls),
    ]
    if any(target == "table" for target, _, _ in calls):
        lines.append("options.set_block_based_table_factory(table)")
    return "\n".join(lines) + "\n"


def render(best: Best, fmt: str) -> str:
    if fmt == "flags":
        return "".join(f"--{k}={v}\n" for k, v in best.flags.items())
    if fmt == "python":
        return as_python(best.params)
    if fmt == "options":
        if not best.options_text:
            raise ExportError("--format options: no OPTIONS.ini next to the summary" + (
                " for this configuration (OUT/OPTIONS.ini is the answer's); --format flags or python export it"
                if best.note and best.params else ""))
        return best.options_text
    raise ExportError(f"--format: unknown {fmt!r} (choose from {', '.join(FORMATS)})")


@dataclass
class Check:
    key: str
    in_file: str | None
    read_back: str | None
    ok: bool
    note: str = ""


def verify(path: Path, binary: str | None = None) -> tuple[list[Check], str, list[str]]:
    """Open a fresh DB with the OPTIONS file via rocksdict, compare the DB's own OPTIONS file with
    it for every key the option catalogue knows (what any space can tune), and (if ``binary``, a db_bench,
    is given) run it with ``--options_file``.
    Returns the checks, db_bench's verdict and notes.

    A file written by a newer RocksDB than rocksdict's may hold options rocksdict's does not know
    (e.g. 9.11's ``track_and_verify_wals`` in rocksdict's 9.8): those are ignored, as RocksDB
    itself allows for files from newer versions, and a note says so."""
    import rocksdict

    text = Path(path).read_text()
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-verify-") as tmp:
        shutil.copy(path, Path(tmp) / "OPTIONS-000001")
        try:
            options, families = rocksdict.Options.load_latest(tmp)
        except Exception as exc:  # noqa: BLE001 - rocksdict raises a generic exception for parse errors
            if "Could not find option" not in str(exc):
                raise ExportError(f"{path}: RocksDB cannot load it: {exc}") from None
            options, families = rocksdict.Options.load_latest(tmp, ignore_unknown_options=True)
            notes.append(f"options unknown to rocksdict's RocksDB were ignored ({exc}; the file is from RocksDB "
                         f"{options_file.lookup(options_file.parse_options(text), 'Version.rocksdb_version')})")
        options.create_if_missing(True)
        try:
            db = rocksdict.Rdict(f"{tmp}/db", options, column_families=families)
        except Exception as exc:  # noqa: BLE001 - e.g. a format_version newer than rocksdict's RocksDB reads
            version = options_file.lookup(options_file.parse_options(text), "Version.rocksdb_version")
            raise ExportError(f"{path}: rocksdict's RocksDB cannot open a DB with it ({exc}); the file is from "
                              f"RocksDB {version}: tune on the version your application runs (--rocksdb-version)") from None
        db[b"rocksdb-tuner"] = b"verify"
        db.close()
        written = Path(sorted(glob.glob(f"{tmp}/db/OPTIONS-*"))[-1]).read_text()
        verdict = "not run"
        if binary:
            run = subprocess.run([binary, f"--options_file={path}", "--benchmarks=fillrandom", "--num=1000",
                                  f"--db={tmp}/bench", "--progress_reports=false"], capture_output=True, text=True)
            last = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:] or [""]
            verdict = "accepted" if run.returncode == 0 else f"rejected (exit {run.returncode}): {last[0]}"
    source, back = options_file.parse_options(text), options_file.parse_options(written)
    checks = []
    for key in dict.fromkeys(o.options_key for o in catalogue().values() if o.options_key):
        want, got = options_file.lookup(source, key), options_file.lookup(back, key)
        if key in options_file.NOT_SERIALIZED:
            checks.append(Check(key, want, got, True, "RocksDB does not write it to OPTIONS files; not checked"))
        else:
            checks.append(Check(key, want, got, want == got))
    return checks, verdict, notes
