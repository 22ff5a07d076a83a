"""The documents agree with the code and with themselves: every `tune` flag is listed in docs/cli.md in
its `--help` group with the parser's default and every value it takes, README's flag table says what
the parser says, a default stated beside a flag in running text is the parser's, every workload preset
is in docs/workloads.md's table with its phase lengths, and every relative link and image of README.md
and docs/*.md leads to a file (and heading) that exists."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from experiments import record
from experiments.studies.__main__ import build_parser as studies_parser
from objectives.workloads import load_workload, preset_names
from tuner.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# the notes beside the examples and each research question (experiments/X/README.md)
NOTES = sorted([*(ROOT / "examples").glob("**/README.md"), *(ROOT / "experiments").glob("**/README.md")])


SUBCOMMANDS: dict[str, argparse.ArgumentParser] = dict(
    next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices)
# every command's flags, rocksdb-tuner's subcommands' and the studies' runner's (docs/experiments.md): the same
# flag may be another command's too (--library, --work-dir, ...)
FLAGS: dict[str, dict[str, argparse.Action]] = {
    name: {option: a for a in parser._actions for option in a.option_strings}
    for name, parser in {**SUBCOMMANDS, "python -m experiments.studies": studies_parser()}.items()}


def _tune_groups() -> dict[str, list[argparse.Action]]:
    """`tune`'s flags by `--help` group, in the parser's order."""
    return {g.title: list(g._group_actions) for g in SUBCOMMANDS["tune"]._action_groups
            if g.title is not None and g.title not in ("positional arguments", "options", "optional arguments")}


GROUPS = _tune_groups()
GROUP_OF = {a.option_strings[0]: title for title, actions in GROUPS.items() for a in actions}
ACTION = {a.option_strings[0]: a for actions in GROUPS.values() for a in actions}
_STATED = re.compile(r"(?:\(|; )default:? (.+?)(?:[;,)]|: |$)")


def _stated_default(action: argparse.Action) -> str | None:
    """What the flag's `--help` says its default is, e.g. ``20`` of ``(default 20, or as many as ...)``."""
    m = _STATED.search(" ".join((action.help or "").split()))
    return m.group(1).strip() if m else None


def _agrees(cell: str, value: Any) -> bool:
    """A table's default cell (backticks dropped) states ``value``: the same number, or text that begins
    with it."""
    cell = cell.replace("`", "").strip()
    try:
        number = float(str(value))
    except ValueError:
        return cell.startswith(str(value))
    lead = re.match(r"[\d.]+", cell)
    return lead is not None and float(lead.group(0)) == number


def _check_default(flag: str, cell: str) -> None:
    action = ACTION[flag]
    stated = _stated_default(action)
    if isinstance(action, argparse._StoreTrueAction):
        assert cell == "off", f"{flag}: a switch, its default is off, not {cell!r}"
    elif action.default is not None:
        assert _agrees(cell, action.default), f"{flag}: the parser's default is {action.default!r}, the doc says {cell!r}"
        assert stated is None or _agrees(stated, action.default), \
            f"{flag}: --help says the default is {stated!r}, the parser has {action.default!r}"
    elif stated is not None:
        assert _agrees(cell, stated), f"{flag}: --help says the default is {stated!r}, the doc says {cell!r}"
    else:
        assert cell == "none", f"{flag}: neither the parser nor --help gives a default, the doc says {cell!r}"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _flag_rows(text: str) -> list[tuple[str | None, list[str]]]:
    """Table rows of flags, each with the `###` heading above it."""
    rows, heading = [], None
    for line in text.splitlines():
        if line.startswith("### "):
            heading = line[4:].strip()
        elif line.startswith("|") and "`--" in line.split("|")[1] + line.split("|")[2]:
            rows.append((heading, _cells(line)))
    return rows


