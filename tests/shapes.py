"""The shape a committed record was measured in, and the shape a document says a figure of it has.

A record's shape (experiments/README.md, "Figures and their files", says the same for readers) is read from the
record, first rule that applies:

1. its ``defaults`` (what every run started from, written since commit 02e33a4): mode ``library`` is the
   deployed shape, ``db_bench-7.8.3`` the pinned one;
2. ``pinned_defaults`` (the pins the summaries before that commit list) is the pinned shape;
3. a date (``when``, ``date``, ``started``, ``recorded``, a workload's ``when``) before that commit,
   2026-11-27 12:04:16 UTC: until then every run started from 7.8.3's db_bench defaults, so the pinned shape.

A record after that commit that says neither is an error, not a guess. A record that names no db_bench it
ran (a build's cost, a replay of recorded runs, the tracker's overhead) has no shape. A file that is not
JSON (a console log, a ``.jsonl`` of runs) has the shape of the JSON that describes it: the one of its
name (``X.console.log``, ``X.jsonl``: ``X.json``), else the ``summary.json`` or ``result.json`` beside it.

Where a document quotes a figure, the innermost of these that names a shape (:data:`PHRASES`) says its
shape: its sentence, its place (list item, table row, line of a block), the paragraph that introduces its
block or its table, then each section around it, innermost first (its heading with its lead paragraph).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from objectives.defaults import LIBRARY, PINNED_7_8
from tests.figures import Figure, Place, places

ROOT = Path(__file__).resolve().parents[1]
PINNED, DEPLOYED = "pinned", "deployed"
PHRASES = {PINNED: re.compile(r"\bpinned[- ](?:db_bench )?shape", re.IGNORECASE),
           DEPLOYED: re.compile(r"\bdeployed[- ]shape", re.IGNORECASE)}
LIBRARY_SINCE = datetime(2026, 11, 27, 12, 4, 16, tzinfo=UTC)  # commit 02e33a4: runs start from the library defaults
SHAPE_OF_MODE = {LIBRARY: DEPLOYED, PINNED_7_8: PINNED}  # a record's defaults.mode -> its shape
_DATE_KEYS = ("when", "date", "started", "recorded", "first_trial_started")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)")


class ShapeError(ValueError):
    """A record that cannot tell the shape it was measured in."""


def describing(path: Path) -> Path:
    """The JSON that describes the record file ``path`` (itself when it is one)."""
    if path.suffix == ".json":
        return path
    stems = [path.name.rsplit(".", n)[0] for n in range(1, path.name.count(".") + 1)]  # X.console.log: X.console, X
    for candidate in (*(path.with_name(f"{stem}.json") for stem in stems), path.parent / "summary.json",
                      path.parent / "result.json", *(up / "summary.json" for up in path.parents[1:4])):
        if candidate.is_file():  # a file deep in a study's OUT (its preload's logs): the study's summary.json
            return candidate
    raise ShapeError(f"{path}: no JSON of its name nor summary.json or result.json beside it or a study's summary.json "
                     "above it says its shape")


@functools.cache
def shape(path: Path) -> str | None:
    """The shape the record ``path`` was measured in, :data:`PINNED` or :data:`DEPLOYED`, or None for a
    record of no db_bench run (the rules are the module's)."""
    source = describing(path)
    record = json.loads(source.read_text())
    if record.get("backend") == "rate" and record.get("defaults") is None:
        return DEPLOYED  # the rate backend runs on its RocksDB's library defaults only (it refuses --defaults)
    if "defaults" not in record and isinstance(record.get("tuner"), dict) and "out" in record["tuner"]:
        # versus_plain_optuna.at_a_rate's, before it kept its defaults: the plain script's runs start from
        # defaults_of's default mode, the library's, beside the build the study it compares with ran on
        return shape(ROOT / record["tuner"]["out"] / "summary.json")
    if "defaults" in record:
        mode = record["defaults"].get("mode") if isinstance(record["defaults"], dict) else None
        if mode not in SHAPE_OF_MODE:
            raise ShapeError(f"{source}: defaults.mode {mode!r} is neither {LIBRARY!r} (the deployed shape) nor "
                             f"{PINNED_7_8!r} (the pinned one): tests/shapes.py does not say how its figures are labelled")
        return SHAPE_OF_MODE[mode]
    if "db_bench" not in record and "versions" not in record:
        return None
    if "pinned_defaults" in record:
        return PINNED
    dates = list(_dates(record))
    if dates and max(dates) < LIBRARY_SINCE:
        return PINNED
    raise ShapeError(f"{source}: no defaults, no pinned_defaults and no date before {LIBRARY_SINCE:%Y-%m-%d %H:%M} "
                     "UTC: its shape is unknown")


def _dates(record: dict[str, Any], depth: int = 0) -> Iterator[datetime]:
    """The dates a record gives at its top level and, for its workloads and its ``when``, one level down."""
    for key, value in record.items():
        if key in _DATE_KEYS and isinstance(value, (int, float)):
            yield datetime.fromtimestamp(value, UTC)
        elif key in _DATE_KEYS and isinstance(value, str) and (m := _DATE.search(value)):
            yield datetime.fromisoformat(f"{m[1]} {m[2]}").replace(tzinfo=UTC)
        elif key in (*_DATE_KEYS, "workloads") and isinstance(value, dict) and depth < 2:
            for inner in value.values():
                yield from _dates(inner if isinstance(inner, dict) else {key: inner}, depth + 1)


READING: list[set[Path]] = []  # while :func:`reads` is open: the record files opened


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and READING and isinstance(args[0], (str, Path)):
        path = Path(args[0])
        if {"experiments", "results"} <= set(path.parts[:-1]) and path.suffix != ".md":
            READING[-1].add(path.resolve())


_HOOKED: list[bool] = []


@contextmanager
def reads() -> Iterator[set[Path]]:
    """The committed record files (under ``experiments/*/results/``, documents aside) opened meanwhile."""
    if not _HOOKED:
        sys.addaudithook(_audit)  # an audit hook cannot be removed: it records only while READING holds a set
        _HOOKED.append(True)
    opened: set[Path] = set()
    READING.append(opened)
    try:
        yield opened
    finally:
        READING.remove(opened)


def labels(text: str, figure: Figure) -> set[str]:
    """The shapes named by the innermost scope of ``figure`` (of the document ``text``) that names one."""
    for scope in _scopes(text, figure):
        named = {name for name, phrase in PHRASES.items() if phrase.search(scope)}
        if named:
            return named
    return set()


def _scopes(text: str, figure: Figure) -> Iterator[str]:
    """The figure's sentence, its place, its block's or table's lead, then its sections, innermost first."""
    place = figure.place
    start = place.text.rfind(". ", 0, figure.start) + 1
    end = place.text.find(". ", figure.start + len(figure.text))
    yield place.text[start:len(place.text) if end == -1 else end]
    yield place.text
    yield place.intro
    found = places(text, blocks="output")
    at = next(i for i, p in enumerate(found) if p.line == place.line)
    if place.text.startswith("|"):
        yield next((p.text for p in reversed(found[:at]) if not p.text.startswith(("|", "<!--"))), "")  # a block's marker aside
    level = 7
    for i in range(at, -1, -1):
        depth = _level(found[i])
        if depth and depth < level:
            level = depth
            lead = found[i + 1].text if i + 1 < len(found) and not _level(found[i + 1]) else ""
            yield f"{found[i].text} {lead}"


def _level(place: Place) -> int:
    """A heading's level (``#`` 1, ``##`` 2, ...), 0 for any other place."""
    m = re.match(r"(#+) ", place.text)
    return len(m[1]) if m else 0


def mislabelled(doc: str, text: str, bound: dict[Figure, frozenset[Path]], root: Path) -> list[str]:
    """Each figure of ``bound`` (figures of ``doc``, with the records they were read from) whose place does
    not name the pinned shape though a record of it is pinned, or names only the pinned shape though its
    records are all deployed: ``doc:line: 'figure' (record, ...): what is wrong``."""
    wrong = []
    for figure, records in bound.items():
        of: dict[str | None, list[str]] = {}
        for record in sorted(records):
            of.setdefault(shape(record), []).append(str(record.relative_to(root) if record.is_relative_to(root) else record))
        named = labels(text, figure)
        if PINNED in of and PINNED not in named:
            wrong.append(f"{doc}:{figure.line}: {figure.text!r} ({', '.join(of[PINNED])}): from a pinned-shape "
                         "record, not labelled so")
        elif of.keys() - {None} == {DEPLOYED} and named == {PINNED}:
            wrong.append(f"{doc}:{figure.line}: {figure.text!r} ({', '.join(of[DEPLOYED])}): from a deployed-shape "
                         "record, labelled pinned")
    return wrong
