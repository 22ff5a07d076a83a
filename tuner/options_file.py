"""RocksDB OPTIONS files: reading values by key, checking tuned values, writing the best configuration.

A key is ``SECTION.name`` or ``SECTION.struct.field`` where SECTION is ``DBOptions``, ``CFOptions``
(the default column family) or ``TableOptions/BlockBasedTable``; e.g. ``CFOptions.write_buffer_size``
or ``CFOptions.compression_opts.level``. The OPTIONS file a trial's DB wrote is the source of
truth: ``OPTIONS.ini`` is that file, plus what RocksDB reads from such a file but does not write into
one (``block_cache``, ``rate_limiter_bytes_per_sec``).
"""

from __future__ import annotations

import re
from typing import SupportsInt

from objectives.defaults import ENUMS, LIBRARY_DEFAULT_LEVEL
from objectives.options_ini import SECTION_RE as _SECTION_RE
from objectives.options_ini import parse_options

# option name -> {its text in the OPTIONS file: db_bench's value}, where they are not the same words
WORDS = {key.split(".", 1)[1]: words for key, words in ENUMS.items() if key.startswith("CFOptions.")}
BLOCK_CACHE_KEY = "TableOptions/BlockBasedTable.block_cache"
RATE_LIMITER_KEY = "DBOptions.rate_limiter_bytes_per_sec"
# Keys whose value RocksDB reads from an OPTIONS file but does not write into one.
NOT_SERIALIZED = {BLOCK_CACHE_KEY, RATE_LIMITER_KEY}
# Keys whose value 0 means "none" and must be left out of the file: RocksDB would read
# rate_limiter_bytes_per_sec=0 as a limiter of 0 bytes per second, which never lets flush write.
NONE_AT_ZERO = {RATE_LIMITER_KEY}


def lookup(sections: dict[str, dict[str, str]], key: str) -> str | None:
    """The text value of ``key`` (see module doc), or None if absent."""
    section, name, field = _split(key)
    value = sections.get(section, {}).get(name)
    if value is None or not field:
        return value
    inner = dict(part.split("=", 1) for part in value.strip("{}").split(";") if "=" in part)
    return inner.get(field)


def _split(key: str) -> tuple[str, str, str]:
    """(section, option name, struct field or "") of a key."""
    if key.startswith("TableOptions/BlockBasedTable."):
        section, rest = "TableOptions/BlockBasedTable", key.split(".", 1)[1]
    else:
        section, rest = key.split(".", 1)
    name, _, field = rest.partition(".")
    return section, name, field


def encode(key: str, value: object) -> str:
    """How RocksDB writes a tuned value under ``key`` in its OPTIONS file."""
    name = key.rsplit(".", 1)[-1]
    if name in WORDS:
        return next((text for text, flag in WORDS[name].items() if str(flag) == str(value)), str(value))
    if name == "filter_policy":
        if not isinstance(value, (str, SupportsInt)):
            raise TypeError(f"{key}: {value!r} is not a number of bits per key")
        return f"bloomfilter:{value}:false" if int(value) > 0 else "nullptr"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def decode(key: str, text: str | None) -> int | str | None:
    """A tuned value as db_bench takes it, from its text under ``key`` in an OPTIONS file (the inverse
    of :func:`encode`); None where the file does not say (absent, or a library default)."""
    if text is None:
        return None
    name = key.rsplit(".", 1)[-1]
    if name in WORDS:
        flag = WORDS[name].get(text)
        return flag if isinstance(flag, (int, str)) else None
    if name == "filter_policy":
        if text == "nullptr":
            return 0
        match = re.match(r"bloomfilter:([\d.]+)", text)
        return int(float(match[1])) if match else None
    if library_default(key, text):
        return None
    try:
        return int(text)
    except ValueError:
        return text


def library_default(key: str, text: str | None) -> bool:
    """Whether ``text`` under ``key`` leaves the choice to the library, naming no value a flag takes:
    compression_opts.level 32767, "the library's default level"."""
    return key.rsplit(".", 1)[-1] == "level" and text == LIBRARY_DEFAULT_LEVEL


