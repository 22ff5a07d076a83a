"""Quantitative figures in the documents, and which of them no test binds to a file.

What counts as a figure (experiments/README.md, "Figures and their files", says it in brief for readers): in a
document's running text, list items, headings, table rows and blocks of output (fenced blocks without a
language tag; a block with one, ```sh, is code), not in `inline code` nor in a link's target, a number
written as one of

- a ratio: a decimal, or a range of whole numbers, followed by ``x``, ``×`` or `` times`` (``1.12x``,
  ``3.6 times``, ``8-10 times``; a single whole number, ``16x``, is a scale factor);
- an interval: two decimals joined by a hyphen or dash (``1.04-1.20``);
- a percentage: a number followed by ``%`` (``12 %``, ``20-70 %``), except the confidence level of
  "95 % CI" / "95 % interval" / "95 % confidence" / "95 % t interval";
- a throughput: a number with a ``k`` suffix (``124k``, ``30.6k``), one with thousands separators
  (``153,588``), or any number followed by ``ops/s`` or ``keys/s``;
- a measured time: a decimal number of seconds, milliseconds or minutes (``37.4 s``, ``0.42 ms``), any
  number of milliseconds, ``N min M s``, or a whole number of seconds from 10 on that is not a multiple
  of 10 (``22 s``, ``612 s``; ``5 s``, ``10 s``, ``30 s``, ``120 s`` and ``1200 s`` are phase lengths,
  budgets, sleeps and other settings);
- a measured size: a decimal number of bytes with a unit (``8.2 MB``, ``1.8 GiB``; whole sizes,
  ``2 GiB``, are settings);
- a bare decimal (``0.87``, ``2.55``: a write amplification, a rank correlation, a p-value), except a
  version number (one that follows "RocksDB", "db_bench", "version", "Python", "Optuna", "MLflow",
  "Ray", ``>=``, ``≥`` or ``v``, or that has two dots).

Dates, times of day, commit ids, integer counts, integer sizes and durations of settings do not count.
Each figure is either bound (a test of tests/test_record.py reads it from a committed record and asserts
it in its place: :class:`Binding` collects what they assert) or labelled: its sentence says where it
comes from and, after the figure, that it is ``not recorded here`` (e.g. "RocksDB's wiki gives 1.5x,
not recorded here"; the label covers the figures before it in its sentence, and a block of output's
when the paragraph that introduces the block says so). A value one sets (a flag's, a preset's, a
test's threshold) is a setting, not a figure: a document writes it as code (```0.25```) or states it
where a test reads it from the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

LABEL = "not recorded here"
_NUMBER = r"\d+(?:\.\d+)?"
_DECIMAL = r"\d+\.\d+"
_UNIT = r"(?:s|ms|min|minutes|seconds)"
FIGURE = re.compile("|".join(rf"(?:{p})" for p in (
    rf"{_NUMBER} min \d+ s\b",  # 22 min 44 s
    rf"{_DECIMAL} ?[-–] ?{_DECIMAL}",  # 1.04-1.20
    rf"{_NUMBER}(?: ?[-–] ?{_NUMBER})? ?%",  # 12 %, 20-70 %
    rf"{_NUMBER}k(?: ?[-–] ?{_NUMBER}k)?\b",  # 124k, 30.6k-41.9k
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?",  # 153,588
    rf"{_NUMBER} (?:ops|keys)/s",  # 640 ops/s
    rf"(?:{_DECIMAL}|\d+ ?[-–] ?\d+) ?(?:[x×]|times)(?![\w])",  # 1.12x, 3.6 times, 8-10 times
    rf"{_DECIMAL} {_UNIT}\b",  # 37.4 s
    rf"{_NUMBER} ms\b",  # 72 ms
    r"(?<![\d.,])\d+[1-9] s\b",  # 22 s, 612 s: whole seconds from 10 on, not a multiple of 10
    rf"{_DECIMAL} (?:[KMGT]i?B)\b",  # 8.2 MB
    rf"(?<![\w.]){_DECIMAL}(?![\w.]|\.\d)",  # 0.87
)))
_CONFIDENCE = re.compile(r"95 ?% (?:CI|interval|confidence|t interval)")
_VERSION = re.compile(r"(?:RocksDB|rocksdb|db_bench|version|versions|Python|Optuna|MLflow|Ray|>=|≥|v) ?$")


@dataclass(frozen=True)
class Place:
    """A paragraph, list item, table row, heading or line of a fenced block (line breaks joined), with
    its first line; a block's line also with the paragraph that introduces the block."""
    line: int
    text: str
    intro: str = ""