def test_every_tune_flag_is_in_docs_cli_in_its_help_group_with_the_parsers_default():
    text = (ROOT / "docs/cli.md").read_text()
    rows = _flag_rows(text)
    listed: dict[str, list[str]] = {}
    for heading, (flag, default, _meaning) in rows:
        flag = flag.strip("`")
        assert flag in ACTION, f"docs/cli.md lists {flag}, which `tune` does not have"
        assert heading == GROUP_OF[flag], f"docs/cli.md lists {flag} under {heading!r}, --help under {GROUP_OF[flag]!r}"
        listed.setdefault(heading, []).append(flag)
        _check_default(flag, default)
    assert list(listed) == list(GROUPS), "docs/cli.md's groups are not --help's, in its order"
    for title, actions in GROUPS.items():
        assert listed[title] == [a.option_strings[0] for a in actions], f"docs/cli.md's {title!r} is not --help's"
    synopsis = text.split("```")[1]
    missing = [flag for flag in ACTION if f"[{flag}" not in synopsis]
    assert not missing, f"docs/cli.md's synopsis leaves out {missing}"



def test_the_synopsis_gives_every_flag_of_every_command():
    """docs/cli.md's synopsis names each command's every flag on that command's lines ("every command and
    flag", as README promises), not only `tune`'s."""
    command, named = "tune", {}
    for line in (ROOT / "docs/cli.md").read_text().split("```")[1].splitlines():
        command = (re.match(r"rocksdb-tuner (\w+)", line) or [None, command])[1]
        named.setdefault(command, set()).update(re.findall(r"(--[a-z0-9-]+)", line.split("#")[0]))
    for name, flags in FLAGS.items():
        if name.startswith("python "):
            continue
        missing = sorted(set(flags) - {"-h", "--help"} - {f for f in flags if not f.startswith("--")} - named.get(name, set()))
        assert not missing, f"docs/cli.md's synopsis of {name} leaves out {missing}"

def test_readmes_flag_table_is_grouped_as_help_groups_them_with_the_parsers_defaults():
    rows = [_cells(line) for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("| ") and "| `--" in line]
    assert len(rows) >= 10
    order = list(GROUPS)
    last = 0
    for group, flag, default, _meaning in rows:
        flag = flag.strip("`")
        assert GROUP_OF.get(flag) == group, f"README puts {flag} in {group!r}, --help in {GROUP_OF.get(flag)!r}"
        assert order.index(group) >= last, f"README's {flag} is out of --help's group order"
        last = order.index(group)
        _check_default(flag, default)
    # the flags a user reaches for lead their --help group, in the README's order
    for group in order:
        readme = [flag.strip("`") for g, flag, _d, _m in rows if g == group]
        first = [a.option_strings[0] for a in GROUPS[group]][: len(readme)]
        assert readme == first, f"--help's {group!r} group starts with {first}, README lists {readme}"


def _choices(action: argparse.Action) -> list[str] | None:
    """The values a flag takes: the parser's choices, else those its `--help` lists ("one of a, b, c")."""
    if action.choices:
        return [str(c) for c in action.choices]
    listed = re.search(r"one of ([\w.-]+(?:, [\w.-]+)+)", " ".join((action.help or "").split()))
    return listed.group(1).split(", ") if listed else None


def test_the_synopsis_and_the_flag_tables_give_each_flags_choices_as_the_parser_has_them():
    """docs/cli.md's synopsis shows `[--flag a|b]` with the parser's choices (every `tune` flag that has
    any), and each `tune` flag's row names every value it takes."""
    text = (ROOT / "docs/cli.md").read_text()
    command, shown = "tune", set()
    for line in text.split("```")[1].splitlines():
        command = (re.match(r"rocksdb-tuner (\w+)", line) or [None, command])[1]
        for flag, values in re.findall(r"\[(--[a-z0-9-]+) ([\w.:|-]+)\]", line):
            action = FLAGS[command][flag]
            if action.choices and "|" in values:
                assert sorted(values.split("|")) == sorted(map(str, action.choices)), \
                    f"docs/cli.md's synopsis gives {command} {flag} {values}, the parser {list(action.choices)}"
                shown.add((command, flag))
    with_choices = {a.option_strings[0] for a in ACTION.values() if a.choices}
    assert with_choices and {("tune", flag) for flag in with_choices} <= shown, \
        f"docs/cli.md's synopsis does not give the choices of {sorted(with_choices - {f for _, f in shown})}"
    rows = {cells[0].strip("`"): " ".join(cells[1:]) for _, cells in _flag_rows(text)}
    checked = 0
    for flag, action in ACTION.items():
        values = _choices(action)
        if values:
            missing = [v for v in values if f"`{v}`" not in rows[flag]]
            assert not missing, f"docs/cli.md's {flag} row does not name {missing}, which the parser takes"
            checked += 1
    assert checked >= 5