def mismatches(options_text: str, expected: dict[str, tuple[str, object]]) -> list[str]:
    """Compare ``{param: (options_key, value)}`` with the OPTIONS file; describe each difference
    (``param: asked ...``). A key RocksDB does not write is compared where the file has it (the block
    cache's capacity, added from the DB's LOG)."""
    sections = parse_options(options_text)
    problems = []
    for param, (key, value) in expected.items():
        found = lookup(sections, key)
        if key in NOT_SERIALIZED and found is None:
            continue
        want = encode(key, value)
        if found != want:
            where = "LOG has its capacity " if key in NOT_SERIALIZED else f"OPTIONS file has {key}="
            problems.append(f"{param}: asked {want}, the DB's {where}{found}")
    return problems


def mismatched(problems: list[str]) -> set[str]:
    """The parameters :func:`mismatches` named."""
    return {line.split(":", 1)[0] for line in problems}


def with_block_cache(options_text: str, capacity: int | None) -> str:
    """Set ``block_cache=<capacity>`` in the block-based table section (RocksDB parses it as an LRU
    cache), replacing one the text has."""
    return options_text if capacity is None else with_values(options_text, {BLOCK_CACHE_KEY: int(capacity)})


def with_unwritten(options_text: str, values: dict[str, object]) -> str:
    """``options_text`` (a file RocksDB wrote) with those of ``{options_key: value}`` RocksDB does not
    write (:data:`NOT_SERIALIZED`: the block cache's capacity, the rate limiter's rate) set, so that the
    file holds every value a configuration ran with; a section the text lacks (a program that wrote no
    OPTIONS file: an empty one) gets nothing."""
    lines = options_text.splitlines()
    return with_values(options_text, {key: value for key, value in values.items()
                                      if key in NOT_SERIALIZED and _section_lines(lines, _split(key)[0])[0] is not None})


def with_values(options_text: str, values: dict[str, object]) -> str:
    """``options_text`` with each ``{options_key: value}`` set as RocksDB writes it (:func:`encode`): a
    line replaced, a field of a struct value (``compression_opts.level``) replaced, a line added at the
    top of its section (``block_cache``, which RocksDB does not write), or, for a key whose 0 means
    none (:data:`NONE_AT_ZERO`), a 0 as no line."""
    lines = options_text.splitlines()
    for key, value in values.items():
        section, name, field = _split(key)
        start, end = _section_lines(lines, section)
        if start is None:
            raise ValueError(f"{key}: the OPTIONS file has no section {section}")
        text = encode(key, value)
        at = next((i for i in range(start + 1, end) if lines[i].strip().partition("=")[0].strip() == name), None)
        if key in NONE_AT_ZERO and text == "0":
            if at is not None:
                del lines[at]
            continue
        if at is None:
            if field:
                raise ValueError(f"{key}: the OPTIONS file has no {name}")
            lines.insert(start + 1, f"  {name}={text}")
            continue
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        if field:
            inner = lines[at].split("=", 1)[1].strip().strip("{}")
            fields = [part for part in inner.split(";") if part and part.split("=", 1)[0] != field]
            text = "{" + "".join(f"{part};" for part in [*fields, f"{field}={text}"]) + "}"
        lines[at] = f"{indent}{name}={text}"
    return "\n".join(lines) + "\n"


def differing(options_text: str, other_text: str, keys: set[str]) -> set[str]:
    """Those of ``keys`` whose values the two OPTIONS files write differently (or only one writes)."""
    ours, theirs = parse_options(options_text), parse_options(other_text)
    return {key for key in keys if lookup(ours, key) != lookup(theirs, key)}


def only(options_text: str, keys: set[str]) -> str:
    """``options_text`` cut to its ``[Version]`` section and, in the default column family's sections,
    the lines of ``keys`` (a struct's whole line for a key of one of its fields): an OPTIONS file RocksDB
    loads with every option it does not list at the option's default."""
    wanted = {(_split(key)[0], _split(key)[1]) for key in keys}
    kept: list[str] = []
    section: str | None = None
    for line in options_text.splitlines():
        match = _SECTION_RE.match(line.strip())
        if match:
            section = match[1] if match[1] == "Version" or match[2] in (None, "default") else None
            if section is not None:
                kept += ["", line] if kept else [line]
        elif section == "Version" and line.strip() or (section, line.strip().partition("=")[0].strip()) in wanted:
            kept.append(line)
    return "\n".join(kept) + "\n"


def _section_lines(lines: list[str], section: str) -> tuple[int | None, int]:
    """(the header line of ``section``'s default-CF block or None, the line after its last one)."""
    start = None
    for i, line in enumerate(lines):
        match = _SECTION_RE.match(line.strip())
        if match and start is not None:
            return start, i
        if match and match[1] == section and match[2] in (None, "default"):
            start = i
    return start, len(lines)
