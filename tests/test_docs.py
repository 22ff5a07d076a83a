"""The documents agree with the code and with themselves: every `tune` flag is listed in docs/cli.md in
its `--help` group with the parser's default, README's flag table says what the parser says, every
workload preset is in docs/workloads.md's table, and every relative link and image of README.md and
docs/*.md leads to a file (and heading) that exists."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest

from objectives.workloads import preset_names
from tuner.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _tune_groups() -> dict[str, list[argparse.Action]]:
    """`tune`'s flags by `--help` group, in the parser's order."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    tune = sub.choices["tune"]
    return {g.title: list(g._group_actions) for g in tune._action_groups
            if g.title not in ("positional arguments", "options", "optional arguments")}


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


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
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