_PROSE_DEFAULTS = [  # a default stated beside a flag in running text, as the documents word it
    re.compile(r"`(--[a-z0-9-]+)(?: [A-Z_]+)?`,? \((?:[^()`]*?[,;] )?default:? `?([^`;,)]+?)`?[;,)]"),
    re.compile(r"\(`(--[a-z0-9-]+)(?: [A-Z_]+)?`, `?([^`;,)]+?)`? by default"),
    re.compile(r"\(`(--[a-z0-9-]+)(?: [A-Z_]+)?`, default:? `?([^`;,)]+?)`?[;,)]"),
    re.compile(r"from the (\d+)(?:st|nd|rd|th) second on \(`(--[a-z0-9-]+)`"),
    re.compile(r"by default \(`(--[a-z0-9-]+) ([^`\s]+)`\)"),
    re.compile(r"(?:at least|up to) (\d+)(?: [a-z]+)? \(`(--[a-z0-9-]+)`\)"),
    re.compile(r"(\d+) % \(`(--[a-z0-9-]+)`\)"),  # a fraction, as a percentage
]


def _stated_in_prose(text: str) -> list[tuple[str, str]]:
    """(flag, default) pairs the running text of a document states, code blocks and tables left out."""
    prose = " ".join(" ".join(line for line in re.sub(r"```.*?```", "", text, flags=re.S).splitlines()
                              if not line.lstrip().startswith("|")).split())
    found = []
    for pattern in _PROSE_DEFAULTS:
        for m in pattern.finditer(prose):
            flag, value = (m.group(2), m.group(1)) if m.group(1)[0].isdigit() else m.groups()
            found.append((flag, f"{float(value) / 100:g}" if m.group(0).startswith(value + " % ") else value))
    return found