@dataclass(frozen=True)
class Figure:
    """A figure of a document: its line, its text and its place."""
    line: int
    text: str
    place: Place
    start: int


def places(text: str, blocks: str = "all") -> list[Place]:
    """The places of a Markdown text, emphasis removed. ``blocks`` says which fenced blocks' lines are
    places too: ``all``, or ``output`` (the blocks without a language tag: what a command printed)."""
    found: list[Place] = []
    open_place, fenced, tagged, intro = False, False, False, ""
    for number, line in enumerate(text.replace("**", "").splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced, open_place = not fenced, False
            tagged, intro = stripped != "```", found[-1].text if found else ""
        elif fenced:
            if blocks == "all" or not tagged:
                found.append(Place(number, " ".join(stripped.split()), intro))
        elif stripped.startswith(("|", "#")):
            found.append(Place(number, " ".join(stripped.split())))
            open_place = False
        elif not stripped:
            open_place = False
        elif open_place and not re.match(r"(?:[-*+]|\d+\.) ", stripped):
            found[-1] = Place(found[-1].line, found[-1].text + " " + " ".join(stripped.split()))
        else:
            found.append(Place(number, " ".join(stripped.split())))
            open_place = True
    return found


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _masked(text: str) -> str:
    """``text`` with inline code and link targets blanked (kept at their length, so offsets hold)."""
    return re.sub(r"\]\([^)]*\)", _blank, re.sub(r"`[^`]*`", _blank, text))


def figures(text: str) -> list[Figure]:
    """Every figure of a Markdown text, in order."""
    found = []
    for place in places(text, blocks="output"):
        masked = _masked(place.text)
        for m in FIGURE.finditer(masked):
            figure = m.group(0)
            if _CONFIDENCE.match(masked, m.start()) or (
                    re.fullmatch(_DECIMAL, figure) and _VERSION.search(masked[:m.start()])):
                continue
            found.append(Figure(_line_of(text, place, m.start()), figure, place, m.start()))
    return found


def _line_of(text: str, place: Place, offset: int) -> int:
    """The line of ``offset`` within ``place``: its words counted along the document's lines."""
    words = len(place.text[:offset].split())
    lines = text.replace("**", "").splitlines()
    number = place.line
    while number <= len(lines) and words >= len(lines[number - 1].split()):
        words -= len(lines[number - 1].split())
        number += 1
    return min(number, len(lines))


@dataclass
class Binding:
    """What the tests assert where: per document, the strings each asserted within a place, each with the
    committed records the test had read (the files its figures come from)."""
    quoted: dict[str, list[tuple[str, frozenset[Path]]]] = field(default_factory=dict)
    reading: set[Path] = field(default_factory=set)  # the records the test that binds now has read so far

    def bind(self, doc: str, text: str) -> None:
        self.quoted.setdefault(doc, []).append((" ".join(text.replace("**", "").split()), frozenset(self.reading)))

    def unbound(self, doc: str, text: str) -> list[Figure]:
        """The figures of ``text`` (the document ``doc``) neither inside a bound string nor labelled."""
        return [f for f in figures(text) if self.records(doc, f) is None and not _labelled(f)]

    def records(self, doc: str, figure: Figure) -> frozenset[Path] | None:
        """The records of the bound strings that hold ``figure`` whole, or None where none does."""
        end, found = figure.start + len(figure.text), None
        for quoted, records in self.quoted.get(doc, []):
            at = figure.place.text.find(quoted)
            while at != -1:
                if at <= figure.start and end <= at + len(quoted):
                    found = (found or frozenset()) | records
                at = figure.place.text.find(quoted, at + 1)
        return found


def _labelled(figure: Figure) -> bool:
    """The rest of the figure's sentence says it is :data:`LABEL` (a label covers the figures before it), or,
    in a block, the paragraph that introduces the block says so."""
    text = figure.place.text
    end = text.find(". ", figure.start + len(figure.text))
    return LABEL in text[figure.start:len(text) if end == -1 else end] or LABEL in figure.place.intro


def documents(root: Path) -> list[Path]:
    """The documents whose figures are bound or labelled: README, docs/, the research questions' notes and
    the S0-S4 studies' readings and overview notes (the written parts of their generated reports)."""
    studies = root / "experiments" / "studies" / "results"
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "experiments").glob("*/README.md")),
            *sorted(studies.glob("*/reading.md")), studies / "overview-notes.md"]
