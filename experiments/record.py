"""`make record`: the blocks of the documents that are made from records, made again from them.

A document marks such a block with two HTML comments, which Markdown does not show:

    <!-- record: service_level.threads_or_memory -->
    | configuration | P99.9 | write amp |
    ...
    <!-- /record -->

``python -m experiments.record`` (``make record``) rewrites each block with what its generator makes now
(:func:`generators`: a name -> a function returning the block's Markdown, each beside its experiment)
and names the blocks it changed; ``--check`` changes nothing and exits 1 naming each block that
differs (tests/test_record.py holds every block to it). Each block ends with the line :func:`stamp`
makes: the record, the commit and date it was measured at, and whether the code that measured it has
changed since (``git diff`` between that commit and the working tree over the paths the generator
names), so a figure made by older code says so where it is quoted.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"^<!-- record: (?P<name>[\w.]+) -->\n(?P<body>.*?)^<!-- /record -->$", re.MULTILINE | re.DOTALL)
_OPEN = re.compile(r"^<!-- record: ([\w.]+) -->$", re.MULTILINE)


class RecordError(ValueError):
    """A block that names no generator, or one left open."""


@dataclass(frozen=True)
class Block:
    """A generated block of a document: its generator's name, its first line and what it holds now."""

    doc: str
    name: str
    line: int
    body: str


def documents(root: Path = ROOT) -> list[Path]:
    """The documents that may hold generated blocks: README.md, docs/*.md, experiments/*/README.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "experiments").glob("*/README.md"))]


def blocks(doc: str, text: str) -> list[Block]:
    """The generated blocks of ``text`` (the document ``doc``); RecordError for one left open."""
    found = [Block(doc, m["name"], text.count("\n", 0, m.start()) + 1, m["body"]) for m in _BLOCK.finditer(text)]
    if len(found) != len(_OPEN.findall(text)):
        raise RecordError(f"{doc}: a '<!-- record: NAME -->' block without its '<!-- /record -->'")
    return found


def generate(name: str) -> str:
    """The Markdown that block ``name`` holds, as its generator makes it now, ending with a newline."""
    known = generators()
    if name not in known:
        raise RecordError(f"no generator named {name!r} (experiments/record.py: {', '.join(sorted(known))})")
    made = known[name]()
    return made if made.endswith("\n") else made + "\n"


def fill(doc: str, text: str) -> tuple[str, list[Block]]:
    """``text`` with every block made again, and the blocks that changed."""
    found = blocks(doc, text)
    made = {b.name: generate(b.name) for b in found}  # once each: a generator reads its record and runs git
    changed = [b for b in found if made[b.name] != b.body]
    return _BLOCK.sub(lambda m: f"<!-- record: {m['name']} -->\n{made[m['name']]}<!-- /record -->", text), changed


def stamp(record: Path, commit: str | None, date: str, code: tuple[str, ...], brief: bool = False) -> str:
    """The block's last line: where its figures come from, and whether the ``code`` that measured them
    has changed since ``commit`` (its first word, a commit id) in this checkout; ``None`` for a record
    that names no commit (those written before the scripts kept one). ``brief`` names the changed files
    by their top-level folders, not one by one (:func:`in_brief`: for code as wide as the tuner itself,
    whose list would be a long line where the block is quoted)."""
    on = host_of(record)
    if commit is None:
        return (f"Made by `make record` from `{record.relative_to(ROOT)}`, measured on {date[:10]}{on}; the record "
                "names no commit.")
    made = f"Made by `make record` from `{record.relative_to(ROOT)}`, measured at {commit.split()[0]} on {date[:10]}{on}"
    differ = changed_since(commit, code)
    if differ is None:
        return f"{made}; that commit is not in this checkout's history."
    if not differ:
        return f"{made}; the code that measured it ({', '.join(code)}) is unchanged since."
    return f"{made}; the code that measured it has changed since, in {in_brief(differ) if brief else ', '.join(differ)}."


def cpu_name(cpu: str) -> str:
    """A CPU's model name as prose gives it: without the (R) and (TM) marks."""
    return " ".join(re.sub(r"\((R|TM)\)", "", cpu).split())


@functools.cache
def host_of(record: Path) -> str:
    """", on a 2-core AMD EPYC": the host whose CPU the record names (an experiment's ``machine``, a study
    summary's ``host``), for a stamp; "" for a record that names none."""
    try:
        data = json.loads(record.read_text()) if record.suffix == ".json" and record.is_file() else None
    except (OSError, ValueError):
        return ""
    host = (data.get("machine") or data.get("host")) if isinstance(data, dict) else None
    cpu = host.get("cpu") if isinstance(host, dict) else None
    if not isinstance(cpu, str) or not cpu:
        return ""
    model = cpu_name(cpu)
    cores = host.get("cores") if isinstance(host, dict) else None
    return f", on a {cores}-core {model}" if isinstance(cores, int) else f", on {model}"