def _defaults_of(flag: str) -> list[Any]:
    """What each subcommand with ``flag`` defaults it to: the parser's value, else what its `--help` states."""
    return [a.default if a.default is not None else _stated_default(a)
            for a in (flags[flag] for flags in FLAGS.values() if flag in flags)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_default_stated_beside_a_flag_in_running_text_is_the_parsers(document):
    for flag, value in _stated_in_prose(document.read_text()):
        defaults = _defaults_of(flag)
        assert defaults, f"{document.relative_to(ROOT)} states a default of {flag}, which no command has"
        assert any(d is not None and _agrees(value, d) for d in defaults), \
            f"{document.relative_to(ROOT)} says {flag} defaults to {value!r}; the parser: {defaults}"


def test_prose_defaults_are_found():
    """The patterns above read the defaults the documents state (so the check above is not vacuous)."""
    stated = {pair for doc in DOCUMENTS for pair in _stated_in_prose(doc.read_text())}
    assert {("--pruner-warmup", "4"), ("--rounds", "5"), ("--seeds", "3"),
            ("--work-dir", "$TMPDIR/rocksdb-tuner-work-<uid>"), ("--revalidate", "3"), ("--revalidate-rounds", "5"),
            ("--revalidate-max-rounds", "10"), ("--interval-target", "0.1")} <= stated, stated


def test_the_workloads_table_gives_each_presets_phase_lengths():
    """A preset's row names `--duration` and `--search-duration` with the preset's own values."""
    rows = {_cells(line)[0].strip("`"): line for line in (ROOT / "docs/workloads.md").read_text().splitlines()
            if line.startswith("| `")}
    searched = 0
    for name in preset_names():
        workload = load_workload(name)
        row = rows.get(name, "")
        for flag, seconds in (("--duration", workload.duration), ("--search-duration", workload.search_duration)):
            stated = re.search(rf"`{flag}` \((\d+) s\)", row)
            assert not stated or seconds == float(stated.group(1)), f"docs/workloads.md: {name}'s {flag} is {seconds}"
        if workload.search_duration is not None:
            assert f"`--search-duration` ({workload.search_duration:g} s)" in row, \
                f"docs/workloads.md: {name}'s row does not give its search phases ({workload.search_duration:g} s)"
            searched += 1
    assert searched >= 1


def test_the_workloads_table_lists_every_preset():
    rows = {_cells(line)[0].strip("`") for line in (ROOT / "docs/workloads.md").read_text().splitlines()
            if line.startswith("| `")}
    named = {name for row in rows for name in (["S0", "S1", "S2", "S3", "S4"] if row == "S0`–`S4" else [row])}
    assert set(preset_names()) <= named, f"docs/workloads.md leaves out {sorted(set(preset_names()) - named)}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            slug = _slug(line.lstrip("#"))
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(path: Path) -> list[str]:
    """Targets of the Markdown links and images outside code."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", text)


def test_the_links_read_include_the_images():
    """README's images are among the targets checked below (an image's `![...](...)` is a link too)."""
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.S)
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert images and set(images) <= set(_links(ROOT / "README.md")), images


@pytest.mark.parametrize("document", DOCUMENTS + NOTES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_image_resolves(document):
    broken = []
    for target in _links(document):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(target)
    assert not broken, f"{document.relative_to(ROOT)}: broken links {broken}"


HOST = re.compile(r"\b(?:[a-z0-9-]+\.)+(?:io|org|com|net|dev)\b", re.IGNORECASE)
NAMED_HOSTS = {"github.com"}  # a project's home in a link; package registries are reached through their clients


def test_no_tracked_file_names_a_package_registrys_host():
    """Builds fetch through cargo, apt-get source and pip as the host configures them (behind a
    company's mirror too): no tracked text file (code, docs, records) names a host but NAMED_HOSTS;
    RocksDB's statistics names (rocksdb.multiget.io) are not hosts."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    named: set[str] = set()
    for name in filter(None, tracked):
        data = (ROOT / name.decode()).read_bytes() if (ROOT / name.decode()).is_file() else b""
        if b"\0" in data[:8192]:
            continue  # binary
        named |= {f"{name.decode()}: {h}" for h in HOST.findall(data.decode(errors="replace"))
                  if not h.lower().startswith("rocksdb.") and h.lower() not in NAMED_HOSTS}
    assert not named, sorted(named)


def test_make_record_fills_each_block_from_its_generator_and_refuses_what_it_cannot_make(monkeypatch):
    """experiments/record.py on a synthetic document: a block is replaced by what its generator makes,
    text around it kept; a block naming no generator, or left open, is refused naming it."""
    monkeypatch.setattr(record, "generators", lambda: {"demo.table": lambda: "| a | 1.5 ms |"})
    text = "# Page\n\nBefore.\n<!-- record: demo.table -->\nold row\n<!-- /record -->\nAfter.\n"
    made, changed = record.fill("page.md", text)
    assert made == "# Page\n\nBefore.\n<!-- record: demo.table -->\n| a | 1.5 ms |\n<!-- /record -->\nAfter.\n"
    assert [(b.name, b.line) for b in changed] == [("demo.table", 4)]
    assert record.fill("page.md", made) == (made, [])
    with pytest.raises(record.RecordError, match="no generator named 'demo.other'"):
        record.fill("page.md", text.replace("demo.table", "demo.other"))
    with pytest.raises(record.RecordError, match="page.md: a '<!-- record: NAME -->' block without"):
        record.blocks("page.md", "<!-- record: demo.table -->\nrow\n")


def test_a_generated_blocks_stamp_says_whether_the_code_that_measured_it_changed_since():
    root = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split()[0]
    path = ROOT / "experiments" / "service_level" / "results" / "x.json"
    changed = record.stamp(path, f"{root[:7]} (and words after it)", "2026-12-04T10:00:00+00:00", ("tuner/cli.py",))
    assert changed == (f"Made by `make record` from `experiments/service_level/results/x.json`, measured at {root[:7]} "
                       "on 2026-12-04; the code that measured it has changed since, in tuner/cli.py.")
    same = record.stamp(path, root, "2026-12-04", ("no/such/path",))
    assert same.endswith("; the code that measured it (no/such/path) is unchanged since.")
    assert record.stamp(path, "0000000", "2026-12-04", ("tuner/cli.py",)).endswith(
        "that commit is not in this checkout's history.")
    assert record.stamp(path, None, "2026-11-24 05:03:54 UTC", ("tuner/cli.py",)) == (
        "Made by `make record` from `experiments/service_level/results/x.json`, measured on 2026-11-24; the record "
        "names no commit.")


def test_the_records_of_one_folder_gather_into_one_stamp():
    """Several records of one folder that the same code measured (a job run on several days) are stamped in one
    line: each by its name in the folder with its commit and day, and the top-level folders of the code changed
    since, those since the newest named apart when fewer; one record alone gets its stamp in brief."""
    root = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split()[0]
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    folder = ROOT / "experiments" / "default_job" / "results"
    code = ("tuner/cli.py", "Makefile")
    old, new = (folder / "a" / "summary.json", root[:7], "2026-11-29 01:04:22 UTC"), (folder / "b.json", head[:7], "2026-12-05")
    line = record.gathered([old, new], code)
    assert line.startswith(f"Made by `make record` from 2 records in `experiments/default_job/results/`: `a` (at "
                           f"{root[:7]} on 2026-11-29), `b.json` (at {head[:7]} on 2026-12-05); the code that measured ")
    # the first commit's code is not today's; HEAD's is the working tree's unless it is edited
    whose = "each" if record.changed_since(head, code) else "`a`"
    assert f"; the code that measured {whose} has changed since, in Makefile, tuner/" in line
    assert record.gathered([old], code) == record.stamp(*old, code, brief=True)
    unchanged = record.gathered([(folder / "a.json", head[:7], "2026-12-05"), (folder / "b.json", None, "2026-11-24")],
                                ("no/such/path",))
    assert unchanged == ("Made by `make record` from 2 records in `experiments/default_job/results/`: `a.json` (at "
                         f"{head[:7]} on 2026-12-05), `b.json` (on 2026-11-24, the record names no commit); the code "
                         "that measured them (no/such/path) is unchanged since.")
    assert record.gathered([old, (folder / "c.json", "0000000", "2026-12-01")], code).count(
        "`c.json` (at 0000000 on 2026-12-01; that commit is not in this checkout's history)") == 1


def test_a_brief_stamp_names_the_top_level_folders_of_the_changed_files():
    """For code as wide as the tuner (the default job's headline), the stamp gives the top-level folders the
    changed files are in (a file at the top by its name), not each file nor how many, which would change with
    every commit; what it says otherwise is the same as a stamp's in full."""
    root = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split()[0]
    path = ROOT / "experiments" / "default_job" / "results" / "x" / "summary.json"
    code = ("tuner/cli.py", "tuner/stats.py", "Makefile")
    brief = record.stamp(path, root, "2026-11-29 01:04:22 UTC", code, brief=True)
    assert brief == (f"Made by `make record` from `experiments/default_job/results/x/summary.json`, measured at "
                     f"{root} on 2026-11-29; the code that measured it has changed since, in Makefile, tuner/.")
    assert record.stamp(path, root, "2026-11-29", code).endswith("changed since, in Makefile, tuner/cli.py, tuner/stats.py.")
    assert record.stamp(path, root, "2026-11-29", ("no/such/path",), brief=True).endswith(
        "; the code that measured it (no/such/path) is unchanged since.")
    assert record.stamp(path, None, "2026-11-29", code, brief=True).endswith("the record names no commit.")
    assert record.in_brief(["tuner/cli.py", "Makefile", "objectives/runner.py", "studies/default.toml",
                            "tuner/engine/_loop.py"]) == "Makefile, objectives/, studies/, tuner/"
