"""``--baseline FILE``: the configuration a user runs today, measured beside db_bench's defaults.

FILE is either a RocksDB OPTIONS file (measured with db_bench's ``--options_file``; since db_bench
replaces a file's block cache with its own ``--cache_size``, the file's ``block_cache=<bytes>``, as
``OPTIONS.ini`` carries it, is passed as ``--cache_size``) or db_bench flags (``--name=value``, one or
more per line, ``#`` comments). Its value of each tuned parameter, where the file says, is what the
re-validation's ablation puts an option back to.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from objectives.flags import OUTSIDE_FLAGS, RESERVED_FLAGS, Flag
from search_spaces import SearchSpace
from tuner import options_file
from tuner.model import UsageError

NAME = "current"


def load_baseline(path: Path, space: SearchSpace) -> tuple[dict[str, Flag], dict[str, Any], str]:
    """(flags to measure it with, its value of each tuned parameter, a description)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UsageError(f"--baseline {path}: cannot read it: {exc.strerror}") from None
    if "[DBOptions]" in text or "[CFOptions" in text:
        sections = options_file.parse_options(text)
        values = {p.name: options_file.decode(p.options_key, options_file.lookup(sections, p.options_key))
                  for p in space.parameters}
        flags: dict[str, Flag] = {"options_file": str(Path(path).resolve())}
        cache = options_file.decode("block_cache", options_file.lookup(sections, options_file.BLOCK_CACHE_KEY))
        if isinstance(cache, int):
            flags["cache_size"] = cache
        return flags, values, f"your configuration: the OPTIONS file {path}"
    flags = _flags(text, path)
    given = {s.flag: s.value for s in space.config_of(flags).settings}  # typed as the space's parameters
    typed = {p.name: given[p.flag] for p in space.parameters if p.flag in given}
    wrong = [p for p in space.parameters if p.name in typed and p.value_of(typed[p.name]) is None]
    if wrong:
        raise UsageError(f"--baseline {path}: --{wrong[0].flag}={typed[wrong[0].name]} is not a number, as the "
                         f"searched {wrong[0].name} takes")
    return flags, typed, f"your configuration: the db_bench flags in {path}"


def _flags(text: str, path: Path) -> dict[str, Flag]:
    flags: dict[str, Flag] = {}
    for line in text.splitlines():
        for word in shlex.split(line, comments=True):
            name, eq, value = word.lstrip("-").partition("=")
            if not eq or not name.replace("_", "").isalnum():
                raise UsageError(f"--baseline {path}: {word!r} is not a db_bench flag (--name=value) nor an "
                                 "OPTIONS file")
            if name in RESERVED_FLAGS | OUTSIDE_FLAGS:
                raise UsageError(f"--baseline {path}: --{name} is set by the tuner or names a path outside the "
                                 "trial's DB directory")
            flags[name] = value
    if not flags:
        raise UsageError(f"--baseline {path}: no db_bench flag in it")
    return flags

