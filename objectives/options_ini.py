"""Reading RocksDB's OPTIONS files (INI text: ``[DBOptions]``, ``[CFOptions "default"]``,
``[TableOptions/BlockBasedTable "default"]``, lines of ``key=value``)."""

from __future__ import annotations

import re

SECTION_RE = re.compile(r'^\[(\w+(?:/\w+)?)(?: "([^"]*)")?\]\s*$')


def parse_options(text: str) -> dict[str, dict[str, str]]:
    """Sections (``DBOptions``, ``CFOptions``, ``TableOptions/BlockBasedTable``; default CF only)."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if match := SECTION_RE.match(stripped):
            kind, cf = match[1], match[2]
            current = sections.setdefault(kind, {}) if cf in (None, "default") else None
        elif current is not None and "=" in stripped:
            key, value = stripped.split("=", 1)
            current[key.strip()] = value.strip()
    return sections