def gathered(records: list[tuple[Path, str | None, str]], code: tuple[str, ...]) -> str:
    """One line for several records of one folder that the same ``code`` measured (a block that quotes a job
    run on several days), in place of a :func:`stamp` each: every record (its path in the folder, less a
    ``summary.json``) with the commit and day it was measured at, and the top-level folders (:func:`in_brief`)
    of the code changed since, those since the newest record's commit named apart when fewer."""
    if len(records) == 1:
        return stamp(*records[0], code, brief=True)
    folder = Path(os.path.commonpath([path.parent for path, _, _ in records]))
    hosts = {host_of(path) for path, _, _ in records}
    each = len(hosts) > 1  # the host named per record where they differ, once where one host ran them all
    named, since = [], {}
    for path, commit, date in records:
        name = str(path.relative_to(folder)).removesuffix("/summary.json")
        on = host_of(path) if each else ""
        if commit is None:
            named.append(f"`{name}` (on {date[:10]}{on}, the record names no commit)")
            continue
        differ = changed_since(commit, code)
        named.append(f"`{name}` (at {commit.split()[0]} on {date[:10]}{on}"
                     + ("; that commit is not in this checkout's history)" if differ is None else ")"))
        if differ is not None:
            since[name] = differ
    made = (f"Made by `make record` from {len(records)} records in `{folder.relative_to(ROOT)}/`: {', '.join(named)}"
            + ("" if each or not hosts - {""} else f"; all{hosts.pop().removeprefix(',')}"))
    changed = [name for name, differ in since.items() if differ]
    if not changed:
        return f"{made}; the code that measured them ({', '.join(code)}) is unchanged since." if since else f"{made}."
    every = in_brief(sorted({path for differ in since.values() for path in differ}))
    newest = in_brief(list(since.values())[-1])
    whose = "each" if len(changed) == len(since) else listed_names(changed)
    return (f"{made}; the code that measured {whose} has changed since, in {every}"
            + (f" (since the newest, in {newest})" if newest and newest != every else "") + ".")


def listed_names(names: list[str]) -> str:
    """Record names in a sentence, each in backticks: "`a`, `b` and `c`"."""
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def changed_since(commit: str, code: tuple[str, ...]) -> list[str] | None:
    """The files of ``code`` that differ between ``commit`` (its first word, a commit id) and the working
    tree; None when this checkout's history lacks that commit."""
    ref = re.match(r"[0-9a-f]{7,40}", commit)
    if ref is None or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{ref[0]}^{{commit}}"],
                                     capture_output=True).returncode != 0:
        return None
    return subprocess.run(["git", "-C", str(ROOT), "diff", "--name-only", ref[0], "--", *code],
                          capture_output=True, text=True, check=True).stdout.split()


def commit_before(started: str) -> str | None:
    """The commit a record that names none was measured at: the last on this checkout's first-parent line
    before ``started`` (when its first run began, "YYYY-MM-DD HH:MM:SS UTC"), abbreviated to 7 characters as the
    records' stamps are (git's own default grows with the clone's objects); None when there is none."""
    found = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--first-parent", "--abbrev=7", "--format=%h",
                            f"--before={started}"], capture_output=True, text=True).stdout.strip()
    return found or None


def in_brief(paths: list[str]) -> str:
    """``objectives/, tuner/``: the top-level folders of ``paths`` (relative to the checkout; a file at
    the top by its name), in order: what changes only when a folder is first touched, not with every
    commit to the code, so that a block quoting it is not made stale by each."""
    return ", ".join(sorted({f"{path.split('/')[0]}/" if "/" in path else path for path in paths}))


def generators() -> dict[str, Callable[[], str]]:
    """Every block's generator by name: ``<experiment>.<table>``, each beside its experiment's records."""
    from experiments.default_job import tables as default_job  # they stamp with this module's stamp()
    from experiments.headroom import tables as headroom
    from experiments.scale_transfer import tables as scale_transfer
    from experiments.service_level import tables as service_level
    from experiments.studies import tables as studies
    from experiments.versus_plain_optuna import tables as versus_plain_optuna

    modules = {"default_job": default_job, "headroom": headroom, "scale_transfer": scale_transfer,
               "service_level": service_level, "studies": studies, "versus_plain_optuna": versus_plain_optuna}
    return {f"{experiment}.{name}": table for experiment, module in modules.items() for name, table in module.TABLES.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each block that differs")
    args = p.parse_args()
    stale = []
    for path in documents():
        doc, text = str(path.relative_to(ROOT)), path.read_text()
        made, changed = fill(doc, text)
        stale += [f"{b.doc}:{b.line}: {b.name}" for b in changed]
        if changed and not args.check:
            path.write_text(made)
    verb = "differ from their records" if args.check else "made again"
    print("\n".join(f"{s}: {verb}" for s in stale) if stale else "every generated block is as its record makes it")
    if stale and args.check:
        sys.exit(1)


if __name__ == "__main__":
    main()
